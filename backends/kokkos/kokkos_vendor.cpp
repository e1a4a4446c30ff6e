// Kokkos backend vendor path: KokkosBlas::gemm from Kokkos Kernels, which in
// turn uses the vendor BLAS it was built with (CPU BLAS, cuBLAS, rocBLAS) or
// its own kernels. Row-major operands are given as LayoutRight views, so no
// transposition identity is needed: "N"/"T" keep their meaning.
#include "kokkos_device.hpp"

#include "../common/dynamic_library.hpp"

#include <accel/error.hpp>
#include <accel/registry.hpp>

#include <string>
#include <type_traits>

#if defined(ACCEL_KOKKOS_HAVE_KERNELS)
#include <KokkosBlas3_gemm.hpp>
#endif

namespace accel {
namespace kokkos {

bool have_vendor_blas() noexcept {
#if defined(ACCEL_KOKKOS_HAVE_KERNELS)
    return true;
#else
    return false;
#endif
}

namespace {
// The OpenBLAS that Kokkos Kernels loaded, if any: its configuration and
// core, and a hint when a pthreads OpenBLAS sits beside Kokkos' OpenMP
// threads (they spin after each Kokkos kernel and slow the BLAS' own
// threads down: measured 36 GFLOP/s instead of 82-150 at N = 1024 on 2 cores).
[[maybe_unused]] std::string openblas_text(const std::string& space) {
    (void)space;  // read only where Kokkos has OpenMP
    void* h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD);
    if (!h) {
        dl::clear_error();
        return "";
    }
    using CharFn = char* (*)();
    std::string text;
    if (auto cfg = reinterpret_cast<CharFn>(dl::optional_symbol(h, "openblas_get_config"))) text = cfg();
    if (auto core = reinterpret_cast<CharFn>(dl::optional_symbol(h, "openblas_get_corename")))
        text += ", core " + std::string(core());
    const std::string note = openblas_coretype_note();
    if (!note.empty()) text += "; " + note;
#if defined(KOKKOS_ENABLE_OPENMP)
    if (space == Kokkos::OpenMP::name() && text.find("USE_OPENMP") == std::string::npos)
        text += "; a pthreads OpenBLAS beside Kokkos' OpenMP threads: use its OpenMP build (Debian: "
                "libopenblas0-openmp via update-alternatives) or OMP_WAIT_POLICY=passive";
#endif
    dlclose(h);
    return text.empty() ? "" : " with OpenBLAS (" + text + ")";
}
}  // namespace

std::string vendor_text(const std::string& space) {
#if defined(ACCEL_KOKKOS_HAVE_KERNELS) && defined(KOKKOSKERNELS_VERSION) && KOKKOSKERNELS_VERSION >= 40000
    return "Kokkos Kernels " + std::to_string(KOKKOSKERNELS_VERSION / 10000) + "." +
           std::to_string(KOKKOSKERNELS_VERSION / 100 % 100) + "." + std::to_string(KOKKOSKERNELS_VERSION % 100) +
           " (KokkosBlas::gemm on the stream's execution-space instance)" + openblas_text(space);
#elif defined(ACCEL_KOKKOS_HAVE_KERNELS)
    return "Kokkos Kernels < 4 (KokkosBlas::gemm on the default instance, which every stream uses there)" +
           openblas_text(space);
#else
    (void)space;
    return "none (built without Kokkos Kernels)";
#endif
}

#if defined(ACCEL_KOKKOS_HAVE_KERNELS)
template <class Space, class T>
void gemm_vendor(const Space& space, const T* a, const T* b, T* c, std::size_t m, std::size_t n, std::size_t k,
                 bool ta, bool tb, double beta) {
    require_runtime();
    using MemSpace = typename Space::memory_space;
    using In = Kokkos::View<const T**, Kokkos::LayoutRight, MemSpace, Unmanaged>;
    using Out = Kokkos::View<T**, Kokkos::LayoutRight, MemSpace, Unmanaged>;
    const In A = ta ? In(a, k, m) : In(a, m, k);
    const In B = tb ? In(b, n, k) : In(b, k, n);
    const Out C(c, m, n);
    auto lock = dispatch_lock();
#if defined(KOKKOSKERNELS_VERSION) && KOKKOSKERNELS_VERSION >= 40000
    // Kokkos Kernels 4 takes the instance: the gemm is ordered with the
    // stream's other work and runs on its CUDA/HIP stream or SYCL queue.
    KokkosBlas::gemm(space, ta ? "T" : "N", tb ? "T" : "N", T(1), A, B, static_cast<T>(beta), C);
#else
    // Kokkos Kernels 3 runs on the default instance of the views' space; on
    // Kokkos 3 every stream is that default instance (see KokkosStream), so
    // the gemm stays in order with the stream's work.
    (void)space;
    KokkosBlas::gemm(ta ? "T" : "N", tb ? "T" : "N", T(1), A, B, static_cast<T>(beta), C);
#endif
}
#else
template <class Space, class T>
void gemm_vendor(const Space&, const T*, const T*, T*, std::size_t, std::size_t, std::size_t, bool, bool, double) {
    throw Unsupported("kokkos: the vendor path (Kokkos Kernels) was not built: KokkosKernels was not found when "
                      "accel was configured; use the native path or reconfigure with KokkosKernels_ROOT");
}
#endif

#define ACCEL_KOKKOS_INSTANTIATE_VENDOR(S)                                                                       \
    template void gemm_vendor<S, float>(const S&, const float*, const float*, float*, std::size_t, std::size_t,  \
                                        std::size_t, bool, bool, double);                                        \
    template void gemm_vendor<S, double>(const S&, const double*, const double*, double*, std::size_t,           \
                                         std::size_t, std::size_t, bool, bool, double);
ACCEL_KOKKOS_FOR_EACH_SPACE(ACCEL_KOKKOS_INSTANTIATE_VENDOR)
#undef ACCEL_KOKKOS_INSTANTIATE_VENDOR

}  // namespace kokkos
}  // namespace accel
