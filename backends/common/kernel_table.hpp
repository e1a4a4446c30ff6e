// What the in-tree backends' kernel registrations share: the ops they run
// with their own kernels (native path), for their kernel tables
// (KernelTable::claim), and typed access to KernelArgs' operands. A backend states what it
// runs; the conformance suite fails a claimed kernel that is not registered,
// so an op listed here must get a kernel on every in-tree backend, and a
// backend that lacks one lists its own ops instead.
#pragma once

#include <accel/device.hpp>

#include <vector>

namespace accel {

inline const std::vector<Op>& native_ops_of_every_backend() {
    static const std::vector<Op> ops{Op::add,
                                     Op::mul,
                                     Op::sigmoid,
                                     Op::relu,
                                     Op::relu_backward,
                                     Op::sigmoid_backward,
                                     Op::gelu,
                                     Op::gelu_tanh,
                                     Op::gelu_backward,
                                     Op::gelu_tanh_backward,
                                     Op::matmul,
                                     Op::dense,
                                     Op::column_sum,
                                     Op::bce_with_logits,
                                     Op::bce_with_logits_backward,
                                     Op::adam_step,
                                     Op::convert,
                                     Op::bias_activation,
                                     Op::scale,
                                     Op::triad,
                                     Op::dot,
                                     Op::copy};
    return ops;
}

/// An operand of KernelArgs (a handle of this device) as a typed pointer to
/// its elements, for kernels whose device memory is directly addressable
/// (host memory, CUDA device pointers): read-only inputs...
template <class T>
const T* in(DeviceHandle h) {
    return static_cast<const T*>(h);
}
/// ...and outputs.
template <class T>
T* out(DeviceHandle h) {
    return static_cast<T*>(h);
}

/// The ops of native_ops_of_every_backend() that the op table describes as
/// elementwise with a float64 oracle (OpInfo::elementwise_reference: one or
/// two inputs, one output, n elements, no scalars), in that order. A backend
/// whose kernels for these share one launch path (a kernel per op name taking
/// the same arguments) registers them all from this list.
inline const std::vector<Op>& elementwise_ops_of_every_backend() {
    static const std::vector<Op> ops = [] {
        std::vector<Op> all;
        for (Op op : native_ops_of_every_backend())
            if (op_info(op).elementwise_reference) all.push_back(op);
        return all;
    }();
    return ops;
}

}  // namespace accel
