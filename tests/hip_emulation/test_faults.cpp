// The HIP backend under faults injected into accel's emulated HIP runtime
// (backends/hip/emulation): what an AMD GPU run would hit, asserted as the
// documented accel exceptions carrying HIP's code names. Each case runs in a
// process of its own (CTest hip-emulated.<case>, --test-case=<case>:*) with
// its fault set by ACCEL_HIP_EMULATION_FAULTS before accel first probes, and
// ACCEL_PLUGIN_PATH naming the emulated plugin's folder.
#include "support/check.hpp"

#include <cstdlib>
#include <string>

using namespace accel;
using namespace accel_test;

// ACCEL_HIP_EMULATION_FAULTS=malloc_fail=1
TEST_CASE("malloc: a refused hipMalloc is an OutOfMemory naming hipMalloc and HIP's code, and the device carries on") {
    auto dev = open_device("hip");
    try {
        Buffer refused(dev, 123456);
        FAIL("the refused allocation succeeded");
    } catch (const OutOfMemory& e) {
        INFO(std::string(e.what()));
        CHECK(contains(e.what(), "hipMalloc refused 123456 bytes"));
        CHECK(contains(e.what(), "hipErrorOutOfMemory"));
    }
    add_works(dev);
}

// ACCEL_HIP_EMULATION_FAULTS=launch_error=700
TEST_CASE("sticky: a kernel's illegal address is a DeviceError named hipErrorIllegalAddress, for good") {
    auto dev = open_device("hip");
    const std::size_t n = 1000;
    auto x = Tensor::from_host(dev, {n}, std::vector<float>(n, 1.0f));
    Tensor y(dev, {n});
    for (int attempt = 0; attempt < 2; ++attempt) {  // the failing kernel, then any later use
        CAPTURE(attempt);
        try {
            ops::sigmoid(x, y);
            y.download();
            FAIL("the device worked after its kernel hit an illegal address");
        } catch (const DeviceError& e) {
            INFO(std::string(e.what()));
            CHECK(e.code() == 700);
            CHECK(e.code_name() == "hipErrorIllegalAddress");
            CHECK(contains(e.what(), "the HIP context is now unusable; restart the process"));
            CHECK(contains(e.what(), "hipErrorIllegalAddress (700)"));  // HIP's name, never CUDA's
            CHECK_FALSE(contains(e.what(), "cudaError"));
        }
    }
    add_works(open_device("host"));
}

// ACCEL_HIP_EMULATION_FAULTS=busy=1
TEST_CASE("busy: a device another process holds leaves hip unavailable, naming why, and auto moves on") {
    try {
        open_device("hip");
        FAIL("hip opened a device another process holds");
    } catch (const BackendUnavailable& e) {
        INFO(std::string(e.what()));
        CHECK(contains(e.what(), "no usable HIP device: HIP device 0"));
        CHECK(contains(e.what(), "hipErrorContextAlreadyInUse (216)"));
    }
    auto any = open_device("auto");
    CHECK(any->info().backend != "hip");
    add_works(any);
}

// ACCEL_HIP_EMULATION_FAULTS=warp_size=64
TEST_CASE("identity: the device says it is HIP, its wavefront width and its vendor BLAS; hip:gpu opens it") {
    auto dev = open_device("hip");
    const DeviceInfo& i = dev->info();
    CHECK(i.backend == "hip");
    CHECK(i.vendor == "Advanced Micro Devices, Inc.");
    CHECK(i.timer == "hipEvent");
    CHECK(i.runtime_version == "HIP runtime 5.2.0");
    CHECK(i.uuid.size() == 36);
    std::string wavefront, blas;
    for (const auto& kv : i.extra) {
        if (kv.first == "wavefront size") wavefront = kv.second;
        if (kv.first == "vendor BLAS") blas = kv.second;
    }
    CHECK(wavefront == "64 threads");
    CHECK(contains(blas, "rocBLAS"));
    CHECK(dev->kernel_table().supports(Op::gemm, DType::bf16, OpPath::vendor));
    add_works(dev);
    CHECK(open_device("hip:gpu")->selector() == "hip:0");  // selectors hip:N and hip:gpu
    CHECK_THROWS_AS(open_device("hip:npu"), InvalidArgument);
}
