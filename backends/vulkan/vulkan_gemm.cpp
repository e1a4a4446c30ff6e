// Vulkan backend: the blocking of the tiled matmul/dense kernel
// (shaders/gemm_tiled.comp) per device class and output shape.
#include "vulkan_device.hpp"

#include <accel/dtype.hpp>

namespace accel {
namespace vulkan {

const std::vector<std::pair<const char*, std::uint32_t GemmParams::*>>& GemmParams::fields() {
    static const std::vector<std::pair<const char*, std::uint32_t GemmParams::*>> f{
        {"bm", &GemmParams::bm}, {"bn", &GemmParams::bn}, {"bk", &GemmParams::bk},       {"tm", &GemmParams::tm},
        {"tn", &GemmParams::tn}, {"vw", &GemmParams::vw}, {"local", &GemmParams::local}, {"stages", &GemmParams::stages}};
    return f;
}

std::string GemmParams::to_string() const {
    std::string out;
    for (const auto& f : fields()) out += (out.empty() ? "" : " ") + std::string(f.first) + "=" + std::to_string(this->*f.second);
    return out;
}

namespace {
constexpr std::uint32_t kVendorNvidia = 0x10de, kVendorAmd = 0x1002, kVendorIntel = 0x8086;
}  // namespace

std::vector<GemmParams> VulkanDevice::default_gemm_params(DType t) const {
    // The last resort of every class: 16 × 16 tiles, one output per invocation.
    const GemmParams smallest{16, 16, 16, 1, 1, 1, 1, 1};
    const GemmParams tile64{64, 64, 16, 4, 4, 1, 1, 1};
    const std::uint32_t vendor = pd_.props.vendorID;
    const bool gpu = pd_.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU ||
                     pd_.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU;
    if (pd_.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU) {
        // A CPU driver's shared memory is ordinary memory and a barrier a
        // context switch: operands read straight from the buffers, the
        // blocking that measured best on lavapipe.
        (void)t;
        return {GemmParams{64, 64, 16, 4, 4, 1, 0, 1}, smallest};
    }
    if (gpu && (vendor == kVendorNvidia || vendor == kVendorAmd)) {
        // 256 invocations of 8 × 8 outputs over 128 × 128 tiles, 16-deep
        // double-buffered slices (32 KiB of shared memory in f32) read by
        // 4-wide loads: the blocking of well-tuned SIMT GEMMs on these GPUs
        // (e.g. CLBlast's tuned Xgemm entries, cuBLAS's and rocBLAS's SIMT
        // macro tiles). Not measured here (no GPU): the tuner refines it.
        return {GemmParams{128, 128, 16, 8, 8, 4, 1, 2}, GemmParams{64, 64, 16, 4, 4, 4, 1, 2}, smallest};
    }
    if (gpu && vendor == kVendorIntel) {
        // Intel's GPUs have fewer registers per invocation (SIMD8-32 over a
        // 4 KiB register file per thread): 128 × 64 tiles of 8 × 4 outputs.
        return {GemmParams{128, 64, 16, 8, 4, 4, 1, 2}, GemmParams{64, 64, 16, 4, 4, 4, 1, 2}, smallest};
    }
    return {tile64, smallest};
}

std::string VulkanDevice::gemm_params_problem(const GemmParams& p, DType t) const {
    auto pow2_in = [](std::uint32_t v, std::uint32_t lo, std::uint32_t hi) {
        return v >= lo && v <= hi && (v & (v - 1)) == 0;
    };
    if (!pow2_in(p.bm, 8, 256) || !pow2_in(p.bn, 8, 256) || !pow2_in(p.bk, 1, 64))
        return "bm and bn must be powers of two in 8..256 and bk one in 1..64";
    if (!pow2_in(p.tm, 1, 16) || !pow2_in(p.tn, 1, 16) || p.tm > p.bm || p.tn > p.bn)
        return "tm and tn must be powers of two in 1..16, at most bm and bn";
    if (p.tm * p.tn > 64) return "tm × tn must be at most 64 accumulators per invocation";
    if (p.vw != 1 && p.vw != 2 && p.vw != 4) return "vw must be 1, 2 or 4";
    if (p.local > 1 || p.stages < 1 || p.stages > 2) return "local must be 0 or 1 and stages 1 or 2";
    if (!p.local && (p.vw != 1 || p.stages != 1)) return "without local staging vw and stages must be 1";
    if (p.bk % p.vw || p.bm % p.vw || p.bn % p.vw) return "bm, bn and bk must be multiples of vw";
    const Dim3 b = p.block();
    const VkPhysicalDeviceLimits& l = pd_.props.limits;
    if (b.x * b.y > l.maxComputeWorkGroupInvocations || b.x > l.maxComputeWorkGroupSize[0] ||
        b.y > l.maxComputeWorkGroupSize[1])
        return "its work-group of " + std::to_string(b.x) + " × " + std::to_string(b.y) +
               " invocations is beyond the device's maxComputeWorkGroupSize / Invocations";
    if (b.x * b.y < 8) return "its work-group of " + std::to_string(b.x * b.y) + " invocations is below 8";
    const std::size_t acc_bytes = t == DType::f64 ? 8 : 4;
    const std::size_t shared = p.local ? std::size_t{p.stages} * p.bk * (p.bm + p.bn) * acc_bytes : 2 * acc_bytes;
    if (shared > l.maxComputeSharedMemorySize)
        return "its " + std::to_string(shared) + " bytes of shared memory are beyond the device's " +
               std::to_string(l.maxComputeSharedMemorySize) + " (maxComputeSharedMemorySize)";
    if (t == DType::f64 && !pd_.fp64) return "the device has no f64";
    return "";
}

std::optional<GemmParams> VulkanDevice::gemm_params(std::size_t m, std::size_t n, DType t) const noexcept {
    if (m < kGemmBlock || n < kGemmBlock) return std::nullopt;
    // On a GPU a tile counts only where it gives enough work-groups to fill
    // the device (as the CUDA backend's tile rule; a 512 × 512 output is
    // 16 tiles of 128 × 128); the last one that fits serves otherwise.
    const bool cpu = pd_.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    constexpr std::size_t kMinGpuTiles = 128;
    try {
        std::optional<GemmParams> fallback;
        for (const GemmParams& p : default_gemm_params(t)) {
            if (m < p.bm || n < p.bn || !gemm_params_problem(p, t).empty()) continue;
            if (cpu || ceil_div(m, p.bm) * ceil_div(n, p.bn) >= kMinGpuTiles) return p;
            if (!fallback) fallback = p;
        }
        return fallback;
    } catch (...) {
        return std::nullopt;
    }
}

}  // namespace vulkan
}  // namespace accel
