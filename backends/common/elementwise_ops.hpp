// The elementwise ops the CPU loops of cpu_elementwise.hpp implement, named
// apart from those loops so that a backend's headers can name them without
// pulling the loops in (Kokkos' headers are also compiled for GPU spaces).
#pragma once

namespace accel {
namespace cpu {

/// The elementwise ops of elementwise_range, by their op-table names.
enum class Elementwise {
    add,                       ///< y = a + b
    relu,                      ///< y = relu1(a)
    relu_backward,             ///< y = b > 0 ? a : 0          (a = dy, b = x)
    sigmoid_backward,          ///< y = a·b·(1 − b)           (a = dy, b = σ(x))
    bce_with_logits_backward,  ///< y = scale·(σ(a) − b)      (a = z, b = t)
};

}  // namespace cpu
}  // namespace accel
