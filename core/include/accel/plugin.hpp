// accel/plugin.hpp — the binary interface between libaccel and a backend plugin.
#pragma once

#include <accel/device.hpp>

/// Bumped whenever Device/Backend/Stream/Event/DeviceInfo/KernelArgs change
/// layout or virtuals — not when an op is added: kernels are registered by op
/// name (Device::register_kernel), so a plugin built before an op existed
/// loads and reports that op unsupported. 3: DeviceInfo gained uuid,
/// pci_bus_id and host; Device's constructor moved into libaccel. 4: kernels
/// are data (register_kernel, KernelArgs, dtypes); probes moved to Probes.
/// 5: Device::do_tile_layout; Probes::fma_throughput takes a dtype.
#define ACCEL_PLUGIN_ABI 5

extern "C" {
/// What a plugin's entry point returns. Plain C layout so that the ABI check
/// reads it safely before any C++ object crosses the boundary.
struct accel_plugin_info {
    int abi_version;           ///< must equal ACCEL_PLUGIN_ABI
    const char* backend_name;  ///< "host", "opencl", "kokkos", "cuda"
    /// Returns the process-wide Backend object (owned by the plugin, never
    /// deleted: plugins stay loaded until the process ends).
    accel::Backend* (*backend)();
    /// sizeof(accel::KernelArgs) in the plugin's build: checked beside
    /// abi_version, so a mismatched header is caught even without a bump.
    unsigned long kernel_args_size;
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
        }, sizeof(accel::KernelArgs)};                                          \
        return &info;                                                           \
    }

/// Declares, inside a backend's Device subclass, an override of every runtime
/// hook of accel::Device (memory, copies, streams, events, synchronization);
/// their contracts are in accel/device.hpp. Each backend
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
    void do_synchronize() override;
