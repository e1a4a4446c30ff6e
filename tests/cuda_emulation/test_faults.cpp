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
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include "support/check.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
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
        if (!r.fault || !r.current_device) throw std::runtime_error(path + " is not the emulated CUDA plugin");
        return r;
    }();
    return e;
}

void fault(const char* name, int device, long value) {
    INFO("fault " << name << " on device " << device);
    REQUIRE(emulation().fault(name, device, value) == 0);
}

constexpr long kInvalidValue = 1;  // cudaErrorInvalidValue: what the injected failures return

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// c = a + b on `dev` (on `stream` when given), checked against the oracle.
void add_works(const std::shared_ptr<Device>& dev, Stream* stream = nullptr) {
    auto g = rng(5);
    const std::size_t n = 5000;
    const auto a = uniform(g, n), b = uniform(g, n);
    auto ta = Tensor::from_host(dev, {n}, a), tb = Tensor::from_host(dev, {n}, b);
    auto tc = poisoned(dev, {n});
    ops::Options o;
    o.stream = stream;
    ops::add(ta, tb, tc, o);
    if (stream) stream->synchronize();  // download() runs on the default stream
    expect_close(tc.download(), reference::add(a, b), kNmseExact, "add on " + dev->selector());
}

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
    expect_close(tc.download(), reference::add(a, b), kNmseExact, "add after busy staging buffers");
    fault("event_not_ready", 0, 0);
}

TEST_CASE("faults: a failed cudaFree, cudaEventRecord or cudaMemGetInfo is not blamed on the next op") {
    auto dev = faults_device(0);
    fault("fail_call:cudaFree", 0, kInvalidValue);
    { Buffer released(dev, 1024); }  // its cudaFree fails: nothing to report, nothing to leave behind
    add_works(dev);

    auto stream = dev->create_stream();
    std::vector<float> host(256, 1.0f);
    Buffer target(dev, host.size() * 4);
    fault("fail_call:cudaEventRecord", 0, kInvalidValue);
    dev->copy_host_to_device_async(target, 0, host.data(), host.size() * 4, *stream);
    add_works(dev, stream.get());

    fault("malloc_fail", 0, 1);
    fault("fail_call:cudaMemGetInfo", 0, kInvalidValue);
    CHECK_THROWS_AS(Buffer(dev, 4096), OutOfMemory);
    add_works(dev);
}

TEST_CASE("faults: cudaMalloc refusing raises OutOfMemory naming the bytes, and the device carries on") {
    auto dev = faults_device(0);
    fault("malloc_fail", 0, 1);
    try {
        Buffer refused(dev, 123456);
        FAIL("the refused allocation succeeded");
    } catch (const OutOfMemory& e) {
        INFO(e.what());
        CHECK(contains(e.what(), "123456 bytes"));
        CHECK(contains(e.what(), std::to_string(dev->info().global_memory_bytes)));
    }
    add_works(dev);
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
        ops::sigmoid(x, y);  // the kernel fails on the device, after the launch returned
        try {
            dev->synchronize();
            FAIL("synchronize after a failed kernel succeeded");
        } catch (const DeviceError& e) {
            INFO(e.what());
            CHECK(e.code() == c.second);
            CHECK(contains(e.what(), "restart the process"));
        }
        try {  // and from then on: every use says the same
            ops::sigmoid(x, y);
            y.download();
            FAIL("the device still works after an unrecoverable error");
        } catch (const DeviceError& e) {
            INFO(e.what());
            CHECK(e.code() == c.second);
            CHECK(contains(e.what(), "restart the process"));
        }
    }
    add_works(faults_device(0));  // the other devices carry on
    add_works(open_device("host"));
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
        INFO(e.what());
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
