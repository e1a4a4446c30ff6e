// accel/op_table.hpp — the one place that says what an op is.
//
// Every fact about an op that is the same on every backend lives in its
// OpInfo: name, operands, whether a vendor library can run it, its pass
// threshold against the float64 oracle per dtype (with the reasoning), its
// FLOP and byte counts, and the kind of launch geometry it takes. The op
// front-end (accel/ops.hpp), the conformance tests, accel-bench and the
// examples read these facts from here; nothing else writes them down.
#pragma once

#include <accel/dtype.hpp>

#include <array>
#include <cstddef>
#include <string>
#include <vector>

namespace accel {

/// Identifies an op: an index into the op table. The named values are the
/// built-in ops (see accel/ops.hpp for their semantics); define_op() hands
/// out further values for ops defined by a program. Backends register
/// their kernels by Op (KernelTable::add), and built-in values only grow
/// (a new op is appended), so adding an op changes no plugin ABI: a plugin
/// built before it loads and reports it unsupported, and a value this
/// libaccel's table does not have is ignored (docs/adding-an-op.md).
enum class Op : int {
    add,
    sigmoid,
    relu,
    relu_backward,
    sigmoid_backward,
    matmul,
    dense,
    column_sum,
    bce_with_logits,
    bce_with_logits_backward,
    adam_step,
    /// y = x rounded to y's dtype (to nearest, ties to even; widening is
    /// exact): the one op whose operands differ in dtype. KernelArgs::dtype
    /// is y's, KernelArgs::src_dtype x's.
    convert,
    /// C = op(A)·op(B) + beta·C (KernelArgs: in[0] = A, in[1] = B, out[0] =
    /// C; m, n, k; trans_a, trans_b; scalars[0] = beta, 0 or 1). A backend's
    /// vendor BLAS; the front-end composes matmul and dense from it.
    gemm,
    /// y[r,c] = act(alpha·y[r,c] + bias[c]) for y[m,n] (KernelArgs: in[0] =
    /// bias or null, out[0] = y; m, n; act; scalars[0] = alpha, 0 or 1 — with
    /// 0, y is not read, so this also fills). The epilogue of vendor dense.
    bias_activation,
    /// c = a · b, elementwise.
    mul,
    /// y = x·Φ(x), GELU (PyTorch's gelu, approximate='none').
    gelu,
    /// y = x·(1 + tanh(√(2/π)(x + 0.044715x³)))/2 (approximate='tanh').
    gelu_tanh,
    /// dx = dy·(Φ(x) + x·φ(x)) (KernelArgs: in[0] = dy, in[1] = x).
    gelu_backward,
    /// dx = dy·gelu_tanh'(x) (KernelArgs: in[0] = dy, in[1] = x).
    gelu_tanh_backward,
    scale,
    triad,
    dot,
    copy,
    /// Not an op: the number of built-in ops. A new built-in op goes just
    /// above (values only grow); define_op hands out values from here on.
    builtin_count_
};

/// Number of built-in ops (the named Op values).
inline constexpr std::size_t kBuiltinOpCount = static_cast<std::size_t>(Op::builtin_count_);

/// The sizes one call of an op is described by: elementwise ops n =
/// elements; matmul/gemm m, n, k (C[m,n], inner dimension k); dense m =
/// batch, n = out, k = in; column_sum and bias_activation m = rows, n = cols.
struct OpSize {
    std::size_t m = 1;
    std::size_t n = 0;
    std::size_t k = 0;
};

/// What an op is. See the file comment.
struct OpInfo {
    Op op = Op::add;
    std::string name;                  ///< e.g. "matmul"; unique
    std::string math;                  ///< one line of what it computes
    /// A building block that backends implement and the front-end composes
    /// (gemm, bias_activation); not an accel::ops function.
    bool kernel_only = false;
    std::vector<std::string> inputs;   ///< operand names, in KernelArgs::in order
    std::vector<std::string> outputs;  ///< operand names, in KernelArgs::out order
    /// Whether a vendor library can run it (matmul, dense, gemm).
    bool has_vendor_path = false;
    /// The kernels the front-end composes this op from on the vendor path
    /// (matmul, dense: gemm on the vendor path, then bias_activation for
    /// the bias and activation, or for K = 0, which BLAS libraries reject);
    /// empty when a kernel of the op itself runs.
    std::vector<Op> vendor_composition;
    /// Pass threshold of the normalized mean squared error against the
    /// float64 oracle (reference::nmse), per dtype, indexed by DType; the
    /// oracle is given the inputs as stored (rounded to the dtype).
    std::array<double, kDTypeCount> nmse{};
    std::string nmse_reason;           ///< why these thresholds (error analysis)
    /// Floating-point operations of one call (a fused multiply-add counts 2).
    double (*flops)(const OpSize&) = nullptr;
    /// Bytes one call must move at least: each input read once and each
    /// output written once (read and written for in-place operands).
    double (*bytes)(const OpSize&, DType) = nullptr;
    /// Default launch geometry: 2-D tiles over the [m, n] output (matmul,
    /// dense) rather than a 1-D range over n elements.
    bool tiled = false;
    /// Elementwise ops of one or two inputs and one output, all of one shape
    /// (KernelArgs::n elements, no scalars): the float64 oracle of one
    /// element, out = elementwise_reference(in0, in1) (in1 = 0 for one
    /// input), written from the source of the math (accel/reference.hpp,
    /// namespace element). An op that has it is covered by its entry alone:
    /// ops::run runs it, the conformance suite checks it in every dtype and
    /// path a device claims, and accel-bench times it. Null for other ops.
    double (*elementwise_reference)(double, double) = nullptr;
    /// Where tests and benchmarks draw each input of an elementwise op
    /// from, uniformly: one [low, high] per input, in `inputs` order.
    std::vector<std::array<float, 2>> input_ranges;
};

/// The op table: every op, built-in and defined, in Op order. A snapshot:
/// the pointers stay valid for the life of the process. Thread-safe.
std::vector<const OpInfo*> op_table();

/// The entry of `op`. Throws InvalidArgument for a value that names no op.
/// Thread-safe; the reference stays valid for the life of the process.
const OpInfo& op_info(Op op);

/// The entry named `name` (exact, case-sensitive), or nullptr. Thread-safe.
const OpInfo* find_op(const std::string& name) noexcept;

/// Name of an op, e.g. "matmul"; "?" for a value that names no op.
const char* op_name(Op op) noexcept;

/// The NMSE pass threshold of `op` in `dtype` (OpInfo::nmse). Throws as op_info.
double nmse_threshold(Op op, DType dtype);

/// Adds an op defined by a program (or a test, or a backend plugin) to the
/// table and returns its Op value; info.op is ignored. Null flops count as 0
/// (tools then print no GFLOP/s), null bytes as every operand of n elements
/// read or written once. Backends that register a kernel under
/// info.name run it (ops::run); every other device reports it unsupported.
/// Throws InvalidArgument when the name is empty or taken, when it has no
/// output, when a threshold is not a positive finite number, or when it has
/// an elementwise_reference but not one or two inputs, one output and an
/// input range per input (low < high, finite).
/// Thread-safe.
Op define_op(OpInfo info);

}  // namespace accel
