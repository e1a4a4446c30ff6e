// Tuned kernels give the default's bits in every dtype (accel::Tuning's
// promise), on a device with tunable kernels whose keys cover small and
// large outputs in every dtype (ACCEL_BACKEND=vulkan:0, test vulkan.tuning):
// for each key, the first candidate after the default, the first with the
// other staging (shared memory or none) and the first double-buffered one
// with 4-wide loads, run on a shape of the key's class
// with partial tiles and a k that no slice divides, every transpose of
// matmul and dense with a bias and an activation; and the parameter sets a
// device must refuse are refused with the parameter named.
#include <accel/accel.hpp>
#include <accel/tuning.hpp>

#include <doctest/doctest.h>

#include "support/check.hpp"

#include <algorithm>
#include <cmath>

using namespace accel;
using accel_test::contains;

namespace {

struct Call {
    Op op;
    std::size_t m, n, k;
    bool ta, tb;
    std::string text() const {
        return std::string(op_name(op)) + " " + std::to_string(m) + "x" + std::to_string(n) + "x" +
               std::to_string(k) + (ta ? " Aᵀ" : " A") + (tb ? "·Bᵀ" : "·B");
    }
};

// The output's bytes as stored in dtype t (2, 4 or 8 per element).
std::vector<unsigned char> run(const std::shared_ptr<Device>& d, DType t, const Call& c, const std::vector<float>& a,
                               const std::vector<float>& b, const std::vector<float>& bias) {
    ops::Options o;
    o.path = ops::PathChoice::native;
    // NaN first: an element left unwritten cannot pass.
    Tensor C = Tensor::from_host(d, {c.m, c.n}, std::vector<float>(c.m * c.n, std::nanf("")), t);
    if (c.op == Op::matmul) {
        const Tensor A = Tensor::from_host(d, c.ta ? Shape{c.k, c.m} : Shape{c.m, c.k}, a, t);
        const Tensor B = Tensor::from_host(d, c.tb ? Shape{c.n, c.k} : Shape{c.k, c.n}, b, t);
        ops::matmul(A, B, C, {c.ta, c.tb}, o);
    } else {  // y[m, n] = gelu(x[m, k]·W[n, k]ᵀ + bias[n])
        const Tensor X = Tensor::from_host(d, {c.m, c.k}, a, t);
        const Tensor W = Tensor::from_host(d, {c.n, c.k}, b, t);
        const Tensor Bias = Tensor::from_host(d, {c.n}, bias, t);
        ops::dense(X, W, Bias, C, Activation::gelu, o);
    }
    std::vector<unsigned char> out(C.bytes());
    C.buffer().download(out.data(), out.size());
    return out;
}

}  // namespace

TEST_CASE("tuning on the device: tuned blockings give the default's bits in every dtype") {
    auto d = default_device();
    Tuning* t = d->tuning();
    if (!t) {
        MESSAGE("skipped: " << d->selector() << " has nothing to tune");
        return;
    }
    t->reset_params();
    auto g = accel_test::rng(5102);
    // A shape per class (gemm_shape_class): partial tiles of every size tried, k = 8·25 + 3.
    const std::vector<std::pair<std::string, Call>> shapes{{"large", {Op::matmul, 300, 260, 203, false, false}},
                                                           {"small", {Op::matmul, 100, 120, 77, false, false}}};
    std::size_t keys = 0, compared = 0;
    for (const TuningKey& key : t->tunable()) {
        const auto shape = std::find_if(shapes.begin(), shapes.end(), [&](const auto& s) { return s.first == key.shape_class; });
        // f32 in both classes; the other dtypes (each blocking a pipeline to build) in the large one.
        if (shape == shapes.end() || (key.dtype != DType::f32 && key.shape_class != "large")) continue;
        ++keys;
        // The default, the tuner's first candidate, and the first with the other staging and the
        // first double-buffered one with 4-wide loads (where a device has such parameters).
        const std::vector<TuningParams> all = t->candidates(key, false);
        REQUIRE(all.size() >= 2);
        CHECK(all[0] == t->default_params(key));
        std::vector<TuningParams> trials{all[1]};
        auto first = [&](auto&& pred) {
            const auto it = std::find_if(all.begin() + 1, all.end(), pred);
            if (it != all.end() && std::find(trials.begin(), trials.end(), *it) == trials.end()) trials.push_back(*it);
        };
        auto value = [](const TuningParams& p, const char* name) { return p.count(name) ? p.at(name) : -1; };
        first([&](const TuningParams& p) { return value(p, "local") != value(all[0], "local"); });
        first([&](const TuningParams& p) { return value(p, "stages") == 2 && value(p, "vw") == 4; });
        // f32 in every transpose; the other dtypes (each a pipeline to build per blocking) in one.
        for (int layout = 0; layout < (key.op == Op::matmul && key.dtype == DType::f32 ? 4 : 1); ++layout) {
            Call c = shape->second;
            c.op = key.op;
            c.ta = layout & 1;
            c.tb = layout & 2;
            const auto a = accel_test::uniform(g, c.m * c.k), b = accel_test::uniform(g, c.k * c.n),
                       bias = accel_test::uniform(g, c.n);
            t->reset_params();
            const std::vector<unsigned char> want = run(d, key.dtype, c, a, b, bias);
            for (const TuningParams& p : trials) {
                t->set_params(key, p);
                REQUIRE(t->params(key) == p);
                const std::vector<unsigned char> got = run(d, key.dtype, c, a, b, bias);
                ++compared;
                CHECK_MESSAGE(got == want, c.text() << " in " << std::string(dtype_name(key.dtype)) << " with "
                                                    << t->describe(key, p) << " differs from the default's bits");
            }
        }
    }
    t->reset_params();
    CHECK(keys > 0);
    MESSAGE(keys << " keys, " << compared << " outputs compared bit by bit");
}

TEST_CASE("tuning on the device: a blocking the kernel cannot run is refused naming what is wrong") {
    auto d = default_device();
    Tuning* t = d->tuning();
    if (!t || d->info().backend != "vulkan") {
        MESSAGE("skipped: " << d->selector() << " is not a Vulkan device (its parameters are another backend's)");
        return;
    }
    const TuningKey key{Op::matmul, DType::f32, "large"};
    const TuningParams def = t->default_params(key);
    auto refusal = [&](TuningParams p) { return accel_test::message_of<InvalidArgument>([&] { t->set_params(key, p); }); };
    TuningParams p = def;
    p["bm"] = 48;
    CHECK(contains(refusal(p), "bm and bn must be powers of two"));
    p = def;
    p["tile"] = 4;
    CHECK(contains(refusal(p), "unknown parameter 'tile'"));
    p = def;
    p.erase("stages");
    CHECK(contains(refusal(p), "parameter 'stages' is missing"));
    p = def;
    p["local"] = 1, p["stages"] = 2, p["bk"] = 64, p["bm"] = 256, p["bn"] = 256, p["tm"] = 16, p["tn"] = 4;
    CHECK(contains(refusal(p), "bytes of shared memory are beyond the device's"));
    p = def;
    p["local"] = 0, p["vw"] = 4;
    CHECK(contains(refusal(p), "without local staging vw and stages must be 1"));
    CHECK(contains(accel_test::message_of<InvalidArgument>([&] { t->candidates({Op::matmul, DType::f32, "narrow"}, true); }),
                   "not a tunable key here"));
    CHECK(t->params(key) == def);  // nothing changed
}
