// Kokkos backend vendor path: KokkosBlas::gemm from Kokkos Kernels, which in
// turn uses the vendor BLAS it was built with (CPU BLAS, cuBLAS, rocBLAS) or
// its own kernels. Row-major operands are given as LayoutRight views, so no
// transposition identity is needed: "N"/"T" keep their meaning.
#include "kokkos_device.hpp"

#include <accel/error.hpp>

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

#if defined(ACCEL_KOKKOS_HAVE_KERNELS)
void gemm_vendor(const ExecSpace&, const float* a, const float* b, float* c, std::size_t m, std::size_t n,
                 std::size_t k, bool ta, bool tb, float beta) {
    // KokkosBlas::gemm of Kokkos Kernels 3.x runs on the default instance of
    // the views' execution space; the backend's streams are default
    // instances too, so the gemm stays in order with the stream's work.
    using In = Kokkos::View<const float**, Kokkos::LayoutRight, MemSpace, Unmanaged>;
    using Out = Kokkos::View<float**, Kokkos::LayoutRight, MemSpace, Unmanaged>;
    const In A = ta ? In(a, k, m) : In(a, m, k);
    const In B = tb ? In(b, n, k) : In(b, k, n);
    const Out C(c, m, n);
    auto lock = dispatch_lock();
    KokkosBlas::gemm(ta ? "T" : "N", tb ? "T" : "N", 1.0f, A, B, beta, C);
}
#else
void gemm_vendor(const ExecSpace&, const float*, const float*, float*, std::size_t, std::size_t, std::size_t, bool,
                 bool, float) {
    throw Unsupported("kokkos: the vendor path (Kokkos Kernels) was not built: KokkosKernels was not found when "
                      "accel was configured; use the native path or reconfigure with KokkosKernels_ROOT");
}
#endif

}  // namespace kokkos
}  // namespace accel
