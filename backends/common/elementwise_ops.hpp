// The elementwise ops the CPU loops of cpu_elementwise.hpp implement, named
// apart from those loops so that a backend's headers can name them without
// pulling the loops in (Kokkos' headers are also compiled for GPU spaces).
#pragma once

#include <accel/op_table.hpp>

namespace accel {
namespace cpu {

/// The elementwise ops of elementwise_range, by their op-table names.
enum class Elementwise {
    add,                       ///< y = a + b
    mul,                       ///< y = a · b
    relu,                      ///< y = relu1(a)
    relu_backward,             ///< y = b > 0 ? a : 0          (a = dy, b = x)
    sigmoid_backward,          ///< y = a·b·(1 − b)           (a = dy, b = σ(x))
    bce_with_logits_backward,  ///< y = scale·(σ(a) − b)      (a = z, b = t)
    gelu,                      ///< y = gelu1(a)
    gelu_tanh,                 ///< y = gelu_tanh1(a)
    gelu_backward,             ///< y = a·gelu'(b)             (a = dy, b = x)
    gelu_tanh_backward,        ///< y = a·gelu_tanh'(b)        (a = dy, b = x)
    scale,                     ///< y = scale·a                (scale = s)
    triad,                     ///< y = a + scale·b            (a = b, b = c, scale = s)
    copy,                      ///< y = a
};

/// Whether loop `op` reads only its first operand.
constexpr bool is_unary(Elementwise op) {
    return op == Elementwise::relu || op == Elementwise::gelu || op == Elementwise::gelu_tanh ||
           op == Elementwise::scale || op == Elementwise::copy;
}

/// Whether loop `op` reads KernelArgs::scalars[0] as its `scale` (0 is passed otherwise).
constexpr bool takes_scale(Elementwise op) {
    return op == Elementwise::bce_with_logits_backward || op == Elementwise::scale || op == Elementwise::triad;
}

/// An op of the op table and the CPU loop that runs it.
struct ElementwiseOp {
    Op op;
    Elementwise loop;
};

/// The ops the CPU loops run, for the backends that register them (host;
/// Kokkos' host spaces) in f32 and f64: one line per op here is the whole
/// registration.
inline constexpr ElementwiseOp kElementwiseOps[] = {
    {Op::add, Elementwise::add},
    {Op::mul, Elementwise::mul},
    {Op::relu, Elementwise::relu},
    {Op::relu_backward, Elementwise::relu_backward},
    {Op::sigmoid_backward, Elementwise::sigmoid_backward},
    {Op::bce_with_logits_backward, Elementwise::bce_with_logits_backward},
    {Op::gelu, Elementwise::gelu},
    {Op::gelu_tanh, Elementwise::gelu_tanh},
    {Op::gelu_backward, Elementwise::gelu_backward},
    {Op::gelu_tanh_backward, Elementwise::gelu_tanh_backward},
    {Op::scale, Elementwise::scale},
    {Op::triad, Elementwise::triad},
    {Op::copy, Elementwise::copy},
};

}  // namespace cpu
}  // namespace accel
