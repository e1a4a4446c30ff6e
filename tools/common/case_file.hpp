// --case-file: a program's own op calls as cases. Reads an ACCEL_TRACE file
// (accel/trace.hpp) or a case file (one call per line, written from a trace
// by accel-conformance --write-case-file) and keeps each distinct call once;
// accel-conformance checks each against the float64 oracle
// (tests/conformance/case_run.cpp), accel-bench times each on every device
// (tools/bench/calls.cpp), both through call_case (case_call.hpp).
//
// A case file, line by line ('#' starts a comment; blank lines are skipped):
//
//   OP DTYPE OPERAND... -> OUTPUT... [activation=NAME] [trans_a] [trans_b] [src_dtype=DTYPE]
//
//   dense f32 x[40,30] w[10,30] bias[10] -> y[40,10] activation=relu
//   matmul f32 a[40,10] b[40,30] -> c[10,30] trans_a
//   dense_backward f32 x[40,30] w[10,30] y[40,10] dy[40,10] -> dx[40,30] dw[10,30] db[10] activation=relu
//   bce_with_logits_loss f32 z[40] t[40] -> loss[]
//
// OP is an op of the op table (not gemm or bias_activation, which only
// appear inside the calls the front-end composes from them) or one of the
// composed calls dense_backward and bce_with_logits_loss; the operands are
// written as the trace's "shapes" arg writes them: the op table's operand
// names in order, dimensions as stored (matmul's a is [k, m] with trans_a),
// an absent optional operand (dense's bias; dense_backward's pre_activation,
// dx, db) left out.
#pragma once

#include <accel/accel.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace conformance {

/// A call the op front-end composes from ops of the op table (accel/ops.hpp)
/// rather than an op of its own: its name and the table ops it runs.
struct ComposedCall {
    const char* name;
    std::vector<accel::Op> ops;
};

/// The composed calls a program makes and a case may name: dense_backward
/// (the activation's backward op, matmul for dx and dW, column_sum for db)
/// and bce_with_logits_loss (bce_with_logits, then column_sum of the
/// losses). Thread-safe (a constant).
const std::vector<ComposedCall>& composed_calls();

/// The composed call named `name`, or null.
const ComposedCall* find_composed_call(const std::string& name);

/// One operand of a case: its name and dimensions (row-major; none for a
/// scalar such as bce_with_logits_loss's loss).
struct Operand {
    std::string name;
    std::vector<std::size_t> dims;
};

/// One distinct call of a program: what makes two calls the same case.
struct TraceCase {
    std::string op;  ///< an op of the op table, or "dense_backward", "bce_with_logits_loss"
    accel::DType dtype = accel::DType::f32;
    accel::DType src_dtype = accel::DType::f32;  ///< convert's input dtype; else dtype
    std::vector<Operand> inputs, outputs;        ///< absent optional operands left out
    accel::Activation activation = accel::Activation::none;  ///< dense, dense_backward
    bool trans_a = false, trans_b = false;                   ///< matmul: a, b stored transposed
    std::size_t calls = 0;  ///< the program's calls it stands for (1 per line of a case file)
    std::string origin;     ///< where it was first read: "t.json: traceEvents[17]" or "cases.txt:4"

    /// The case as one line of a case file (no comment), which reads back as
    /// this case: "dense f32 x[40,30] w[10,30] bias[10] -> y[40,10]
    /// activation=relu". Its identity: two calls are one case when equal.
    std::string text() const;
};

/// The cases read from one file, in the order of their first call.
struct CaseFile {
    std::string path;
    std::string kind;        ///< "trace" or "case file"
    std::vector<TraceCase> cases;
    std::size_t calls = 0;     ///< user-level calls read (a trace: its top-level op events)
    std::size_t enclosed = 0;  ///< a trace's kernel events inside a composed call, not cases of their own
};

/// Every problem found in a file, one per line ("FILE:LINE: ..." or "FILE:
/// traceEvents[N] (op): ..."), each saying what is accepted.
struct CaseFileError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// Reads `path`: a trace (a JSON object with a traceEvents array, as
/// ACCEL_TRACE writes it) or a case file (the format above), told apart by
/// the first character that is not blank ('{': a trace). Of a trace, the op
/// events (cat "op") and composed calls (cat "composed") on the host threads'
/// tracks count (device-time copies, which carry device_ms, do not); an
/// event inside a composed call on its track (the kernels of dense_backward,
/// of bce_with_logits_loss, of matmul and dense on the vendor path) is part
/// of that call and no case of its own. Each distinct call (TraceCase::text)
/// becomes one case, its calls counted. Validates everything before
/// returning: throws CaseFileError listing every problem (an unknown op or
/// dtype or activation, a shape that does not fit the op, an operand the op
/// does not take, a file that cannot be read, is not a trace, or holds no
/// call). Loads the backend plugins when an op name is not built in (a
/// plugin may define it). Not thread-safe with define_op.
CaseFile read_case_file(const std::string& path);

/// Writes `file`'s cases to `out` as a case file (one line each, with its
/// call count and origin as a comment), whole or not at all. Throws
/// std::runtime_error naming `out` when it cannot be written.
void write_case_file(const CaseFile& file, const std::string& out);

/// Checks one case: its op is one accel-conformance can check, its operands
/// are the op's (names, order, optional ones), their shapes fit each other,
/// and activation and transposes apply to the op. Throws
/// std::invalid_argument saying what is wrong and what is accepted.
/// Thread-safe (reads the op table).
void validate(const TraceCase& c);

}  // namespace conformance
