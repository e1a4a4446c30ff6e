// The Kokkos backend's devices, one per execution space the linked Kokkos
// enabled (backends/kokkos/kokkos_device.hpp): each is named by its space
// (kokkos:SPACE[:0]) and kokkos:gpu / kokkos:cpu, listed with its space,
// concurrency and memory space; a space the build lacks is refused naming
// the devices there are; two spaces of one Kokkos compute the same sums.
// Needs no Kokkos of its own: everything goes through the registry.
#include <doctest/doctest.h>

#include <accel/accel.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

using namespace accel;

namespace {

int kokkos_devices() {
    for (const BackendStatus& st : backend_statuses())
        if (st.name == "kokkos") return st.availability.available ? st.availability.device_count : 0;
    return 0;
}

std::string fact(const Device& d, const std::string& key) {
    for (const auto& f : d.info().extra)
        if (f.first == key) return f.second;
    return "";
}

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

std::string message_of(const std::string& selector) {
    try {
        open_device(selector);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("each Kokkos execution space is a device named by its space, listed with its space and memory") {
    const int n = kokkos_devices();
    REQUIRE_MESSAGE(n > 0, "the Kokkos backend is not available");
    std::vector<std::string> stable;
    for (int i = 0; i < n; ++i) stable.push_back(open_device("kokkos:" + std::to_string(i))->info().stable_selector);
    for (int i = 0; i < n; ++i) {
        const auto d = open_device("kokkos:" + std::to_string(i));
        const std::string space = fact(*d, "execution space"), word = lower(space);
        INFO("kokkos:" << i << " runs on " << space);
        REQUIRE(!space.empty());
        CHECK(!fact(*d, "memory space").empty());
        CHECK(std::stoi(fact(*d, "concurrency")) >= 1);
        CHECK(d->info().stable_selector == "kokkos:" + word + ":0");
        CHECK(d->selector() == d->info().stable_selector);
        CHECK(open_device("kokkos:" + word).get() == d.get());
        CHECK(open_device("kokkos:" + word + ":0").get() == d.get());
        CHECK(open_device(d->info().type == "cpu" ? "kokkos:cpu" : "kokkos:gpu")->info().type == d->info().type);
        // Every device lists the others, by index and stable selector.
        for (int j = 0; j < n; ++j)
            CHECK(fact(*d, "execution spaces").find("kokkos:" + std::to_string(j) + " = " + stable[j]) !=
                  std::string::npos);
        const std::string beyond = message_of("kokkos:" + word + ":1");
        CHECK(beyond.find("one device") != std::string::npos);
        for (const std::string& s : stable) CHECK(beyond.find(s) != std::string::npos);
        CHECK_THROWS_AS(open_device("kokkos:" + word + ":x"), InvalidArgument);
    }
    // kokkos and kokkos:0 stay the default space.
    CHECK(open_device("kokkos").get() == open_device("kokkos:0").get());
}

TEST_CASE("a space the Kokkos build lacks, or a name that is no space, is refused naming the devices there are") {
    const int n = kokkos_devices();
    REQUIRE_MESSAGE(n > 0, "the Kokkos backend is not available");
    std::vector<std::string> have, stable;
    for (int i = 0; i < n; ++i) {
        const auto d = open_device("kokkos:" + std::to_string(i));
        have.push_back(lower(fact(*d, "execution space")));
        stable.push_back(d->info().stable_selector);
    }
    int refused = 0;
    for (const std::string word : {"cuda", "hip", "openmp", "threads", "serial"}) {
        if (std::find(have.begin(), have.end(), word) != have.end()) continue;
        INFO("kokkos:" << word);
        try {
            open_device("kokkos:" + word);
            FAIL("a space the build lacks was opened");
        } catch (const BackendUnavailable& e) {
            const std::string m = e.what();
            CHECK(m.find("has no " + word + " execution space") != std::string::npos);
            for (const std::string& s : stable) CHECK(m.find(s) != std::string::npos);
        }
        ++refused;
    }
    CHECK(refused >= 5 - n);  // at most one space per kind of the five
    try {
        open_device("kokkos:no-such-space");
        FAIL("a device nobody has was opened");
    } catch (const BackendUnavailable& e) {
        const std::string m = e.what();
        CHECK(m.find("no-such-space") != std::string::npos);
        for (const std::string& s : stable) CHECK(m.find(s) != std::string::npos);
    }
}

TEST_CASE("two execution spaces of one Kokkos: the same sums, one Kokkos initialization") {
    const int n = kokkos_devices();
    if (n < 2) {
        const std::string only = n ? open_device("kokkos:0")->info().stable_selector : "none";
        std::printf("SKIPPED: needs a Kokkos with two execution spaces (e.g. OpenMP and Serial); this one has %s\n",
                    only.c_str());
        return;
    }
    std::mt19937 g(20261203u);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    const std::size_t count = 1000 + g() % 5000, rows = 33, cols = 47, depth = 29;
    std::vector<float> a(count), b(count), x(rows * depth), w(cols * depth);
    for (auto* v : {&a, &b, &x, &w})
        for (float& e : *v) e = u(g);
    std::vector<std::vector<float>> sums, products;
    for (int i = 0; i < n; ++i) {
        const auto d = open_device("kokkos:" + std::to_string(i));
        INFO(d->selector());
        CHECK(fact(*d, "Kokkos initialized by") == fact(*open_device("kokkos:0"), "Kokkos initialized by"));
        Tensor A = Tensor::from_host(d, {count}, a), B = Tensor::from_host(d, {count}, b), C(d, {count});
        ops::add(A, B, C);
        sums.push_back(C.download());
        Tensor X = Tensor::from_host(d, {rows, depth}, x), W = Tensor::from_host(d, {cols, depth}, w);
        Tensor Y(d, {rows, cols});
        ops::Options native;
        native.path = ops::PathChoice::native;  // the vendor path may differ in bits between spaces
        ops::dense(X, W, std::nullopt, Y, Activation::none, native);
        products.push_back(Y.download());
    }
    for (std::size_t i = 0; i < count; ++i) REQUIRE(sums[0][i] == a[i] + b[i]);
    for (int i = 1; i < n; ++i) {
        CHECK(sums[i] == sums[0]);
        // One summation order per element, fixed by K alone (DeviceInfo::determinism): the same bits.
        CHECK(products[i] == products[0]);
    }
    // A reference for the products: float64 sums, within f32's rounding.
    double worst = 0;
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) {
            double s = 0;
            for (std::size_t k = 0; k < depth; ++k) s += double(x[r * depth + k]) * double(w[c * depth + k]);
            worst = std::max(worst, std::abs(s - double(products[0][r * cols + c])));
        }
    CHECK(worst < 1e-5);
}
