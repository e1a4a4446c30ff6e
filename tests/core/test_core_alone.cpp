// accel's core layer alone: linked from core's objects without ops (the
// build fails if core needs an ops symbol; test `layers` names it), with an
// in-process device of its own. Tensors move data, the environment's
// declarations work, and what needs ops says so.
#include <accel/closest_name.hpp>
#include <accel/environment.hpp>
#include <accel/error.hpp>
#include <accel/page_locked.hpp>
#include <accel/plugin.hpp>
#include <accel/tensor.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace accel;

namespace {

class MemoryStream final : public Stream {
public:
    explicit MemoryStream(Device& d) : Stream(d) {}
    void do_synchronize() override {}
};

class MemoryEvent final : public Event {
public:
    explicit MemoryEvent(Device& d) : Event(d) {}
    std::chrono::steady_clock::time_point time;

protected:
    void do_record(Stream&) override { time = std::chrono::steady_clock::now(); }
    void do_synchronize() override {}
};

DeviceInfo memory_device_info() {
    DeviceInfo i;
    i.backend = "memory";
    i.name = "system memory (core's test device)";
    i.type = "cpu";
    i.compute_units = 1;
    i.global_memory_bytes = std::uint64_t{1} << 30;
    i.timer = "steady_clock";
    return i;
}

// A device whose memory is malloc'd and whose copies are memcpy: no kernels.
class MemoryDevice : public Device {
public:
    MemoryDevice() : Device(memory_device_info()) {}

protected:
    ACCEL_DEVICE_RUNTIME_OVERRIDES  // the runtime every device has (accel/plugin.hpp)
};

DeviceHandle MemoryDevice::do_allocate(std::size_t bytes) { return std::malloc(bytes ? bytes : 1); }
void MemoryDevice::do_deallocate(DeviceHandle h) noexcept { std::free(h); }
void MemoryDevice::do_copy_h2d(DeviceHandle dst, std::size_t off, const void* src, std::size_t bytes, Stream&, bool) {
    std::memcpy(static_cast<char*>(dst) + off, src, bytes);
}
void MemoryDevice::do_copy_d2h(void* dst, DeviceHandle src, std::size_t off, std::size_t bytes, Stream&, bool) {
    std::memcpy(dst, static_cast<const char*>(src) + off, bytes);
}
void MemoryDevice::do_copy_d2d(DeviceHandle dst, std::size_t doff, DeviceHandle src, std::size_t soff,
                               std::size_t bytes, Stream&, bool) {
    std::memmove(static_cast<char*>(dst) + doff, static_cast<const char*>(src) + soff, bytes);
}
std::unique_ptr<Stream> MemoryDevice::do_create_stream() { return std::make_unique<MemoryStream>(*this); }
std::unique_ptr<Event> MemoryDevice::do_create_event() { return std::make_unique<MemoryEvent>(*this); }
double MemoryDevice::do_elapsed_ms(Event& a, Event& b) {
    return std::chrono::duration<double, std::milli>(static_cast<MemoryEvent&>(b).time -
                                                     static_cast<MemoryEvent&>(a).time)
        .count();
}
void MemoryDevice::do_synchronize() {}

// Two capabilities of a test's own, the second at a non-zero offset in the
// device that has both, and a later version of the second that no device
// offers.
struct FirstCapability {
    static constexpr std::string_view capability_name = "test.first/1";
    virtual ~FirstCapability() = default;
    virtual int first() = 0;
    int first_data = 1;
};
struct SecondCapability {
    static constexpr std::string_view capability_name = "test.second/1";
    virtual ~SecondCapability() = default;
    virtual int second() = 0;
    double second_data = 2;
};
struct SecondCapabilityV2 {
    static constexpr std::string_view capability_name = "test.second/2";
    virtual ~SecondCapabilityV2() = default;
};

class CapableDevice final : public MemoryDevice, public FirstCapability, public SecondCapability {
public:
    int first() override { return 1; }
    int second() override { return 2; }

protected:
    void* do_capability(std::string_view name) noexcept override {
        return offer_capability<FirstCapability, SecondCapability>(this, name);
    }
};

std::vector<float> random_floats(std::size_t n) {
    std::mt19937 rng(std::random_device{}());
    std::uniform_real_distribution<float> d(-1e3f, 1e3f);
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
}

}  // namespace

TEST_CASE("core alone: a tensor goes to a device and back unchanged, at every length") {
    auto dev = std::make_shared<MemoryDevice>();
    for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{1000}, std::size_t{65537}}) {
        CAPTURE(n);
        const auto x = random_floats(n);
        const Tensor t = Tensor::from_host(dev, {n}, x);
        CHECK(t.download() == x);
        CHECK(dev->memory_info().in_use >= n * sizeof(float));
    }
    CHECK(dev->memory_info().in_use == 0);
}

TEST_CASE("core alone: a device hands out the capabilities it names, each at its own address, and no other") {
    auto dev = std::make_shared<CapableDevice>();
    Device& as_device = *dev;
    SecondCapability* second = as_device.capability<SecondCapability>();
    REQUIRE(second != nullptr);
    CHECK(second == static_cast<SecondCapability*>(dev.get()));
    CHECK(static_cast<void*>(second) != static_cast<void*>(dev.get()));  // the offset is kept
    CHECK(second->second() == 2);
    CHECK(second->second_data == 2);
    REQUIRE(as_device.capability<FirstCapability>() != nullptr);
    CHECK(as_device.capability<FirstCapability>()->first() == 1);
    CHECK(as_device.capability<SecondCapabilityV2>() == nullptr);  // another version is another capability
    CHECK(as_device.probes() == nullptr);
    CHECK(as_device.tuning() == nullptr);
    CHECK(as_device.capability<KernelBuilder>() == nullptr);
}

TEST_CASE("core alone: a device without a capability says so where it is asked for") {
    auto dev = std::make_shared<MemoryDevice>();
    CHECK(dev->capability<FirstCapability>() == nullptr);
    CHECK_FALSE(PageLockedBuffer::available(*dev));
    CHECK_THROWS_WITH_AS(PageLockedBuffer(dev, 64), doctest::Contains("memory:0"), Unsupported);
    CHECK_THROWS_WITH_AS(PageLockedBuffer(dev, 64), doctest::Contains("no page-locked host memory"), Unsupported);
    CHECK_THROWS_WITH_AS(PageLockedBuffer(dev, 0), doctest::Contains("0 bytes"), InvalidArgument);
    CHECK_THROWS_WITH_AS(PageLockedBuffer(nullptr, 64), doctest::Contains("no device given"), InvalidArgument);
    KernelSource source;
    source.name = "k";
    source.code["c"] = "void k() {}";
    CHECK_THROWS_WITH_AS(dev->build_kernel(source), doctest::Contains("builds no program kernels"), Unsupported);
    CHECK_THROWS_WITH_AS(dev->native_object("memory", "context"), doctest::Contains("no interop"), Unsupported);
}

TEST_CASE("core alone: Tensor::to(DType) needs the op layer and says so") {
    auto dev = std::make_shared<MemoryDevice>();
    const Tensor t = Tensor::from_host(dev, {3}, std::vector<float>{1, 2, 3});
    try {
        (void)t.to(DType::f64);
        FAIL("Tensor::to(DType) ran without ops");
    } catch (const Unsupported& e) {
        CHECK(std::string(e.what()).find("no op layer") != std::string::npos);
    }
}

TEST_CASE("core alone: a variable declared here is read and checked; a typo of it is an error") {
    static const env::Declaration level{{"ACCEL_CORETEST_LEVEL", "1..9", "a level (default 1)", "core's tests"}};
    setenv("ACCEL_CORETEST_LEVEL", "3", 1);
    CHECK(env::read_uint("ACCEL_CORETEST_LEVEL", 1, 9) == 3u);
    setenv("ACCEL_CORETEST_LEVL", "3", 1);
    CHECK_THROWS_AS(env::check_unknown_variables(), InvalidArgument);
    unsetenv("ACCEL_CORETEST_LEVL");
    CHECK_NOTHROW(env::check_unknown_variables());
    unsetenv("ACCEL_CORETEST_LEVEL");
    CHECK(closest_name("ACCEL_CORETEST_LEVL", std::vector<std::string>{"ACCEL_CORETEST_LEVEL"}) ==
          "ACCEL_CORETEST_LEVEL");
}
