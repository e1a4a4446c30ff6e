// The x86 instruction-set levels the CPU backends compile their hot loops
// for, and the one this CPU runs. Loops whose code does not depend on the
// vector width are multi-versioned with target_clones (ACCEL_HOST_MULTIVERSION,
// ACCEL_KOKKOS_MULTIVERSION); the GEMM's register tile does depend on it (16
// zmm or 16 ymm accumulators), so it is instantiated once per level with the
// target attributes below and picked at run time by cpu_level().
#pragma once

namespace accel {
namespace cpu {

/// Whether per-level GEMM instantiations are compiled: GCC on x86-64 (its
/// __builtin_cpu_supports knows the x86-64-vN levels), not under
/// AddressSanitizer (whose instrumented builds skip multi-versioning).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && \
    !defined(__SANITIZE_ADDRESS__)
#define ACCEL_CPU_LEVELS 1
#define ACCEL_CPU_TARGET_AVX512 __attribute__((target("arch=x86-64-v4")))
#define ACCEL_CPU_TARGET_AVX2 __attribute__((target("arch=x86-64-v3")))
#else
#define ACCEL_CPU_LEVELS 0
#endif

/// Bytes of one vector register in code compiled for the build's own
/// target (no target attribute): 64 with AVX-512, 32 with AVX, else 16
/// (SSE2, NEON, and the scalar fallback, where only the tile size matters).
#if defined(__AVX512F__)
constexpr int kBuildVectorBytes = 64;
#elif defined(__AVX__)
constexpr int kBuildVectorBytes = 32;
#else
constexpr int kBuildVectorBytes = 16;
#endif

/// The x86 level this CPU runs, for choosing among per-level instantiations.
enum class CpuLevel { build, avx2, avx512 };

/// This CPU's level (x86-64-v4: AVX-512 F/BW/CD/DQ/VL; x86-64-v3: AVX2,
/// FMA, BMI1/2, F16C, ...); `build` where levels are not compiled or the CPU
/// has neither. Determined once; thread-safe.
inline CpuLevel cpu_level() {
#if ACCEL_CPU_LEVELS
    static const CpuLevel level = [] {
        __builtin_cpu_init();
        if (__builtin_cpu_supports("x86-64-v4")) return CpuLevel::avx512;
        if (__builtin_cpu_supports("x86-64-v3")) return CpuLevel::avx2;
        return CpuLevel::build;
    }();
    return level;
#else
    return CpuLevel::build;
#endif
}

}  // namespace cpu
}  // namespace accel
