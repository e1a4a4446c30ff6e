// Every resource of a device is released when the last handle to it goes.
//
// Opens the device of ACCEL_BACKEND, uses it (add, sigmoid, matmul and dense
// on the native path and, where the device has it, the vendor path, checked
// against the oracle), drops every handle, and does it again: 10 warm-up
// cycles (first-use costs: compilers, caches, thread pools), then 200 more.
// The resident set size (RSS, /proc/self/statm) may not grow by more than
// kRssGrowthLimit over the 200 cycles — 2.8 MB a cycle, as CLBlast's caches
// once leaked, would be 560 MB. Under a sanitizer RSS says nothing (below),
// so 20 cycles do: what is checked there (LeakSanitizer's leaks, races,
// use-after-free) shows in any cycle, and 200 took ThreadSanitizer 2 minutes.
// ACCEL_TEST_LIFECYCLE_CYCLES sets the count after the warm-up for a run that
// checks each cycle's calls rather than the RSS (Vulkan's validation layer,
// at almost a second a cycle on a CPU driver).
#include "support/check.hpp"

#include <malloc.h>
#include <unistd.h>

#include <fstream>
#include <iostream>

using namespace accel;
using namespace accel_test;

// The sanitizers' allocators keep freed memory resident (AddressSanitizer's
// quarantine; ThreadSanitizer's allocator, which malloc_trim does not reach:
// the Vulkan driver's 200 device creations left 25 MB there), so RSS says
// nothing about leaks under them; LeakSanitizer checks leaks at exit in the
// asan preset, and the release preset checks RSS.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ACCEL_TEST_RSS_MEANINGFUL 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define ACCEL_TEST_RSS_MEANINGFUL 0
#endif
#endif
#ifndef ACCEL_TEST_RSS_MEANINGFUL
#define ACCEL_TEST_RSS_MEANINGFUL 1
#endif

namespace {

const env::Declaration kCyclesVariable{{"ACCEL_TEST_LIFECYCLE_CYCLES", "a number of cycles (1 to 100000)",
                                        "open/use/release cycles after the warm-up in the reliability suite's "
                                        "lifecycle test (default 200, 20 under a sanitizer)",
                                        "accel's test programs"}};

constexpr std::size_t kWarmupCycles = 10;

std::size_t cycles() {
    return static_cast<std::size_t>(
        env::read_uint("ACCEL_TEST_LIFECYCLE_CYCLES", 1, 100000).value_or(ACCEL_TEST_RSS_MEANINGFUL ? 200 : 20));
}
constexpr double kRssGrowthLimit = 8.0 * 1024 * 1024;  // bytes: allocator noise, never a per-cycle leak

void use_and_release(std::mt19937_64& g) {
    std::shared_ptr<Device> dev = default_device();
    // matmul large enough that CLBlast runs its tiled Xgemm kernels and their
    // helpers, not only its direct kernel (their programs are what it caches).
    const std::size_t n = 4096, m = 160, k = 192, cols = 176;
    const auto a = uniform(g, n), b = uniform(g, n);
    Tensor ta = Tensor::from_host(dev, {n}, a), tb = Tensor::from_host(dev, {n}, b), tc(dev, {n});
    ops::add(ta, tb, tc);
    CHECK(reference::nmse(tc.download(), reference::add(a, b)) <= threshold(Op::add));
    ops::sigmoid(ta, tc);
    CHECK(reference::nmse(tc.download(), reference::sigmoid(a)) <= threshold(Op::sigmoid));
    const auto x = uniform(g, m * k), w = uniform(g, cols * k), bias = uniform(g, cols);
    Tensor tx = Tensor::from_host(dev, {m, k}, x), tw = Tensor::from_host(dev, {cols, k}, w),
           tbias = Tensor::from_host(dev, {cols}, bias), ty(dev, {m, cols});
    // Not accel_test::paths(): it holds the suite's device for good.
    std::vector<ops::PathChoice> path_choices{ops::PathChoice::native};
    if (dev->kernel_table().supports(Op::matmul, OpPath::vendor)) path_choices.push_back(ops::PathChoice::vendor);
    for (auto path : path_choices) {
        ops::Options o;
        o.path = path;
        ops::matmul(tx, tw, ty, {false, true}, o);
        CHECK(reference::nmse(ty.download(), reference::matmul(x, w, m, cols, k, false, true)) <= threshold(Op::matmul));
        ops::dense(tx, tw, tbias, ty, Activation::relu, o);
        CHECK(reference::nmse(ty.download(), reference::dense(x, w, bias, m, k, cols, Activation::relu)) <=
              threshold(Op::matmul));
    }
    auto s = dev->create_stream();
    CHECK(accel_test::timed_add(*s, ta, tb, tc) >= 0.0);
}  // every handle to the device goes here

}  // namespace

TEST_CASE("opening, using and releasing a device again and again does not grow the process") {
    auto g = rng(77);
    for (std::size_t i = 0; i < kWarmupCycles; ++i) use_and_release(g);
    const double before = resident_bytes();
    const std::size_t n = cycles();
    for (std::size_t i = 0; i < n; ++i) use_and_release(g);
    const double after = resident_bytes();
    std::cout << "lifecycle " << selector_from_env() << ": RSS " << before / 1048576 << " MiB after "
              << kWarmupCycles << " warm-up cycles, " << after / 1048576 << " MiB after " << n
              << " more (" << (after - before) / n << " bytes per cycle)\n";
    if (!ACCEL_TEST_RSS_MEANINGFUL) {
        MESSAGE("RSS growth not checked under a sanitizer (its allocator keeps freed memory resident); "
                "the release preset checks it, LeakSanitizer checks for leaks at exit in the asan preset");
        return;
    }
    INFO("RSS before " << before << " bytes, after " << after << " bytes");
    CHECK(after - before <= kRssGrowthLimit);
}
