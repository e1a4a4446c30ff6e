// Vulkan backend: the pipeline cache file, loaded (untrusted) at device creation and saved at destruction.
#include "vulkan_device.hpp"

#include <accel/environment.hpp>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include <unistd.h>

namespace accel {
namespace vulkan {

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

}  // namespace vulkan
}  // namespace accel
