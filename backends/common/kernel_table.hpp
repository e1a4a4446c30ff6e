// The ops the in-tree backends run with their own kernels (native path), for
// their kernel tables (Device::claim_kernels). A backend states what it
// runs; the conformance suite fails a claimed kernel that is not registered,
// so an op listed here must get a kernel on every in-tree backend, and a
// backend that lacks one lists its own ops instead.
#pragma once

#include <accel/device.hpp>

#include <vector>

namespace accel {

inline const std::vector<Op>& native_ops_of_every_backend() {
    static const std::vector<Op> ops{Op::add,         Op::sigmoid,         Op::relu,
                                     Op::relu_backward, Op::sigmoid_backward, Op::matmul,
                                     Op::dense,       Op::column_sum,      Op::bce_with_logits,
                                     Op::bce_with_logits_backward, Op::adam_step, Op::convert,
                                     Op::bias_activation};
    return ops;
}

}  // namespace accel
