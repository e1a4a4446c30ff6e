// Shared by the fuzz targets: sizes drawn from fuzz input, biased to where
// overflow checks live.
#pragma once

#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>

/// A size_t that is small (0..4096), a power of two or one off it, or any
/// value at all, as the input decides.
inline std::size_t fuzzed_extent(FuzzedDataProvider& in) {
    switch (in.ConsumeIntegralInRange<int>(0, 2)) {
        case 0: return in.ConsumeIntegralInRange<std::size_t>(0, 4096);
        case 1: {
            const std::size_t p = std::size_t{1} << in.ConsumeIntegralInRange<int>(0, 63);
            return p - 1 + in.ConsumeIntegralInRange<std::size_t>(0, 2);  // 2^k − 1, 2^k or 2^k + 1
        }
        default: return in.ConsumeIntegral<std::size_t>();
    }
}
