// exchange.hpp — what tensor.cpp (NumPy) and dlpack.cpp (DLPack) share to
// move tensors in and out of Python: the DLPack names of accel's dtypes and
// devices, host copies of a tensor, and a tensor made from a NumPy array.
#pragma once

#include "binding.hpp"

#include <nanobind/ndarray.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

namespace accel_python {

/// DLPack's device type of host memory (dlpack.h: kDLCPU).
constexpr int kDLCPU = 1;

/// (DLPack device type, device id) of a tensor's memory where DLPack exports it without a copy: (kDLCPU, 0) on
/// the host backend, (kDLCUDA, index) on a CUDA GPU, (kDLROCM, index) on a HIP GPU; {0, 0} where it is exported
/// as a host copy (the other backends, the CUDA and HIP emulations, a tensor without storage).
std::pair<int, int> native_dl_device(const accel::Tensor& t);

/// The DLPack dtype of `d` (float 32, 64 or 16 bits; bfloat 16 bits).
nb::dlpack::dtype dl_dtype(accel::DType d);

/// The accel dtype of DLPack dtype `d`. Throws InvalidArgument, its message starting with `what` (the call),
/// naming the type and the four accel holds.
accel::DType from_dl_dtype(nb::dlpack::dtype d, const char* what);

/// The shape of an array of `ndim` extents `dims`. Throws InvalidArgument, its message starting with `what`,
/// for a rank other than 1 or 2.
accel::Shape shape_of(std::size_t ndim, const std::int64_t* dims, const char* what);

/// A host buffer owned by a capsule, for arrays handed to Python.
struct HostCopy {
    void* data = nullptr;
    nb::capsule owner;
};

/// The tensor's contents downloaded into a new host buffer (blocking, GIL released).
HostCopy download(const accel::Tensor& t);

/// accel.from_numpy: a new tensor on `device` (default: accel.default_device()) holding a copy of `array`
/// (rank 1 or 2; float32, float64, float16 or bfloat16), converted to `dtype` (None: the array's). Blocking.
/// Throws InvalidArgument for another rank, element type or dtype.
PyTensor from_numpy(nb::handle array, const std::shared_ptr<accel::Device>& device, const nb::object& dtype);

}  // namespace accel_python
