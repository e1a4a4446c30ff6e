// HIP's __half for the emulated HIP runtime: accel's CUDA emulation's (the
// same name, layout and conversions, __double2half included).
#pragma once

#include "../../../../cuda/emulation/include/cuda_fp16.h"
