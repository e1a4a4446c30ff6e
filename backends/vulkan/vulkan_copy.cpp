// Vulkan backend: device-to-device copies, by a compute shader
// (shaders/copy_bytes.comp) or by vkCmdCopyBuffer.
#include "vulkan_device.hpp"

#include <accel/error.hpp>

#include <accel/environment.hpp>

#include <algorithm>

namespace accel {
namespace vulkan {

namespace {

const env::Declaration kCopyVariable{{"ACCEL_VULKAN_COPY", "auto, shader or transfer (any case)",
                                      "how the Vulkan backend copies device to device: its compute shader, "
                                      "vkCmdCopyBuffer, or auto (default: the shader on GPUs, vkCmdCopyBuffer on CPU "
                                      "drivers)",
                                      "the vulkan backend"}};
VulkanBuffer* vb(DeviceHandle h) { return static_cast<VulkanBuffer*>(h); }
constexpr std::size_t kCopyBlock = 256;
constexpr std::size_t kCopyPerInvocation = 32768;  // llvmpipe ends an invocation after 65535 loop iterations

// One segment of a shader copy: where its bytes are in the two bindings and
// how the body is split (shaders/copy_bytes.comp says what each word means).
struct CopyPlan {
    std::uint32_t mode, src0, dst0, shift, spos, dpos, head, tail, bytes;
    std::size_t units;
};

CopyPlan plan_copy(VkDeviceSize spos, VkDeviceSize dpos, VkDeviceSize bytes) {
    CopyPlan p{};
    p.mode = (spos % 16 == dpos % 16) ? 0u : (spos % 4 == dpos % 4) ? 1u : 2u;
    const VkDeviceSize unit = p.mode == 0 ? 16 : 4;
    const VkDeviceSize head = std::min<VkDeviceSize>((unit - dpos % unit) % unit, bytes);
    VkDeviceSize units = (bytes - head) / unit;
    if (p.mode == 2) {
        // Each destination word reads the source word after its first one
        // too: only words wholly within the source range (spos + bytes).
        const VkDeviceSize first = (spos + head) / 4, whole = (spos + bytes) / 4;
        units = std::min(units, whole > first + 1 ? whole - first - 1 : 0);
    }
    p.src0 = static_cast<std::uint32_t>((spos + head) / unit);
    p.dst0 = static_cast<std::uint32_t>((dpos + head) / unit);
    p.shift = static_cast<std::uint32_t>((spos + head) % 4 * 8);
    p.spos = static_cast<std::uint32_t>(spos);
    p.dpos = static_cast<std::uint32_t>(dpos);
    p.head = static_cast<std::uint32_t>(head);
    p.tail = static_cast<std::uint32_t>(head + units * unit);
    p.bytes = static_cast<std::uint32_t>(bytes);
    p.units = static_cast<std::size_t>(units);
    return p;
}
}  // namespace

// The rule (ACCEL_VULKAN_COPY=auto): the shader on GPUs, vkCmdCopyBuffer on
// CPU drivers. A GPU's vkCmdCopyBuffer may run on a copy engine or a
// driver's own kernel well below the memory's bandwidth (NVIDIA's, measured
// on an H100 far below CUDA's copy), where the shader's 16-byte loads reach
// what the elementwise ops do; lavapipe's vkCmdCopyBuffer is a host memcpy,
// measured many times faster than its compute shaders (the figures:
// docs/benchmarking.md). A rule rather than a measurement at each open: opening a
// device stays cheap and every process copies the same way, so benchmark
// figures compare across runs. `shader` and `transfer` choose for every
// device (a GPU's two copies measured side by side, the shader tested on a
// CPU driver).
std::string copy_method(const PhysicalDevice& pd) {
    const auto asked = env::read_word("ACCEL_VULKAN_COPY", {"auto", "shader", "transfer"}).value_or("auto");
    if (asked == "shader" && !pd.storage8)
        throw Unsupported(std::string("ACCEL_VULKAN_COPY=shader: ") + pd.props.deviceName +
                          " lacks storageBuffer8BitAccess (Vulkan 1.2), which the copy shader's head and tail "
                          "bytes need; use transfer or auto");
    if (asked == "transfer" || !pd.storage8) return "transfer";
    if (asked == "shader") return "shader";
    return pd.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? "transfer" : "shader";
}

std::uint64_t VulkanDevice::copy_by_shader(const VulkanBuffer& dst, VkDeviceSize doff, const VulkanBuffer& src,
                                           VkDeviceSize soff, VkDeviceSize bytes, Stream& s) {
    const VkPhysicalDeviceLimits& l = pd_.props.limits;
    // Each binding starts at a multiple of 16 bytes (and of the offset
    // alignment), so that 16-byte units fall on 16-byte addresses, at most
    // align - 1 bytes before the segment's first byte: a segment of `most`
    // bytes stays within one binding's reach (and 32-bit byte indices).
    const VkDeviceSize align = std::max<VkDeviceSize>(l.minStorageBufferOffsetAlignment, 16);
    const VkDeviceSize most = (l.maxStorageBufferRange - (align - 1)) / 16 * 16;
    const std::size_t block = std::min<std::size_t>(kCopyBlock, info().limits.max_block_size);
    std::uint64_t seq = 0;
    for (VkDeviceSize done = 0; done < bytes; done += most) {
        const VkDeviceSize len = std::min(most, bytes - done);
        const VkDeviceSize d = dst.start + doff + done, sa = src.start + soff + done;
        const CopyPlan p = plan_copy(sa % align, d % align, len);
        const std::vector<VkDescriptorBufferInfo> infos{{src.buffer, sa - sa % align, sa % align + len},
                                                        {dst.buffer, d - d % align, d % align + len}};
        const std::size_t groups = std::max<std::size_t>(
            1, std::min<std::size_t>(ceil_div(std::max<std::size_t>(p.units, 1), block), info().limits.max_grid_dims.x));
        seq = dispatch_ranges("copy_bytes.f32", infos, p.units, kCopyPerInvocation,
                              {p.mode, p.src0, p.dst0, p.shift, p.spos, p.dpos, p.head, p.tail, p.bytes},
                              LaunchGeometry{{groups, 1, 1}, {block, 1, 1}}, s);
    }
    return seq;
}

// Ranges that overlap within one VkBuffer (two handles may share one: adopted
// ranges of a program's buffer) go through a temporary device buffer: neither
// vkCmdCopyBuffer nor the shader's invocations order overlapping bytes.
void VulkanDevice::do_copy_d2d(DeviceHandle dst, std::size_t dst_off, DeviceHandle src, std::size_t src_off,
                               std::size_t bytes, Stream& s, bool blocking) {
    StreamState& st = state_of(s);
    if (bytes == 0) {  // nothing to record (a VkBufferCopy of 0 bytes is invalid)
        if (blocking) st.wait(st.last_submitted());
        return;
    }
    const VulkanBuffer &to = *vb(dst), &from = *vb(src);
    const VkDeviceSize doff = to.start + dst_off, soff = from.start + src_off;
    const bool overlap = to.buffer == from.buffer && doff < soff + bytes && soff < doff + bytes;
    VulkanBuffer* tmp = overlap ? create_buffer(bytes, false, nullptr) : nullptr;
    auto release = [this, tmp] { destroy_buffer(tmp); };
    std::uint64_t seq = 0;
    if (copy_by_shader_) {
        try {
            if (tmp) copy_by_shader(*tmp, 0, from, src_off, bytes, s);
            seq = copy_by_shader(to, dst_off, tmp ? *tmp : from, tmp ? 0 : src_off, bytes, s);
        } catch (...) {
            if (tmp) {  // recorded work may still use it
                try {
                    st.wait_all();
                } catch (...) {
                }
                destroy_buffer(tmp);
            }
            throw;
        }
        if (tmp) seq = st.submit([](VkCommandBuffer) {}, release);  // after the copies that use it
    } else if (!tmp) {
        seq = st.submit([&](VkCommandBuffer cb) {
            VkBufferCopy region{soff, doff, bytes};
            vkCmdCopyBuffer(cb, from.buffer, to.buffer, 1, &region);
        });
    } else {
        const VkBuffer mid = tmp->buffer;
        seq = st.submit(
            [&](VkCommandBuffer cb) {
                VkBufferCopy in{soff, 0, bytes};
                vkCmdCopyBuffer(cb, from.buffer, mid, 1, &in);
                VkMemoryBarrier mb{};
                mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
                mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
                mb.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
                vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0,
                                     nullptr, 0, nullptr);
                VkBufferCopy out{0, doff, bytes};
                vkCmdCopyBuffer(cb, mid, to.buffer, 1, &out);
            },
            release);  // submit() runs it itself if recording fails
    }
    if (blocking) st.wait(seq);
}

}  // namespace vulkan
}  // namespace accel
