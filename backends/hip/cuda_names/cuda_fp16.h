// HIP build: stands for the CUDA toolkit header of this name (see ../cuda_to_hip.h).
#pragma once
#include "../cuda_to_hip.h"
