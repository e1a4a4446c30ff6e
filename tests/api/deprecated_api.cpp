// Compiled by test api.deprecated, never run: a program written against
// accel 0.1's API still compiles in 0.2, each use warned with a message that
// names its replacement (docs/library.md's API policy).
#include <accel/accel.hpp>

bool runs_matmul(const accel::Device& device) {
    return device.supports(accel::Op::matmul, accel::OpPath::native) &&
           device.supports(accel::Op::matmul, accel::DType::f16, accel::OpPath::vendor);
}

std::uint64_t context_of(accel::Device& device) { return device.native_object("opencl", accel::NativeObject::context); }

accel::KernelSource one_field_per_language() {
    accel::KernelSource s;
    s.name = "noop";
    s.opencl = "__kernel void noop() {}";
    return s;
}
