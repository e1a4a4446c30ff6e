// Uses what the Kokkos plugin uses (initialize, memory, host deep_copy,
// range and team kernels, fences), so the link pulls in the same parts of a
// static Kokkos.
#include <Kokkos_Core.hpp>

extern "C" int accel_kokkos_link_probe() {
    if (!Kokkos::is_initialized()) Kokkos::initialize();
    const int n = 16;
    float* p = static_cast<float*>(Kokkos::kokkos_malloc<>("probe", n * sizeof(float)));
    Kokkos::View<float*, Kokkos::MemoryTraits<Kokkos::Unmanaged>> v(p, n);
    Kokkos::parallel_for("probe", Kokkos::RangePolicy<>(0, n), KOKKOS_LAMBDA(int i) { v(i) = float(i); });
    Kokkos::parallel_for("probe_team", Kokkos::TeamPolicy<>(1, Kokkos::AUTO),
                         KOKKOS_LAMBDA(const Kokkos::TeamPolicy<>::member_type& t) { t.team_barrier(); });
    auto h = Kokkos::create_mirror_view(v);
    Kokkos::deep_copy(h, v);
    Kokkos::fence();
    Kokkos::kokkos_free<>(p);
    return h(n - 1) == float(n - 1) ? 0 : 1;
}
