// The CUDA backend under faults injected into accel's CUDA emulation
// (backends/cuda/emulation/control.h): what a GPU run would hit, asserted as
// the documented accel exceptions, with the other devices and backends
// carrying on. Run with ACCEL_PLUGIN_PATH naming the emulated plugin's folder.
//
// The backend fixes its list of usable devices at its first probe, so each
// group of cases runs in its own process (CTest cuda-emulated.<group>, with
// --test-case=<group>:*) and sets its faults before accel first probes:
//   faults:   8 healthy devices; runtime faults switched between ops
//   unusable: every device busy, prohibited or without a kernel image
//   partly:   a busy device and one without a kernel image before a healthy one
#include "support/check.hpp"

#include <accel/graph.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <ostream>  // doctest prints the shared_ptr of a failed CHECK
#include <stdexcept>
#include <string>

using namespace accel;
using namespace accel_test;

namespace {

// The emulated plugin's control functions (control.h), from the very file the
// registry loads: dlopen returns the same object.
struct Emulation {
    int (*fault)(const char*, int, long) = nullptr;
    int (*current_device)() = nullptr;
    long (*counter)(const char*, int) = nullptr;
    void (*reset_pinned_peak)() = nullptr;
    void* (*host_alloc)(unsigned long) = nullptr;
    void (*host_free)(void*) = nullptr;
};

const Emulation& emulation() {
    static const Emulation e = [] {
        const char* dir = std::getenv("ACCEL_PLUGIN_PATH");
        const std::string path = std::string(dir ? dir : ".") + "/libaccel-backend-cuda.so";
        void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!h) throw std::runtime_error("cannot load the emulated CUDA plugin " + path + ": " + dlerror());
        Emulation r;
        r.fault = reinterpret_cast<int (*)(const char*, int, long)>(dlsym(h, "accel_cuda_emulation_fault"));
        r.current_device = reinterpret_cast<int (*)()>(dlsym(h, "accel_cuda_emulation_current_device"));
        r.counter = reinterpret_cast<long (*)(const char*, int)>(dlsym(h, "accel_cuda_emulation_counter"));
        r.reset_pinned_peak = reinterpret_cast<void (*)()>(dlsym(h, "accel_cuda_emulation_reset_pinned_peak"));
        r.host_alloc = reinterpret_cast<void* (*)(unsigned long)>(dlsym(h, "accel_cuda_emulation_host_alloc"));
        r.host_free = reinterpret_cast<void (*)(void*)>(dlsym(h, "accel_cuda_emulation_host_free"));
        if (!r.fault || !r.current_device || !r.counter || !r.reset_pinned_peak || !r.host_alloc || !r.host_free) throw std::runtime_error(path + " is not the emulated CUDA plugin");
        return r;
    }();
    return e;
}

void fault(const char* name, int device, long value) {
    INFO("fault " << name << " on device " << device);
    REQUIRE(emulation().fault(name, device, value) == 0);
}

long counter(const char* name, int device) {
    const long v = emulation().counter(name, device);
    REQUIRE(v >= 0);
    return v;
}

constexpr long kInvalidValue = 1;  // cudaErrorInvalidValue: what the injected failures return

// The "faults" group: 8 healthy devices, set up before accel's first probe.
std::shared_ptr<Device> faults_device(int index) {
    static const bool once = (fault("devices", 0, 8), true);
    (void)once;
    return open_device("cuda:" + std::to_string(index));
}

}  // namespace

TEST_CASE("faults: a pinned buffer still in use is not an error of the next op (cudaErrorNotReady)") {
    // The second asynchronous upload finds the first one's staging buffer
    // busy (its event answers cudaErrorNotReady); the add that follows must
    // not report that code.
    auto dev = faults_device(0);
    auto g = rng(1);
    const std::size_t n = 4096;
    const auto a = uniform(g, n), b = uniform(g, n);
    Tensor ta(dev, {n}), tb(dev, {n}), tc(dev, {n});
    auto stream = dev->create_stream();
    fault("event_not_ready", 0, 4);
    dev->copy_host_to_device_async(ta.buffer(), 0, a.data(), n * 4, *stream);
    dev->copy_host_to_device_async(tb.buffer(), 0, b.data(), n * 4, *stream);
    ops::Options o;
    o.stream = stream.get();
    ops::add(ta, tb, tc, o);
    stream->synchronize();
    expect_close(tc.download(), reference::add(a, b), threshold(Op::add), "add after busy staging buffers");
    fault("event_not_ready", 0, 0);
}

TEST_CASE("faults: a failed cudaFree, cudaEventRecord or cudaMemGetInfo is not blamed on the next op") {
    auto dev = faults_device(0);
    { Buffer released(dev, 1024); }  // cached for reuse
    // A refused cudaMalloc empties the cache with cudaFree, which fails: nothing to report, and the retry succeeds.
    fault("fail_call:cudaFree", 0, kInvalidValue);
    fault("malloc_fail", 0, 1);
    { Buffer again(dev, std::size_t{3} << 20); }
    add_works(dev);

    auto stream = dev->create_stream();
    std::vector<float> host(256, 1.0f);
    Buffer target(dev, host.size() * 4);
    fault("fail_call:cudaEventRecord", 0, kInvalidValue);
    dev->copy_host_to_device_async(target, 0, host.data(), host.size() * 4, *stream);
    add_works(dev, stream.get());

    fault("malloc_fail", 0, 2);  // the first try and the one after emptying the cache
    fault("fail_call:cudaMemGetInfo", 0, kInvalidValue);
    CHECK_THROWS_AS(Buffer(dev, 4096), OutOfMemory);
    fault("malloc_fail", 0, 0);
    fault("fail_call:cudaMemGetInfo", 0, 0);
    add_works(dev);
}

TEST_CASE("faults: cudaMalloc refusing raises OutOfMemory naming the bytes, and the device carries on") {
    auto dev = faults_device(0);
    fault("malloc_fail", 0, 2);  // the first try and the one after emptying the cache
    try {
        Buffer refused(dev, 123456);
        FAIL("the refused allocation succeeded");
    } catch (const OutOfMemory& e) {
        INFO(std::string(e.what()));
        CHECK(contains(e.what(), "123456 bytes"));
        CHECK(contains(e.what(), std::to_string(dev->info().global_memory_bytes)));
    }
    fault("malloc_fail", 0, 0);
    add_works(dev);
}

TEST_CASE("faults: column_sum matches the float64 oracle at tall, wide and tiny shapes and any geometry") {
    auto dev = faults_device(3);
    auto g = rng(11);
    const std::vector<std::pair<std::size_t, std::size_t>> shapes{{100000, 10}, {10, 4096}, {0, 5},  {1, 1},
                                                                  {1, 7},       {3, 1},     {37, 33}, {1000, 1}};
    std::vector<std::optional<LaunchGeometry>> geometries{std::nullopt};
    geometries.push_back(LaunchGeometry{{1, 1, 1}, {1, 1, 1}});
    geometries.push_back(LaunchGeometry{{2, 1, 1}, {7, 3, 1}});
    geometries.push_back(LaunchGeometry{{1, 1, 1}, {1024, 1, 1}});
    geometries.push_back(LaunchGeometry{{3, 2, 1}, {32, 8, 1}});
    for (const auto& rc : shapes) {
        // Positive terms: a sum of signed terms can cancel to near 0, where its
        // relative error (and so the NMSE of a one-column output) has no bound.
        const auto x = uniform(g, rc.first * rc.second, 0.0f, 1.0f);
        auto X = Tensor::from_host(dev, {rc.first, rc.second}, x);
        for (const auto& geometry : geometries) {
            CAPTURE(rc.first);
            CAPTURE(rc.second);
            CAPTURE(geometry ? geometry->to_string() : std::string("default"));
            auto Y = poisoned(dev, {rc.second});
            ops::Options o;
            o.geometry = geometry;
            ops::column_sum(X, Y, o);
            expect_close(Y.download(), reference::column_sum(x, rc.first, rc.second), threshold(Op::column_sum), "column_sum");
        }
    }
}

TEST_CASE("faults: column_sum splits a tall column's rows over several threads") {
    // A column of 1 followed by 99 999 terms of 1e-8: one float32 running sum
    // per column stays at 1 (each term is below half an ulp of 1; error 1e-3);
    // with the rows split over row lanes only the first lane loses its terms.
    auto dev = faults_device(3);
    const std::size_t rows = 100000, cols = 10;
    std::vector<float> x(rows * cols, 1e-8f);
    std::fill(x.begin(), x.begin() + cols, 1.0f);
    auto X = Tensor::from_host(dev, {rows, cols}, x);
    auto Y = poisoned(dev, {cols});
    ops::column_sum(X, Y);
    const auto want = reference::column_sum(x, rows, cols);
    const auto got = Y.download();
    for (std::size_t c = 0; c < cols; ++c) {
        CAPTURE(c);
        CHECK(std::abs(got[c] - want[c]) / want[c] < 1e-4);
    }
}

TEST_CASE("faults: dense_backward and the bce loss reuse their temporaries, with no cudaFree") {
    // cudaFree waits for all of the device's work; freed temporaries are cached instead.
    const int d = 7;
    auto dev = faults_device(d);
    auto g = rng(3);
    const std::size_t batch = 64, in = 32, out = 10;
    const auto x = uniform(g, batch * in), w = uniform(g, out * in), y = uniform(g, batch * out, 0.0f, 1.0f),
               dy = uniform(g, batch * out), t = uniform(g, batch * out, 0.0f, 1.0f);
    auto X = Tensor::from_host(dev, {batch, in}, x), W = Tensor::from_host(dev, {out, in}, w),
         Y = Tensor::from_host(dev, {batch, out}, y), DY = Tensor::from_host(dev, {batch, out}, dy),
         T = Tensor::from_host(dev, {batch, out}, t);
    Tensor DX(dev, {batch, in}), DW(dev, {out, in}), DB(dev, {out});
    std::vector<double> loss_terms = reference::bce_with_logits(y, t);
    double want_loss = 0;
    for (double v : loss_terms) want_loss += v;
    want_loss /= static_cast<double>(loss_terms.size());
    const auto step = [&] {
        ops::dense_backward(X, W, Y, DY, Activation::sigmoid, &DX, DW, &DB);  // dz: a temporary
        const float loss = ops::bce_with_logits_loss(Y, T);                // losses and partial sums: temporaries
        CHECK(std::abs(loss - want_loss) <= 1e-6 * std::abs(want_loss));
    };
    step();  // fills the cache
    const long mallocs = counter("cudaMalloc", d), frees = counter("cudaFree", d);
    for (int i = 0; i < 10; ++i) step();
    dev->synchronize();
    CHECK(counter("cudaFree", d) == frees);
    // A block freed just before may still be pending at the next allocation:
    // at most one more block per temporary (dz, losses, partial sums), not one per step.
    CHECK(counter("cudaMalloc", d) - mallocs <= 3);
    const auto dz = reference::sigmoid_backward(dy, y);
    expect_close(DB.download(), reference::column_sum(std::vector<float>(dz.begin(), dz.end()), batch, out), threshold(Op::matmul), "db");
}

TEST_CASE("faults: a freed block is reused only once the work enqueued before its free has completed") {
    const int d = 6;
    auto dev = faults_device(d);
    add_works(dev);  // the default stream exists: the free records an event there
    const std::size_t bytes = std::size_t{1} << 20;
    DeviceHandle first = nullptr;
    {
        Buffer a(dev, bytes);
        first = a.handle();
    }
    fault("event_not_ready", d, 1000000);  // the events recorded at the free report pending
    Buffer b(dev, bytes);
    CHECK(b.handle() != first);
    fault("event_not_ready", d, 0);
    dev->synchronize();  // the events complete
    const long mallocs = counter("cudaMalloc", d);
    Buffer c(dev, bytes);  // reused
    CHECK(c.handle() == first);
    CHECK(counter("cudaMalloc", d) == mallocs);
    add_works(dev);
}

TEST_CASE("faults: pinned staging stays under its 256 MiB cap while copies are pending") {
    // Every event query answers NotReady, so no staging buffer is seen to
    // come back by polling; the pool must wait for one rather than grow.
    const int d = 5;
    auto dev = faults_device(d);
    const std::size_t n = std::size_t{12} << 20;  // 48 MiB of floats per copy, 8 copies: 384 MiB
    std::vector<std::vector<float>> host;
    for (int i = 0; i < 2; ++i) host.emplace_back(n, static_cast<float>(i + 1));
    Buffer target(dev, n * 4);
    auto stream = dev->create_stream();
    emulation().reset_pinned_peak();
    const long before = counter("pinned_bytes", d);
    fault("event_not_ready", d, 1000000);
    for (int i = 0; i < 8; ++i) dev->copy_host_to_device_async(target, 0, host[i % 2].data(), n * 4, *stream);
    stream->synchronize();
    fault("event_not_ready", d, 0);
    CHECK(counter("pinned_peak_bytes", d) - before <= (256L << 20));
    std::vector<float> back(n);
    dev->copy_device_to_host(back.data(), target, 0, n * 4);
    CHECK(back == host.back());
}

TEST_CASE("faults: a device-to-host copy into pinned memory is one DMA, with no host callback") {
    const int d = 4;
    auto dev = faults_device(d);
    auto g = rng(9);
    const std::size_t n = 100000;
    const auto data = uniform(g, n);
    auto X = Tensor::from_host(dev, {n}, data);
    auto stream = dev->create_stream();
    float* pinned = static_cast<float*>(emulation().host_alloc(n * 4));
    REQUIRE(pinned);
    long callbacks = counter("cudaLaunchHostFunc", d);
    dev->copy_device_to_host_async(pinned, X.buffer(), 0, n * 4, *stream);
    stream->synchronize();
    CHECK(counter("cudaLaunchHostFunc", d) == callbacks);
    CHECK(std::vector<float>(pinned, pinned + n) == data);
    emulation().host_free(pinned);

    std::vector<float> pageable(n, -1.0f);  // staged, then copied by a callback
    callbacks = counter("cudaLaunchHostFunc", d);
    dev->copy_device_to_host_async(pageable.data(), X.buffer(), 0, n * 4, *stream);
    stream->synchronize();
    CHECK(counter("cudaLaunchHostFunc", d) == callbacks + 1);
    CHECK(pageable == data);

    std::fill(pageable.begin(), pageable.end(), -1.0f);  // the pointer query fails: the staged path, still right
    fault("fail_call:cudaPointerGetAttributes", d, kInvalidValue);
    dev->copy_device_to_host_async(pageable.data(), X.buffer(), 0, n * 4, *stream);
    stream->synchronize();
    CHECK(pageable == data);
    add_works(dev, stream.get());
}

TEST_CASE("faults: accel leaves the calling thread's current CUDA device as it found it") {
    REQUIRE(emulation().current_device() == 0);
    auto dev = faults_device(1);  // opening it makes device 1 current while it works
    CHECK(emulation().current_device() == 0);
    add_works(dev);
    dev->synchronize();
    CHECK(emulation().current_device() == 0);
}

TEST_CASE("faults: after an unrecoverable error the device reports itself unusable with a restart hint") {
    // 700 (illegal address) and the codes CUDA 13 added that leave the
    // context unusable: 226 (error containment), 721, 810, 911.
    const std::vector<std::pair<int, long>> cases{{2, 700}, {3, 226}, {4, 721}, {5, 810}, {6, 911}};
    for (const auto& c : cases) {
        CAPTURE(c.second);
        auto dev = faults_device(c.first);
        const std::size_t n = 1000;
        auto x = Tensor::from_host(dev, {n}, std::vector<float>(n, 1.0f));
        Tensor y(dev, {n});
        fault("launch_error", c.first, c.second);
        try {
            // The kernel fails on the device; the launch's own error check
            // reports it when the failure already happened, else synchronize.
            ops::sigmoid(x, y);
            dev->synchronize();
            FAIL("synchronize after a failed kernel succeeded");
        } catch (const DeviceError& e) {
            INFO(std::string(e.what()));
            CHECK(e.code() == c.second);
            CHECK(contains(e.what(), "restart the process"));
        }
        try {  // and from then on: every use says the same
            ops::sigmoid(x, y);
            y.download();
            FAIL("the device still works after an unrecoverable error");
        } catch (const DeviceError& e) {
            INFO(std::string(e.what()));
            CHECK(e.code() == c.second);
            CHECK(contains(e.what(), "restart the process"));
        }
    }
    add_works(faults_device(0));  // the other devices carry on
    add_works(open_device("host"));
}

TEST_CASE("faults: a replay is one cudaGraphLaunch per run of fixed kernels; after an unrecoverable error, the sticky error") {
    auto dev = faults_device(7);
    REQUIRE(dev->capability<GraphRecorder>() != nullptr);
    auto r = rng(0x67726166);
    const std::size_t n = 300;
    const auto x0 = uniform(r, n), g0 = uniform(r, n);
    auto x = Tensor::from_host(dev, {n}, x0), grad = Tensor::from_host(dev, {n}, g0);
    Tensor y(dev, {n}), z(dev, {n});
    auto m = Tensor::from_host(dev, {n}, std::vector<float>(n, 0.0f)), v = Tensor::from_host(dev, {n}, m.download());
    std::size_t t = 1;
    const ops::AdamParams hp{1e-2f, 0.9f, 0.999f, 1e-8f};
    // sigmoid, gelu | adam (its scalars change at every replay) | relu: two native graphs and one call between them.
    const Graph g = capture(dev->default_stream(), [&] {
        ops::sigmoid(x, y);
        ops::gelu(y, z);
        ops::adam_step_from(x, grad, m, v, t, hp);
        ops::relu(z, y);
    });
    REQUIRE(g.size() == 4);
    CHECK(counter("cudaGraphLaunch", 7) == 0);  // a capture and its recording launch nothing
    g.launch();
    dev->synchronize();
    CHECK(counter("cudaGraphLaunch", 7) == 2);
    // The same bits as the eager calls (the kernels are the eager ones, launched from the graph).
    auto xe = Tensor::from_host(dev, {n}, x0), me = Tensor::from_host(dev, {n}, std::vector<float>(n, 0.0f));
    auto ve = Tensor::from_host(dev, {n}, me.download());
    Tensor ye(dev, {n}), ze(dev, {n});
    ops::sigmoid(xe, ye);
    ops::gelu(ye, ze);
    ops::adam_step(xe, grad, me, ve, 1, hp);
    ops::relu(ze, ye);
    CHECK(y.download() == ye.download());
    CHECK(x.download() == xe.download());
    // The next kernel launched, adam's (enqueued between the two graphs), fails with an illegal address.
    fault("launch_error", 7, 700);
    try {
        t = 2;
        g.launch();
        dev->synchronize();
        FAIL("a replay after a failed kernel succeeded");
    } catch (const DeviceError& e) {
        CHECK(e.code() == 700);
    }
    try {
        g.launch();
        FAIL("a replay on a lost device succeeded");
    } catch (const DeviceError& e) {
        INFO(std::string(e.what()));
        CHECK(e.code() == 700);
        CHECK(contains(e.what(), "restart the process"));
    }
}

TEST_CASE("unusable: busy, prohibited and imageless devices make cuda unavailable, and auto moves on") {
    fault("devices", 0, 3);
    fault("compute_mode", 0, 3);  // exclusive-process ...
    fault("busy", 0, 1);          // ... and held by another process
    fault("compute_mode", 1, 2);  // prohibited
    fault("no_kernel_image", 2, 1);
    try {
        open_device("cuda");
        FAIL("cuda opened with no usable device");
    } catch (const BackendUnavailable& e) {
        INFO(std::string(e.what()));
        CHECK(contains(e.what(), "exclusive-process"));
        CHECK(contains(e.what(), "cudaErrorDevicesUnavailable (46)"));
        CHECK(contains(e.what(), "Prohibited"));
        CHECK(contains(e.what(), "cudaErrorNoKernelImageForDevice (209)"));
    }
    auto any = open_device("auto");
    CHECK(any->info().backend != "cuda");
    add_works(any);
}

TEST_CASE("partly: a busy device and one without a kernel image are left out; cuda:0 is the next one") {
    fault("devices", 0, 3);
    fault("compute_mode", 0, 3);
    fault("busy", 0, 1);
    fault("no_kernel_image", 1, 1);
    auto dev = open_device("cuda");
    const auto& extra = dev->info().extra;
    const auto ordinal = std::find_if(extra.begin(), extra.end(), [](const auto& kv) { return kv.first == "CUDA device ordinal"; });
    REQUIRE(ordinal != extra.end());
    CHECK(ordinal->second == "2");
    add_works(dev);
    CHECK(open_device("auto") == dev);
    CHECK_THROWS_AS(open_device("cuda:1"), BackendUnavailable);
}
