// Vulkan backend: the device (VkDevice, layouts, teardown), its copies, streams, events and synchronization.
#include "vulkan_device.hpp"

#include <accel/error.hpp>

#include <algorithm>
#include <cstring>

namespace accel {
namespace vulkan {

// ---- the device -------------------------------------------------------------

VulkanDevice::VulkanDevice(int index, VkInstance instance, const PhysicalDevice& pd, const std::string& stable)
    : Device(make_info(index, pd, stable)), instance_(instance), pd_(pd) {
    copy_by_shader_ = copy_method(pd) == "shader";
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo qi{};
    qi.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    qi.queueFamilyIndex = pd.queue_family;
    qi.queueCount = 1;
    qi.pQueuePriorities = &priority;
    VkPhysicalDevice16BitStorageFeatures s16{};
    s16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
    s16.storageBuffer16BitAccess = pd.storage16 ? VK_TRUE : VK_FALSE;
    VkPhysicalDevice8BitStorageFeatures s8{};
    s8.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES;
    s8.storageBuffer8BitAccess = VK_TRUE;  // the copy shader's head and tail bytes
    if (pd.storage8) s16.pNext = &s8;
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

// ---- copies -----------------------------------------------------------------

namespace {
VulkanBuffer* vb(DeviceHandle h) { return static_cast<VulkanBuffer*>(h); }
}  // namespace

void* VulkanDevice::allocate_page_locked(std::size_t bytes) {
    void* mapped = nullptr;
    VulkanBuffer* b = create_buffer(bytes, true, &mapped);
    try {
        std::lock_guard<std::mutex> lock(page_locked_mutex_);
        page_locked_.emplace(static_cast<const char*>(mapped), b);
    } catch (...) {
        destroy_buffer(b);
        throw;
    }
    return mapped;
}

void VulkanDevice::free_page_locked(void* data) noexcept {
    VulkanBuffer* b = nullptr;
    {
        std::lock_guard<std::mutex> lock(page_locked_mutex_);
        const auto it = page_locked_.find(static_cast<const char*>(data));
        if (it == page_locked_.end()) return;
        b = it->second;
        page_locked_.erase(it);
    }
    destroy_buffer(b);
}

std::pair<VulkanBuffer*, VkDeviceSize> VulkanDevice::page_locked_range(const void* data, std::size_t bytes) const {
    const char* p = static_cast<const char*>(data);
    std::lock_guard<std::mutex> lock(page_locked_mutex_);
    auto it = page_locked_.upper_bound(p);
    if (it == page_locked_.begin()) return {nullptr, 0};
    --it;
    const auto at = static_cast<VkDeviceSize>(p - it->first);
    if (at + bytes > it->second->size) return {nullptr, 0};
    return {it->second, at};
}

void VulkanDevice::do_copy_h2d(DeviceHandle dst, std::size_t off, const void* src, std::size_t bytes, Stream& s,
                               bool blocking) {
    if (const auto [locked, from_at] = page_locked_range(src, bytes); locked)
        return copy_buffer(locked->buffer, locked->start + from_at, vb(dst)->buffer, vb(dst)->start + off, bytes, s,
                           blocking);
    void* mapped = nullptr;
    VulkanBuffer* staging = create_buffer(bytes, true, &mapped);
    std::memcpy(mapped, src, bytes);  // the host data is taken now: async copies need not keep it
    copy_buffer(staging->buffer, 0, vb(dst)->buffer, vb(dst)->start + off, bytes, s, blocking,
                [this, staging] { destroy_buffer(staging); });
}

void VulkanDevice::do_copy_d2h(void* dst, DeviceHandle src, std::size_t off, std::size_t bytes, Stream& s,
                               bool blocking) {
    if (const auto [locked, to_at] = page_locked_range(dst, bytes); locked)
        return copy_buffer(vb(src)->buffer, vb(src)->start + off, locked->buffer, locked->start + to_at, bytes, s,
                           blocking);
    void* mapped = nullptr;
    VulkanBuffer* staging = create_buffer(bytes, true, &mapped);
    copy_buffer(vb(src)->buffer, vb(src)->start + off, staging->buffer, 0, bytes, s, blocking,
                [this, staging, mapped, dst, bytes] {
                    std::memcpy(dst, mapped, bytes);  // the copy reaches the caller's memory once complete
                    destroy_buffer(staging);
                });
}

void VulkanDevice::copy_buffer(VkBuffer from, VkDeviceSize from_at, VkBuffer to, VkDeviceSize to_at,
                               std::size_t bytes, Stream& s, bool blocking, std::function<void()> done) {
    const std::uint64_t seq = state_of(s).submit(
        [=](VkCommandBuffer cb) {
            VkBufferCopy region{from_at, to_at, bytes};
            vkCmdCopyBuffer(cb, from, to, 1, &region);
        },
        std::move(done));
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
