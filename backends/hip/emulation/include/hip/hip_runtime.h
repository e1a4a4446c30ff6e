// The HIP kernel language and runtime API for the emulated HIP runtime (see
// hip_runtime_api.h): accel's CUDA emulation's kernel language, plus HIP's
// shuffle, which takes no mask.
#pragma once

#include "hip_runtime_api.h"

/// As HIP's: lane (this lane + delta) of this thread's `width`-lane segment
/// of its wavefront, or its own value past the segment.
template <class V>
V __shfl_down(V value, unsigned delta, int width = warpSize) {
    return __shfl_down_sync(0xffffffffu, value, delta, width);
}
