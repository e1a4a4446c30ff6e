// Vulkan backend: the blocking of the tiled matmul/dense kernel
// (shaders/gemm_tiled.comp) per device class and output shape.
#include "vulkan_device.hpp"

#include <accel/dtype.hpp>
#include <accel/error.hpp>

#include <algorithm>
#include <cmath>

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
        // switch between invocations: operands read straight from the
        // buffers, 64 accumulators per invocation (lavapipe: 3-4x the 64 × 64
        // shared-memory tile at 512³-1024³,
        // docs/results/vulkan-gemm-tuning-2026-12-02.md).
        (void)t;
        return {GemmParams{64, 128, 16, 8, 8, 1, 0, 1}, GemmParams{32, 64, 16, 4, 4, 1, 0, 1}, smallest};
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

std::optional<GemmParams> VulkanDevice::default_gemm_params(std::size_t m, std::size_t n, DType t) const noexcept {
    if (m < kGemmBlock || n < kGemmBlock) return std::nullopt;
    // On a GPU a tile counts only where it gives enough work-groups to fill
    // the device (as the CUDA backend's tile rule; a 512 × 512 output is
    // 16 tiles of 128 × 128); the first one that fits serves otherwise.
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

std::optional<GemmParams> VulkanDevice::gemm_params(Op op, std::size_t m, std::size_t n, DType t) const noexcept {
    if (m < kGemmBlock || n < kGemmBlock) return std::nullopt;
    {
        std::lock_guard<std::mutex> lock(tuning_mutex_);
        if (!tuned_.empty()) {
            const auto it = tuned_.find(TuningKey{op, t, gemm_shape_class(m, n)});
            if (it != tuned_.end() && m >= it->second.bm && n >= it->second.bn) return it->second;
        }
    }
    return default_gemm_params(m, n, t);
}

// ---- Tuning -------------------------------------------------------------------

namespace {

TuningParams to_tuning(const GemmParams& g) {
    TuningParams p;
    for (const auto& f : GemmParams::fields()) p[f.first] = g.*f.second;
    return p;
}

// The tiled kernel's classes: narrow outputs (at most 16 columns) run the
// other kernels.
bool tiled_class(const std::string& c) { return c == "small" || c == "large"; }

}  // namespace

std::vector<TuningKey> VulkanDevice::tunable() const {
    std::vector<TuningKey> keys;
    for (Op op : {Op::matmul, Op::dense})
        for (DType t : kAllDTypes)
            if (has_dtype(t))
                for (const std::string& c : gemm_shape_classes())
                    if (tiled_class(c)) keys.push_back(TuningKey{op, t, c});
    return keys;
}

namespace {
void check_key(const VulkanDevice& d, const TuningKey& key) {
    for (const TuningKey& k : d.tunable())
        if (k == key) return;
    throw InvalidArgument("tuning " + key.to_string() + " on " + d.selector() +
                          ": not a tunable key here (matmul or dense; the device's dtypes; shape class small or "
                          "large: narrow outputs run kernels without a blocking)");
}
}  // namespace

TuningParams VulkanDevice::default_params(const TuningKey& key) const {
    check_key(*this, key);
    const TuningShape s = tuning_shape(key.shape_class, false);
    const std::optional<GemmParams> p = default_gemm_params(s.m, s.n, key.dtype);
    if (!p)
        throw InvalidArgument("tuning " + key.to_string() + " on " + selector() +
                              ": no blocking of the tiled kernel fits this device");
    return to_tuning(*p);
}

GemmParams VulkanDevice::gemm_params_from(const TuningParams& p, DType t, const std::string& where) const {
    std::string names;
    for (const auto& f : GemmParams::fields()) names += (names.empty() ? "" : ", ") + std::string(f.first);
    for (const auto& [name, value] : p) {
        bool known = false;
        for (const auto& f : GemmParams::fields()) known = known || name == f.first;
        if (!known) throw InvalidArgument(where + "unknown parameter '" + name + "'; expected " + names);
        if (value < 0 || value > 4096)
            throw InvalidArgument(where + name + "=" + std::to_string(value) + " is out of range (0..4096)");
    }
    GemmParams g;
    for (const auto& f : GemmParams::fields()) {
        const auto it = p.find(f.first);
        if (it == p.end()) throw InvalidArgument(where + "parameter '" + f.first + "' is missing (expected " + names + ")");
        g.*f.second = static_cast<std::uint32_t>(it->second);
    }
    if (const std::string why = gemm_params_problem(g, t); !why.empty())
        throw InvalidArgument(where + why + " (" + g.to_string() + ")");
    return g;
}

void VulkanDevice::set_params(const TuningKey& key, const TuningParams& p) {
    check_key(*this, key);
    // Every blocking sums each output in k order (gemm_tiled.comp), so any
    // valid one keeps the default's bits.
    const GemmParams g =
        gemm_params_from(p, key.dtype, "tuning " + key.to_string() + " on " + selector() + " (" + info().name + "): ");
    const bool is_default = p == default_params(key);
    std::lock_guard<std::mutex> lock(tuning_mutex_);
    if (is_default)
        tuned_.erase(key);
    else
        tuned_[key] = g;
}

void VulkanDevice::reset_params() noexcept {
    std::lock_guard<std::mutex> lock(tuning_mutex_);
    tuned_.clear();
}

TuningParams VulkanDevice::params(const TuningKey& key) const {
    check_key(*this, key);
    {
        std::lock_guard<std::mutex> lock(tuning_mutex_);
        const auto it = tuned_.find(key);
        if (it != tuned_.end()) return to_tuning(it->second);
    }
    return default_params(key);
}

std::string VulkanDevice::describe(const TuningKey& key, const TuningParams& p) const {
    GemmParams g;
    try {
        g = gemm_params_from(p, key.dtype, "");
    } catch (const InvalidArgument& e) {
        return params_text(p) + " (not valid here: " + e.what() + ")";
    }
    const Dim3 b = g.block();
    std::string out = std::to_string(g.bm) + "x" + std::to_string(g.bn) + " tile, k slices of " + std::to_string(g.bk) +
                      ", " + std::to_string(g.tm) + "x" + std::to_string(g.tn) + " outputs per invocation (work-group " +
                      std::to_string(b.x) + "x" + std::to_string(b.y) + "), ";
    if (!g.local) return out + "operands read from the buffers";
    return out + std::to_string(g.vw) + "-wide loads into shared memory" + (g.stages == 2 ? ", double-buffered" : "");
}

namespace {
// How far `p` is from `d`: the sum over the fields of |log2(p / d)| (0 and 1 alike for local).
double distance(const GemmParams& p, const GemmParams& d) {
    double sum = 0;
    for (const auto& f : GemmParams::fields())
        sum += std::fabs(std::log2(double(std::max(p.*f.second, 1u)) / double(std::max(d.*f.second, 1u)))) +
               (p.*f.second != d.*f.second && (p.*f.second == 0 || d.*f.second == 0) ? 1 : 0);
    return sum;
}
}  // namespace

// A grid around the key's default, nearest first (distance()): on CPU
// drivers tiles of 8-128 rows by 64-256 columns, 4-16 × 4-8 outputs per
// invocation (work-groups of one row too: rows uniform across it, A's
// loads once per step), operands read from the buffers or staged by 1- or
// 4-wide loads; on GPUs shared-memory staging with 1-, 2- and 4-wide loads,
// tiles of 32-128 × 32-128 with 2-8 × 2-8 outputs per invocation; slices of
// 8-32, single or double buffers. Sets gemm_params_problem refuses,
// or tiles larger than the class's shape, are left out.
std::vector<TuningParams> VulkanDevice::candidates(const TuningKey& key, bool quick) const {
    const TuningParams def = default_params(key);
    const GemmParams d = gemm_params_from(def, key.dtype, "");
    const TuningShape s = tuning_shape(key.shape_class, false);
    const bool cpu = pd_.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    using V = std::vector<std::uint32_t>;
    const V bms = cpu ? V{8, 16, 32, 64, 128} : V{32, 64, 128};
    const V bns = cpu ? V{64, 128, 256} : V{32, 64, 128};
    const V bks = cpu ? V{8, 16, 32} : V{8, 16, 32};
    const V tms = cpu ? V{4, 8, 16} : V{2, 4, 8};
    const V tns = cpu ? V{4, 8} : V{2, 4, 8};
    const V vws = cpu ? V{1, 4} : V{1, 2, 4};
    const V locals = cpu ? V{0, 1} : V{1};
    const V stages = V{1, 2};
    std::vector<GemmParams> all;
    for (std::uint32_t bm : bms)
        for (std::uint32_t bn : bns)
            for (std::uint32_t bk : bks)
                for (std::uint32_t tm : tms)
                    for (std::uint32_t tn : tns)
                        for (std::uint32_t vw : vws)
                            for (std::uint32_t local : locals)
                                for (std::uint32_t st : stages) {
                                    const GemmParams g{bm, bn, bk, tm, tn, vw, local, st};
                                    if (g == d || bm > s.m || bn > s.n || !gemm_params_problem(g, key.dtype).empty())
                                        continue;
                                    if (!local && bk != 16) continue;  // unstaged, bk is unused: one of them
                                    all.push_back(g);
                                }
    return nearest_first(
        def, std::move(all), [&](const GemmParams& g) { return distance(g, d); },
        [](const GemmParams& g) { return to_tuning(g); }, quick);
}

}  // namespace vulkan
}  // namespace accel
