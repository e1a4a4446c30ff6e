// Splitting host loops across CPU threads.
#pragma once

#include <algorithm>
#include <cstddef>

namespace accel {
namespace host {

/// The most worker threads ACCEL_HOST_THREADS may ask for.
constexpr unsigned kMaxThreads = 4096;

/// Worker threads used by host kernels: ACCEL_HOST_THREADS (1..kMaxThreads),
/// else hardware_concurrency(). Throws InvalidArgument naming the variable,
/// its value and the accepted values when ACCEL_HOST_THREADS is set to
/// anything else (the host device's constructor calls it first, so opening
/// the device fails). Thread-safe.
unsigned thread_count();

/// Runs fn(begin, end) over [0, n) in chunks of `grain` items (≥ 1) on
/// OpenMP's persistent thread team (at most thread_count() threads); runs
/// inline when one chunk covers n, so small ops pay no threading cost.
template <class Fn>
void parallel_for(std::size_t n, std::size_t grain, Fn&& fn) {
    grain = std::max<std::size_t>(grain, 1);
    const std::size_t chunks = (n + grain - 1) / grain;
    const std::size_t workers = std::min<std::size_t>(thread_count(), chunks);
    if (workers <= 1) {
        fn(std::size_t{0}, n);
        return;
    }
    const long long count = static_cast<long long>(chunks);
#pragma omp parallel for schedule(static) num_threads(static_cast<int>(workers))
    for (long long c = 0; c < count; ++c) {
        const std::size_t b = static_cast<std::size_t>(c) * grain;
        fn(b, std::min(n, b + grain));
    }
}

/// Runs fn(i) for every i in [0, count) on OpenMP's thread team (at most
/// thread_count() threads), handing items out one at a time as threads come
/// free: a thread the OS preempts holds back only the item it is on. Runs
/// inline when there is one item or one thread. fn must be safe to call
/// concurrently for distinct i.
template <class Fn>
void parallel_items(std::size_t count, Fn&& fn) {
    const std::size_t workers = std::min<std::size_t>(thread_count(), count);
    if (workers <= 1) {
        for (std::size_t i = 0; i < count; ++i) fn(i);
        return;
    }
    const long long n = static_cast<long long>(count);
#pragma omp parallel for schedule(dynamic, 1) num_threads(static_cast<int>(workers))
    for (long long i = 0; i < n; ++i) fn(static_cast<std::size_t>(i));
}

}  // namespace host
}  // namespace accel
