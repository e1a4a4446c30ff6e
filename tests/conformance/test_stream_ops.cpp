// BabelStream's ops, copy, scale (its mul), triad and dot, over their whole
// input range in every dtype: every length from empty to past a block
// boundary and a large one, the specials (NaN, ±Inf, ±0, the subnormal tails)
// at every position, and dot's fixed order (the same bits on every call).
//
// copy, scale and triad are checked element by element against the host's
// own arithmetic in the compute type: a copy is the value itself; y = s·x is
// one rounding of s (to the compute type) and one of the product, so the
// device gives the same bits; b + s·c may be an fma or a product and a sum,
// so it is either of the two. Where a device may flush a dtype's subnormals
// (DeviceInfo::subnormals), a subnormal input may be read as zero and a
// subnormal result stored as one.
#include "support/check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace accel;
using namespace accel_test;

namespace {

// Empty, one, a partial vector, past a block of 256, past several blocks and
// a CPU chunk, large.
const std::vector<std::size_t> kSizes{0, 1, 7, 257, 4097, 100003, (std::size_t{1} << 20) + 3};
constexpr double kS = 0.4;  // BabelStream's scalar

// Values of [-4, 4) as stored in t, then values of every class placed at
// random positions: NaN, ±Inf, ±0, the largest finite value, the smallest
// normal and subnormal of t and subnormals a product by s keeps subnormal.
std::vector<double> with_specials(std::size_t n, DType t, std::mt19937_64& g) {
    const auto drawn = stored(uniform(g, n, -4, 4), t);
    std::vector<double> v(drawn.begin(), drawn.end());
    double normal = std::numeric_limits<float>::min(), smallest = std::numeric_limits<float>::denorm_min(),
           largest = std::numeric_limits<float>::max();
    if (t == DType::f16) normal = 6.103515625e-05, smallest = 5.9604644775390625e-08, largest = 65504.0;
    if (t == DType::bf16) largest = 3.3895313892515355e38, smallest = 9.183549615799121e-41;  // 2^-133
    if (t == DType::f64)
        normal = std::numeric_limits<double>::min(), smallest = std::numeric_limits<double>::denorm_min(),
        largest = std::numeric_limits<double>::max();
    const double inf = std::numeric_limits<double>::infinity();
    const double specials[] = {std::numeric_limits<double>::quiet_NaN(), inf, -inf, 0.0, -0.0, largest, -largest,
                               normal, -normal, smallest, -smallest, 3 * smallest, normal / 2, -normal / 4};
    for (double x : specials)
        if (n) v[g() % n] = x;
    if (t == DType::f64) return v;
    const auto as_stored = stored(std::vector<float>(v.begin(), v.end()), t);  // 3·smallest and the like, as t holds them
    return std::vector<double>(as_stored.begin(), as_stored.end());
}

// A tensor of t holding v (exactly: v's values are t's).
Tensor put(const std::vector<double>& v, DType t) {
    if (t == DType::f64) return Tensor::from_host(device(), {v.size()}, v);
    return Tensor::from_host(device(), {v.size()}, std::vector<float>(v.begin(), v.end()), t);
}

bool same_value(double got, double want) {
    if (std::isnan(want)) return std::isnan(got);
    return got == want && std::signbit(got) == std::signbit(want);
}

double smallest_normal(DType t) {
    return t == DType::f64 ? std::numeric_limits<double>::min()
           : t == DType::f16 ? 6.103515625e-05
                             : double(std::numeric_limits<float>::min());
}

// x, or a zero of its sign where x is subnormal in t and the device may flush
// t's subnormals (an input read as zero, a result stored as zero).
double flush(double x, DType t) {
    const bool subnormal = x != 0 && std::fabs(x) < smallest_normal(t);
    return subnormal && device()->info().subnormals.flushes(t) ? std::copysign(0.0, x) : x;
}

// Whether `got` is `want`, or what a device that flushes t's subnormals may
// give for it: a zero of either sign where `want` is subnormal (an input
// read as zero can change the sign of an exact zero).
bool matches(double got, double want, DType t) {
    if (same_value(got, want)) return true;
    return got == 0 && flush(want, t) == 0 && want != 0;
}

// x rounded to t (a float or a double computed in the compute type).
double rounded(double x, DType t) {
    if (t == DType::f64) return x;
    const std::vector<float> one{static_cast<float>(x)};
    return double(stored(one, t)[0]);
}

}  // namespace

TEST_CASE("copy, scale and triad in every dtype, at every length, with NaN, Inf, signed zeros and subnormals anywhere") {
    auto g = rng(61);
    if (!runs({Op::copy, Op::scale, Op::triad})) return;
    for (DType t : dtypes()) {
        CAPTURE(std::string(dtype_name(t)));
        if (!device()->kernel_table().supports(Op::triad, t, OpPath::native)) {
            MESSAGE("skipped " << dtype_name(t) << ": " << device()->kernel_table().unsupported_reason(Op::triad, t, OpPath::native));
            continue;
        }
        for (std::size_t n : within_work_cap(kSizes, "sizes")) {
            CAPTURE(n);
            const auto b = with_specials(n, t, g), c = with_specials(n, t, g);
            auto B = put(b, t), C = put(c, t);
            auto Y = put(std::vector<double>(n, std::nan("")), t), A = put(std::vector<double>(n, std::nan("")), t);
            auto Z = put(std::vector<double>(n, std::nan("")), t);
            ops::copy(C, Z);
            ops::scale(C, kS, Y);
            ops::triad(B, C, kS, A);
            const auto z = Z.download_as<double>(), y = Y.download_as<double>(), a = A.download_as<double>();
            std::size_t wrong_copy = 0, wrong_scale = 0, wrong_triad = 0;
            for (std::size_t i = 0; i < n; ++i)
                if (!matches(z[i], c[i], t) && wrong_copy++ == 0)
                    MESSAGE("copy: first wrong at " << i << ": x = " << c[i] << " gave " << z[i]);
            CHECK_MESSAGE(wrong_copy == 0, wrong_copy << " of " << n << " copies differ from x");
            for (std::size_t i = 0; i < n; ++i) {
                // In the compute type, as the kernels compute, then rounded to t: with the inputs as they are
                // and, where the device flushes t's subnormals, read as zero; the triad fused or not.
                bool scale_ok = false, triad_ok = false;
                for (const bool daz : {false, true}) {
                    const double bi = daz ? flush(b[i], t) : b[i], ci = daz ? flush(c[i], t) : c[i];
                    double want_y, fused, separate;
                    if (t == DType::f64) {
                        const volatile double product = kS * ci;  // volatile: never contracted into an fma
                        want_y = product;
                        fused = std::fma(kS, ci, bi);
                        separate = bi + product;
                    } else {
                        const float s = static_cast<float>(kS), cf = static_cast<float>(ci), bf = static_cast<float>(bi);
                        const volatile float product = s * cf;
                        want_y = rounded(double(product), t);
                        fused = rounded(double(std::fma(s, cf, bf)), t);
                        separate = rounded(double(bf + product), t);
                    }
                    scale_ok = scale_ok || matches(y[i], want_y, t);
                    triad_ok = triad_ok || matches(a[i], fused, t) || matches(a[i], separate, t);
                }
                if (!scale_ok && wrong_scale++ == 0)
                    MESSAGE("scale: first wrong at " << i << ": s = " << kS << ", x = " << c[i] << " gave " << y[i]);
                if (!triad_ok && wrong_triad++ == 0)
                    MESSAGE("triad: first wrong at " << i << ": s = " << kS << ", b = " << b[i] << ", c = " << c[i]
                                                     << " gave " << a[i]);
            }
            CHECK_MESSAGE(wrong_scale == 0, wrong_scale << " of " << n << " scale results differ from s·x");
            CHECK_MESSAGE(wrong_triad == 0, wrong_triad << " of " << n << " triad results differ from b + s·c");
        }
    }
}

TEST_CASE("scale and triad in place: y may be x, a may be b or c") {
    auto g = rng(62);
    if (!runs({Op::scale, Op::triad})) return;
    const std::size_t n = 1001;
    const auto x = uniform(g, n, -4, 4), c = uniform(g, n, -4, 4);
    auto X = Tensor::from_host(device(), {n}, x), C = Tensor::from_host(device(), {n}, c);
    ops::scale(X, kS, X);
    const auto once = X.download();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += once[i] != static_cast<float>(kS) * x[i];
    CHECK(wrong == 0);
    ops::triad(X, C, kS, X);  // a = b
    const auto twice = X.download();
    wrong = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const float s = static_cast<float>(kS);
        const volatile float product = s * c[i];
        wrong += twice[i] != std::fma(s, c[i], once[i]) && twice[i] != once[i] + product;
    }
    CHECK(wrong == 0);
}

TEST_CASE("dot in every dtype at every length against the float64 oracle, the same bits on every call") {
    auto g = rng(63);
    if (!runs({Op::dot})) return;
    for (DType t : dtypes()) {
        CAPTURE(std::string(dtype_name(t)));
        if (!device()->kernel_table().supports(Op::dot, t, OpPath::native)) {
            MESSAGE("skipped " << dtype_name(t) << ": " << device()->kernel_table().unsupported_reason(Op::dot, t, OpPath::native));
            continue;
        }
        for (std::size_t n : within_work_cap(kSizes, "sizes")) {
            CAPTURE(n);
            // Terms of one sign, whose sum has a relative bound (the op table's threshold); in f16 small
            // enough that the sum stays below its largest finite value (65504).
            const float top = t == DType::f16 ? std::min(1.0f, 4096.0f / float(std::max<std::size_t>(n, 1))) : 1.0f;
            const auto a = stored(uniform(g, n, 0.0f, 1.0f), t), b = stored(uniform(g, n, 0.0f, top), t);
            auto A = Tensor::from_host(device(), {n}, a, t), B = Tensor::from_host(device(), {n}, b, t);
            auto Y = Tensor::from_host(device(), {1}, std::vector<float>{std::nanf("")}, t);
            ops::dot(A, B, Y);
            const double got = Y.download_as<double>()[0];
            const double want = reference::dot(reference::Vec(a.begin(), a.end()), reference::Vec(b.begin(), b.end()));
            if (n == 0) {
                CHECK(got == 0.0);
                CHECK_FALSE(std::signbit(got));
                continue;
            }
            if (n == 1) CHECK(got == rounded(t == DType::f64 ? want : double(a[0] * b[0]), t));
            const double err = (got - want) * (got - want) / (want * want);
            CHECK_MESSAGE(err <= nmse_threshold(Op::dot, t), "NMSE " << err << " above " << nmse_threshold(Op::dot, t));
            ops::dot(A, B, Y);
            CHECK(Y.download_as<double>()[0] == got);  // one fixed order: the same bits
        }
    }
}

TEST_CASE("dot carries NaN and Inf from any position, and refuses an output that is not one element") {
    auto g = rng(64);
    if (!runs({Op::dot})) return;
    for (std::size_t n : within_work_cap(std::vector<std::size_t>{1, 300, 100003}, "sizes")) {
        CAPTURE(n);
        for (float special : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
            auto a = uniform(g, n, 0.0f, 1.0f);
            const auto b = uniform(g, n, 0.5f, 1.0f);
            a[g() % n] = special;
            auto A = Tensor::from_host(device(), {n}, a), B = Tensor::from_host(device(), {n}, b);
            Tensor Y(device(), {1});
            ops::dot(A, B, Y);
            const float got = Y.download()[0];
            if (std::isnan(special))
                CHECK(std::isnan(got));
            else
                CHECK(got == std::numeric_limits<float>::infinity());
        }
    }
    auto A = Tensor::from_host(device(), {3}, std::vector<float>{1, 2, 3});
    Tensor two(device(), {2});
    CHECK_THROWS_WITH_AS(ops::dot(A, A, two), doctest::Contains("one element"), InvalidArgument);
    auto B = Tensor::from_host(device(), {4}, std::vector<float>{1, 2, 3, 4});
    Tensor one(device(), {1});
    CHECK_THROWS_WITH_AS(ops::dot(A, B, one), doctest::Contains("shapes must be equal"), InvalidArgument);
    auto view = Tensor::from_host(device(), {1}, std::vector<float>{5});
    CHECK_THROWS_WITH_AS(ops::dot(view, view, view), doctest::Contains("aliases"), InvalidArgument);
}
