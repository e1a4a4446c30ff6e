// Vulkan backend: Backend (probe over the loader's physical devices,
// selectors), device info, the VkDevice and its queue, memory, copies,
// streams, events (see vulkan_device.hpp for the design).
#include "vulkan_device.hpp"

#include <accel/environment.hpp>
#include <accel/error.hpp>
#include <accel/plugin.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <thread>
#include <utility>

#include <dlfcn.h>
#include <unistd.h>

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

// ---- validation ------------------------------------------------------------

bool validation_requested() noexcept {
    const char* layers = std::getenv("VK_INSTANCE_LAYERS");
    return layers && std::strstr(layers, "VK_LAYER_KHRONOS_validation") != nullptr;
}

namespace {

std::atomic<std::uint64_t> g_validation_messages{0};
std::mutex g_validation_print_mutex;

// Counts and prints errors of any kind, and the layer's validation and
// performance warnings; the loader's general warnings (e.g. that
// VK_INSTANCE_LAYERS added the layer) are not about accel's use of Vulkan.
VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                     VkDebugUtilsMessageTypeFlagsEXT type,
                                                     const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
    const bool error = severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    const bool warning = (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) &&
                         (type & (VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                                  VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT));
    if (error || warning) {
        g_validation_messages.fetch_add(1);
        std::lock_guard<std::mutex> lock(g_validation_print_mutex);
        std::fprintf(stderr, "accel vulkan validation: %s: %s\n",
                     (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) ? "error" : "warning",
                     data && data->pMessage ? data->pMessage : "(no message)");
        std::fflush(stderr);
    }
    return VK_FALSE;
}

}  // namespace

std::uint64_t validation_message_count() noexcept { return g_validation_messages.load(); }

namespace {

// ---- the instance and the physical devices ----------------------------------

std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::string version_text(std::uint32_t v) {
    return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." +
           std::to_string(VK_API_VERSION_PATCH(v));
}

bool has_extension(VkPhysicalDevice d, const char* name) {
    std::uint32_t n = 0;
    if (vkEnumerateDeviceExtensionProperties(d, nullptr, &n, nullptr) != VK_SUCCESS) return false;
    std::vector<VkExtensionProperties> all(n);
    if (vkEnumerateDeviceExtensionProperties(d, nullptr, &n, all.data()) != VK_SUCCESS) return false;
    for (const auto& e : all)
        if (std::strcmp(e.extensionName, name) == 0) return true;
    return false;
}

bool instance_has_extension(const char* name) {
    std::uint32_t n = 0;
    if (vkEnumerateInstanceExtensionProperties(nullptr, &n, nullptr) != VK_SUCCESS) return false;
    std::vector<VkExtensionProperties> all(n);
    if (vkEnumerateInstanceExtensionProperties(nullptr, &n, all.data()) != VK_SUCCESS) return false;
    for (const auto& e : all)
        if (std::strcmp(e.extensionName, name) == 0) return true;
    return false;
}

bool instance_has_layer(const char* name) {
    std::uint32_t n = 0;
    if (vkEnumerateInstanceLayerProperties(&n, nullptr) != VK_SUCCESS) return false;
    std::vector<VkLayerProperties> all(n);
    if (vkEnumerateInstanceLayerProperties(&n, all.data()) != VK_SUCCESS) return false;
    for (const auto& l : all)
        if (std::strcmp(l.layerName, name) == 0) return true;
    return false;
}

// The process's instance and devices, made once (the first probe) and kept
// for the life of the process: a plugin stays loaded until the process ends,
// and destroying the instance at exit could reach a driver torn down first.
struct Instance {
    VkInstance instance = VK_NULL_HANDLE;
    VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
    std::string error;          ///< why there is no instance or no device; empty when fine
    long error_code = 0;
    std::vector<PhysicalDevice> devices;
    std::string skipped;        ///< devices left out and why, for messages
};

PhysicalDevice describe(VkPhysicalDevice d, bool* usable, std::string* why) {
    PhysicalDevice pd;
    pd.handle = d;
    vkGetPhysicalDeviceProperties(d, &pd.props);
    *usable = false;
    if (pd.props.apiVersion < VK_API_VERSION_1_1) {
        *why = std::string(pd.props.deviceName) + " (Vulkan " + version_text(pd.props.apiVersion) +
               ", below the 1.1 this backend needs)";
        return pd;
    }
    std::uint32_t nq = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(d, &nq, nullptr);
    std::vector<VkQueueFamilyProperties> families(nq);
    vkGetPhysicalDeviceQueueFamilyProperties(d, &nq, families.data());
    bool found = false;
    for (std::uint32_t i = 0; i < nq && !found; ++i)
        if ((families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && families[i].queueCount > 0) {
            pd.queue_family = i;
            pd.timestamp_bits = families[i].timestampValidBits;
            found = true;
        }
    if (!found) {
        *why = std::string(pd.props.deviceName) + " (no compute queue)";
        return pd;
    }
    // One query for the driver's identity (Vulkan 1.2 or VK_KHR_driver_properties)
    // and the subgroup facts (Vulkan 1.1), each chained where the device has it.
    VkPhysicalDeviceDriverProperties driver{};
    driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
    VkPhysicalDeviceSubgroupProperties sub{};
    sub.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
    const bool has_driver =
        pd.props.apiVersion >= VK_API_VERSION_1_2 || has_extension(d, VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME);
    const bool has_subgroups = pd.props.apiVersion >= VK_API_VERSION_1_1;
    VkPhysicalDeviceFloatControlsProperties floats{};
    floats.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES;
    const bool has_float_controls = pd.props.apiVersion >= VK_API_VERSION_1_2;  // core there: no extension to enable
    VkPhysicalDeviceProperties2 p2{};
    p2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    void** next = &p2.pNext;
    if (has_driver) {
        *next = &driver;
        next = &driver.pNext;
    }
    if (has_subgroups) {
        *next = &sub;
        next = &sub.pNext;
    }
    if (has_float_controls) *next = &floats;
    if (p2.pNext) vkGetPhysicalDeviceProperties2(d, &p2);
    pd.denorm_preserve32 = floats.shaderDenormPreserveFloat32;
    pd.denorm_preserve64 = floats.shaderDenormPreserveFloat64;
    pd.nan_preserve32 = floats.shaderSignedZeroInfNanPreserveFloat32;
    pd.nan_preserve64 = floats.shaderSignedZeroInfNanPreserveFloat64;
    if (has_driver) {
        pd.driver_name = driver.driverName;
        pd.driver_info = driver.driverInfo;
        pd.driver_id = driver.driverID;
    }
    pd.subgroup_size = sub.subgroupSize;  // 0 before Vulkan 1.1
    pd.subgroup_arithmetic = sub.subgroupSize > 0 && (sub.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                             (sub.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT);
    pd.has_pci_bus_info = has_extension(d, VK_EXT_PCI_BUS_INFO_EXTENSION_NAME);
    VkPhysicalDevice16BitStorageFeatures s16{};
    s16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
    VkPhysicalDeviceFeatures2 f2{};
    f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    f2.pNext = &s16;
    vkGetPhysicalDeviceFeatures2(d, &f2);
    pd.fp64 = f2.features.shaderFloat64 && f2.features.shaderInt64;
    pd.storage16 = s16.storageBuffer16BitAccess;
    *usable = true;
    return pd;
}

Instance make_instance() {
    Instance inst;
    inst.error = load_vulkan();
    if (!inst.error.empty()) {
        inst.error_code = VK_ERROR_INITIALIZATION_FAILED;
        return inst;
    }
    std::uint32_t loader = VK_API_VERSION_1_0;
    VkResult r = vkEnumerateInstanceVersion(&loader);
    if (r != VK_SUCCESS || loader < VK_API_VERSION_1_1) {
        inst.error = "the Vulkan loader offers version " + version_text(loader) + " (vkEnumerateInstanceVersion: " +
                     vk_result_name(r) + "); this backend needs 1.1";
        inst.error_code = r == VK_SUCCESS ? VK_ERROR_INCOMPATIBLE_DRIVER : r;
        return inst;
    }
    VkApplicationInfo app{};
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.pApplicationName = "accel";
    app.pEngineName = "accel";
    app.apiVersion = std::min<std::uint32_t>(loader, VK_API_VERSION_1_3);
    std::vector<const char*> extensions;
    const bool validation = validation_requested();
    if (validation) {
        if (!instance_has_layer("VK_LAYER_KHRONOS_validation")) {
            inst.error = "VK_INSTANCE_LAYERS asks for VK_LAYER_KHRONOS_validation, which is not installed "
                         "(install vulkan-validationlayers)";
            inst.error_code = VK_ERROR_LAYER_NOT_PRESENT;
            return inst;
        }
        if (instance_has_extension(VK_EXT_DEBUG_UTILS_EXTENSION_NAME))
            extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    }
    VkDebugUtilsMessengerCreateInfoEXT messenger{};
    messenger.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
    messenger.messageSeverity =
        VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    messenger.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                            VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                            VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    messenger.pfnUserCallback = on_validation_message;
    VkInstanceCreateInfo ci{};
    ci.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    ci.pApplicationInfo = &app;
    ci.enabledExtensionCount = static_cast<std::uint32_t>(extensions.size());
    ci.ppEnabledExtensionNames = extensions.data();
    if (!extensions.empty()) ci.pNext = &messenger;  // also covers vkCreateInstance itself
    r = vkCreateInstance(&ci, nullptr, &inst.instance);
    if (r != VK_SUCCESS) {
        inst.error = std::string("vkCreateInstance failed: ") + vk_result_name(r) + " (" + std::to_string(r) + ")" +
                     (r == VK_ERROR_INCOMPATIBLE_DRIVER ? " — no Vulkan driver is installed (install "
                                                          "mesa-vulkan-drivers or a GPU driver's Vulkan ICD)"
                                                        : "");
        inst.error_code = r;
        inst.instance = VK_NULL_HANDLE;
        return inst;
    }
    const std::string missing = load_instance_functions(inst.instance);
    if (!missing.empty()) {
        inst.error = "the Vulkan loader does not provide " + missing;
        inst.error_code = VK_ERROR_INITIALIZATION_FAILED;
        return inst;
    }
    if (!extensions.empty()) {
        auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
            vkGetInstanceProcAddr(inst.instance, "vkCreateDebugUtilsMessengerEXT"));
        if (create) create(inst.instance, &messenger, nullptr, &inst.messenger);
    }
    std::uint32_t n = 0;
    r = vkEnumeratePhysicalDevices(inst.instance, &n, nullptr);
    std::vector<VkPhysicalDevice> handles(n);
    if (r == VK_SUCCESS && n) r = vkEnumeratePhysicalDevices(inst.instance, &n, handles.data());
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
        inst.error = std::string("vkEnumeratePhysicalDevices failed: ") + vk_result_name(r);
        inst.error_code = r;
        return inst;
    }
    for (VkPhysicalDevice h : handles) {
        bool usable = false;
        std::string why;
        PhysicalDevice pd = describe(h, &usable, &why);
        if (usable) inst.devices.push_back(pd);
        else inst.skipped += (inst.skipped.empty() ? "" : ", ") + why;
    }
    if (inst.devices.empty()) {
        inst.error = "the Vulkan loader lists " + std::to_string(handles.size()) + " device(s), none usable" +
                     (inst.skipped.empty() ? std::string() : ": " + inst.skipped);
        inst.error_code = VK_ERROR_INITIALIZATION_FAILED;
    }
    return inst;
}

const Instance& instance() {
    static const Instance inst = make_instance();
    return inst;
}

bool is_gpu(const PhysicalDevice& d) {
    const auto t = d.props.deviceType;
    return t == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU || t == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ||
           t == VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU;
}

// The driver's short name in stable selectors: "lavapipe" for Mesa's CPU
// driver (its driverName is "llvmpipe"), else the first word of the driver
// name ("nvidia", "radv", "intel", ...), else of the device name.
std::string driver_key(const PhysicalDevice& d) {
    if (d.driver_id == VK_DRIVER_ID_MESA_LLVMPIPE) return "lavapipe";
    const std::string text = lower(d.driver_name.empty() ? std::string(d.props.deviceName) : d.driver_name);
    std::string word;
    for (char c : text) {
        if (std::isalnum(static_cast<unsigned char>(c))) word += c;
        else if (!word.empty()) break;
    }
    return word.empty() ? "driver" : word;
}

// What vulkan:PIECE is matched against: device name, driver name and info,
// the key (so "lavapipe" names Mesa's llvmpipe driver).
std::string identity(const PhysicalDevice& d) {
    return lower(std::string(d.props.deviceName) + " " + d.driver_name + " " + d.driver_info + " " + driver_key(d));
}

int within_key(const std::vector<PhysicalDevice>& all, std::size_t index) {
    int n = 0;
    for (std::size_t i = 0; i < index; ++i)
        if (driver_key(all[i]) == driver_key(all[index])) ++n;
    return n;
}

std::string type_name(VkPhysicalDeviceType t) {
    switch (t) {
        case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
        case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
        case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "gpu";
        case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
        default: return "other";
    }
}

std::string vendor_name(std::uint32_t id) {
    switch (id) {
        case 0x10DE: return "NVIDIA";
        case 0x1002: return "AMD";
        case 0x8086: return "Intel";
        case 0x13B5: return "ARM";
        case 0x5143: return "Qualcomm";
        case 0x1010: return "Imagination";
        case 0x10005: return "Mesa";
        default: break;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "vendor 0x%04x", id);
    return buf;
}

// Core Vulkan does not report compute units: NVIDIA's SM count
// (VK_NV_shader_sm_builtins) and AMD's compute units (VK_AMD_shader_core_properties)
// where the driver has them; on a CPU driver, the host's hardware threads
// (lavapipe runs that many threads by default); else 1, and `extra` says so.
int compute_units(const PhysicalDevice& d, DeviceInfo* info) {
    const char* source = nullptr;
    int units = 0;
    VkPhysicalDeviceProperties2 p2{};
    p2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    if (has_extension(d.handle, VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME)) {
        VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm{};
        sm.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV;
        p2.pNext = &sm;
        vkGetPhysicalDeviceProperties2(d.handle, &p2);
        units = static_cast<int>(sm.shaderSMCount);
        source = "streaming multiprocessors (VK_NV_shader_sm_builtins)";
    } else if (has_extension(d.handle, VK_AMD_SHADER_CORE_PROPERTIES_EXTENSION_NAME)) {
        VkPhysicalDeviceShaderCorePropertiesAMD core{};
        core.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_AMD;
        p2.pNext = &core;
        vkGetPhysicalDeviceProperties2(d.handle, &p2);
        units = static_cast<int>(core.shaderEngineCount * core.shaderArraysPerEngineCount *
                                 core.computeUnitsPerShaderArray);
        source = "compute units (VK_AMD_shader_core_properties)";
    } else if (d.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU) {
        units = static_cast<int>(std::thread::hardware_concurrency());
        source = "the host's hardware threads (a CPU driver; Vulkan does not report its thread count)";
    }
    if (units <= 0) {
        units = 1;
        source = "not reported by this Vulkan driver; 1 stands in";
    }
    info->extra.push_back({"compute units", std::to_string(units) + ": " + source});
    return units;
}

DeviceInfo make_info(int index, const PhysicalDevice& d, const std::string& stable) {
    DeviceInfo i;
    i.backend = "vulkan";
    i.index = index;
    i.stable_selector = stable;
    i.name = d.props.deviceName;
    i.vendor = vendor_name(d.props.vendorID);
    i.type = type_name(d.props.deviceType);
    const std::string api = "Vulkan " + version_text(d.props.apiVersion);
    i.driver_version = d.driver_info.empty() ? "driver version " + std::to_string(d.props.driverVersion)
                                             : d.driver_info;
    i.runtime_version = (d.driver_name.empty() ? std::string("Vulkan driver") : d.driver_name) +
                        (d.driver_info.empty() ? "" : " " + d.driver_info) + " (" + api + ")";
    i.compute_units = compute_units(d, &i);
    VkPhysicalDeviceMemoryProperties mem{};
    vkGetPhysicalDeviceMemoryProperties(d.handle, &mem);
    std::string heaps;
    for (std::uint32_t h = 0; h < mem.memoryHeapCount; ++h) {
        const bool local = mem.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT;
        if (local) i.global_memory_bytes += mem.memoryHeaps[h].size;
        heaps += (heaps.empty() ? "" : ", ") + std::to_string(mem.memoryHeaps[h].size) + " bytes" +
                 (local ? " (device-local)" : "");
    }
    const VkPhysicalDeviceLimits& l = d.props.limits;
    i.limits.max_block_size = l.maxComputeWorkGroupInvocations;
    i.limits.max_block_dims = {l.maxComputeWorkGroupSize[0], l.maxComputeWorkGroupSize[1],
                               l.maxComputeWorkGroupSize[2]};
    i.limits.max_grid_dims = {l.maxComputeWorkGroupCount[0], l.maxComputeWorkGroupCount[1],
                              l.maxComputeWorkGroupCount[2]};
    i.timer = d.timestamp_bits > 0
                  ? "Vulkan timestamp queries (vkCmdWriteTimestamp, " + std::to_string(l.timestampPeriod) +
                        " ns per tick, " + std::to_string(d.timestamp_bits) + " valid bits)"
                  : "host steady_clock when the event's submission is seen complete (the compute queue has no "
                    "timestamps): coarse, includes waiting";

    VkPhysicalDeviceIDProperties id{};
    id.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES;
    VkPhysicalDevicePCIBusInfoPropertiesEXT pci{};
    pci.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT;
    if (d.has_pci_bus_info) id.pNext = &pci;
    VkPhysicalDeviceProperties2 p2{};
    p2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    p2.pNext = &id;
    vkGetPhysicalDeviceProperties2(d.handle, &p2);
    unsigned char uuid[16];
    std::memcpy(uuid, id.deviceUUID, 16);
    i.uuid = format_uuid(uuid);
    if (d.has_pci_bus_info) i.pci_bus_id = format_pci_bus_id(pci.pciDomain, pci.pciBus, pci.pciDevice, pci.pciFunction);

    i.extra.push_back({"Vulkan API", api});
    if (!d.driver_name.empty()) i.extra.push_back({"driver", d.driver_name + " " + d.driver_info});
    i.extra.push_back({"memory heaps", heaps});
    i.extra.push_back({"subgroup size", std::to_string(d.subgroup_size) +
                                            (d.subgroup_arithmetic ? " (arithmetic: matmul/dense of outputs under 16 "
                                                                     "columns by a subgroup per element)"
                                                                   : " (no subgroup arithmetic)")});
    i.extra.push_back({"max storage buffer range", std::to_string(l.maxStorageBufferRange) + " bytes"});
    i.extra.push_back({"dtypes", std::string("f32") + (d.fp64 ? ", f64" : "") + (d.storage16 ? ", f16, bf16" : "")});
    i.extra.push_back({"memory allocation", "buffers up to 2 MiB sub-allocated from 16 MiB VkDeviceMemory blocks, "
                                            "larger ones in their own"});
    i.extra.push_back({"vendor BLAS", vendor_blas_description()});
    return i;
}

std::string listing(const std::vector<PhysicalDevice>& all) {
    std::string s;
    for (std::size_t i = 0; i < all.size(); ++i)
        s += (s.empty() ? "" : ", ") + std::string("vulkan:") + driver_key(all[i]) + ":" +
             std::to_string(within_key(all, i)) + " (" + all[i].props.deviceName + ", " +
             type_name(all[i].props.deviceType) + ")";
    return "; the devices here: " + (s.empty() ? std::string("none") : s);
}

class VulkanBackend final : public Backend {
public:
    std::string name() const override { return "vulkan"; }

    Availability probe() override {
        Availability a;
        try {
            const Instance& inst = instance();
            if (!inst.error.empty()) {
                a.reason = inst.error;
                return a;
            }
            a.available = true;
            a.device_count = static_cast<int>(inst.devices.size());
            for (std::size_t i = 0; i < inst.devices.size() && !a.has_gpu; ++i)
                if (is_gpu(inst.devices[i])) {
                    a.has_gpu = true;
                    a.preferred_index = static_cast<int>(i);
                }
        } catch (const std::exception& e) {
            a = Availability{};
            a.reason = e.what();
        } catch (...) {
            a = Availability{};
            a.reason = "unknown error while probing Vulkan";
        }
        return a;
    }

    std::shared_ptr<Device> create_device(int index) override {
        const Instance& inst = instance();
        if (!inst.error.empty()) throw DeviceError("vulkan: " + inst.error, inst.error_code, vk_result_name(static_cast<VkResult>(inst.error_code)));
        if (index < 0 || static_cast<std::size_t>(index) >= inst.devices.size())
            throw DeviceError("vulkan:" + std::to_string(index) + " does not exist; the loader lists " +
                                  std::to_string(inst.devices.size()) + " usable device(s)",
                              VK_ERROR_INITIALIZATION_FAILED, vk_result_name(VK_ERROR_INITIALIZATION_FAILED));
        const PhysicalDevice& d = inst.devices[static_cast<std::size_t>(index)];
        const std::string stable = "vulkan:" + driver_key(d) + ":" + std::to_string(within_key(inst.devices, index));
        return std::make_shared<VulkanDevice>(index, inst.instance, d, stable);
    }

    // vulkan:gpu | vulkan:cpu | vulkan:PIECE[:I].
    int find_device(const std::string& spec) override {
        const Instance& inst = instance();
        if (!inst.error.empty()) throw BackendUnavailable("vulkan: " + inst.error);
        const auto& all = inst.devices;
        if (spec == "gpu" || spec == "cpu") {
            for (std::size_t i = 0; i < all.size(); ++i)
                if (type_name(all[i].props.deviceType) == spec) return static_cast<int>(i);
            throw BackendUnavailable("vulkan: no " + spec + " device" + listing(all));
        }
        const auto colon = spec.find(':');
        const std::string piece = spec.substr(0, colon);
        int within = 0;
        if (colon != std::string::npos) {
            const std::string digits = spec.substr(colon + 1);
            if (digits.empty() || digits.size() > 6 ||
                !std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
                throw InvalidArgument("vulkan:" + spec + ": after '" + piece +
                                      ":' comes the index of a device among those it matches (0, 1, ...)");
            within = std::stoi(digits);
        }
        if (piece.empty()) throw InvalidArgument("vulkan:" + spec + ": name a piece of the driver or device name");
        int seen = 0;
        for (std::size_t i = 0; i < all.size(); ++i)
            if (identity(all[i]).find(piece) != std::string::npos && seen++ == within) return static_cast<int>(i);
        if (seen == 0) throw BackendUnavailable("vulkan: no device's driver or name matches '" + piece + "'" + listing(all));
        throw BackendUnavailable("vulkan: '" + piece + "' matches " + std::to_string(seen) + " device(s), so there is no device " +
                                 std::to_string(within) + " of it" + listing(all));
    }
};


}  // namespace

// ---- streams ----------------------------------------------------------------

DeviceCore::~DeviceCore() {
    if (!device) return;
    vkDeviceWaitIdle(device);
    vkDestroyDevice(device, nullptr);
}

void DeviceCore::submit(VkCommandBuffer cb, VkFence fence) {
    VkSubmitInfo si{};
    si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    std::lock_guard<std::mutex> lock(queue_mutex);
    check_vk(vkQueueSubmit(queue, 1, &si, fence), "vkQueueSubmit");
}

StreamState::StreamState(std::shared_ptr<DeviceCore> core) : core_(std::move(core)) {
    VkCommandPoolCreateInfo ci{};
    ci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    ci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    ci.queueFamilyIndex = core_->queue_family;
    check_vk(vkCreateCommandPool(core_->device, &ci, nullptr, &pool_), "creating a stream: vkCreateCommandPool");
}

StreamState::~StreamState() {
    std::lock_guard<std::mutex> lock(mutex_);
    try {
        flush();
    } catch (...) {  // its commands' done actions have run
    }
    for (auto& s : pending_) {
        vkWaitForFences(core_->device, 1, &s.fence, VK_TRUE, UINT64_MAX);
        for (auto& d : s.done) d();
        vkDestroyFence(core_->device, s.fence, nullptr);
    }
    for (VkFence f : free_fences_) vkDestroyFence(core_->device, f, nullptr);
    vkDestroyCommandPool(core_->device, pool_, nullptr);  // frees its command buffers
}

std::uint64_t StreamState::last_submitted() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return next_seq_ - 1;
}

void StreamState::retire(std::uint64_t seq, bool block) {
    while (!pending_.empty()) {
        Submission& s = pending_.front();
        VkResult r;
        if (block && s.first <= seq) r = vkWaitForFences(core_->device, 1, &s.fence, VK_TRUE, UINT64_MAX);
        else r = vkGetFenceStatus(core_->device, s.fence);
        if (r == VK_NOT_READY || r == VK_TIMEOUT) return;
        check_vk(r, block ? "waiting for a stream: vkWaitForFences" : "vkGetFenceStatus");
        for (auto& d : s.done) d();
        check_vk(vkResetFences(core_->device, 1, &s.fence), "vkResetFences");
        free_fences_.push_back(s.fence);
        free_cbs_.push_back(s.cb);
        pending_.pop_front();
    }
}

void StreamState::flush() {
    if (!open_.cb) return;
    Submission batch = std::move(open_);
    open_ = Submission{};
    try {
        // Device writes visible to the host once the fence is signalled.
        VkMemoryBarrier hb{};
        hb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
        hb.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
        hb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
        vkCmdPipelineBarrier(batch.cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &hb, 0,
                             nullptr, 0, nullptr);
        check_vk(vkEndCommandBuffer(batch.cb), "vkEndCommandBuffer");
        if (!free_fences_.empty()) {
            batch.fence = free_fences_.back();
            free_fences_.pop_back();
        } else {
            VkFenceCreateInfo fi{};
            fi.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
            check_vk(vkCreateFence(core_->device, &fi, nullptr, &batch.fence), "vkCreateFence");
        }
        core_->submit(batch.cb, batch.fence);
    } catch (...) {
        vkResetCommandBuffer(batch.cb, 0);
        free_cbs_.push_back(batch.cb);
        if (batch.fence) free_fences_.push_back(batch.fence);
        for (auto& d : batch.done) d();
        throw;
    }
    pending_.push_back(std::move(batch));
}

std::uint64_t StreamState::submit(const std::function<void(VkCommandBuffer)>& record, std::function<void()> done) {
    std::lock_guard<std::mutex> lock(mutex_);
    try {
        retire(0, false);  // release what has finished
        if (!open_.cb) {
            VkCommandBuffer cb = VK_NULL_HANDLE;
            if (!free_cbs_.empty()) {
                cb = free_cbs_.back();
                free_cbs_.pop_back();
            } else {
                VkCommandBufferAllocateInfo ai{};
                ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
                ai.commandPool = pool_;
                ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
                ai.commandBufferCount = 1;
                check_vk(vkAllocateCommandBuffers(core_->device, &ai, &cb), "vkAllocateCommandBuffers");
            }
            VkCommandBufferBeginInfo bi{};
            bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
            bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
            const VkResult r = vkBeginCommandBuffer(cb, &bi);
            if (r != VK_SUCCESS) {
                free_cbs_.push_back(cb);
                check_vk(r, "vkBeginCommandBuffer");
            }
            open_.cb = cb;
            open_.first = next_seq_;
        }
        // Everything earlier on the queue finishes, and its writes are visible, first.
        VkMemoryBarrier mb{};
        mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
        mb.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
        mb.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
        vkCmdPipelineBarrier(open_.cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &mb,
                             0, nullptr, 0, nullptr);
        record(open_.cb);
    } catch (...) {
        if (done) done();
        throw;
    }
    const std::uint64_t seq = next_seq_++;
    if (done) open_.done.push_back(std::move(done));
    if (seq - open_.first + 1 >= static_cast<std::uint64_t>(kBatch)) flush();
    return seq;
}

void StreamState::wait(std::uint64_t seq) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (open_.cb && open_.first <= seq) flush();
    retire(seq, true);
}

bool StreamState::completed(std::uint64_t seq) noexcept {
    try {
        std::lock_guard<std::mutex> lock(mutex_);
        if (open_.cb && open_.first <= seq) flush();  // polling must make progress
        retire(0, false);
        return pending_.empty() || pending_.front().first > seq;
    } catch (...) {
        return false;
    }
}

void StreamState::wait_all() {
    std::lock_guard<std::mutex> lock(mutex_);
    flush();
    retire(next_seq_ - 1, true);
}

VulkanStream::VulkanStream(VulkanDevice& d) : Stream(d), state_(std::make_shared<StreamState>(d.core())) {
    d.add_stream(state_);
}

VulkanStream::~VulkanStream() = default;  // the state waits for its work when the last owner goes

void VulkanStream::do_synchronize() { state_->wait_all(); }

// ---- events -----------------------------------------------------------------

VulkanEvent::VulkanEvent(VulkanDevice& d) : Event(d), device_(d), core_(d.core()) {
    if (!d.has_timestamps()) return;
    VkQueryPoolCreateInfo ci{};
    ci.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
    ci.queryType = VK_QUERY_TYPE_TIMESTAMP;
    ci.queryCount = 1;
    check_vk(vkCreateQueryPool(d.device(), &ci, nullptr, &pool_), "creating an event: vkCreateQueryPool");
}

VulkanEvent::~VulkanEvent() {
    if (stream_) {
        try {
            stream_->wait(seq_);  // the query pool may still be written
        } catch (...) {
        }
    }
    if (pool_) vkDestroyQueryPool(core_->device, pool_, nullptr);
}

void VulkanEvent::do_record(Stream& stream) {
    StreamState& st = VulkanDevice::state_of(stream);
    if (stream_) stream_->wait(seq_);  // the previous mark is complete before its query is reset
    auto host = host_ns_;
    VkQueryPool pool = pool_;
    seq_ = st.submit(
        [pool](VkCommandBuffer cb) {
            if (!pool) return;
            vkCmdResetQueryPool(cb, pool, 0, 1);
            vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, 0);
        },
        [host] {
            host->store(std::chrono::duration<double, std::nano>(
                            std::chrono::steady_clock::now().time_since_epoch()).count());
        });
    stream_ = static_cast<VulkanStream&>(stream).state();
    order_ = device_.next_record_order();
}

void VulkanEvent::do_synchronize() {
    if (stream_) stream_->wait(seq_);
}

double VulkanEvent::time_ns() {
    do_synchronize();
    if (!pool_) return host_ns_->load();
    std::uint64_t ticks = 0;
    check_vk(vkGetQueryPoolResults(core_->device, pool_, 0, 1, sizeof ticks, &ticks, sizeof ticks,
                                   VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
             "elapsed_ms: vkGetQueryPoolResults");
    return static_cast<double>(ticks & device_.timestamp_mask()) * device_.timestamp_period();
}

// ---- the device -------------------------------------------------------------

VulkanDevice::VulkanDevice(int index, VkInstance instance, const PhysicalDevice& pd, const std::string& stable)
    : Device(make_info(index, pd, stable)), instance_(instance), pd_(pd) {
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo qi{};
    qi.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    qi.queueFamilyIndex = pd.queue_family;
    qi.queueCount = 1;
    qi.pQueuePriorities = &priority;
    VkPhysicalDevice16BitStorageFeatures s16{};
    s16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
    s16.storageBuffer16BitAccess = pd.storage16 ? VK_TRUE : VK_FALSE;
    VkPhysicalDeviceFeatures2 f2{};
    f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    f2.pNext = &s16;
    f2.features.shaderFloat64 = pd.fp64 ? VK_TRUE : VK_FALSE;
    f2.features.shaderInt64 = pd.fp64 ? VK_TRUE : VK_FALSE;
    VkDeviceCreateInfo ci{};
    ci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    ci.pNext = &f2;
    ci.queueCreateInfoCount = 1;
    ci.pQueueCreateInfos = &qi;
    core_ = std::make_shared<DeviceCore>();
    core_->queue_family = pd.queue_family;
    check_vk(vkCreateDevice(pd.handle, &ci, nullptr, &core_->device),
             "opening " + selector() + " (" + info().name + "): vkCreateDevice");
    device_ = core_->device;
    vkGetDeviceQueue(device_, pd.queue_family, 0, &core_->queue);

    VkPhysicalDeviceMemoryProperties mem{};
    vkGetPhysicalDeviceMemoryProperties(pd.handle, &mem);
    VkDeviceSize largest_heap = 0;
    for (std::uint32_t h = 0; h < mem.memoryHeapCount; ++h) largest_heap = std::max(largest_heap, mem.memoryHeaps[h].size);
    for (std::uint32_t t = 0; t < mem.memoryTypeCount; ++t) {
        const auto f = mem.memoryTypes[t].propertyFlags;
        if (f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) device_local_types_ |= 1u << t;
        if ((f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) && (f & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT))
            host_types_ |= 1u << t;
    }
    VkPhysicalDeviceMaintenance3Properties m3{};
    m3.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES;
    VkPhysicalDeviceProperties2 p2{};
    p2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    p2.pNext = &m3;
    vkGetPhysicalDeviceProperties2(pd.handle, &p2);
    max_allocation_ = m3.maxMemoryAllocationSize ? m3.maxMemoryAllocationSize : largest_heap;

    try {
        for (std::uint32_t b = 1; b <= 4; ++b) {
            std::vector<VkDescriptorSetLayoutBinding> bindings(b);
            for (std::uint32_t i = 0; i < b; ++i) {
                bindings[i].binding = i;
                bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
                bindings[i].descriptorCount = 1;
                bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
            }
            VkDescriptorSetLayoutCreateInfo li{};
            li.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
            li.bindingCount = b;
            li.pBindings = bindings.data();
            check_vk(vkCreateDescriptorSetLayout(device_, &li, nullptr, &set_layouts_[b - 1]),
                     "vkCreateDescriptorSetLayout");
            VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, 128};
            VkPipelineLayoutCreateInfo pi{};
            pi.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
            pi.setLayoutCount = 1;
            pi.pSetLayouts = &set_layouts_[b - 1];
            pi.pushConstantRangeCount = 1;
            pi.pPushConstantRanges = &range;
            check_vk(vkCreatePipelineLayout(device_, &pi, nullptr, &pipeline_layouts_[b - 1]),
                     "vkCreatePipelineLayout");
        }
        open_pipeline_cache();
        scratch_ = create_buffer(4, false, nullptr);
        register_kernels();
    } catch (...) {
        if (pipeline_cache_) vkDestroyPipelineCache(device_, pipeline_cache_, nullptr);
        destroy_buffer(scratch_);
        for (auto& m : blocks_) vkFreeMemory(device_, m->memory, nullptr);
        for (auto l : pipeline_layouts_)
            if (l) vkDestroyPipelineLayout(device_, l, nullptr);
        for (auto l : set_layouts_)
            if (l) vkDestroyDescriptorSetLayout(device_, l, nullptr);
        throw;  // core_ destroys the VkDevice
    }
}

namespace {

// The pipeline cache file: our header, then the driver's data (which starts
// with Vulkan's own header, VkPipelineCacheHeaderVersionOne).
struct CacheFileHeader {
    char magic[8];            // "accelPC1"
    std::uint64_t bytes;      // of the driver's data that follows
    std::uint64_t checksum;   // FNV-1a 64 of that data
};
constexpr char kCacheMagic[8] = {'a', 'c', 'c', 'e', 'l', 'P', 'C', '1'};

std::uint64_t fnv1a(const unsigned char* p, std::size_t n) {
    std::uint64_t h = 1469598103934665603ull;
    for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
    return h | 1;  // never 0, which means "nothing loaded"
}

// Whether `data` starts with a Vulkan pipeline cache header of this device
// and driver (the driver checks it too; a file from elsewhere is not handed
// to it at all).
bool cache_header_matches(const std::vector<unsigned char>& data, const VkPhysicalDeviceProperties& props) {
    if (data.size() < 16 + VK_UUID_SIZE) return false;
    std::uint32_t words[4];
    std::memcpy(words, data.data(), sizeof words);
    return words[0] >= 16 + VK_UUID_SIZE && words[1] == VK_PIPELINE_CACHE_HEADER_VERSION_ONE &&
           words[2] == props.vendorID && words[3] == props.deviceID &&
           std::memcmp(data.data() + 16, props.pipelineCacheUUID, VK_UUID_SIZE) == 0;
}

}  // namespace

void VulkanDevice::open_pipeline_cache() {
    const std::string dir = env::cache_dir();  // a bad ACCEL_CACHE_DIR is the user's error: thrown
    std::vector<unsigned char> data;
    if (!dir.empty()) {
        char name[96];
        std::snprintf(name, sizeof name, "/vulkan-pipelines-%04x-%04x-", pd_.props.vendorID, pd_.props.deviceID);
        pipeline_cache_file_ = dir + name;
        for (unsigned char b : pd_.props.pipelineCacheUUID) {
            char hex[3];
            std::snprintf(hex, sizeof hex, "%02x", b);
            pipeline_cache_file_ += hex;
        }
        pipeline_cache_file_ += ".bin";
        // Untrusted: used only when our header, its checksum and Vulkan's
        // header all match; otherwise the cache starts empty and the file is
        // replaced at destruction.
        if (FILE* f = std::fopen(pipeline_cache_file_.c_str(), "rb")) {
            CacheFileHeader h{};
            if (std::fread(&h, sizeof h, 1, f) == 1 && std::memcmp(h.magic, kCacheMagic, 8) == 0 &&
                h.bytes <= (std::uint64_t{256} << 20)) {
                data.resize(static_cast<std::size_t>(h.bytes));
                if (std::fread(data.data(), 1, data.size(), f) != data.size() || std::fgetc(f) != EOF ||
                    fnv1a(data.data(), data.size()) != h.checksum || !cache_header_matches(data, pd_.props))
                    data.clear();
            }
            std::fclose(f);
        }
    }
    VkPipelineCacheCreateInfo ci{};
    ci.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO;
    ci.initialDataSize = data.size();
    ci.pInitialData = data.empty() ? nullptr : data.data();
    VkResult r = vkCreatePipelineCache(device_, &ci, nullptr, &pipeline_cache_);
    if (r != VK_SUCCESS && !data.empty()) {  // the driver refused the data: start empty
        ci.initialDataSize = 0;
        ci.pInitialData = nullptr;
        data.clear();
        r = vkCreatePipelineCache(device_, &ci, nullptr, &pipeline_cache_);
    }
    check_vk(r, "vkCreatePipelineCache");
    pipeline_cache_loaded_ = data.empty() ? 0 : fnv1a(data.data(), data.size());
}

void VulkanDevice::save_pipeline_cache() noexcept {
    if (!pipeline_cache_) return;
    try {
        std::size_t size = 0;
        if (!pipeline_cache_file_.empty() && vkGetPipelineCacheData(device_, pipeline_cache_, &size, nullptr) == VK_SUCCESS &&
            size > 0) {
            std::vector<unsigned char> data(size);
            if (vkGetPipelineCacheData(device_, pipeline_cache_, &size, data.data()) == VK_SUCCESS) {
                data.resize(size);
                const std::uint64_t sum = fnv1a(data.data(), data.size());
                if (sum != pipeline_cache_loaded_ && cache_header_matches(data, pd_.props)) {
                    // Whole or not at all: a temporary file renamed over the old one.
                    std::error_code ec;
                    std::filesystem::create_directories(
                        std::filesystem::path(pipeline_cache_file_).parent_path(), ec);
                    const std::string tmp = pipeline_cache_file_ + ".tmp." + std::to_string(::getpid());
                    if (FILE* f = std::fopen(tmp.c_str(), "wb")) {
                        CacheFileHeader h{};
                        std::memcpy(h.magic, kCacheMagic, 8);
                        h.bytes = data.size();
                        h.checksum = sum;
                        const bool ok = std::fwrite(&h, sizeof h, 1, f) == 1 &&
                                        std::fwrite(data.data(), 1, data.size(), f) == data.size();
                        if (std::fclose(f) == 0 && ok) std::rename(tmp.c_str(), pipeline_cache_file_.c_str());
                        else std::remove(tmp.c_str());
                    }
                }
            }
        }
    } catch (...) {
        // A cache that cannot be written costs the next process compile time only.
    }
    vkDestroyPipelineCache(device_, pipeline_cache_, nullptr);
    pipeline_cache_ = VK_NULL_HANDLE;
}

VulkanDevice::~VulkanDevice() {
    // Streams other than the default one must not outlive the device (the
    // contract); the default stream is destroyed after this body, so wait for
    // it through the list first.
    try {
        do_synchronize();
    } catch (...) {
    }
    vkDeviceWaitIdle(device_);
    for (const Deferred& d : graveyard_) destroy_buffer(d.buffer);  // every stream is idle now
    graveyard_.clear();
    save_pipeline_cache();
    for (auto& p : pipelines_) vkDestroyPipeline(device_, p.second, nullptr);
    for (auto& m : modules_) vkDestroyShaderModule(device_, m.second, nullptr);
    for (auto p : pools_) vkDestroyDescriptorPool(device_, p, nullptr);
    destroy_buffer(scratch_);
    for (auto& m : blocks_) vkFreeMemory(device_, m->memory, nullptr);  // every buffer is gone by now
    blocks_.clear();
    for (auto l : pipeline_layouts_)
        if (l) vkDestroyPipelineLayout(device_, l, nullptr);
    for (auto l : set_layouts_)
        if (l) vkDestroyDescriptorSetLayout(device_, l, nullptr);
    // core_ (the VkDevice) goes with the last stream state still holding it:
    // the default stream is destroyed after this body.
}

void VulkanDevice::add_stream(const std::shared_ptr<StreamState>& s) {
    std::lock_guard<std::mutex> lock(streams_mutex_);
    streams_.erase(std::remove_if(streams_.begin(), streams_.end(), [](const auto& w) { return w.expired(); }),
                   streams_.end());
    streams_.push_back(s);
}

// ---- memory -----------------------------------------------------------------

VulkanBuffer* VulkanDevice::create_buffer(std::size_t bytes, bool host_visible, void** mapped) {
    const std::string asked = "allocate: " + std::to_string(bytes) + " bytes asked on " + selector() + " (" +
                              info().name + ")";
    if (bytes > max_allocation_)
        throw OutOfMemory(asked + ", above its largest single allocation of " + std::to_string(max_allocation_) +
                          " bytes (maxMemoryAllocationSize; " + std::to_string(info().global_memory_bytes) +
                          " bytes of device-local memory in total)");
    auto b = std::make_unique<VulkanBuffer>();
    b->size = bytes;
    VkBufferCreateInfo bi{};
    bi.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    bi.size = bytes;
    bi.usage = host_visible ? VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT
                            : VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                  VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VkResult r = vkCreateBuffer(device_, &bi, nullptr, &b->buffer);
    auto oom = [&](VkResult code, const char* call) {
        return OutOfMemory(asked + ": " + call + " returned " + vk_result_name(code) + "; the device has " +
                           std::to_string(info().global_memory_bytes) + " bytes of device-local memory in total");
    };
    if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY) throw oom(r, "vkCreateBuffer");
    check_vk(r, asked + ": vkCreateBuffer");
    VkMemoryRequirements req{};
    vkGetBufferMemoryRequirements(device_, b->buffer, &req);
    // A type the buffer can use: device-local (staging: host-visible and coherent).
    const std::uint32_t wanted = req.memoryTypeBits & (host_visible ? host_types_ : device_local_types_);
    const std::uint32_t usable = wanted ? wanted : (host_visible ? 0u : req.memoryTypeBits);
    if (!usable) {
        vkDestroyBuffer(device_, b->buffer, nullptr);
        throw DeviceError(asked + ": no host-visible, coherent memory type for a staging buffer",
                          VK_ERROR_FEATURE_NOT_PRESENT, vk_result_name(VK_ERROR_FEATURE_NOT_PRESENT));
    }
    std::uint32_t type = 0;
    while (!(usable & (1u << type))) ++type;
    if (req.size <= kSubAllocateMax && place_in_block(*b, req, type, host_visible)) {
        if (mapped) *mapped = b->block->mapped + b->offset;
        return b.release();
    }
    VkMemoryAllocateInfo ai{};
    ai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = type;
    r = vkAllocateMemory(device_, &ai, nullptr, &b->memory);
    if ((r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY) && do_release_cached() > 0)
        r = vkAllocateMemory(device_, &ai, nullptr, &b->memory);  // once more without the empty blocks
    if (r != VK_SUCCESS) {
        vkDestroyBuffer(device_, b->buffer, nullptr);
        if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_TOO_MANY_OBJECTS)
            throw oom(r, "vkAllocateMemory");
        check_vk(r, asked + ": vkAllocateMemory");
    }
    r = vkBindBufferMemory(device_, b->buffer, b->memory, 0);
    if (r == VK_SUCCESS && mapped) r = vkMapMemory(device_, b->memory, 0, VK_WHOLE_SIZE, 0, mapped);
    if (r != VK_SUCCESS) {
        vkDestroyBuffer(device_, b->buffer, nullptr);
        vkFreeMemory(device_, b->memory, nullptr);
        check_vk(r, asked + (mapped ? ": vkBindBufferMemory / vkMapMemory" : ": vkBindBufferMemory"));
    }
    return b.release();
}

bool VulkanDevice::place_in_block(VulkanBuffer& b, const VkMemoryRequirements& req, std::uint32_t type,
                                  bool host_visible) {
    const VkDeviceSize align = std::max<VkDeviceSize>(req.alignment, 1);
    std::lock_guard<std::mutex> lock(blocks_mutex_);
    // First fit over the blocks of this type, then a new block. The buffer
    // is bound before its range is taken, so a failed bind leaves the block
    // as it was (1: placed, 0: no room, -1: the bind failed).
    auto fit = [&](MemoryBlock& m) {
        for (auto it = m.free.begin(); it != m.free.end(); ++it) {
            const VkDeviceSize start = (it->first + align - 1) / align * align;
            const VkDeviceSize end = it->first + it->second;
            if (start + req.size > end) continue;
            if (vkBindBufferMemory(device_, b.buffer, m.memory, start) != VK_SUCCESS) return -1;
            const VkDeviceSize range_start = it->first;
            m.free.erase(it);
            if (start > range_start) m.free[range_start] = start - range_start;  // the alignment gap stays free
            if (end > start + req.size) m.free[start + req.size] = end - (start + req.size);
            m.used += req.size;
            b.block = &m;
            b.offset = start;
            b.reserved = req.size;
            return 1;
        }
        return 0;
    };
    for (auto& m : blocks_)
        if (m->type == type && (m->mapped != nullptr) == host_visible)
            if (const int placed = fit(*m)) return placed > 0;  // a failed bind: the caller's own path reports it
    auto m = std::make_unique<MemoryBlock>();
    m->size = std::min<VkDeviceSize>(kBlockBytes, max_allocation_);
    m->type = type;
    VkMemoryAllocateInfo ai{};
    ai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    ai.allocationSize = m->size;
    ai.memoryTypeIndex = type;
    if (vkAllocateMemory(device_, &ai, nullptr, &m->memory) != VK_SUCCESS) return false;
    void* p = nullptr;
    if (host_visible && vkMapMemory(device_, m->memory, 0, VK_WHOLE_SIZE, 0, &p) != VK_SUCCESS) {
        vkFreeMemory(device_, m->memory, nullptr);
        return false;
    }
    m->mapped = static_cast<char*>(p);
    m->free[0] = m->size;
    blocks_.push_back(std::move(m));
    return fit(*blocks_.back()) > 0;
}

void VulkanDevice::destroy_buffer(VulkanBuffer* b) noexcept {
    if (!b) return;
    vkDestroyBuffer(device_, b->buffer, nullptr);
    if (MemoryBlock* m = b->block) {
        std::lock_guard<std::mutex> lock(blocks_mutex_);
        // Back into the free list, merged with the ranges on either side.
        VkDeviceSize start = b->offset, bytes = b->reserved;
        auto next = m->free.lower_bound(start);
        if (next != m->free.begin()) {
            auto prev = std::prev(next);
            if (prev->first + prev->second == start) {
                start = prev->first;
                bytes += prev->second;
                m->free.erase(prev);
            }
        }
        if (next != m->free.end() && next->first == b->offset + b->reserved) {
            bytes += next->second;
            m->free.erase(next);
        }
        m->free[start] = bytes;
        m->used -= std::min(m->used, b->reserved);
        // An empty block stays for the next buffers unless another empty
        // block of its kind already does.
        if (m->used == 0) {
            const bool another = std::any_of(blocks_.begin(), blocks_.end(), [&](const auto& o) {
                return o.get() != m && o->used == 0 && o->type == m->type && (o->mapped != nullptr) == (m->mapped != nullptr);
            });
            if (another) {
                vkFreeMemory(device_, m->memory, nullptr);
                blocks_.erase(std::find_if(blocks_.begin(), blocks_.end(), [&](const auto& o) { return o.get() == m; }));
            }
        }
    } else {
        vkFreeMemory(device_, b->memory, nullptr);  // unmaps a mapped one
    }
    delete b;
}

// Cached: the empty blocks kept for reuse (what do_release_cached gives back).
std::uint64_t VulkanDevice::do_cached_bytes() const noexcept {
    std::lock_guard<std::mutex> lock(blocks_mutex_);
    std::uint64_t bytes = 0;
    for (const auto& m : blocks_)
        if (m->used == 0) bytes += m->size;
    return bytes;
}

std::uint64_t VulkanDevice::do_release_cached() noexcept {
    std::lock_guard<std::mutex> lock(blocks_mutex_);
    std::uint64_t released = 0;
    for (auto it = blocks_.begin(); it != blocks_.end();) {
        if ((*it)->used == 0) {
            released += (*it)->size;
            vkFreeMemory(device_, (*it)->memory, nullptr);
            it = blocks_.erase(it);
        } else {
            ++it;
        }
    }
    return released;
}

DeviceHandle VulkanDevice::do_allocate(std::size_t bytes) {
    reap_graveyard();  // memory freed while in use, now free
    return create_buffer(bytes, false, nullptr);
}

// Work submitted before may still use the buffer (an op or an async copy not
// yet synchronized, as other backends allow): it goes to the graveyard with
// the latest submission of every live stream, unless they are all complete.
void VulkanDevice::do_deallocate(DeviceHandle h) noexcept {
    auto* b = static_cast<VulkanBuffer*>(h);
    Deferred d{b, {}};
    bool idle = true;
    try {
        std::vector<std::shared_ptr<StreamState>> live;
        {
            std::lock_guard<std::mutex> lock(streams_mutex_);
            for (const auto& w : streams_)
                if (auto st = w.lock()) live.push_back(std::move(st));
        }
        for (const auto& st : live) {
            const std::uint64_t seq = st->last_submitted();
            if (!st->completed(seq)) {
                idle = false;
                d.waits.emplace_back(st, seq);
            }
        }
        if (!idle) {
            std::lock_guard<std::mutex> lock(graveyard_mutex_);
            graveyard_.push_back(std::move(d));
        }
    } catch (...) {  // no memory for the bookkeeping: wait instead
        try {
            do_synchronize();
        } catch (...) {
        }
        idle = true;
    }
    if (idle) destroy_buffer(b);
    reap_graveyard();
}

void VulkanDevice::reap_graveyard() noexcept {
    std::vector<VulkanBuffer*> dead;
    {
        std::lock_guard<std::mutex> lock(graveyard_mutex_);
        for (std::size_t i = 0; i < graveyard_.size();) {
            bool done = true;
            for (auto& w : graveyard_[i].waits) {
                auto st = w.first.lock();  // expired: its work was waited for when it went
                if (st && !st->completed(w.second)) {
                    done = false;
                    break;
                }
            }
            if (done) {
                dead.push_back(graveyard_[i].buffer);
                graveyard_[i] = std::move(graveyard_.back());
                graveyard_.pop_back();
            } else {
                ++i;
            }
        }
    }
    for (VulkanBuffer* b : dead) destroy_buffer(b);
}

// ---- copies -----------------------------------------------------------------

namespace {
VulkanBuffer* vb(DeviceHandle h) { return static_cast<VulkanBuffer*>(h); }
}  // namespace

void VulkanDevice::do_copy_h2d(DeviceHandle dst, std::size_t off, const void* src, std::size_t bytes, Stream& s,
                               bool blocking) {
    void* mapped = nullptr;
    VulkanBuffer* staging = create_buffer(bytes, true, &mapped);
    std::memcpy(mapped, src, bytes);  // the host data is taken now: async copies need not keep it
    const VkBuffer to = vb(dst)->buffer;
    const VkBuffer from = staging->buffer;
    const std::uint64_t seq = state_of(s).submit(
        [=](VkCommandBuffer cb) {
            VkBufferCopy region{0, off, bytes};
            vkCmdCopyBuffer(cb, from, to, 1, &region);
        },
        [this, staging] { destroy_buffer(staging); });
    if (blocking) state_of(s).wait(seq);
}

void VulkanDevice::do_copy_d2h(void* dst, DeviceHandle src, std::size_t off, std::size_t bytes, Stream& s,
                               bool blocking) {
    void* mapped = nullptr;
    VulkanBuffer* staging = create_buffer(bytes, true, &mapped);
    const VkBuffer from = vb(src)->buffer;
    const VkBuffer to = staging->buffer;
    const std::uint64_t seq = state_of(s).submit(
        [=](VkCommandBuffer cb) {
            VkBufferCopy region{off, 0, bytes};
            vkCmdCopyBuffer(cb, from, to, 1, &region);
        },
        [this, staging, mapped, dst, bytes] {
            std::memcpy(dst, mapped, bytes);  // the copy reaches the caller's memory once complete
            destroy_buffer(staging);
        });
    if (blocking) state_of(s).wait(seq);
}

// vkCmdCopyBuffer forbids overlapping regions: a copy within one buffer whose
// ranges overlap goes through a temporary device buffer.
void VulkanDevice::do_copy_d2d(DeviceHandle dst, std::size_t doff, DeviceHandle src, std::size_t soff,
                               std::size_t bytes, Stream& s, bool blocking) {
    const bool overlap = dst == src && doff < soff + bytes && soff < doff + bytes;
    const VkBuffer to = vb(dst)->buffer, from = vb(src)->buffer;
    std::uint64_t seq = 0;
    if (!overlap) {
        seq = state_of(s).submit([=](VkCommandBuffer cb) {
            VkBufferCopy region{soff, doff, bytes};
            vkCmdCopyBuffer(cb, from, to, 1, &region);
        });
    } else {
        VulkanBuffer* tmp = create_buffer(bytes, false, nullptr);
        const VkBuffer mid = tmp->buffer;
        seq = state_of(s).submit(
            [=](VkCommandBuffer cb) {
                VkBufferCopy in{soff, 0, bytes};
                vkCmdCopyBuffer(cb, from, mid, 1, &in);
                VkMemoryBarrier mb{};
                mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
                mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
                mb.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
                vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb,
                                     0, nullptr, 0, nullptr);
                VkBufferCopy out{0, doff, bytes};
                vkCmdCopyBuffer(cb, mid, to, 1, &out);
            },
            [this, tmp] { destroy_buffer(tmp); });
    }
    if (blocking) state_of(s).wait(seq);
}

// ---- streams, events, synchronization ------------------------------------------

std::unique_ptr<Stream> VulkanDevice::do_create_stream() { return std::make_unique<VulkanStream>(*this); }

std::unique_ptr<Event> VulkanDevice::do_create_event() { return std::make_unique<VulkanEvent>(*this); }

double VulkanDevice::do_elapsed_ms(Event& start, Event& end) {
    auto& s = static_cast<VulkanEvent&>(start);
    auto& e = static_cast<VulkanEvent&>(end);
    if (e.order() < s.order())
        throw InvalidArgument("elapsed_ms on " + selector() +
                              ": the end event was recorded before the start event (events swapped?); pass the "
                              "event recorded first as `start`");
    const double a = s.time_ns(), b = e.time_ns();
    return std::max(0.0, (b - a) * 1e-6);  // one queue, in order: b >= a up to the clock's jitter
}

std::uint64_t VulkanDevice::next_record_order() noexcept { return record_order_.fetch_add(1) + 1; }

void VulkanDevice::do_synchronize() {
    std::vector<std::shared_ptr<StreamState>> live;
    {
        std::lock_guard<std::mutex> lock(streams_mutex_);
        for (const auto& w : streams_)
            if (auto s = w.lock()) live.push_back(std::move(s));
    }
    for (const auto& s : live) s->wait_all();
    reap_graveyard();
}

}  // namespace vulkan
}  // namespace accel

// auto: a Vulkan GPU after CUDA and OpenCL; CPU drivers (lavapipe) only when named.
ACCEL_DEFINE_PLUGIN("vulkan", accel::vulkan::VulkanBackend,
                    "vulkan:PIECE[:I] (a piece of the driver or device name, I the device among those it matches; "
                    "e.g. vulkan:lavapipe, vulkan:llvmpipe, vulkan:nvidia:1) | vulkan:gpu|cpu",
                    15, 0)
