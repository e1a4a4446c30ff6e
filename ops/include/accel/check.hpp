// accel/check.hpp — the shadow check: every kernel call of a program run a
// second time, on copies of its inputs, and compared.
//
// With ACCEL_CHECK=oracle (or check::start("oracle")) each kernel call's
// outputs are compared with accel's float64 oracle (accel/reference.hpp) of
// the same inputs as stored; with ACCEL_CHECK=<selector> (e.g. "host",
// "opencl:pocl") with the same kernel call on that device. The measure is
// the normalized mean squared error of each output (ggml's test-backend-ops
// measure), Σ(got − want)² / Σ scale², where scale is the magnitude each
// element is computed at (check::scale: for a sum, the sum of its terms'
// magnitudes, as the conformance suite judges sums that cancel); a NaN or
// ±Inf counts as equal only to the same value. The limit is the op table's
// threshold for the op and dtype (OpInfo::nmse, the conformance suite's own). The first call past it
// throws CheckFailed (or, with ACCEL_CHECK_MODE=warn, is reported on stderr
// and the program goes on): the message names the call's sequence number on
// its device (see accel/trace.hpp), which call of that op it was, the op,
// shapes, dtype, path, both devices, the NMSE and the threshold, and the
// worst element with both values; and the call's inputs are written to a
// file (ACCEL_CHECK_DIR, default the working folder) that `accel-replay`
// reruns on any backends.
//
// What it costs: each call waits for its stream, copies its operands to the
// host before and after, and runs the reference — a debugging mode, not a
// production one. Calls the front-end composes (matmul and dense on the
// vendor path) are checked kernel by kernel (gemm, bias_activation). An op a
// program defined without an elementwise oracle is not checked against the
// oracle (it is against a device). The check's own copies and reruns are
// neither traced nor checked.
//
// Thread-safety: calls from any thread are checked; the check of one call
// runs on the thread that made it.
#pragma once

#include <accel/device.hpp>
#include <accel/error.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace accel {

/// A kernel call diverged from its reference beyond the op table's
/// threshold (see accel/check.hpp). what() names the call; record_path()
/// is the file its inputs were written to ("" when none could be).
class CheckFailed : public Error {
public:
    CheckFailed(const std::string& message, std::string record_path)
        : Error(message), record_path_(std::move(record_path)) {}
    const std::string& record_path() const noexcept { return record_path_; }

private:
    std::string record_path_;
};

namespace check {

/// Turns the shadow check on: `against` is "oracle" or a device selector
/// (opened at the first call checked); `warn` reports divergences on stderr
/// and goes on instead of throwing; records go to folder `record_dir`.
/// Replaces a check already on. Throws InvalidArgument for an empty
/// `against` or a selector that does not parse (naming the accepted forms).
/// Thread-safe.
void start(const std::string& against, bool warn = false, const std::string& record_dir = ".");
/// Turns it off. Thread-safe; never throws.
void stop() noexcept;
/// Whether it is on. Thread-safe; never throws.
bool active() noexcept;

/// One kernel call as the check records it: everything needed to run it
/// again on any device. Operands are the bytes of each operand in its dtype
/// (row-major, shapes as accel::operand_shapes gives them).
struct OpRecord {
    std::string op;  ///< op-table name, e.g. "matmul"
    DType dtype = DType::f32;
    DType src_dtype = DType::f32;  ///< convert's input dtype; else dtype
    OpPath path = OpPath::native;
    std::size_t m = 1, n = 0, k = 0;
    bool trans_a = false, trans_b = false;
    Activation act = Activation::none;
    std::array<double, 8> scalars{};
    /// Per input (OpInfo::inputs order): its bytes; empty for an absent optional operand.
    std::vector<std::vector<unsigned char>> inputs;
    /// Per output: its contents before the call (in-place ops and gemm with
    /// beta = 1 read them).
    std::vector<std::vector<unsigned char>> outputs_before;
    /// Per output: what the checked device wrote.
    std::vector<std::vector<unsigned char>> outputs_got;
    // Where it came from (informative).
    std::uint64_t seq = 0, of_op = 0;
    std::string device, device_name, reference;
    double nmse = 0, threshold = 0;
};

/// A record of a call's op, dtypes, path, sizes and scalars (no operands
/// yet): what snapshots and test backends start from. Throws as op_info.
OpRecord describe(Op op, const KernelArgs& args);
/// The record's dtypes, path, sizes and scalars as KernelArgs (no operand
/// handles, default geometry, no stream).
KernelArgs kernel_args(const OpRecord& r);

/// Writes `r` to `path` as CBOR (RFC 8949; a map with format
/// "accel-op-record", version 1). Throws InvalidArgument when the file
/// cannot be written.
void save(const OpRecord& r, const std::string& path);

/// Reads a record written by save(). The file is untrusted: throws
/// InvalidArgument naming the path and what is wrong (not CBOR, another
/// format or version, an unknown op or dtype, operand sizes that do not
/// match the shapes) — never reads past what it checked.
OpRecord load(const std::string& path);

/// The float64 oracle's outputs of the recorded call, one vector per output.
/// Throws Unsupported for an op without an oracle (an op a program defined
/// without an elementwise reference).
std::vector<std::vector<double>> oracle(const OpRecord& r);

/// Runs the recorded call on `device` (on the record's path where the
/// device has it, else native; default geometry) and returns each output
/// widened to double; `path_used` (when not null) gets the path taken.
/// Throws Unsupported when the device runs the op in neither path, and the
/// device's own errors.
std::vector<std::vector<double>> rerun(const OpRecord& r, Device& device, OpPath* path_used = nullptr);

/// The bytes of an output widened to double.
std::vector<double> widen(const std::vector<unsigned char>& bytes, DType dtype);

/// The magnitude each output element of the recorded call is computed at,
/// given `want`, the reference outputs it is compared with (the oracle's,
/// or the other device's): the result with every term taken by its
/// absolute value (matmul,
/// gemm, dense: |A|·|B| (+ |bias|, |beta·C|); column_sum: Σ|x|; add: |a| +
/// |b|; the backward ops and adam_step likewise), |result| for ops without
/// cancellation. A sum whose terms cancel has a rounding error bounded
/// relative to this, not to its result (Higham, Accuracy and Stability of
/// Numerical Algorithms, 2nd ed., §4.2), so the check measures the error at
/// this scale: a gradient that sums to nearly zero is judged at the size of
/// what was summed. Throws InvalidArgument when `want` does not have one
/// vector per output or the op is unknown.
std::vector<std::vector<double>> scale(const OpRecord& r, const std::vector<std::vector<double>>& want);

/// How far `got` is from `want`, output by output.
struct Comparison {
    /// The largest of the outputs' Σ(got − want)² / Σ scale² (scale: `want`'s
    /// magnitudes, or |want| when none are given: then the NMSE).
    double nmse = 0;
    std::size_t output = 0;    ///< the output it belongs to
    std::size_t index = 0;     ///< that output's worst element (largest |got − want|, or first non-finite mismatch)
    double got = 0, want = 0;  ///< its two values
};
/// Throws InvalidArgument when the output counts or sizes differ.
Comparison compare(const std::vector<std::vector<double>>& got, const std::vector<std::vector<double>>& want,
                   const std::vector<std::vector<double>>& scale = {});

}  // namespace check
}  // namespace accel
