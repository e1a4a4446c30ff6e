// Splitting host loops across CPU threads.
#pragma once

#include <algorithm>
#include <cstddef>

namespace accel {
namespace host {

/// Worker threads used by host kernels: ACCEL_HOST_THREADS, else hardware_concurrency().
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

}  // namespace host
}  // namespace accel
