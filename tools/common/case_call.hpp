// A case of a trace or case file (case_file.hpp) called on device tensors:
// the one place that turns a TraceCase into the accel::ops call it stands
// for, shared by accel-conformance (which checks the call against the
// oracle) and accel-bench --case-file (which times it).
#pragma once

#include "case_file.hpp"

#include <map>
#include <string>

namespace conformance {

/// A case's device tensors by operand name (the names of TraceCase::inputs
/// or TraceCase::outputs). An in-place operand (adam_step's p, m, v) is the
/// same tensor under its name in both maps.
using CaseOperands = std::map<std::string, accel::Tensor*>;

/// The Adam hyper-parameters and step of an adam_step case: the trace keeps
/// only shapes, so every case runs one step from these.
inline const accel::ops::AdamParams kCaseAdamParams{1e-2f, 0.9f, 0.999f, 1e-8f};
inline constexpr std::size_t kCaseAdamStep = 1;
/// The s of a scale or triad case (BabelStream's scalar): the trace keeps
/// only shapes.
inline constexpr double kCaseScalar = 0.4;

/// Makes the call `c` stands for (validated: read_case_file or validate())
/// on `in` (a tensor for every input the case names) and `out` (one for
/// every output; none for bce_with_logits_loss, whose loss is returned),
/// with the case's activation and transposes and the options `o`. Returns
/// the loss of bce_with_logits_loss (which waits for the device), else 0.
/// Throws std::logic_error when an operand the case names is not in the
/// maps, and whatever the op throws (accel::Unsupported where the device has
/// no kernel for the op, dtype and path). Thread-safe as the ops are.
float call_case(const TraceCase& c, const CaseOperands& in, const CaseOperands& out,
                const accel::ops::Options& o = {});

}  // namespace conformance
