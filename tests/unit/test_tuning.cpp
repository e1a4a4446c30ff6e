// Tuning records (accel/tuning.hpp) and tunable kernels (accel::Tuning):
// the record format and its refusals, and, on a device that has tunable
// kernels (ACCEL_BACKEND=opencl:pocl / opencl:intel, tests opencl.tuning.*),
// records refused or used when the device loads them, and tuned kernels
// giving the default's bits.
#include <accel/accel.hpp>
#include <accel/tuning.hpp>

#include <doctest/doctest.h>

#include "support/check.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

using namespace accel;
using accel_test::contains;
using accel_test::ScopedEnv;

namespace {

DeviceInfo some_device() {
    DeviceInfo i;
    i.backend = "opencl";
    i.vendor = "Example Vendor";
    i.name = "Example GPU 9000";
    i.driver_version = "1.2.3";
    i.compute_units = 132;
    return i;
}

TuningEntry some_entry() {
    TuningEntry e;
    e.key = {Op::dense, DType::bf16, "small"};
    e.shape = {256, 256, 256};
    e.default_params = {{{"bx", 16}, {"tk", 16}}, 100.5};
    e.best = {{{"bx", 8}, {"tk", 32}}, 150.25};
    return e;
}

std::string message_of(const std::string& text) {
    try {
        record_from_json(text);
    } catch (const InvalidArgument& e) {
        return e.what();
    }
    return "(accepted)";
}

// Runs fn with stderr going into a file; returns what it wrote.
template <class Fn>
std::string captured_stderr(Fn fn) {
    char path[] = "/tmp/accel-tuning-stderr-XXXXXX";
    const int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    std::fflush(stderr);
    const int saved = dup(2);
    dup2(fd, 2);
    try {
        fn();
    } catch (...) {
        std::fflush(stderr);
        dup2(saved, 2);
        close(saved);
        close(fd);
        std::remove(path);
        throw;
    }
    std::fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(fd);
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    std::remove(path);
    return s.str();
}

std::string extra(const Device& d, const std::string& key) {
    for (const auto& [k, v] : d.info().extra)
        if (k == key) return v;
    return "";
}

void write_text(const std::string& path, const std::string& text) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// A folder of its own under the system's temporary folder.
std::string temp_folder() {
    char path[] = "/tmp/accel-tuning-test-XXXXXX";
    REQUIRE(mkdtemp(path) != nullptr);
    return path;
}

// The output bits of matmul (with transposes ta, tb) or dense (x·Wᵀ) on fixed operands.
std::vector<float> product(const std::shared_ptr<Device>& d, Op op, std::size_t m, std::size_t n, std::size_t k,
                           bool ta, bool tb, const std::vector<float>& a, const std::vector<float>& b) {
    const Tensor A = Tensor::from_host(d, ta ? Shape{k, m} : Shape{m, k}, a);
    Tensor C(d, {m, n}, DType::f32);
    if (op == Op::dense) {
        const Tensor W = Tensor::from_host(d, {n, k}, b);
        ops::dense(A, W, std::nullopt, C, Activation::none, ops::PathChoice::native);
    } else {
        const Tensor B = Tensor::from_host(d, tb ? Shape{n, k} : Shape{k, n}, b);
        ops::matmul(A, B, C, {ta, tb}, ops::PathChoice::native);
    }
    return C.download();
}

}  // namespace

TEST_CASE("tuning records: the JSON round trip, and damaged, foreign and stale records named as such") {
    TuningRecord r = record_for(some_device());
    r.written_by = "test";
    r.entries.push_back(some_entry());
    const TuningRecord back = record_from_json(record_to_json(r));
    CHECK(back.name == r.name);
    CHECK(back.vendor == r.vendor);
    CHECK(back.driver_version == r.driver_version);
    CHECK(back.compute_units == 132);
    REQUIRE(back.entries.size() == 1);
    CHECK(back.entries[0].key == r.entries[0].key);
    CHECK(back.entries[0].best.params == r.entries[0].best.params);
    CHECK(back.entries[0].best.gflops == doctest::Approx(150.25));
    CHECK(back.entries[0].shape.k == 256);
    CHECK(record_mismatch(back, some_device()).empty());

    CHECK(contains(message_of("{ \"format\": "), "damaged: not JSON"));
    CHECK(contains(message_of("[1, 2]"), "damaged: the document is not a JSON object"));
    std::string text = record_to_json(r);
    const auto replace = [](std::string s, const std::string& from, const std::string& to) {
        const auto at = s.find(from);
        REQUIRE(at != std::string::npos);
        return s.replace(at, from.size(), to);
    };
    CHECK(contains(message_of(replace(text, "\"device\"", "\"devise\"")), "damaged: the record has no \"device\""));
    CHECK(contains(message_of(replace(text, "\"dense\"", "\"add\"")), "damaged: entry 0: op 'add' is not tunable"));
    CHECK(contains(message_of(replace(text, "\"small\"", "\"huge\"")), "damaged: entry 0: shape class 'huge'"));
    CHECK(contains(message_of(replace(text, "\"tk\": 32", "\"tk\": \"32\"")), "parameter \"tk\" is not a whole number"));
    CHECK(contains(message_of(replace(text, "\"format_version\": 1", "\"format_version\": 7")),
                   "stale: format_version 7"));

    DeviceInfo other = some_device();
    other.name = "Example GPU 8000";
    CHECK(contains(record_mismatch(r, other), "foreign: written for opencl 'Example GPU 9000'"));
    other = some_device();
    other.compute_units = 114;
    CHECK(contains(record_mismatch(r, other), "foreign:"));
    other = some_device();
    other.driver_version = "1.2.4";
    CHECK(contains(record_mismatch(r, other), "stale: written with driver version '1.2.3'"));
    CHECK(record_file_name(some_device()) == "opencl-example-vendor-example-gpu-9000.json");
    CHECK(gemm_shape_class(4096, 16) == "narrow");
    CHECK(gemm_shape_class(256, 256) == "small");
    CHECK(gemm_shape_class(257, 256) == "large");
}

TEST_CASE("tuning on the device: damaged, foreign and stale records refused with a warning naming the file") {
    auto d = default_device();
    Tuning* t = d->tuning();
    if (!t) {
        MESSAGE("skipped: " << d->selector() << " has nothing to tune");
        return;
    }
    const std::string folder = temp_folder();
    ScopedEnv cache("ACCEL_CACHE_DIR", folder.c_str());
    const std::string path = folder + "/tuning/" + record_file_name(d->info());
    const TuningKey key{Op::matmul, DType::f32, "large"};
    const TuningParams def = t->default_params(key);
    const std::vector<TuningParams> cands = t->candidates(key, true);
    REQUIRE(cands.size() >= 2);
    CHECK(cands[0] == def);
    TuningRecord good = record_for(d->info());
    TuningEntry e{key, {1024, 1024, 1024}, {def, 1}, {cands[1], 2}};
    good.entries.push_back(e);

    SUBCASE("damaged: not JSON") {
        write_text(path, "{ \"format\": \"accel-tuning\", ");
        const std::string err = captured_stderr([&] { d->load_tuning_record(); });
        CHECK(contains(err, "tuning record " + path + " refused"));
        CHECK(contains(err, "damaged: not JSON"));
    }
    SUBCASE("damaged: a parameter set the device refuses") {
        TuningRecord bad = good;
        bad.entries[0].best.params["bx"] = 3;
        write_record(bad, path);
        const std::string err = captured_stderr([&] { d->load_tuning_record(); });
        CHECK(contains(err, path + " refused"));
        CHECK(contains(err, "damaged: tuning matmul f32 large"));
        CHECK(contains(err, "bx and by must be powers of two"));
    }
    SUBCASE("foreign: another device's") {
        TuningRecord foreign = good;
        foreign.name = "Example GPU 9000";
        write_record(foreign, path);
        const std::string err = captured_stderr([&] { d->load_tuning_record(); });
        CHECK(contains(err, path + " refused"));
        CHECK(contains(err, "foreign: written for " + d->info().backend + " 'Example GPU 9000'"));
    }
    SUBCASE("stale: another driver's") {
        TuningRecord stale = good;
        stale.driver_version = "0.0-old";
        write_record(stale, path);
        const std::string err = captured_stderr([&] { d->load_tuning_record(); });
        CHECK(contains(err, path + " refused"));
        CHECK(contains(err, "stale: written with driver version '0.0-old'"));
    }
    // Refused: the database's record where it has one for the device, else the
    // defaults; accel-info's line says which, and why the cache's was refused.
    CHECK(d->tuning_record() != path);
    if (d->tuning_record().empty()) {
        CHECK(t->params(key) == def);
        CHECK(contains(extra(*d, "tuning record"), "none: the defaults"));
    } else {
        CHECK(d->tuning_record() == tuning_database_dir() + "/" + record_file_name(d->info()));
    }
    CHECK(contains(extra(*d, "tuning record"), path + " refused ("));

    // The same record, intact, is used.
    write_record(good, path);
    const std::string err = captured_stderr([&] { d->load_tuning_record(); });
    CHECK(err.empty());
    CHECK(d->tuning_record() == path);
    CHECK(t->params(key) == cands[1]);
    CHECK(contains(extra(*d, "tuning record"), path + " (1 entries, FNV-1a "));
    t->reset_params();
    std::filesystem::remove_all(folder);
}

TEST_CASE("tuning on the device: a record for accel-info to show, written into ACCEL_CACHE_DIR") {
    auto d = default_device();
    Tuning* t = d->tuning();
    if (!t) {
        MESSAGE("skipped: " << d->selector() << " has nothing to tune");
        return;
    }
    const TuningKey key{Op::dense, DType::f32, "small"};
    TuningRecord r = record_for(d->info());
    r.entries.push_back({key, {256, 256, 256}, {t->default_params(key), 1}, {t->candidates(key, true).at(1), 2}});
    const auto folders = record_folders();
    REQUIRE(folders.size() == 2);  // the cache's, then the database
    write_record(r, folders[0] + "/" + record_file_name(d->info()));
    MESSAGE("wrote " << folders[0] << "/" << record_file_name(d->info()));
}

TEST_CASE("tuning on the device: every candidate gives the default's bits, and vw that would split K is refused") {
    auto d = default_device();
    Tuning* t = d->tuning();
    if (!t) {
        MESSAGE("skipped: " << d->selector() << " has nothing to tune");
        return;
    }
    t->reset_params();
    auto g = accel_test::rng(51);
    struct Shape3 {
        std::size_t m, n, k;
    };
    // One shape per class: large, small, narrow (gemm_shape_class), K not a multiple of any slice.
    for (const Shape3 s : {Shape3{300, 260, 203}, Shape3{100, 120, 77}, Shape3{257, 10, 100}}) {
        const std::string cls = gemm_shape_class(s.m, s.n);
        const std::vector<float> a = accel_test::uniform(g, s.m * s.k), b = accel_test::uniform(g, s.k * s.n);
        for (Op op : {Op::matmul, Op::dense}) {
            const TuningKey key{op, DType::f32, cls};
            // The matmul key's candidate the tuner tries first (large, narrow) or last
            // (small), for both ops, and one with another vector width: each is a
            // program to build (seconds on a CPU runtime), so they are few and shared.
            const std::vector<TuningParams> all = t->candidates({Op::matmul, DType::f32, cls}, false);
            REQUIRE(all.size() >= 2);
            std::vector<TuningParams> trials{cls == "small" ? all.back() : all[1]};
            if (all[0].count("vw")) {  // a backend whose kernels have a vector width named so
                TuningParams other_vw = all[0];
                other_vw["vw"] = other_vw["vw"] > 1 ? other_vw["vw"] / 2 : 2;
                trials.push_back(other_vw);
            }
            for (int layout = 0; layout < (op == Op::matmul ? 4 : 1); ++layout) {
                const bool ta = layout & 1, tb = layout & 2;
                t->reset_params();
                const std::vector<float> want = product(d, op, s.m, s.n, s.k, ta, tb, a, b);
                for (const TuningParams& p : trials) {
                    try {
                        t->set_params(key, p);
                    } catch (const InvalidArgument& e) {
                        // Only a vector width the device's dot products would split K by may be refused.
                        CHECK_MESSAGE(&p != &trials.front(), std::string(e.what()));
                        CHECK(contains(e.what(), "summation order"));
                        continue;
                    }
                    d->set_deterministic(true);
                    const std::vector<float> got = product(d, op, s.m, s.n, s.k, ta, tb, a, b);
                    d->set_deterministic(false);
                    const std::string call = std::string(op_name(op)) + " " + std::to_string(s.m) + "x" +
                                             std::to_string(s.n) + "x" + std::to_string(s.k) + (ta ? " Aᵀ" : " A") +
                                             (tb ? "·Bᵀ" : "·B") + " with " + params_text(p);
                    CHECK_MESSAGE(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)) == 0,
                                  call << " differs from the default's bits");
                }
            }
        }
    }
    t->reset_params();
}
