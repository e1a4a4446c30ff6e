// Vulkan backend: buffers, sub-allocated from shared memory blocks, and frees deferred past in-flight work.
#include "vulkan_device.hpp"

#include <accel/error.hpp>

#include <algorithm>
#include <iterator>
#include <string>

namespace accel {
namespace vulkan {

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

}  // namespace vulkan
}  // namespace accel
