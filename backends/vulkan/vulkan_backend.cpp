// Vulkan backend: the instance (and its validation messenger), the loader's
// physical devices and their device info, Backend (probe, selectors)
// (see vulkan_device.hpp for the design).
#include "vulkan_device.hpp"
#include "../common/device_names.hpp"

#include <accel/error.hpp>
#include <accel/plugin.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace accel {
namespace vulkan {

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
    VkPhysicalDevice8BitStorageFeatures s8{};
    s8.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES;
    if (pd.props.apiVersion >= VK_API_VERSION_1_2) s16.pNext = &s8;  // core there: no extension to enable
    VkPhysicalDeviceFeatures2 f2{};
    f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    f2.pNext = &s16;
    vkGetPhysicalDeviceFeatures2(d, &f2);
    pd.fp64 = f2.features.shaderFloat64 && f2.features.shaderInt64;
    pd.storage16 = s16.storageBuffer16BitAccess;
    pd.storage8 = s8.storageBuffer8BitAccess;
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

}  // namespace

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
    i.determinism = {true, true,
                     "a product's element is one invocation's sum over k in k order in both GEMM shaders; "
                     "column_sum splits columns; no atomics"};
    // Without DenormPreserve (VkPhysicalDeviceFloatControlsProperties) for a
    // width, the driver may flush its subnormals. The f64 modules declare it
    // only where both widths have it (with_float_controls); f16 and bf16 are
    // computed in float, where f16's subnormals are normal and bf16's are
    // float's.
    const bool keep32 = d.denorm_preserve32, keep64 = d.denorm_preserve32 && d.denorm_preserve64;
    if (!keep32) i.subnormals.flushed = {DType::f32, DType::bf16};
    if (d.fp64 && !keep64) i.subnormals.flushed.push_back(DType::f64);
    const bool no64 = d.fp64 && !d.denorm_preserve64;
    if (!i.subnormals.flushed.empty())
        i.subnormals.basis =
            std::string("the driver reports no DenormPreserve for ") +
            (!keep32 && no64 ? "32- and 64-bit floats" : !keep32 ? "32-bit floats" : "64-bit floats") +
            " (VkPhysicalDeviceFloatControlsProperties), so its compiler may flush their subnormals" +
            (!keep32 ? "; bf16 is computed in 32-bit floats" : "") +
            (d.fp64 && !keep64 && !no64 ? "; the f64 kernels use 32-bit floats too" : "");
    i.kernel_languages = {"spirv", "glsl"};  // GLSL through shaderc or glslc
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
    i.extra.push_back({"device-to-device copy",
                       copy_method(d) == "shader"
                           ? "compute shader (16-byte units, a byte head and tail; ACCEL_VULKAN_COPY)"
                           : "vkCmdCopyBuffer (ACCEL_VULKAN_COPY)"});
    i.extra.push_back({"vendor BLAS", vendor_blas_description()});
    return i;
}

namespace {

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
        const auto [piece, within] = split_device_name("vulkan", spec, "0, 1, ...");
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

}  // namespace vulkan
}  // namespace accel

// auto: a Vulkan GPU after CUDA and OpenCL; CPU drivers (lavapipe) only when named.
ACCEL_DEFINE_PLUGIN("vulkan", accel::vulkan::VulkanBackend,
                    "vulkan:PIECE[:I] (a piece of the driver or device name, I the device among those it matches; "
                    "e.g. vulkan:lavapipe, vulkan:llvmpipe, vulkan:nvidia:1) | vulkan:gpu|cpu",
                    15, 0)
