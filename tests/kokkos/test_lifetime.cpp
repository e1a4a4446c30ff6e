// Kokkos' lifetime beside an application that uses Kokkos itself. This
// program links the same (shared) Kokkos as accel's Kokkos plugin, so it sees
// the runtime the plugin uses. Each test case runs in its own process (CTest
// runs one per --test-case): Kokkos can be initialized once per process.
//
//  - host-never-initializes: with ACCEL_BACKEND=host, opening the default
//    device and probing every backend leave Kokkos uninitialized, so the
//    application can still create its Kokkos::ScopeGuard afterwards.
//  - accel-first: accel opens kokkos:0 before the application touches
//    Kokkos, so accel initializes it; the application then uses that same
//    Kokkos; accel finalizes it exactly once at exit (checked at exit).
//  - application-first: the application's Kokkos::ScopeGuard initializes
//    Kokkos; accel uses it, never initializes nor finalizes it.
//  - application-finalizes-early: the ScopeGuard ends while accel's tensors,
//    stream and event are alive; every entry point then throws
//    BackendUnavailable ("Kokkos was finalized by the application") instead
//    of crashing, and releasing everything afterwards is safe.
#include <accel/accel.hpp>
#include <accel/reference.hpp>

#include <Kokkos_Core.hpp>
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using accel::Tensor;
namespace ops = accel::ops;

std::vector<float> random_values(std::size_t n, unsigned salt) {
    std::mt19937 g(1234u + salt);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (auto& x : v) x = d(g);
    return v;
}

double nmse(const std::vector<float>& got, const std::vector<double>& ref) { return accel::reference::nmse(got, ref); }

// The application's own Kokkos work: Σ i over [0, n) with a parallel_reduce.
long long application_sum(long long n) {
    long long s = 0;
    Kokkos::parallel_reduce(
        "application_sum", Kokkos::RangePolicy<Kokkos::DefaultExecutionSpace>(0, n),
        KOKKOS_LAMBDA(long long i, long long& acc) { acc += i; }, s);
    return s;
}

// A matmul and an add on `d` (both paths where available), checked against the oracle.
void check_ops(const std::shared_ptr<accel::Device>& d, accel::Stream* stream = nullptr) {
    const std::size_t m = 37, n = 29, k = 41;
    const auto a = random_values(m * k, 1), b = random_values(k * n, 2);
    auto A = Tensor::from_host(d, {m, k}, a), B = Tensor::from_host(d, {k, n}, b);
    Tensor C(d, {m, n});
    std::vector<ops::PathChoice> paths{ops::PathChoice::native};
    if (d->kernel_table().supports(accel::Op::matmul, accel::OpPath::vendor)) paths.push_back(ops::PathChoice::vendor);
    for (auto p : paths) {
        ops::Options o;
        o.path = p;
        o.stream = stream;
        ops::matmul(A, B, C, {}, o);
        if (stream) stream->synchronize();
        CHECK(nmse(C.download(), accel::reference::matmul(a, b, m, n, k)) <= accel::nmse_threshold(accel::Op::matmul, accel::DType::f32));
    }
    const auto x = random_values(1000, 3), y = random_values(1000, 4);
    auto X = Tensor::from_host(d, {1000}, x), Y = Tensor::from_host(d, {1000}, y);
    Tensor Z(d, {1000});
    ops::add(X, Y, Z);
    CHECK(nmse(Z.download(), accel::reference::add(x, y)) <= accel::nmse_threshold(accel::Op::add, accel::DType::f32));
}

std::string fact(const accel::Device& d, const std::string& key) {
    for (const auto& kv : d.info().extra)
        if (kv.first == key) return kv.second;
    return "";
}

// Asserts that fn throws accel::BackendUnavailable saying Kokkos was finalized by the application.
void expect_finalized_error(const char* what, const std::function<void()>& fn) {
    INFO(what);
    bool thrown = false;
    try {
        fn();
    } catch (const accel::BackendUnavailable& e) {
        thrown = true;
        CHECK(std::string(e.what()).find("Kokkos was finalized by the application") != std::string::npos);
    } catch (const std::exception& e) {
        FAIL_CHECK(what << " threw something other than BackendUnavailable: " << std::string(e.what()));
        return;
    }
    CHECK_MESSAGE(thrown, what << " did not throw BackendUnavailable after Kokkos::finalize");
}

bool kokkos_available() {
    for (const auto& st : accel::backend_statuses())
        if (st.name == "kokkos") return st.availability.available;
    return false;
}

}  // namespace

TEST_CASE("host-never-initializes: ACCEL_BACKEND=host leaves Kokkos alone") {
    REQUIRE(!Kokkos::is_initialized());
    auto host = accel::default_device();  // probes every backend, opens host:0
    REQUIRE(host->info().backend == "host");
    CHECK(kokkos_available());  // the Kokkos plugin was loaded and probed ...
    check_ops(host);
    CHECK_MESSAGE(!Kokkos::is_initialized(), "probing the Kokkos backend initialized Kokkos");  // ... not initialized
    // So the application can still start its own Kokkos (Kokkos 4 aborts a
    // ScopeGuard made while Kokkos is initialized), and accel then uses it.
    Kokkos::ScopeGuard guard;
    REQUIRE(Kokkos::is_initialized());
    auto kk = accel::open_device("kokkos");
    CHECK(fact(*kk, "Kokkos initialized by").rfind("the application", 0) == 0);
    check_ops(kk);
}

namespace {
// Registered before accel opens kokkos:0, so it runs after accel's exit-time
// finalize (exit handlers run in reverse order of registration).
void kokkos_must_be_finalized_at_exit() {
    if (Kokkos::is_initialized()) {
        std::fprintf(stderr, "FAILED: Kokkos is still initialized at exit: accel did not finalize the Kokkos it "
                             "initialized\n");
        std::fflush(stderr);
        _exit(3);
    }
    std::printf("at exit: accel finalized the Kokkos it initialized\n");
    std::fflush(stdout);
}
}  // namespace

TEST_CASE("accel-first: accel initializes Kokkos, the application uses it, accel finalizes it at exit") {
    REQUIRE(!Kokkos::is_initialized());
    std::atexit(kokkos_must_be_finalized_at_exit);
    auto d = accel::open_device("kokkos");
    REQUIRE(Kokkos::is_initialized());
    CHECK(fact(*d, "Kokkos initialized by").rfind("accel", 0) == 0);
    // The application's Kokkos code runs on the runtime accel started,
    // interleaved with accel's ops, on the default stream and another one.
    CHECK(application_sum(100000) == 100000LL * 99999LL / 2);
    check_ops(d);
    auto s = d->create_stream();
    check_ops(d, s.get());
    CHECK(application_sum(1000) == 1000LL * 999LL / 2);
    d.reset();  // accel keeps Kokkos up until exit, device open or not
    CHECK(Kokkos::is_initialized());
    CHECK(application_sum(10) == 45);
}

TEST_CASE("application-first: accel uses the application's Kokkos and never finalizes it") {
    REQUIRE(!Kokkos::is_initialized());
    {
        Kokkos::ScopeGuard guard;
        auto d = accel::open_device("kokkos");
        CHECK(fact(*d, "Kokkos initialized by").rfind("the application", 0) == 0);
        CHECK(application_sum(100000) == 100000LL * 99999LL / 2);
        check_ops(d);
        auto s = d->create_stream();
        check_ops(d, s.get());
        s.reset();
        d.reset();
        // accel let go of kokkos:0: Kokkos is still the application's, up.
        CHECK(Kokkos::is_initialized());
        CHECK(application_sum(1000) == 1000LL * 999LL / 2);
    }  // the application finalizes; accel must not finalize again at exit
    CHECK(!Kokkos::is_initialized());
}

TEST_CASE("application-finalizes-early: every entry point raises BackendUnavailable afterwards") {
    REQUIRE(!Kokkos::is_initialized());
    std::shared_ptr<accel::Device> d;
    Tensor A, B, C;
    std::unique_ptr<accel::Stream> stream;
    std::unique_ptr<accel::Event> ev;
    const auto a = random_values(64 * 64, 5), b = random_values(64 * 64, 6);
    {
        Kokkos::ScopeGuard guard;
        d = accel::open_device("kokkos");
        A = Tensor::from_host(d, {64, 64}, a);
        B = Tensor::from_host(d, {64, 64}, b);
        C = Tensor(d, {64, 64});
        stream = d->create_stream();
        ev = d->create_event();
        ops::matmul(A, B, C);
        CHECK(nmse(C.download(), accel::reference::matmul(a, b, 64, 64, 64)) <= accel::nmse_threshold(accel::Op::matmul, accel::DType::f32));
    }  // Kokkos::finalize while accel's objects are alive
    REQUIRE(!Kokkos::is_initialized());

    expect_finalized_error("allocate (Tensor)", [&] { Tensor t(d, {16}); });
    expect_finalized_error("upload", [&] { A.upload(a); });
    expect_finalized_error("download", [&] { (void)C.download(); });
    expect_finalized_error("copy device to device",
                           [&] { d->copy_device_to_device(C.buffer(), 0, A.buffer(), 0, 64 * sizeof(float)); });
    expect_finalized_error("add", [&] { ops::add(A, B, C); });
    expect_finalized_error("matmul native", [&] {
        ops::Options o;
        o.path = ops::PathChoice::native;
        ops::matmul(A, B, C, {}, o);
    });
    if (d->kernel_table().supports(accel::Op::matmul, accel::OpPath::vendor))
        expect_finalized_error("matmul vendor", [&] {
            ops::Options o;
            o.path = ops::PathChoice::vendor;
            ops::matmul(A, B, C, {}, o);
        });
    expect_finalized_error("dense", [&] { ops::dense(A, B, std::nullopt, C, accel::Activation::relu); });
    expect_finalized_error("sigmoid on a stream", [&] {
        ops::Options o;
        o.stream = stream.get();
        ops::sigmoid(A, C, o);
    });
    expect_finalized_error("fma_throughput", [&] { (void)accel::diagnostics::fma_throughput(C, 10); });
    expect_finalized_error("launch_empty", [&] { accel::diagnostics::launch_empty(*d, d->default_stream()); });
    expect_finalized_error("Device::synchronize", [&] { d->synchronize(); });
    expect_finalized_error("Stream::synchronize", [&] { stream->synchronize(); });
    expect_finalized_error("create_stream", [&] { (void)d->create_stream(); });
    expect_finalized_error("create_event", [&] { (void)d->create_event(); });
    expect_finalized_error("Event::record", [&] { ev->record(*stream); });

    // Everything can be released after the finalize, in any order.
    stream.reset();
    ev.reset();
    A = Tensor();
    B = Tensor();
    C = Tensor();
    d.reset();
    // Opening kokkos again: the backend now reports why it is unavailable.
    bool thrown = false;
    try {
        (void)accel::open_device("kokkos");
    } catch (const accel::BackendUnavailable& e) {
        thrown = true;
        CHECK(std::string(e.what()).find("Kokkos was finalized by the application") != std::string::npos);
    }
    CHECK(thrown);
    CHECK(!kokkos_available());
}

int main(int argc, char** argv) {
    doctest::Context ctx(argc, argv);
    return ctx.run();
}
