// The CPU runtime libraries' process-wide settings, made before the first
// backend plugin is loaded (see accel/registry.hpp: openblas_coretype_note,
// preferred_openblas_dir).
//
// Why here and not in the plugins that use them: OpenBLAS reads
// OPENBLAS_CORETYPE and libgomp reads GOMP_SPINCOUNT once, in their own
// load-time constructors, and they load as dependencies of a plugin (the
// host plugin links libgomp, Kokkos Kernels links libblas.so.3) before any
// code of that plugin runs. Any plugin may bring either, and a library loads
// once per process, so the settings must be made before whichever plugin
// loads first. The values name no backend: they follow the CPU's features
// and the user's environment, which is never overridden.
#include "cpu_libraries.hpp"

#include <accel/environment.hpp>
#include <accel/registry.hpp>

#include <accel_internal/text.hpp>

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <string>

namespace accel {

namespace {

// The OpenBLAS core type for this CPU, or null when the CPU has neither
// AVX-512 (F/BW/DQ/VL) nor AVX2+FMA or is not x86.
const char* openblas_coretype_for_this_cpu() {
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
        return "SkylakeX";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
    return nullptr;
}

std::mutex& note_mutex() {
    static std::mutex m;
    return m;
}

std::string& coretype_note() {
    static std::string note;
    return note;
}

// OpenMP's wait policy, before the first plugin (and so libgomp) loads:
// libgomp reads its environment once, when it loads, and by default an idle
// worker spins for up to GOMP_SPINCOUNT = 300000 pause loops (milliseconds)
// before it sleeps. When another process keeps a core busy, the spinning
// worker spends its share of that core waiting, and when work comes it sits
// behind the other process for a scheduler time slice: host ops then took
// ~10-24 ms whatever their size (add 1e5: 11.8 ms, dense 64x784x128: 23.9 ms
// with a busy loop on the other core of 2). 1000 spins — the count libgomp
// itself uses when threads outnumber cores — keeps the idle-machine timings
// (add 1e5: 0.009 ms, dense: 0.10-0.15 ms) and gives 0.05 ms / 0.26 ms under
// the same busy loop. A user's own OMP_WAIT_POLICY or GOMP_SPINCOUNT is
// never changed; an application that already loaded libgomp keeps its own.
void prepare_openmp_environment() {
    if (!std::getenv("OMP_WAIT_POLICY") && !std::getenv("GOMP_SPINCOUNT")) setenv("GOMP_SPINCOUNT", "1000", 0);
}

}  // namespace

namespace detail {

void prepare_cpu_libraries() {
    static bool done = false;  // the caller holds the registry's lock
    if (done) return;
    done = true;
    prepare_openmp_environment();
    std::string note;
    if (const char* own = std::getenv("OPENBLAS_CORETYPE")) {
        note = std::string("OPENBLAS_CORETYPE=") + own + " from the environment";
    } else if (const char* core = openblas_coretype_for_this_cpu()) {
        if (setenv("OPENBLAS_CORETYPE", core, 0) == 0)
            note = std::string("OPENBLAS_CORETYPE=") + core + " set by accel from the CPU's features";
    }
    // The OpenMP OpenBLAS first (see preferred_openblas_dir()): a plugin that
    // links libopenblas.so.0 or libblas.so.3 (Kokkos Kernels) then gets these,
    // since the dynamic linker reuses a loaded library of the same soname.
    // ACCEL_HOST_BLAS is checked where the host plugin reads it (a bad value
    // fails opening the host device); here any value but openblas only means
    // that OpenBLAS need not come first.
    const auto host_blas = env::undeclared_value("ACCEL_HOST_BLAS");  // the host plugin declares it
    const std::string dir = preferred_openblas_dir();
    if (!dir.empty() && (!host_blas || lower(*host_blas) == "openblas")) {
        bool loaded = true;
        for (const char* lib : {"libopenblas.so.0", "libblas.so.3"})
            loaded = dlopen((dir + "/" + lib).c_str(), RTLD_NOW | RTLD_LOCAL) != nullptr && loaded;
        if (loaded) note += std::string(note.empty() ? "" : "; ") + "OpenMP OpenBLAS of " + dir + " loaded first";
    }
    std::lock_guard<std::mutex> lock(note_mutex());
    coretype_note() = note;
}

}  // namespace detail

std::string preferred_openblas_dir() {
#if defined(__x86_64__)
    const char* dir = "/usr/lib/x86_64-linux-gnu/openblas-openmp";
#elif defined(__aarch64__)
    const char* dir = "/usr/lib/aarch64-linux-gnu/openblas-openmp";
#else
    const char* dir = nullptr;
#endif
    return dir && access((std::string(dir) + "/libopenblas.so.0").c_str(), R_OK) == 0 ? dir : "";
}

std::string openblas_coretype_note() {
    std::lock_guard<std::mutex> lock(note_mutex());
    return coretype_note();
}

}  // namespace accel
