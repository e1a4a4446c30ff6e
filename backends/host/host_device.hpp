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
#include <cstdint>
#include <string>

namespace accel {
namespace host {

/// Host work runs synchronously in the calling thread (plus worker threads
/// it joins), so a stream only orders nothing and synchronize() returns at once.
class HostStream final : public Stream {
public:
    explicit HostStream(Device& d) : Stream(d) {}
    void do_synchronize() override {}
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
    using Dgemm = void (*)(int, int, int, int, int, int, double, const double*, int, const double*, int, double,
                           double*, int);
    /// OpenBLAS's bf16 GEMM: A, B bf16 (bit patterns), C float32.
    using Sbgemm = void (*)(int, int, int, int, int, int, float, const std::uint16_t*, int, const std::uint16_t*, int,
                            float, float*, int);
    Sgemm sgemm = nullptr;
    Dgemm dgemm = nullptr;  ///< null where the library has no cblas_dgemm
    /// null where the library has no cblas_sbgemm (OpenBLAS built without
    /// BUILD_BFLOAT16, as Debian 12's 0.3.21 is)
    Sbgemm sbgemm = nullptr;
    std::string description;  ///< library, version, core and why; or why none was loaded
    /// The loaded library's file name without its folder ("libopenblas.so.0"),
    /// for messages that must not depend on the machine; "" when none loaded.
    std::string library;
};

/// Loads the CBLAS once per process (thread-safe). Without ACCEL_HOST_BLAS
/// it never throws: when no library loads, sgemm is null and description
/// says why. When ACCEL_HOST_BLAS is set, every call throws InvalidArgument
/// (naming the variable, its value and the accepted values) if the value is
/// not one of them, or if the library it names cannot be loaded (with the
/// loader's message) or has no cblas_sgemm: the host device's constructor
/// calls it, so opening the device fails instead of running without the
/// library asked for.
const Cblas& cblas();

/// C[m,n] = op(A)·op(B) + beta·C by the CBLAS (row-major; A [m,k] or [k,m]
/// when ta, B [k,n] or [n,k] when tb), one call at a time. T: float
/// (sgemm), double (dgemm; blas.dgemm must be non-null) or Eigen::bfloat16
/// (sbgemm into a float32 copy of C, rounded once to bf16; blas.sbgemm must
/// be non-null). host_vendor.cpp.
template <class T>
void gemm_vendor(const Cblas& blas, const T* a, const T* b, T* c, std::size_t m, std::size_t n, std::size_t k, bool ta,
                 bool tb, double beta);

/// The one host device: all CPU threads, system memory. Its kernels are
/// registered per dtype in host_ops.cpp; the vendor gemm where a CBLAS loaded.
class HostDevice final : public Device, public Probes, public KernelBuilder {
public:
    // Probes (contracts in accel/device.hpp). launch_empty dispatches one
    // empty task to each thread of the OpenMP team: the host's counterpart
    // of a launch, what every parallel op pays.
    ACCEL_PROBES_OVERRIDES

    HostDevice();

protected:
    ACCEL_DEVICE_RUNTIME_OVERRIDES  // the runtime every device has (accel/plugin.hpp)
    /// Its capabilities (accel/capability.hpp); its NativeInterop is an
    /// object of its own (host_interop.cpp).
    void* do_capability(std::string_view name) noexcept override;
    // KernelBuilder: a program's own kernels.
    std::shared_ptr<accel::BuiltKernel> build_program_kernel(const accel::KernelSource& source) override;
    /// Host memory is this device's memory: the handle is `data` itself.
    DeviceHandle do_map_host_memory(void* data, std::size_t) override { return data; }
    LaunchGeometry do_default_geometry(Op op, DType dtype, std::size_t rows, std::size_t cols) const override;
    std::string do_unsupported_reason(Op op, DType dtype, OpPath path) const override;  // host_ops.cpp

private:
    void register_kernels();  // host_ops.cpp
};

}  // namespace host
}  // namespace accel
