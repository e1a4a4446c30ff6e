// OpenCL backend: the tunable gemm (accel/device.hpp's Tuning). A key's
// parameters are a GemmParams variant of its own: add_variant gives it an
// index, do_tile_layout hands it to the launch, and its programs are built
// on first use like the default tiles'.
//
// The summation order stays the default's whatever the parameters: gemm,
// gemm_direct and gemm_rows walk K in order into one accumulator per
// element of C whatever the tile, the work per item, the K slice or its
// unrolling (a slice's zero padding adds exact zeros), and the vector width
// of the accumulators spans columns, not K. gemm_dot alone (A·Bᵀ on CPU
// devices) splits K into MM_VW partial sums, so on those devices the vector
// width, and whether gemm_dot exists at all, stay the default's.
#include "opencl_device.hpp"

#include <accel/error.hpp>

#include <algorithm>
#include <cmath>
#include <mutex>

namespace accel {
namespace opencl {

namespace {

const char* const kParamNames[] = {"bx", "by", "wm", "wn", "vw", "tk", "ku"};

bool power_of_two(std::size_t v) { return v && (v & (v - 1)) == 0; }

// How far `p` is from `d`: the sum over the parameters of |log2(p / d)|.
double distance(const GemmParams& p, const GemmParams& d) {
    auto l = [](std::size_t a, std::size_t b) { return std::fabs(std::log2(double(a) / double(b))); };
    // Unrolling is the least likely to matter: it counts twice, so it comes later.
    return l(p.bx, d.bx) + l(p.by, d.by) + l(p.wm, d.wm) + l(p.wn, d.wn) + l(p.vw, d.vw) + l(p.tk, d.tk) +
           2 * l(p.ku, d.ku);
}

}  // namespace

std::vector<TuningKey> OpenclDevice::tunable() const {
    std::vector<TuningKey> keys;
    for (Op op : {Op::matmul, Op::dense})
        for (DType t : native_dtypes())
            for (const std::string& c : gemm_shape_classes()) keys.push_back(TuningKey{op, t, c});
    return keys;
}

namespace {
void check_key(const std::vector<TuningKey>& keys, const TuningKey& key, const std::string& who) {
    for (const TuningKey& k : keys)
        if (k == key) return;
    throw InvalidArgument("tuning " + key.to_string() + " on " + who +
                          ": not a tunable key here (matmul or dense; f32, f16, bf16, and f64 with cl_khr_fp64; "
                          "shape class narrow, small or large)");
}
}  // namespace

TuningParams OpenclDevice::default_params(const TuningKey& key) const {
    check_key(tunable(), key, selector());
    const TuningShape s = tuning_shape(key.shape_class, false);
    return tiles_.tiles[tiles_.choose(s.m, s.n)].tuning_params();
}

std::string OpenclDevice::invalid_params(const GemmParams& p) const {
    const GemmParams& d = tiles_.tiles[GemmTiles::general];
    const LaunchLimits& l = info().limits;
    auto n = [](std::size_t v) { return std::to_string(v); };
    for (std::size_t v : {p.bx, p.by})
        if (!power_of_two(v) || v > 64) return "bx and by must be powers of two up to 64, not " + n(v);
    if (p.bx * p.by > l.max_block_size || p.bx > l.max_block_dims.x || p.by > l.max_block_dims.y)
        return "a work-group of " + n(p.bx) + " x " + n(p.by) + " is past the device's limits (" +
               n(l.max_block_size) + " work-items, " + n(l.max_block_dims.x) + " x " + n(l.max_block_dims.y) + ")";
    if (p.wm < 1 || p.wm > 16) return "wm must be 1..16, not " + n(p.wm);
    if (p.wn < 1 || p.wn > 8) return "wn must be 1..8, not " + n(p.wn);
    if (!power_of_two(p.vw) || p.vw > 16) return "vw must be 1, 2, 4, 8 or 16, not " + n(p.vw);
    if (p.wm * p.wn * p.vw > 512) return "wm*wn*vw (accumulators per work-item) must be at most 512";
    if (!power_of_two(p.tk) || p.tk < 4 || p.tk > 256) return "tk must be a power of two in 4..256, not " + n(p.tk);
    if (!power_of_two(p.ku) || p.ku > 8 || p.ku > p.tk) return "ku must be 1, 2, 4 or 8 and at most tk, not " + n(p.ku);
    if (p.local_bytes() > local_mem_)
        return "the K slices need " + n(p.local_bytes()) + " bytes of local memory, the device has " + n(local_mem_);
    if (direct_gemm_ && (p.vw != d.vw || has_gemm_dot(p) != has_gemm_dot(d)))
        return "vw must stay " + n(d.vw) + (has_gemm_dot(d) ? " with wn*vw a multiple of 4" : "") +
               " here: A·Bᵀ's dot products split K into vw partial sums, so another vw would change the "
               "summation order (and the bits)";
    return "";
}

std::size_t OpenclDevice::add_variant(const GemmParams& p) {
    std::unique_lock<std::shared_mutex> lock(tuning_mutex_);
    const std::size_t count = variant_count_.load();
    for (std::size_t v = 0; v < count; ++v)
        if (variants_[v] == p) return v;
    if (count == kMaxVariants)
        throw InvalidArgument("tuning on " + selector() + ": " + std::to_string(kMaxVariants) +
                              " gemm variants are built already; reopen the device to tune more");
    variants_[count] = p;
    variant_count_.store(count + 1);
    return count;
}

void OpenclDevice::set_params(const TuningKey& key, const TuningParams& params) {
    check_key(tunable(), key, selector());
    const std::string where = "tuning " + key.to_string() + " on " + selector() + " (" + info().name + "): ";
    for (const auto& [name, value] : params) {
        if (std::find(std::begin(kParamNames), std::end(kParamNames), name) == std::end(kParamNames))
            throw InvalidArgument(where + "unknown parameter '" + name + "'; expected bx, by, wm, wn, vw, tk, ku");
        if (value < 1 || value > 4096) throw InvalidArgument(where + name + "=" + std::to_string(value) + " is out of range");
    }
    for (const char* name : kParamNames)
        if (!params.count(name)) throw InvalidArgument(where + "parameter '" + std::string(name) + "' is missing");
    GemmParams g = tiles_.tiles[GemmTiles::general];  // fma and the K-tail exit stay the device's
    g.bx = params.at("bx");
    g.by = params.at("by");
    g.wm = params.at("wm");
    g.wn = params.at("wn");
    g.vw = params.at("vw");
    g.tk = params.at("tk");
    g.ku = params.at("ku");
    if (const std::string why = invalid_params(g); !why.empty()) throw InvalidArgument(where + why);
    if (params == default_params(key)) {
        std::unique_lock<std::shared_mutex> lock(tuning_mutex_);
        tuned_.erase(key);  // the default rule again (GemmTiles::choose)
        return;
    }
    const std::size_t v = add_variant(g);
    std::unique_lock<std::shared_mutex> lock(tuning_mutex_);
    tuned_[key] = v;
}

void OpenclDevice::reset_params() noexcept {
    std::unique_lock<std::shared_mutex> lock(tuning_mutex_);
    tuned_.clear();
}

TuningParams OpenclDevice::params(const TuningKey& key) const {
    check_key(tunable(), key, selector());
    {
        std::shared_lock<std::shared_mutex> lock(tuning_mutex_);
        const auto it = tuned_.find(key);
        if (it != tuned_.end()) return variant(it->second).tuning_params();
    }
    return default_params(key);
}

std::string OpenclDevice::describe(const TuningKey& key, const TuningParams& p) const {
    (void)key;
    GemmParams g = tiles_.tiles[GemmTiles::general];
    auto at = [&](const char* n, std::size_t fallback) {
        const auto it = p.find(n);
        return it == p.end() ? fallback : static_cast<std::size_t>(it->second);
    };
    g.bx = at("bx", g.bx);
    g.by = at("by", g.by);
    g.wm = at("wm", g.wm);
    g.wn = at("wn", g.wn);
    g.vw = at("vw", g.vw);
    g.tk = at("tk", g.tk);
    g.ku = at("ku", g.ku);
    return g.describe();
}

// A grid around the key's default, nearest first (distance()): on CPU
// devices work-groups of 1-8 × 2-16, 4-16 rows by 1-4 vectors of the
// device's width, K slices of 32-256; on others work-groups of 8-32 ×
// 8-32, 2-8 rows by 1-4 vectors of 1-4, K slices of 8-32; unrolling by 1,
// 2 or 4. Sets invalid_params refuses, or with more accumulators than a
// register file holds (CPU: 24 vectors; others: 128 values), are left out.
std::vector<TuningParams> OpenclDevice::candidates(const TuningKey& key, bool quick) const {
    const TuningParams def = default_params(key);
    const TuningShape s = tuning_shape(key.shape_class, false);
    const GemmParams& d = tiles_.tiles[tiles_.choose(s.m, s.n)];
    std::vector<GemmParams> all;
    const bool cpu = direct_gemm_;
    const std::vector<std::size_t> xs = cpu ? std::vector<std::size_t>{1, 2, 4, 8} : std::vector<std::size_t>{8, 16, 32};
    const std::vector<std::size_t> ys = cpu ? std::vector<std::size_t>{2, 4, 8, 16} : std::vector<std::size_t>{8, 16, 32};
    const std::vector<std::size_t> ms = cpu ? std::vector<std::size_t>{4, 8, 12, 16} : std::vector<std::size_t>{2, 4, 8};
    const std::vector<std::size_t> ns = {1, 2, 3, 4};
    const std::vector<std::size_t> vs = cpu ? std::vector<std::size_t>{d.vw} : std::vector<std::size_t>{1, 2, 4};
    const std::vector<std::size_t> ks = cpu ? std::vector<std::size_t>{32, 64, 128, 256} : std::vector<std::size_t>{8, 16, 32};
    for (std::size_t bx : xs)
        for (std::size_t by : ys)
            for (std::size_t wm : ms)
                for (std::size_t wn : ns)
                    for (std::size_t vw : vs)
                        for (std::size_t tk : ks)
                            for (std::size_t ku : {1, 2, 4}) {
                                GemmParams g = d;
                                g.bx = bx, g.by = by, g.wm = wm, g.wn = wn, g.vw = vw, g.tk = tk, g.ku = ku;
                                const std::size_t regs = cpu ? wm * wn : wm * wn * vw;
                                if (regs > (cpu ? 24u : 128u) || !invalid_params(g).empty() || g == d) continue;
                                // A tile far wider or taller than the class's shape computes mostly padding.
                                if (g.tile_cols() > 4 * std::max<std::size_t>(s.n, 16) || g.tile_rows() > s.m) continue;
                                all.push_back(g);
                            }
    return nearest_first(
        def, std::move(all), [&](const GemmParams& g) { return distance(g, d); },
        [](const GemmParams& g) { return g.tuning_params(); }, quick);
}

}  // namespace opencl
}  // namespace accel
