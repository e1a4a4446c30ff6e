// Compile hot host loops for several x86 levels and pick at load time
// (GCC/Clang function multi-versioning): AVX-512 and AVX2+FMA where the CPU
// has them, baseline x86-64 elsewhere. Non-x86 builds get one plain version.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define ACCEL_HOST_MULTIVERSION __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define ACCEL_HOST_MULTIVERSION
#endif
