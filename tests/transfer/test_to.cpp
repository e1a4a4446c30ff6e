// Tensor::to across devices and dtypes: every ordered pair of the devices in
// ACCEL_TEST_DEVICES (a comma-separated list of selectors; those not
// available here are listed as skipped, not passed) and every dtype, on
// fresh random data with the specials (NaN, ±Inf, ±0, subnormals) among it.
// A copy between devices must keep every bit; .to(dtype) must give what the
// host's convert_elements gives (one rounding, to nearest even).
#include "support/check.hpp"

#include <algorithm>
#include <cstring>
#include <iostream>
#include <sstream>

using namespace accel;
using namespace accel_test;

namespace {

const env::Declaration kDevicesVariable{{"ACCEL_TEST_DEVICES", "comma-separated selectors",
                                         "the devices the transfer tests copy between, every pair (default host)",
                                         "accel's test programs"}};

const std::vector<DType> kDTypes{DType::f32, DType::f64, DType::f16, DType::bf16};

struct Named {
    std::string selector;
    std::shared_ptr<Device> device;
};

// The devices of ACCEL_TEST_DEVICES that open here; the others are printed
// as skipped with the reason.
const std::vector<Named>& devices() {
    static const std::vector<Named> all = [] {
        std::vector<Named> v;
        std::stringstream list(env::value("ACCEL_TEST_DEVICES").value_or("host"));
        for (std::string sel; std::getline(list, sel, ',');) {
            try {
                v.push_back({sel, open_device(sel)});
            } catch (const BackendUnavailable& e) {
                std::cout << "SKIPPED " << sel << ": " << e.what() << "\n";
            }
        }
        return v;
    }();
    return all;
}

// Random values of [-4, 4) with the specials in front, as f32.
std::vector<float> values(std::mt19937_64& g, std::size_t n) {
    auto v = uniform(g, n, -4.0f, 4.0f);
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    const float specials[] = {nan, inf, -inf, 0.0f, -0.0f, std::numeric_limits<float>::denorm_min(),
                              std::numeric_limits<float>::min(), 65504.0f, 70000.0f, 1e-6f, -3e38f};
    for (std::size_t i = 0; i < n && i < sizeof specials / sizeof *specials; ++i) v[i] = specials[i];
    return v;
}

std::vector<unsigned char> raw_bytes(const Tensor& t) {
    std::vector<unsigned char> out(t.bytes());
    t.buffer().download(out.data(), out.size());
    return out;
}

// Elements of `got` and `want` (both in dtype t) that differ, NaN equal to NaN.
std::size_t differing(const std::vector<unsigned char>& got, const std::vector<unsigned char>& want, DType t,
                      std::size_t n) {
    std::vector<double> a(n), b(n);
    convert_elements(got.data(), t, a.data(), DType::f64, n);
    convert_elements(want.data(), t, b.data(), DType::f64, n);
    std::size_t bad = 0;
    for (std::size_t i = 0; i < n; ++i)
        if (!(std::isnan(a[i]) && std::isnan(b[i])) && std::memcmp(&a[i], &b[i], sizeof a[i]) != 0) ++bad;
    return bad;
}

}  // namespace

TEST_CASE("tensor.to(device) copies every bit between every pair of devices, in every dtype") {
    REQUIRE(!devices().empty());
    auto g = rng(31);
    const Shape shape{13, 79};
    for (DType t : kDTypes) {
        const auto v = values(g, shape.elements());
        for (const auto& from : devices()) {
            auto src = Tensor::from_host(from.device, shape, v, t);
            const auto want = raw_bytes(src);
            for (const auto& to : devices()) {
                CAPTURE(from.selector);
                CAPTURE(to.selector);
                CAPTURE(std::string(dtype_name(t)));
                Tensor dst = src.to(to.device);
                CHECK(dst.device_ptr() == to.device);
                CHECK(dst.shape() == shape);
                CHECK(dst.dtype() == t);
                CHECK(raw_bytes(dst) == want);
            }
        }
    }
}

TEST_CASE("tensor.to(device) after an op on the source's default stream sees the op's result") {
    auto g = rng(32);
    const std::size_t n = 100003;
    const auto a = uniform(g, n), b = uniform(g, n);
    for (const auto& from : devices())
        for (const auto& to : devices()) {
            CAPTURE(from.selector);
            CAPTURE(to.selector);
            auto ta = Tensor::from_host(from.device, {n}, a), tb = Tensor::from_host(from.device, {n}, b);
            Tensor tc(from.device, {n});
            ops::add(ta, tb, tc);  // enqueued; to() must order after it
            const auto got = tc.to(to.device).download();
            std::size_t bad = 0;
            for (std::size_t i = 0; i < n; ++i) bad += got[i] != a[i] + b[i];
            CHECK(bad == 0);
        }
}

TEST_CASE("tensor.to(dtype) converts as convert_elements does, every dtype pair, on every device") {
    auto g = rng(33);
    const Shape shape{1031};
    const auto v = values(g, shape.elements());
    for (const auto& d : devices())
        for (DType from : kDTypes)
            for (DType to : kDTypes) {
                CAPTURE(d.selector);
                CAPTURE(std::string(dtype_name(from)) + " -> " + dtype_name(to));
                if (!d.device->kernel_table().supports(Op::convert, to, OpPath::native)) {
                    MESSAGE(d.selector << ": convert to " << std::string(dtype_name(to)) << " skipped: unsupported");
                    continue;
                }
                auto src = Tensor::from_host(d.device, shape, v, from);
                const auto src_raw = raw_bytes(src);
                std::vector<unsigned char> want(shape.elements() * dtype_size(to));
                convert_elements(src_raw.data(), from, want.data(), to, shape.elements());
                Tensor dst = src.to(to);
                CHECK(dst.dtype() == to);
                CHECK(dst.device_ptr() == d.device);
                CHECK(differing(raw_bytes(dst), want, to, shape.elements()) == 0);
            }
}

TEST_CASE("tensor.to rejects a null device and a tensor without storage, naming them") {
    const auto& d = devices().front().device;
    auto t = Tensor::from_host(d, {3}, {1.0f, 2.0f, 3.0f});
    CHECK_THROWS_WITH_AS(t.to(std::shared_ptr<Device>()), doctest::Contains("no device given"), InvalidArgument);
    Tensor moved = std::move(t);
    CHECK_THROWS_WITH_AS(t.to(d), doctest::Contains("moved-from"), InvalidArgument);  // NOLINT(bugprone-use-after-move)
    CHECK_THROWS_WITH_AS(t.to(DType::f64), doctest::Contains("moved-from"), InvalidArgument);
    CHECK(moved.to(d).download() == std::vector<float>{1.0f, 2.0f, 3.0f});
}

TEST_CASE("page-locked host memory: copies to and from it keep every byte, blocking and on a stream, at any offset") {
    auto g = rng(34);
    for (const auto& d : devices()) {
        CAPTURE(d.selector);
        if (!PageLockedBuffer::available(*d.device)) {
            MESSAGE(d.selector << ": no page-locked memory (its copies take one path)");
            CHECK_THROWS_WITH_AS(PageLockedBuffer(d.device, 64), doctest::Contains("no page-locked host memory"),
                                 Unsupported);
            continue;
        }
        for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{4096}, (std::size_t{1} << 20) + 13}) {
            CAPTURE(n);
            std::vector<unsigned char> want(n);
            for (auto& b : want) b = static_cast<unsigned char>(g());
            PageLockedBuffer from(d.device, n), to(d.device, n);
            REQUIRE(from.size() == n);
            std::memcpy(from.data(), want.data(), n);
            Buffer on_device(d.device, n);
            // Blocking: page-locked → device → pageable and → page-locked.
            d.device->copy_host_to_device(on_device, 0, from.data(), n);
            std::vector<unsigned char> pageable(n);
            d.device->copy_device_to_host(pageable.data(), on_device, 0, n);
            CHECK(pageable == want);
            d.device->copy_device_to_host(to.data(), on_device, 0, n);
            CHECK(std::memcmp(to.data(), want.data(), n) == 0);
            // On a stream, from and into the middle of the page-locked memory.
            const std::size_t at = n / 3, part = n - at;
            std::memset(to.data(), 0, n);
            auto stream = d.device->create_stream();
            Buffer other(d.device, n);
            d.device->copy_host_to_device_async(other, 0, static_cast<const char*>(from.data()) + at, part, *stream);
            d.device->copy_device_to_host_async(static_cast<char*>(to.data()) + at, other, 0, part, *stream);
            stream->synchronize();
            CHECK(std::memcmp(static_cast<char*>(to.data()) + at, want.data() + at, part) == 0);
            CHECK(std::all_of(static_cast<unsigned char*>(to.data()), static_cast<unsigned char*>(to.data()) + at,
                              [](unsigned char c) { return c == 0; }));
            // A moved buffer keeps the memory; the moved-from one holds none.
            PageLockedBuffer kept = std::move(from);
            CHECK(from.data() == nullptr);  // NOLINT(bugprone-use-after-move)
            CHECK(std::memcmp(kept.data(), want.data(), n) == 0);
        }
    }
}

int main(int argc, char** argv) {
    std::cout << "transfer tests on";
    for (const auto& d : devices()) std::cout << " " << d.selector;
    std::cout << ", seed " << seed() << "\n";
    if (devices().empty()) {
        std::cout << "SKIPPED: none of ACCEL_TEST_DEVICES is available\n";
        return 77;
    }
    doctest::Context ctx(argc, argv);
    return ctx.run();
}
