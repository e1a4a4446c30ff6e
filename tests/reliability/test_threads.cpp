// Threads sharing one device: the thread-safety contract of accel/device.hpp.
//
// T threads (1, 2, 4, 8) share the device of ACCEL_BACKEND, each opening it
// itself through accel::default_device() (they must all get the same Device),
// and together run ACCEL_STRESS_OPS (default 10 000) mixed ops — add, sigmoid,
// matmul and dense on the native path and, where the device has it, the vendor
// path — each on fresh random inputs of a size drawn per op, its result
// checked against the float64 oracle with the conformance thresholds. Once
// with a stream per thread, once with every thread on the shared default
// stream. A kernel that ran with another thread's arguments, a lost or
// duplicated launch, or a crash in a runtime fails it. The throughput (ops/s,
// including uploads, downloads and the oracle) is printed per configuration.
#include "support/check.hpp"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>

using namespace accel;
using namespace accel_test;

namespace {

const env::Declaration kStressOpsVariable{{"ACCEL_STRESS_OPS", "the number of ops",
                                           "ops of the reliability suite's stress test (default 10000)",
                                           "accel's test programs"}};

std::size_t total_ops() {
    return static_cast<std::size_t>(accel::env::read_uint("ACCEL_STRESS_OPS", 1, 100000000).value_or(10000));
}

struct Outcome {
    std::atomic<std::size_t> ops{0};
    std::mutex mutex;
    std::vector<std::string> failures;  // first few, guarded by mutex
    std::atomic<std::size_t> failure_count{0};

    void fail(const std::string& what) {
        failure_count++;
        std::lock_guard<std::mutex> lock(mutex);
        if (failures.size() < 8) failures.push_back(what);
    }
};

reference::Vec magnitudes(const std::vector<float>& v) {
    reference::Vec r(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) r[i] = std::fabs(double(v[i]));
    return r;
}

// One op of kind `kind` on fresh inputs, enqueued on `s`, checked against the oracle.
void one_op(const std::shared_ptr<Device>& dev, Stream& s, std::mt19937_64& g, unsigned kind, Outcome& out) {
    const bool vendor_ok = dev->kernel_table().supports(Op::matmul, OpPath::vendor);
    ops::Options o;
    o.stream = &s;
    std::uniform_int_distribution<std::size_t> small(1, 40), large(1, 4000);
    std::string what;
    std::vector<float> got;
    // scale: for sums, the magnitude they were computed at, so that a product element that cancels to near
    // zero (a 1×1 output of 15 terms) is judged at that size (error_at_scale, as the conformance suite).
    std::vector<double> ref, scale;
    double threshold = accel_test::threshold(Op::add);
    switch (kind % 6) {
        case 0: {
            const std::size_t n = large(g);
            const auto a = uniform(g, n), b = uniform(g, n);
            Tensor ta = Tensor::from_host(dev, {n}, a), tb = Tensor::from_host(dev, {n}, b), tc(dev, {n});
            ops::add(ta, tb, tc, o);
            s.synchronize();
            got = tc.download(), ref = reference::add(a, b), what = "add n=" + std::to_string(n);
            break;
        }
        case 1: {
            const std::size_t n = large(g);
            const auto x = uniform(g, n, -8.0f, 8.0f);
            Tensor tx = Tensor::from_host(dev, {n}, x), ty(dev, {n});
            ops::sigmoid(tx, ty, o);
            s.synchronize();
            got = ty.download(), ref = reference::sigmoid(x), what = "sigmoid n=" + std::to_string(n);
            threshold = accel_test::threshold(Op::sigmoid);
            break;
        }
        case 2:
        case 3: {
            const std::size_t m = small(g), n = small(g), k = small(g);
            const auto a = uniform(g, m * k), b = uniform(g, k * n);
            Tensor ta = Tensor::from_host(dev, {m, k}, a), tb = Tensor::from_host(dev, {k, n}, b), tc(dev, {m, n});
            o.path = kind % 6 == 3 && vendor_ok ? ops::PathChoice::vendor : ops::PathChoice::native;
            ops::matmul(ta, tb, tc, {}, o);
            s.synchronize();
            got = tc.download(), ref = reference::matmul(a, b, m, n, k);
            scale = reference::matmul(magnitudes(a), magnitudes(b), m, n, k);
            what = std::string("matmul (") + name(o.path) + ") " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                   std::to_string(k);
            threshold = accel_test::threshold(Op::matmul);
            break;
        }
        default: {
            const std::size_t batch = small(g), in = small(g), outf = small(g);
            const auto x = uniform(g, batch * in), w = uniform(g, outf * in), b = uniform(g, outf);
            Tensor tx = Tensor::from_host(dev, {batch, in}, x), tw = Tensor::from_host(dev, {outf, in}, w),
                   tb = Tensor::from_host(dev, {outf}, b), ty(dev, {batch, outf});
            o.path = kind % 6 == 5 && vendor_ok ? ops::PathChoice::vendor : ops::PathChoice::native;
            ops::dense(tx, tw, tb, ty, Activation::sigmoid, o);
            s.synchronize();
            got = ty.download(), ref = reference::dense(x, w, b, batch, in, outf, Activation::sigmoid);
            scale = reference::dense(magnitudes(x), magnitudes(w), magnitudes(b), batch, in, outf, Activation::none);
            what = std::string("dense (") + name(o.path) + ") batch " + std::to_string(batch) + ", " +
                   std::to_string(in) + " -> " + std::to_string(outf);
            threshold = accel_test::threshold(Op::matmul);
            break;
        }
    }
    const double e = scale.empty() ? reference::nmse(got, ref) : error_at_scale(got, ref, scale);
    if (got.size() != ref.size() || !(e <= threshold)) {
        char text[96];
        std::snprintf(text, sizeof text, ": %s %.3g above %.3g", scale.empty() ? "NMSE" : "error at scale", e,
                      threshold);
        out.fail(what + text);
    }
    out.ops++;
}

void stress(unsigned threads, bool own_streams) {
    const std::size_t total = total_ops();
    const std::shared_ptr<Device> dev = default_device();
    Outcome out;
    std::atomic<unsigned> other_device{0};
    std::vector<std::thread> pool;
    const auto t0 = std::chrono::steady_clock::now();
    for (unsigned t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            try {
                const std::shared_ptr<Device> mine = default_device();  // opened concurrently
                if (mine != dev) other_device++;
                auto g = rng(1000 * threads + 100 * own_streams + t);
                std::unique_ptr<Stream> own = own_streams ? mine->create_stream() : nullptr;
                Stream& s = own ? *own : mine->default_stream();
                for (std::size_t i = t; i < total; i += threads) one_op(mine, s, g, static_cast<unsigned>(i), out);
            } catch (const std::exception& e) {
                out.fail(std::string("thread ") + std::to_string(t) + " threw: " + e.what());
            }
        });
    }
    for (auto& th : pool) th.join();
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << "stress " << dev->selector() << ": " << threads << " thread(s), "
              << (own_streams ? "a stream each" : "default stream") << ": " << out.ops << " ops in " << sec
              << " s = " << static_cast<long>(static_cast<double>(out.ops) / sec) << " ops/s, "
              << out.failure_count << " wrong\n";
    std::string first_failures;  // one INFO: an INFO lives only to the end of its scope
    for (const auto& f : out.failures) first_failures += "\n  " + f;
    INFO("first failures:" << first_failures);
    INFO("seed " << seed() << " (rerun with ACCEL_TEST_SEED=" << seed() << ")");
    CHECK(other_device == 0u);
    CHECK(out.failures.empty());
    CHECK(out.failure_count == 0u);
    CHECK(out.ops == total);
}

}  // namespace

TEST_CASE("threads sharing one device, a stream each, compute what the oracle computes") {
    for (unsigned threads : {1u, 2u, 4u, 8u}) {
        CAPTURE(threads);
        stress(threads, true);
    }
}

TEST_CASE("threads sharing one device on the default stream compute what the oracle computes") {
    for (unsigned threads : {1u, 2u, 4u, 8u}) {
        CAPTURE(threads);
        stress(threads, false);
    }
}

TEST_CASE("the default stream is created once when threads ask for it at the same time") {
    for (int round = 0; round < 20; ++round) {
        std::shared_ptr<Device> dev = default_device();
        std::vector<Stream*> seen(8, nullptr);
        std::vector<std::thread> pool;
        for (std::size_t t = 0; t < seen.size(); ++t)
            pool.emplace_back([&, t] { seen[t] = &dev->default_stream(); });
        for (auto& th : pool) th.join();
        for (Stream* s : seen) CHECK(s == seen[0]);
    }
}
