// Splitting host loops across CPU threads.
#pragma once

#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

namespace accel {
namespace host {

/// Worker threads used by host kernels: ACCEL_HOST_THREADS, else hardware_concurrency().
unsigned thread_count();

/// Runs fn(begin, end) over [0, n) in chunks of `grain` items (≥ 1) spread over
/// thread_count() threads; runs inline when one chunk covers n.
template <class Fn>
void parallel_for(std::size_t n, std::size_t grain, Fn&& fn) {
    grain = std::max<std::size_t>(grain, 1);
    const std::size_t chunks = (n + grain - 1) / grain;
    const std::size_t workers = std::min<std::size_t>(thread_count(), chunks);
    if (workers <= 1) {
        fn(std::size_t{0}, n);
        return;
    }
    // Contiguous ranges, one per worker, each a whole number of chunks.
    const std::size_t per = (chunks + workers - 1) / workers * grain;
    std::vector<std::thread> pool;
    for (std::size_t w = 1; w < workers; ++w) {
        const std::size_t b = w * per, e = std::min(n, b + per);
        if (b < e) pool.emplace_back([&fn, b, e] { fn(b, e); });
    }
    fn(std::size_t{0}, std::min(n, per));
    for (auto& t : pool) t.join();
}

}  // namespace host
}  // namespace accel
