// accel/plugin.hpp — the binary interface between libaccel and a backend plugin.
#pragma once

#include <accel/device.hpp>

/// Bumped whenever Device/Backend/Stream/Event change layout or virtuals.
#define ACCEL_PLUGIN_ABI 1

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
