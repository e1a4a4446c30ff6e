// TraceCase -> accel::ops call. See case_call.hpp.
#include "case_call.hpp"

namespace conformance {
namespace {

accel::Tensor& operand(const CaseOperands& m, const std::string& name) {
    const auto it = m.find(name);
    if (it == m.end() || !it->second) throw std::logic_error("call_case: no tensor for operand '" + name + "'");
    return *it->second;
}

accel::Tensor* optional_operand(const CaseOperands& m, const std::string& name) {
    const auto it = m.find(name);
    return it == m.end() ? nullptr : it->second;
}

}  // namespace

float call_case(const TraceCase& c, const CaseOperands& in, const CaseOperands& out, const accel::ops::Options& o) {
    namespace ops = accel::ops;
    using accel::Op;
    if (c.op == "dense_backward") {
        accel::OptionalTensor pre_activation = std::nullopt;
        if (accel::Tensor* z = optional_operand(in, "pre_activation")) pre_activation = *z;
        ops::dense_backward(operand(in, "x"), operand(in, "w"), operand(in, "y"), operand(in, "dy"), c.activation,
                            optional_operand(out, "dx"), operand(out, "dw"), optional_operand(out, "db"), o,
                            pre_activation);
        return 0;
    }
    if (c.op == "bce_with_logits_loss") return ops::bce_with_logits_loss(operand(in, "z"), operand(in, "t"), o);
    const accel::OpInfo& info = *accel::find_op(c.op);
    switch (info.op) {
    case Op::matmul:
        ops::matmul(operand(in, "a"), operand(in, "b"), operand(out, "c"), {c.trans_a, c.trans_b}, o);
        return 0;
    case Op::dense:
        if (accel::Tensor* bias = optional_operand(in, "bias"))
            ops::dense(operand(in, "x"), operand(in, "w"), *bias, operand(out, "y"), c.activation, o);
        else
            ops::dense(operand(in, "x"), operand(in, "w"), std::nullopt, operand(out, "y"), c.activation, o);
        return 0;
    case Op::column_sum: ops::column_sum(operand(in, "x"), operand(out, "y"), o); return 0;
    case Op::convert: ops::convert(operand(in, "x"), operand(out, "y"), o); return 0;
    case Op::bce_with_logits_backward:
        ops::bce_with_logits_backward(operand(in, "z"), operand(in, "t"), operand(out, "dz"), o);
        return 0;
    case Op::scale: ops::scale(operand(in, "x"), kCaseScalar, operand(out, "y"), o); return 0;
    case Op::triad: ops::triad(operand(in, "b"), operand(in, "c"), kCaseScalar, operand(out, "a"), o); return 0;
    case Op::dot: ops::dot(operand(in, "a"), operand(in, "b"), operand(out, "y"), o); return 0;
    case Op::adam_step:
        ops::adam_step(operand(in, "p"), operand(in, "grad"), operand(in, "m"), operand(in, "v"), kCaseAdamStep,
                       kCaseAdamParams, o);
        return 0;
    default: break;
    }
    // Every other op of a case is of elementwise form (validate()): its operands in the table's order.
    std::vector<const accel::Tensor*> inputs;
    std::vector<accel::Tensor*> outputs;
    for (const auto& name : info.inputs) inputs.push_back(&operand(in, name));
    for (const auto& name : info.outputs) outputs.push_back(&operand(out, name));
    ops::run(info.op, inputs, outputs, o);
    return 0;
}

}  // namespace conformance
