// rocBLAS in accel's emulated HIP runtime (test infrastructure): what
// hip_vendor.cpp binds in place of dlopen/dlsym when it is built for the
// emulation. The functions (hip_runtime.cpp) have rocBLAS's signatures,
// enumerator values and column-major semantics, and run the CUDA emulation's
// reference GEMM (float64 sums) in stream order.
#pragma once

namespace accel {
namespace cuda {
namespace rocblas_emulation {

/// The emulated rocBLAS function called `name` (e.g. "rocblas_sgemm"), or
/// null for one the emulation lacks. Thread-safe.
void* symbol(const char* name);

}  // namespace rocblas_emulation
}  // namespace cuda
}  // namespace accel
