// CUDA backend: the one way the kernels are launched, for nvcc and for the
// CUDA emulation alike (the emulation compiles this same source as host C++
// with ACCEL_CUDA_EMULATION defined; see backends/cuda/emulation).
#pragma once

#include "kernels.hpp"

#include <cuda_runtime.h>

namespace accel {
namespace cuda {

/// Enqueues kernel<<<l.grid, l.block, 0, l.stream>>>(args...) and returns
/// the error of this launch alone (configuration, missing image, sticky
/// error), or cudaSuccess. The last-error slot is cleared first: a code that
/// an earlier, already handled call left there (cudaErrorNotReady from an
/// event query, say) is not this launch's. Never throws.
template <class... Params, class... Args>
cudaError_t launch_kernel(void (*kernel)(Params...), const Launch& l, Args... args) {
    (void)cudaGetLastError();  // an earlier call's code, already handled
#ifdef ACCEL_CUDA_EMULATION
    emulation::launch(l.grid, l.block, l.stream, [=] { kernel(args...); });
#else
    kernel<<<l.grid, l.block, 0, l.stream>>>(args...);
#endif
    return cudaGetLastError();
}

}  // namespace cuda
}  // namespace accel
