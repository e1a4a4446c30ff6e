// HIP 5's hip_bfloat16 for the emulated HIP runtime: accel's CUDA
// emulation's bf16 type under HIP's name, with its conversions
// (__float2bfloat16_rn, __bfloat162float, __double2bfloat16).
#pragma once

#include "../../../../cuda/emulation/include/cuda_bf16.h"

typedef __nv_bfloat16 hip_bfloat16;
