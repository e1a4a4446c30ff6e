// Vulkan backend: the pipeline cache file, loaded (untrusted) at device creation and saved at destruction.
#include "vulkan_device.hpp"
#include "../common/cache_file.hpp"

#include <accel/environment.hpp>

#include <cstdio>
#include <cstring>
#include <string>


namespace accel {
namespace vulkan {

namespace {

// The pipeline cache file (backends/common/cache_file.hpp): our header,
// then the driver's data (which starts with Vulkan's own header,
// VkPipelineCacheHeaderVersionOne).
constexpr char kCacheMagic[9] = "accelPC1";

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
        data = cache_file::read(pipeline_cache_file_, kCacheMagic, std::uint64_t{256} << 20);
        if (!cache_header_matches(data, pd_.props)) data.clear();
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
    pipeline_cache_loaded_ = data.empty() ? 0 : cache_file::checksum(data.data(), data.size());
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
                if (cache_file::checksum(data.data(), data.size()) != pipeline_cache_loaded_ &&
                    cache_header_matches(data, pd_.props))
                    cache_file::write(pipeline_cache_file_, kCacheMagic, data);
            }
        }
    } catch (...) {
        // A cache that cannot be written costs the next process compile time only.
    }
    vkDestroyPipelineCache(device_, pipeline_cache_, nullptr);
    pipeline_cache_ = VK_NULL_HANDLE;
}

}  // namespace vulkan
}  // namespace accel
