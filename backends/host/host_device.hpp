// The host backend: plain C++ on the CPU, the baseline every GPU is compared to.
//
// Thread-safety (the contract of accel/device.hpp): ops run synchronously in
// the calling thread, on an OpenMP team of that thread's own, so threads
// sharing the device run their ops concurrently and a stream orders nothing
// that a return from the op has not already ordered. Vendor BLAS calls are
// serialized (host_vendor.cpp).
#pragma once

#include <accel/device.hpp>
#include <accel/plugin.hpp>

#include <chrono>
#include <string>

namespace accel {
namespace host {

/// Host work runs synchronously in the calling thread (plus worker threads
/// it joins), so a stream only orders nothing and synchronize() returns at once.
class HostStream final : public Stream {
public:
    explicit HostStream(Device& d) : Stream(d) {}
    void synchronize() override {}
};

/// Records std::chrono::steady_clock at record(); since work is synchronous
/// that is when all earlier work finished.
class HostEvent final : public Event {
public:
    explicit HostEvent(Device& d) : Event(d) {}
    std::chrono::steady_clock::time_point time{};

protected:
    void do_record(Stream&) override { time = std::chrono::steady_clock::now(); }
    void do_synchronize() override {}
};

/// A CBLAS library loaded at run time for the vendor path (see host_vendor.cpp).
struct Cblas {
    using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*,
                           int);
    Sgemm sgemm = nullptr;
    std::string description;  ///< library, version, core and why; or why none was loaded
};

/// Loads the CBLAS once per process (thread-safe). Never throws: on failure
/// sgemm is null and description says why.
const Cblas& cblas();

/// The one host device: all CPU threads, system memory.
class HostDevice final : public Device {
public:
    HostDevice();

protected:
    ACCEL_DEVICE_RUNTIME_OVERRIDES
    LaunchGeometry do_default_geometry(Op op, std::size_t rows, std::size_t cols) const override;
    /// True when a CBLAS library was loaded (see host_vendor.cpp).
    bool do_has_vendor_library() const override;

    ACCEL_DEVICE_KERNEL_OVERRIDES
};

}  // namespace host
}  // namespace accel
