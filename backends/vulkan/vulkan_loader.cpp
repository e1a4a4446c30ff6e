// Vulkan backend: the loader (libvulkan.so.1, opened at run time), its function pointers, VkResult names.
#include "vulkan_device.hpp"

#include <accel/error.hpp>

#include <string>

#include <dlfcn.h>

namespace accel {
namespace vulkan {

#define ACCEL_VK_DEFINE_FUNCTION(name) PFN_##name name = nullptr;
ACCEL_VK_GLOBAL_FUNCTIONS(ACCEL_VK_DEFINE_FUNCTION)
ACCEL_VK_INSTANCE_FUNCTIONS(ACCEL_VK_DEFINE_FUNCTION)
#undef ACCEL_VK_DEFINE_FUNCTION
PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;

std::string load_vulkan() {
    // Once; the library stays open for the life of the process.
    static const std::string error = [] {
        void* lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            const char* e = dlerror();
            return std::string("the Vulkan loader could not be opened: ") + (e ? e : "libvulkan.so.1 not found") +
                   " (install libvulkan1 and a Vulkan driver, e.g. mesa-vulkan-drivers)";
        }
        vkGetInstanceProcAddr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib, "vkGetInstanceProcAddr"));
        if (!vkGetInstanceProcAddr) return std::string("libvulkan.so.1 has no vkGetInstanceProcAddr");
        std::string missing;
#define ACCEL_VK_LOAD_GLOBAL(name)                                                                   \
    name = reinterpret_cast<PFN_##name>(vkGetInstanceProcAddr(VK_NULL_HANDLE, #name));                \
    if (!name && missing.empty()) missing = #name;
        ACCEL_VK_GLOBAL_FUNCTIONS(ACCEL_VK_LOAD_GLOBAL)
#undef ACCEL_VK_LOAD_GLOBAL
        if (!missing.empty())
            return "the Vulkan loader lacks " + missing + " (a loader for Vulkan 1.1 or later is needed)";
        return std::string();
    }();
    return error;
}

std::string load_instance_functions(VkInstance instance) {
    std::string missing;
#define ACCEL_VK_LOAD_INSTANCE(name)                                                                 \
    name = reinterpret_cast<PFN_##name>(vkGetInstanceProcAddr(instance, #name));                      \
    if (!name && missing.empty()) missing = #name;
    ACCEL_VK_INSTANCE_FUNCTIONS(ACCEL_VK_LOAD_INSTANCE)
#undef ACCEL_VK_LOAD_INSTANCE
    return missing;
}

const char* vk_result_name(VkResult r) noexcept {
    switch (r) {
#define ACCEL_VK_RESULT(name) \
    case name: return #name;
        ACCEL_VK_RESULT(VK_SUCCESS)
        ACCEL_VK_RESULT(VK_NOT_READY)
        ACCEL_VK_RESULT(VK_TIMEOUT)
        ACCEL_VK_RESULT(VK_EVENT_SET)
        ACCEL_VK_RESULT(VK_EVENT_RESET)
        ACCEL_VK_RESULT(VK_INCOMPLETE)
        ACCEL_VK_RESULT(VK_ERROR_OUT_OF_HOST_MEMORY)
        ACCEL_VK_RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY)
        ACCEL_VK_RESULT(VK_ERROR_INITIALIZATION_FAILED)
        ACCEL_VK_RESULT(VK_ERROR_DEVICE_LOST)
        ACCEL_VK_RESULT(VK_ERROR_MEMORY_MAP_FAILED)
        ACCEL_VK_RESULT(VK_ERROR_LAYER_NOT_PRESENT)
        ACCEL_VK_RESULT(VK_ERROR_EXTENSION_NOT_PRESENT)
        ACCEL_VK_RESULT(VK_ERROR_FEATURE_NOT_PRESENT)
        ACCEL_VK_RESULT(VK_ERROR_INCOMPATIBLE_DRIVER)
        ACCEL_VK_RESULT(VK_ERROR_TOO_MANY_OBJECTS)
        ACCEL_VK_RESULT(VK_ERROR_FORMAT_NOT_SUPPORTED)
        ACCEL_VK_RESULT(VK_ERROR_FRAGMENTED_POOL)
        ACCEL_VK_RESULT(VK_ERROR_UNKNOWN)
        ACCEL_VK_RESULT(VK_ERROR_OUT_OF_POOL_MEMORY)
        ACCEL_VK_RESULT(VK_ERROR_INVALID_EXTERNAL_HANDLE)
        ACCEL_VK_RESULT(VK_ERROR_FRAGMENTATION)
        ACCEL_VK_RESULT(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
        ACCEL_VK_RESULT(VK_PIPELINE_COMPILE_REQUIRED)
        ACCEL_VK_RESULT(VK_ERROR_SURFACE_LOST_KHR)
        ACCEL_VK_RESULT(VK_ERROR_NATIVE_WINDOW_IN_USE_KHR)
        ACCEL_VK_RESULT(VK_SUBOPTIMAL_KHR)
        ACCEL_VK_RESULT(VK_ERROR_OUT_OF_DATE_KHR)
        ACCEL_VK_RESULT(VK_ERROR_INCOMPATIBLE_DISPLAY_KHR)
        ACCEL_VK_RESULT(VK_ERROR_VALIDATION_FAILED_EXT)
        ACCEL_VK_RESULT(VK_ERROR_INVALID_SHADER_NV)
        ACCEL_VK_RESULT(VK_ERROR_NOT_PERMITTED_KHR)
#undef ACCEL_VK_RESULT
        default: break;
    }
    return "unknown VkResult";
}

void check_vk(VkResult r, const std::string& where) {
    if (r != VK_SUCCESS)
        throw DeviceError("Vulkan call failed in " + where + ": " + vk_result_name(r) + " (" + std::to_string(r) + ")",
                          r, vk_result_name(r));
}

}  // namespace vulkan
}  // namespace accel
