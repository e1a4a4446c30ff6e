// Test support: fresh random data, poisoned outputs, comparison with the oracle.
#pragma once

#include <accel/accel.hpp>
#include <accel/reference.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace accel_test {

/// A matmul size: C[m, n], inner dimension k.
struct MNK {
    std::size_t m, n, k;
};

/// "m=.. n=.. k=.. ta=.. tb=..": one product's case, for a doctest INFO.
std::string describe(const MNK& s, bool ta, bool tb);

/// matmul on every path of the device and all four transposes for each
/// shape (within the work cap), fresh random data from `g`, NaN-poisoned
/// output, against the float64 oracle with the op table's f32 threshold.
void check_matmul_shapes(const std::vector<MNK>& shapes, std::mt19937_64& g, const std::string& what);

/// The NMSE pass threshold of `op` in `dtype`: the op table's
/// (accel::nmse_threshold, with its reasoning in core/src/op_table.cpp).
inline double threshold(accel::Op op, accel::DType dtype = accel::DType::f32) {
    return accel::nmse_threshold(op, dtype);
}

/// The run's seed: ACCEL_TEST_SEED, else drawn once from std::random_device.
std::uint64_t seed();

/// A generator seeded from seed() and `salt` (each test its own stream).
std::mt19937_64 rng(std::uint64_t salt);

/// v rounded to dtype t and widened back to float: what a device holds in t
/// (the oracle's inputs for a test in t).
std::vector<float> stored(const std::vector<float>& v, accel::DType t);

/// n values uniform in [lo, hi).
std::vector<float> uniform(std::mt19937_64& g, std::size_t n, float lo = -1.0f, float hi = 1.0f);

/// A tensor whose every element is NaN, so that an element a kernel fails to
/// write makes the comparison fail.
accel::Tensor poisoned(const std::shared_ptr<accel::Device>& d, accel::Shape s);

/// c = a + b of 5000 fresh random floats on `dev` (on `stream` when given,
/// synchronized before the download), checked against the oracle: the
/// device still works (after a fault, beside a broken one).
void add_works(const std::shared_ptr<accel::Device>& dev, accel::Stream* stream = nullptr);

/// Sets (or, with null, unsets) an environment variable for one scope, and
/// gives it back its old value (or absence) when the scope ends. Not
/// thread-safe (setenv).
/// Whether the file at `path` is an intact entry of accel's cache folder
/// (backends/common/cache_file.hpp): its header's 8-character `magic`, then
/// the data's length, and exactly that many bytes after the 24-byte header.
bool cache_file_intact(const std::string& path, const char* magic);

class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value);
    ~ScopedEnv();
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    std::string name_, old_;
    bool had_;
};

/// ops::add(a, b, c) on stream `s` of their device between two events, the
/// stream synchronized; returns the milliseconds between the events.
/// Throws as the calls it makes.
double timed_add(accel::Stream& s, const accel::Tensor& a, const accel::Tensor& b, accel::Tensor& c);

/// Whether `text` holds `part` (an error message, a tool's output).
inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// The message of the `E` (an accel::Error by default) that f() throws, or
/// "(no exception of the expected type thrown)"; other exceptions pass through.
template <class E = accel::Error, class F>
std::string message_of(F&& f) {
    try {
        f();
    } catch (const E& e) {
        return e.what();
    }
    return "(no exception of the expected type thrown)";
}

/// Asserts got matches ref: finite, NMSE ≤ threshold. Prints the seed, the
/// NMSE and the largest error when it fails.
void expect_close(const std::vector<float>& got, const std::vector<double>& ref, double threshold,
                  const std::string& what);
/// The same for results read back in double.
void expect_close(const std::vector<double>& got, const std::vector<double>& ref, double threshold,
                  const std::string& what);

/// Asserts got matches ref with the error measured against `scale` instead of
/// ref: Σ(got−ref)² / Σscale² ≤ threshold, all finite, sizes equal. For results
/// that are sums whose terms may cancel: a sum's rounding error is bounded
/// relative to the sum of its terms' magnitudes (Higham, Accuracy and Stability
/// of Numerical Algorithms, 2nd ed., §4.2), so `scale` holds that magnitude and
/// a sum that cancels to near zero is judged at the size it was computed at.
void expect_close_at_scale(const std::vector<float>& got, const std::vector<double>& ref,
                           const std::vector<double>& scale, double threshold, const std::string& what);

/// The measure expect_close_at_scale asserts on, Σ(got−ref)² / Σscale² (the
/// error alone when every scale is 0), for callers that cannot assert
/// (other threads): +Inf when the sizes differ, NaN when got holds a NaN.
/// Thread-safe (pure).
double error_at_scale(const std::vector<float>& got, const std::vector<double>& ref,
                      const std::vector<double>& scale);

/// Resident bytes of this process (/proc/self/statm) after handing freed
/// heap memory back to the system (malloc_trim), so that what remains is
/// memory still in use, not the allocator's free lists. Meaningless under
/// the sanitizers, whose allocators keep freed memory resident.
double resident_bytes();

/// Whether a case of `work` elements (or multiply-adds) runs: always, unless
/// ACCEL_TEST_MAX_WORK caps it. Kernel checkers such as Oclgrind simulate
/// every work-item, so their runs keep to the small cases. A case left out is
/// reported (doctest MESSAGE naming `what` and its work), never passed
/// silently. An ACCEL_TEST_MAX_WORK that is not a positive integer fails the
/// calling test with a message saying so.
bool runs_at_size(std::size_t work, const std::string& what);

/// `preferred` when it is within ACCEL_TEST_MAX_WORK, else `small` (the case
/// still runs, at the smaller size, and says so in a doctest MESSAGE).
std::size_t size_within_cap(std::size_t preferred, std::size_t small, const std::string& what);

/// The elements of `cases` whose work(case) passes runs_at_size.
template <class Case, class Work>
std::vector<Case> within_work_cap(const std::vector<Case>& cases, Work work, const std::string& what) {
    std::vector<Case> kept;
    for (const Case& c : cases)
        if (runs_at_size(work(c), what)) kept.push_back(c);
    return kept;
}

/// Sizes (elements) of `sizes` that pass runs_at_size.
inline std::vector<std::size_t> within_work_cap(const std::vector<std::size_t>& sizes, const std::string& what) {
    return within_work_cap(sizes, [](std::size_t n) { return n; }, what);
}

/// Whether ACCEL_BACKEND names a device index (e.g. kokkos:1) that its
/// backend, available here, does not have. Never throws.
bool backend_available_but_index_out_of_range();

/// How a suite's run ended (run_suite), for a program that reports it.
struct SuiteOutcome {
    /// "pass", "FAIL" (test cases failed), "unavailable" (the backend cannot
    /// be used here: the run was skipped) or "error" (a bad ACCEL_ variable,
    /// a device index the backend does not have, opening the device failed).
    std::string status;
    std::string reason;  ///< why, when not "pass"; empty otherwise
    /// The device under test once opened (its stable selector (DeviceInfo::
    /// stable_selector, else Device::selector()), name and, where
    /// the backend reports them, UUID and PCI bus id); empty before.
    std::string selector, device, uuid, pci_bus_id;
    /// Its runtime and driver as DeviceInfo states them ("CUDA runtime
    /// 13.0", "OpenCL 3.0 PoCL 3.1 ..."); empty before it is opened.
    std::string runtime_version, driver_version;
};

/// The entry of a per-backend suite: prints the device under test and the
/// seed, then runs doctest with argv (doctest's options); returns 77 (CTest's
/// SKIPPED) with the reason when the backend named by ACCEL_BACKEND is
/// unavailable, 1 (a failure) when the backend is available but the
/// selector's device index is out of range or a variable is bad, else
/// doctest's status. With hold_device the device stays open for the whole
/// run (device()); without, it is released before the tests start, so that
/// tests can open and release it themselves. `outcome`, when given, receives
/// how the run ended.
int run_suite(int argc, const char* const* argv, const char* suite, bool hold_device = true,
              SuiteOutcome* outcome = nullptr);

/// The device under test (ACCEL_BACKEND), opened once and held until exit.
const std::shared_ptr<accel::Device>& device();

/// Whether device() runs every op of `ops` in f32 on the native path; when
/// not, prints which op is unsupported and the backend's reason
/// (KernelTable::unsupported_reason), so that a test case of ops a backend does
/// not have is reported and left: `if (!runs({Op::matmul})) return;`.
bool runs(const std::vector<accel::Op>& ops);

/// The table entry of a test-only elementwise op y = f(x) whose result is
/// rounded once per element (thresholds 4·u² per dtype, as the built-in
/// ops add and relu), named `name` with `math` as its one line; the caller
/// adds what else it needs (elementwise_reference, input_ranges) and calls
/// accel::define_op once per process.
accel::OpInfo unary_test_op(const std::string& name, const std::string& math);

/// The paths the device under test offers for op (native always).
std::vector<accel::ops::PathChoice> paths(accel::Op op);

/// "native" / "vendor".
const char* name(accel::ops::PathChoice p);

/// Narrows the ops and dtypes the suite checks (accel-conformance --ops,
/// --dtypes); an empty list keeps all. Call before the test cases run; not
/// thread-safe with them.
void select(std::vector<accel::Op> ops, std::vector<accel::DType> dtypes);

/// Whether the run checks `op` (every op unless select() narrowed them).
bool selected(accel::Op op);

/// The dtypes of `among` the run checks, in that order (all of them unless
/// select() narrowed the dtypes). A test case that loops over dtypes takes
/// them from here and says so in its name ("in every dtype", or the dtypes it
/// names): accel-conformance --dtypes picks test cases by their names.
std::vector<accel::DType> dtypes(std::initializer_list<accel::DType> among = {accel::DType::f32, accel::DType::f64,
                                                                              accel::DType::f16, accel::DType::bf16});

}  // namespace accel_test
