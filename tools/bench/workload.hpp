// accel-bench: one op on one problem size — host inputs, the float64 oracle,
// the bytes/FLOPs it costs, and how to launch it on device tensors.
#pragma once

#include "runner.hpp"

#include <accel/reference.hpp>

#include <functional>
#include <random>

namespace bench {

/// Device-independent part of a benchmark: built once per (op, problem) and
/// reused on every device, path and geometry.
struct Workload {
    /// Launches the op on device tensors `in` (same order as inputs) writing
    /// `out` (which is in[output_input] for in-place ops).
    using Launch = std::function<void(std::vector<accel::Tensor>& in, accel::Tensor& out,
                                      const accel::ops::Options& o)>;

    Problem problem;
    std::vector<accel::reference::FVec> inputs;  ///< host inputs, row-major, as stored (rounded to problem.dtype)
    /// The inputs in problem.dtype's layout, ready to upload as they are.
    std::vector<std::vector<unsigned char>> stored;
    std::vector<accel::Shape> input_shapes;      ///< one per input
    accel::Shape output_shape;
    int output_input = -1;       ///< index of the input updated in place; -1 = separate output
    Launch launch;
    double bytes = 0;            ///< bytes a memory-bound op reads + writes (op table); 0 for compute-bound ops
    double flops = 0;            ///< FLOPs of a compute-bound op (op table: 2·M·N·K); 0 for memory-bound ops
    double all_flops = 0;        ///< FLOPs of any op (op table), for the roofline
    double all_bytes = 0;        ///< least bytes moved by any op (op table), for the roofline
    std::size_t row_length = 0;  ///< output columns (for row sampling)
    std::vector<std::size_t> sampled_rows;  ///< output rows the oracle covers; empty = all
    accel::reference::Vec oracle;           ///< float64 result on the covered rows

    /// "full", or which output rows the oracle was computed on.
    std::string oracle_text() const;
};

/// Runs fn(begin, end) over [0, n) in chunks of `grain` items on up to
/// hardware_concurrency() std::threads (inline when one chunk covers n).
/// Chunks are fixed by n and grain, not by the thread count, so results that
/// depend only on the chunk are the same on every machine. fn must be safe to
/// call concurrently on distinct chunks; the first exception it throws is
/// rethrown here after every thread has finished.
void parallel_ranges(std::size_t n, std::size_t grain, const std::function<void(std::size_t, std::size_t)>& fn);

/// accel::reference::nmse of a downloaded output against w.oracle, on the
/// rows the oracle covers. `raw` holds the whole output (w.output_shape
/// elements) in w.problem.dtype's layout, as downloaded; the covered
/// elements are widened to float64 (exactly) in parallel chunks.
double output_nmse(const Workload& w, const unsigned char* raw);

/// Builds the inputs (fresh draws from `rng`, rounded to p.dtype) and the
/// oracle of `p` on them, and its FLOP or byte count from the op table. The
/// draws, roundings and the oracles of elementwise ops, adam_step, matmul and
/// dense run on several threads (parallel_ranges; each chunk of a draw has
/// its own generator seeded from `rng`). Matmul
/// and dense problems with M·N·K ≥ 1024³ get the oracle on 8 random output
/// rows only (a full float64 product would take longer than the benchmark).
Workload make_workload(const Problem& p, std::mt19937_64& rng);

}  // namespace bench
