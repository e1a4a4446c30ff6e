#include "check.hpp"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <limits>

namespace accel_test {

namespace {
const accel::env::Declaration kSeedVariable{{"ACCEL_TEST_SEED", "a seed",
                                             "seed of the conformance suite's random data (default: random, printed)",
                                             "accel's test programs"}};
const accel::env::Declaration kMaxWorkVariable{{"ACCEL_TEST_MAX_WORK", "the most elements or multiply-adds of one case",
                                                "leaves the conformance suite's larger cases out (default: no limit)",
                                                "accel's test programs"}};
}  // namespace

std::uint64_t seed() {
    static const std::uint64_t s = [] {
        if (const auto e = accel::env::read_uint("ACCEL_TEST_SEED", 0, std::numeric_limits<std::uint64_t>::max()))
            return *e;
        std::random_device rd;
        return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
    }();
    return s;
}

std::size_t work_cap() {
    static const std::size_t cap = static_cast<std::size_t>(
        accel::env::read_uint("ACCEL_TEST_MAX_WORK", 1, std::numeric_limits<std::size_t>::max())
            .value_or(std::numeric_limits<std::size_t>::max()));
    return cap;
}

double resident_bytes() {
    malloc_trim(0);
    std::ifstream f("/proc/self/statm");
    double size = 0, resident = 0;
    f >> size >> resident;
    return resident * static_cast<double>(sysconf(_SC_PAGESIZE));
}

bool runs_at_size(std::size_t work, const std::string& what) {
    const std::size_t cap = work_cap();
    if (work <= cap) return true;
    MESSAGE(what << ": case of " << work << " elements/multiply-adds left out (ACCEL_TEST_MAX_WORK=" << cap << ")");
    return false;
}

std::size_t size_within_cap(std::size_t preferred, std::size_t small, const std::string& what) {
    const std::size_t cap = work_cap();
    if (preferred <= cap) return preferred;
    MESSAGE(what << ": run at " << small << " elements instead of " << preferred << " (ACCEL_TEST_MAX_WORK=" << cap
                 << ")");
    return small;
}

std::mt19937_64 rng(std::uint64_t salt) { return std::mt19937_64(seed() ^ (salt * 0x9E3779B97F4A7C15ull)); }

std::vector<float> uniform(std::mt19937_64& g, std::size_t n, float lo, float hi) {
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(n);
    for (auto& x : v) x = d(g);
    return v;
}

std::vector<float> stored(const std::vector<float>& v, accel::DType t) {
    std::vector<unsigned char> raw(v.size() * accel::dtype_size(t));
    accel::convert_elements(v.data(), accel::DType::f32, raw.data(), t, v.size());
    std::vector<float> back(v.size());
    accel::convert_elements(raw.data(), t, back.data(), accel::DType::f32, v.size());
    return back;
}

accel::Tensor poisoned(const std::shared_ptr<accel::Device>& d, accel::Shape s) {
    accel::Tensor t(d, s);
    t.upload(std::vector<float>(t.elements(), std::numeric_limits<float>::quiet_NaN()));
    return t;
}

template <class G>
void expect_close_of(const G& got, const std::vector<double>& ref, double threshold, const std::string& what) {
    const double e = accel::reference::nmse(got, ref);
    INFO(what << ": nmse " << e << " (threshold " << threshold << "), max |err| "
              << accel::reference::max_abs_error(got, ref) << ", seed " << seed()
              << " (rerun with ACCEL_TEST_SEED=" << seed() << ")");
    CHECK(got.size() == ref.size());
    CHECK(e <= threshold);
}

void expect_close(const std::vector<float>& got, const std::vector<double>& ref, double threshold,
                  const std::string& what) {
    expect_close_of(got, ref, threshold, what);
}

void expect_close(const std::vector<double>& got, const std::vector<double>& ref, double threshold,
                  const std::string& what) {
    expect_close_of(got, ref, threshold, what);
}

void expect_close_at_scale(const std::vector<float>& got, const std::vector<double>& ref,
                           const std::vector<double>& scale, double threshold, const std::string& what) {
    REQUIRE(got.size() == ref.size());
    REQUIRE(scale.size() == ref.size());
    bool finite = true;
    for (float v : got) finite = finite && std::isfinite(v);
    const double e = error_at_scale(got, ref, scale);
    INFO(what << ": error² / scale² " << e << " (threshold " << threshold << "), max |err| "
              << accel::reference::max_abs_error(got, ref) << ", seed " << seed()
              << " (rerun with ACCEL_TEST_SEED=" << seed() << ")");
    CHECK(finite);
    CHECK(e <= threshold);
}

double error_at_scale(const std::vector<float>& got, const std::vector<double>& ref,
                      const std::vector<double>& scale) {
    if (got.size() != ref.size() || scale.size() != ref.size()) return HUGE_VAL;
    double err = 0, norm = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        err += (got[i] - ref[i]) * (got[i] - ref[i]);
        norm += scale[i] * scale[i];
    }
    return norm > 0 ? err / norm : err;
}

void check_matmul_shapes(const std::vector<MNK>& shapes, std::mt19937_64& g, const std::string& what) {
    using namespace accel;
    for (auto path : paths(Op::matmul))
        for (const auto& s : within_work_cap(shapes, [](const MNK& x) { return x.m * x.n * x.k; }, what))
            for (int t = 0; t < 4; ++t) {
                const bool ta = t & 1, tb = t & 2;
                CAPTURE(std::string(name(path)));
                INFO(describe(s, ta, tb));
                auto a = uniform(g, s.m * s.k), b = uniform(g, s.k * s.n);
                auto A = Tensor::from_host(device(), ta ? Shape{s.k, s.m} : Shape{s.m, s.k}, a);
                auto B = Tensor::from_host(device(), tb ? Shape{s.n, s.k} : Shape{s.k, s.n}, b);
                auto C = poisoned(device(), {s.m, s.n});
                ops::Options o;
                o.path = path;
                ops::matmul(A, B, C, {ta, tb}, o);
                expect_close(C.download(), reference::matmul(a, b, s.m, s.n, s.k, ta, tb), threshold(Op::matmul),
                             what + " " + name(path));
            }
}

bool backend_available_but_index_out_of_range() {
    try {
        const accel::Selector sel = accel::parse_selector(accel::selector_from_env());
        if (sel.backend == "auto" || sel.index < 0) return false;
        for (const auto& st : accel::backend_statuses())
            if (st.name == sel.backend)
                return st.availability.available && sel.index >= st.availability.device_count;
    } catch (const accel::Error&) {
    }
    return false;
}

int run_suite(int argc, const char* const* argv, const char* suite, bool hold_device, SuiteOutcome* outcome) {
    SuiteOutcome here;
    SuiteOutcome& out = outcome ? *outcome : here;
    try {
        (void)work_cap();  // ACCEL_TEST_MAX_WORK and ACCEL_TEST_SEED checked before any case runs
        const auto d = hold_device ? device() : accel::default_device();
        out.selector = d->info().stable_selector.empty() ? d->selector() : d->info().stable_selector;
        out.device = d->info().name;
        out.uuid = d->info().uuid;
        out.pci_bus_id = d->info().pci_bus_id;
        out.runtime_version = d->info().runtime_version;
        out.driver_version = d->info().driver_version;
        std::cout << suite << " on " << d->selector() << " (" << d->info().name << "), seed " << seed() << "\n";
        // The kernel path facts ("f16/bf16 matmul: tensor cores, ..."), so the log says what ran.
        const std::string path_fact = " matmul";
        for (const auto& fact : d->info().extra)
            if (fact.first.size() > path_fact.size() &&
                fact.first.compare(fact.first.size() - path_fact.size(), path_fact.size(), path_fact) == 0)
                std::cout << "  " << fact.first << ": " << fact.second << "\n";
    } catch (const accel::InvalidArgument& e) {
        // A bad ACCEL_ variable (or selector) is the user's error: fail, do not skip.
        std::cout << "ERROR: " << e.what() << "\n";
        out.status = "error";
        out.reason = e.what();
        return 1;
    } catch (const accel::BackendUnavailable& e) {
        // A device index the backend does not have (e.g. kokkos:1) is the
        // user's error, not an absent backend: fail instead of skipping.
        if (backend_available_but_index_out_of_range()) {
            std::cout << "ERROR: " << e.what()
                      << "\n(the backend is available, but ACCEL_BACKEND names a device it does not have: "
                         "fix the device index; this is not a skip)\n";
            out.status = "error";
            out.reason = e.what();
            return 1;
        }
        std::cout << "SKIPPED: " << e.what() << "\n";
        out.status = "unavailable";
        out.reason = e.what();
        return 77;
    }
    doctest::Context ctx(argc, argv);
    const int rc = ctx.run();
    out.status = rc == 0 ? "pass" : "FAIL";
    if (rc != 0) out.reason = "test cases failed (doctest exit status " + std::to_string(rc) + ")";
    return rc;
}

const std::shared_ptr<accel::Device>& device() {
    static const std::shared_ptr<accel::Device> d = accel::default_device();
    return d;
}

ScopedEnv::ScopedEnv(const char* name, const char* value) : name_(name), had_(std::getenv(name) != nullptr) {
    if (had_) old_ = std::getenv(name);
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
}

ScopedEnv::~ScopedEnv() {
    if (had_)
        setenv(name_.c_str(), old_.c_str(), 1);
    else
        unsetenv(name_.c_str());
}

double timed_add(accel::Stream& s, const accel::Tensor& a, const accel::Tensor& b, accel::Tensor& c) {
    accel::Device& d = s.device();
    auto start = d.create_event(), end = d.create_event();
    start->record(s);
    accel::ops::Options on_s;
    on_s.stream = &s;
    accel::ops::add(a, b, c, on_s);
    end->record(s);
    s.synchronize();
    return d.elapsed_ms(*start, *end);
}

std::string describe(const MNK& s, bool ta, bool tb) {
    return "m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k) +
           " ta=" + std::to_string(ta) + " tb=" + std::to_string(tb);
}

accel::OpInfo unary_test_op(const std::string& name, const std::string& math) {
    accel::OpInfo info;
    info.name = name;
    info.math = math;
    info.inputs = {"x"};
    info.outputs = {"y"};
    info.nmse = {1e-12, 1e-28, 1e-6, 6e-5};
    info.nmse_reason = "one rounding of an exact result per element";
    return info;
}

bool runs(const std::vector<accel::Op>& ops) {
    for (accel::Op op : ops) {
        const std::string why = device()->kernel_table().unsupported_reason(op, accel::DType::f32, accel::OpPath::native);
        if (!why.empty()) {
            MESSAGE("skipped: " << accel::op_name(op) << " does not run on " << device()->selector() << ": " << why);
            return false;
        }
    }
    return true;
}

std::vector<accel::ops::PathChoice> paths(accel::Op op) {
    std::vector<accel::ops::PathChoice> p{accel::ops::PathChoice::native};
    if (device()->kernel_table().supports(op, accel::OpPath::vendor)) p.push_back(accel::ops::PathChoice::vendor);
    return p;
}

const char* name(accel::ops::PathChoice p) {
    return p == accel::ops::PathChoice::vendor ? "vendor" : p == accel::ops::PathChoice::native ? "native" : "auto";
}

namespace {
std::vector<accel::Op> g_ops;        // select()'s ops; empty: every op
std::vector<accel::DType> g_dtypes;  // select()'s dtypes; empty: every dtype
}  // namespace

void select(std::vector<accel::Op> ops, std::vector<accel::DType> dtypes) {
    g_ops = std::move(ops);
    g_dtypes = std::move(dtypes);
}

bool selected(accel::Op op) { return g_ops.empty() || std::find(g_ops.begin(), g_ops.end(), op) != g_ops.end(); }

std::vector<accel::DType> dtypes(std::initializer_list<accel::DType> among) {
    std::vector<accel::DType> out;
    for (accel::DType t : among)
        if (g_dtypes.empty() || std::find(g_dtypes.begin(), g_dtypes.end(), t) != g_dtypes.end()) out.push_back(t);
    return out;
}

void add_works(const std::shared_ptr<accel::Device>& dev, accel::Stream* stream) {
    auto g = rng(5);
    const std::size_t n = 5000;
    const auto a = uniform(g, n), b = uniform(g, n);
    auto ta = accel::Tensor::from_host(dev, {n}, a), tb = accel::Tensor::from_host(dev, {n}, b);
    auto tc = poisoned(dev, {n});
    accel::ops::Options o;
    o.stream = stream;
    accel::ops::add(ta, tb, tc, o);
    if (stream) stream->synchronize();  // download() runs on the default stream
    expect_close(tc.download(), accel::reference::add(a, b), threshold(accel::Op::add), "add on " + dev->selector());
}

bool cache_file_intact(const std::string& path, const char* magic) {
    std::ifstream f(path, std::ios::binary);
    char got[8] = {};
    std::uint64_t bytes = 0;
    f.read(got, 8);
    f.read(reinterpret_cast<char*>(&bytes), 8);
    f.seekg(0, std::ios::end);
    return f && std::string(got, 8) == magic && static_cast<std::uint64_t>(f.tellg()) == bytes + 24;
}

}  // namespace accel_test
