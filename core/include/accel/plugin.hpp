// accel/plugin.hpp — the binary interface between libaccel and a backend plugin.
#pragma once

#include <accel/device.hpp>

/// Bumped whenever Device/Backend/Stream/Event/DeviceInfo change layout or
/// virtuals. 3: DeviceInfo gained uuid, pci_bus_id and host; Device's
/// constructor moved into libaccel.
#define ACCEL_PLUGIN_ABI 3

extern "C" {
/// What a plugin's entry point returns. Plain C layout so that the ABI check
/// reads it safely before any C++ object crosses the boundary.
struct accel_plugin_info {
    int abi_version;           ///< must equal ACCEL_PLUGIN_ABI
    const char* backend_name;  ///< "host", "opencl", "kokkos", "cuda"
    /// Returns the process-wide Backend object (owned by the plugin, never
    /// deleted: plugins stay loaded until the process ends).
    accel::Backend* (*backend)();
};
/// The symbol every plugin exports.
typedef const accel_plugin_info* (*accel_plugin_entry_fn)();
}

/// Defines the entry point of a plugin whose Backend class is BackendClass.
#define ACCEL_DEFINE_PLUGIN(NAME, BackendClass)                                   \
    extern "C" __attribute__((visibility("default"))) const accel_plugin_info*  \
    accel_backend_plugin() {                                                    \
        static const accel_plugin_info info{ACCEL_PLUGIN_ABI, NAME, []() -> accel::Backend* { \
            static BackendClass instance;                                       \
            return &instance;                                                   \
        }};                                                                     \
        return &info;                                                           \
    }

/// Declares, inside a backend's Device subclass, an override of every runtime
/// hook of accel::Device (memory, copies, streams, events, synchronization,
/// the empty launch); their contracts are in accel/device.hpp. Each backend
/// defines them in its <name>_backend.cpp.
#define ACCEL_DEVICE_RUNTIME_OVERRIDES                                                                             \
    accel::DeviceHandle do_allocate(std::size_t bytes) override;                                                   \
    void do_deallocate(accel::DeviceHandle h) noexcept override;                                                   \
    void do_copy_h2d(accel::DeviceHandle dst, std::size_t off, const void* src, std::size_t bytes,                 \
                     accel::Stream& s, bool blocking) override;                                                    \
    void do_copy_d2h(void* dst, accel::DeviceHandle src, std::size_t off, std::size_t bytes, accel::Stream& s,     \
                     bool blocking) override;                                                                      \
    void do_copy_d2d(accel::DeviceHandle dst, std::size_t dst_off, accel::DeviceHandle src, std::size_t src_off,   \
                     std::size_t bytes, accel::Stream& s, bool blocking) override;                                 \
    std::unique_ptr<accel::Stream> do_create_stream() override;                                                    \
    std::unique_ptr<accel::Event> do_create_event() override;                                                      \
    double do_elapsed_ms(accel::Event& start, accel::Event& end) override;                                         \
    void do_synchronize() override;                                                                                \
    void do_launch_empty(accel::Stream& s) override;

/// Declares, inside a backend's Device subclass, an override of every kernel
/// hook of accel::Device (the k_* functions, with their documented meaning in
/// accel/device.hpp). Each backend defines them in its <name>_ops.cpp.
#define ACCEL_DEVICE_KERNEL_OVERRIDES                                                                              \
    void k_add(accel::DeviceHandle a, accel::DeviceHandle b, accel::DeviceHandle c, std::size_t n,                 \
               const accel::LaunchGeometry& g, accel::Stream& s) override;                                         \
    void k_sigmoid(accel::DeviceHandle x, accel::DeviceHandle y, std::size_t n, const accel::LaunchGeometry& g,   \
                   accel::Stream& s) override;                                                                     \
    void k_relu(accel::DeviceHandle x, accel::DeviceHandle y, std::size_t n, const accel::LaunchGeometry& g,      \
                accel::Stream& s) override;                                                                        \
    void k_relu_backward(accel::DeviceHandle dy, accel::DeviceHandle x, accel::DeviceHandle dx, std::size_t n,    \
                         const accel::LaunchGeometry& g, accel::Stream& s) override;                               \
    void k_sigmoid_backward(accel::DeviceHandle dy, accel::DeviceHandle y, accel::DeviceHandle dx, std::size_t n, \
                            const accel::LaunchGeometry& g, accel::Stream& s) override;                            \
    void k_matmul(accel::DeviceHandle a, accel::DeviceHandle b, accel::DeviceHandle c, std::size_t m,             \
                  std::size_t n, std::size_t k, bool trans_a, bool trans_b, accel::OpPath path,                    \
                  const accel::LaunchGeometry& g, accel::Stream& s) override;                                      \
    void k_dense(accel::DeviceHandle x, accel::DeviceHandle w, accel::DeviceHandle bias, accel::DeviceHandle y,   \
                 std::size_t batch, std::size_t in, std::size_t out, accel::Activation act, accel::OpPath path,    \
                 const accel::LaunchGeometry& g, accel::Stream& s) override;                                       \
    void k_column_sum(accel::DeviceHandle x, accel::DeviceHandle y, std::size_t rows, std::size_t cols,           \
                      const accel::LaunchGeometry& g, accel::Stream& s) override;                                  \
    void k_bce_with_logits(accel::DeviceHandle z, accel::DeviceHandle t, accel::DeviceHandle l, std::size_t n,    \
                           const accel::LaunchGeometry& g, accel::Stream& s) override;                             \
    void k_bce_with_logits_backward(accel::DeviceHandle z, accel::DeviceHandle t, accel::DeviceHandle dz,         \
                                    std::size_t n, float scale, const accel::LaunchGeometry& g,                    \
                                    accel::Stream& s) override;                                                    \
    void k_adam_step(accel::DeviceHandle p, accel::DeviceHandle grad, accel::DeviceHandle m, accel::DeviceHandle v, \
                     std::size_t n, float beta1, float beta2, float eps, float step_size,                          \
                     float bias_correction2_sqrt, const accel::LaunchGeometry& g, accel::Stream& s) override;      \
    void k_fma_throughput(accel::DeviceHandle y, std::size_t n, std::size_t iterations,                            \
                          const accel::LaunchGeometry& g, accel::Stream& s) override;
