// PathChoice::automatic by evidence: on a device with both paths for matmul
// and dense, the path that ran matmul faster in a short measurement on that
// device at the first call's shape and layout (transposes) of its class,
// recorded per device, driver, library version and class (in this process
// and in a cache file) so that it is measured once. A vendor library is not
// always the faster one: CLBlast untuned for a device ran 2.5-20x slower
// than accel's kernel on Intel's OpenCL CPU runtime, 2x faster on PoCL; and
// one device's answer changes with the shape and layout: OpenBLAS ran 256³
// 1.3x faster than accel's host GEMM and the skinny 4096×30×256 6x slower,
// and CLBlast on PoCL won 1024×32×256 as A·B (13.4 against 4.6 GFLOP/s)
// and lost 1024×30×256 as Aᵀ·B (9.0 against 15.2).
#include <accel/environment.hpp>
#include <accel/error.hpp>
#include <accel/ops.hpp>
#include <accel/registry.hpp>
#include <accel/version.hpp>

#include "auto_path.hpp"
#include <accel_internal/graph_capture.hpp>
#include <accel_internal/instrument.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <utility>

#include <sys/stat.h>
#include <unistd.h>

namespace accel {
namespace ops {
namespace {

using nlohmann::json;

constexpr int kCalibrationRuns = 3;
// Largest product measured, in multiply-adds (512³): big enough to show a
// library's blocking, small enough to take milliseconds on every device.
constexpr double kClassMaxVolume = 134217728.0;
// A device on which matmul 16×16×16 takes longer than this (a simulator such
// as Oclgrind: thousands of times slower than hardware) is not measured.
constexpr std::size_t kProbeN = 16;
constexpr double kTooSlowMs = 50;

std::mutex& evidence_mutex() {
    static std::mutex m;
    return m;
}

// (cache file, device key) -> evidence, for this process.
std::map<std::pair<std::string, std::string>, PathEvidence>& memory() {
    static std::map<std::pair<std::string, std::string>, PathEvidence> m;
    return m;
}

std::string info_value(const DeviceInfo& i, const char* key) {
    for (const auto& kv : i.extra)
        if (kv.first == key) return kv.second;
    return "";
}

// "MxNxK", then " A^T" / " B^T" for transposed operands (A·B keeps the key
// it had before transposes were measured).
std::string shape_text(const GemmShape& s) {
    return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + (s.trans_a ? " A^T" : "") +
           (s.trans_b ? " B^T" : "");
}

// The build of `backend`'s plugin, as its file's size and modification time
// ("" when its file cannot be read): a rebuilt or reinstalled plugin may have
// other kernels, which ACCEL_VERSION alone does not tell. Read once per
// backend and process.
std::string plugin_build(const std::string& backend) {
    static std::mutex m;
    static std::map<std::string, std::string> builds;
    std::lock_guard<std::mutex> lock(m);
    const auto it = builds.find(backend);
    if (it != builds.end()) return it->second;
    std::string build;
    struct stat st {};
    const std::string file = backend_plugin_file(backend);
    if (!file.empty() && stat(file.c_str(), &st) == 0)
        build = std::to_string(st.st_size) + " bytes, " + std::to_string(st.st_mtim.tv_sec) + "." +
                std::to_string(st.st_mtim.tv_nsec);
    return builds[backend] = build;
}

// What the measurement depends on: accel's kernels (the version, the
// plugin's build and the tuning record the device runs: its file and
// checksum), the device, its driver, its runtime, the vendor library and
// the shape class.
std::string device_key(const Device& d, const GemmShape& cls) {
    const DeviceInfo& i = d.info();
    // A device without a record keeps the key it had before records existed.
    const std::string tuning = d.tuning_record().empty() ? "" : " | tuning " + info_value(i, "tuning record");
    return std::string("accel ") + ACCEL_VERSION + " | " + i.backend + " plugin " + plugin_build(i.backend) + " | " +
           i.name + " | " + i.driver_version + " | " + i.runtime_version + " | " + info_value(i, "vendor BLAS") +
           " | " + shape_text(cls) + tuning;
}

std::string cache_file() {
    const std::string dir = env::cache_dir();
    return dir.empty() ? "" : dir + "/paths.json";
}

// The file's entries; anything unreadable or malformed counts as absent (the
// file is outside accel's control).
json read_entries(const std::string& file) {
    if (file.empty()) return json::object();
    std::ifstream f(file);
    if (!f) return json::object();
    try {
        json j = json::parse(f);
        if (j.is_object() && j.contains("entries") && j["entries"].is_object()) return j["entries"];
    } catch (const json::exception&) {
    }
    return json::object();
}

std::optional<PathEvidence> from_json(const json& e, const std::string& key) {
    try {
        if (!e.is_object()) return std::nullopt;
        const std::string path = e.at("path").get<std::string>();
        PathEvidence ev;
        ev.native_gflops = e.at("native_gflops").get<double>();
        ev.vendor_gflops = e.at("vendor_gflops").get<double>();
        ev.shape = {e.at("m").get<std::size_t>(), e.at("n").get<std::size_t>(), e.at("k").get<std::size_t>(),
                    e.value("trans_a", false), e.value("trans_b", false)};
        if (path != "native" && path != "vendor") return std::nullopt;
        if (!std::isfinite(ev.native_gflops) || !std::isfinite(ev.vendor_gflops) || ev.native_gflops < 0 ||
            ev.vendor_gflops < 0 || ev.shape.m == 0 || ev.shape.n == 0 || ev.shape.k == 0)
            return std::nullopt;
        ev.path = path == "native" ? OpPath::native : OpPath::vendor;
        ev.key = key;
        ev.source = "recorded in " + cache_file();
        return ev;
    } catch (const json::exception&) {
        return std::nullopt;
    }
}

// Adds the entry to the file (written whole to a temporary, then renamed, so
// a reader never sees half a file). Failures leave the evidence in memory only.
void record(const std::string& file, const PathEvidence& ev) {
    if (file.empty()) return;
    const std::string dir = file.substr(0, file.rfind('/'));
    for (std::size_t at = dir.find('/', 1);; at = dir.find('/', at + 1)) {  // mkdir -p
        ::mkdir(dir.substr(0, at).c_str(), 0755);
        if (at == std::string::npos) break;
    }
    json entries = read_entries(file);
    entries[ev.key] = {{"path", path_name(ev.path)},
                       {"native_gflops", ev.native_gflops},
                       {"vendor_gflops", ev.vendor_gflops},
                       {"m", ev.shape.m},
                       {"n", ev.shape.n},
                       {"k", ev.shape.k},
                       {"trans_a", ev.shape.trans_a},
                       {"trans_b", ev.shape.trans_b}};
    const std::string tmp = file + ".tmp." + std::to_string(::getpid());
    {
        std::ofstream f(tmp);
        if (!f) return;
        f << json{{"version", 2}, {"entries", entries}}.dump(2) << "\n";
        if (!f) {
            std::remove(tmp.c_str());
            return;
        }
    }
    if (std::rename(tmp.c_str(), file.c_str()) != 0) std::remove(tmp.c_str());
}

// Native is taken only when it ran at least this much faster than the vendor
// library: near a tie the library, tuned across sizes, is the safer choice,
// and noise in a short measurement does not flip the decision.
constexpr double kNativeMargin = 1.2;

// matmul at `shape` on both paths (vendor skipped when `with_vendor` is false):
// one untimed run each (vendor libraries compile and tune on first use), then
// `runs` rounds alternating the paths, so that a change in the machine's load
// hits both; the best run of each in GFLOP/s, host clock between
// synchronizations (independent of the device's timer).
std::pair<double, double> measure(const std::shared_ptr<Device>& d, const GemmShape& shape, int runs,
                                  bool with_vendor) {
    // accel's own work, as the tracer's copies are: not the program's calls in
    // a trace or a case file, and not numbered (a run that finds the
    // measurement recorded numbers its calls as one that made it).
    instrument::Quiet quiet;
    const std::size_t m = shape.m, n = shape.n, k = shape.k;
    const Transpose t{shape.trans_a, shape.trans_b};
    Tensor a = Tensor::from_host(d, t.a ? Shape{k, m} : Shape{m, k}, std::vector<float>(m * k, 0.5f));
    Tensor b = Tensor::from_host(d, t.b ? Shape{n, k} : Shape{k, n}, std::vector<float>(k * n, 0.5f));
    Tensor c(d, {m, n});
    auto once = [&](PathChoice p) {
        Options o;
        o.path = p;
        o.deterministic = false;  // measures both paths, whatever the device's mode
        const auto t0 = std::chrono::steady_clock::now();
        matmul(a, b, c, t, o);
        d->synchronize();
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return s > 0 ? 2.0 * double(m) * double(n) * double(k) / s * 1e-9 : 0.0;
    };
    once(PathChoice::native);
    if (with_vendor) once(PathChoice::vendor);
    double native = 0, vendor = 0;
    for (int i = 0; i < runs; ++i) {
        native = std::max(native, once(PathChoice::native));
        if (with_vendor) vendor = std::max(vendor, once(PathChoice::vendor));
    }
    return {native, vendor};
}

// `s` with each dimension at least 1 and the largest halved (m before n
// before k on ties) while m·n·k exceeds kClassMaxVolume.
GemmShape within_volume(GemmShape s) {
    s.m = std::max<std::size_t>(s.m, 1), s.n = std::max<std::size_t>(s.n, 1), s.k = std::max<std::size_t>(s.k, 1);
    while (double(s.m) * double(s.n) * double(s.k) > kClassMaxVolume) {
        std::size_t& largest = s.m >= s.n && s.m >= s.k ? s.m : (s.n >= s.k ? s.n : s.k);
        largest /= 2;
    }
    return s;
}

}  // namespace

GemmShape path_class(GemmShape s) {
    const auto pow2 = [](std::size_t v) {
        if (v <= 1) return std::size_t{1};
        const double e = std::round(std::log2(static_cast<double>(v)));
        return std::size_t{1} << static_cast<int>(std::min(e, 40.0));
    };
    return within_volume({pow2(s.m), pow2(s.n), pow2(s.k), s.trans_a, s.trans_b});
}

std::optional<PathEvidence> recorded_path_evidence(const Device& device, GemmShape shape) {
    std::string file;
    try {
        file = cache_file();
    } catch (const InvalidArgument&) {
        return std::nullopt;  // a bad ACCEL_CACHE_DIR: path_evidence() reports it
    }
    const std::string key = device_key(device, path_class(shape));
    std::lock_guard<std::mutex> lock(evidence_mutex());
    auto it = memory().find({file, key});
    if (it != memory().end()) return it->second;
    const json entries = read_entries(file);
    if (!entries.contains(key)) return std::nullopt;
    auto ev = from_json(entries[key], key);
    if (ev) memory()[{file, key}] = *ev;
    return ev;
}

PathEvidence path_evidence(const Device& device, GemmShape shape) {
    const GemmShape cls = path_class(shape);
    if (!device.kernel_table().supports(Op::matmul, OpPath::vendor))
        return {OpPath::native, 0, 0, {0, 0, 0}, device_key(device, cls), device.selector() + " has no vendor path"};
    if (auto ev = recorded_path_evidence(device, shape)) return *ev;
    const std::string file = cache_file(), key = device_key(device, cls);
    // One measurement at a time: a second thread waits for the first's record.
    std::lock_guard<std::mutex> lock(evidence_mutex());
    auto it = memory().find({file, key});
    if (it != memory().end()) return it->second;
    auto d = std::const_pointer_cast<Device>(device.shared_from_this());
    detail::CaptureSuspended eager;  // the measurement runs now, also when the call that needs it is captured
    PathEvidence ev;
    ev.key = key;
    const double probe_gflops = measure(d, {kProbeN, kProbeN, kProbeN}, 1, false).first;
    const double probe_ms = probe_gflops > 0 ? 2.0 * kProbeN * kProbeN * kProbeN / probe_gflops * 1e-6 : kTooSlowMs;
    if (probe_ms >= kTooSlowMs) {
        ev.path = OpPath::native;
        ev.source = "not measured: matmul " + std::to_string(kProbeN) + "^3 took " + std::to_string(probe_ms) +
                    " ms (a simulator?); native taken";
        memory()[{file, key}] = ev;
        return ev;
    }
    ev.shape = within_volume(shape);  // the call's own sizes: libraries pad N = 30 differently from 32
    std::string vendor_error;
    try {
        std::tie(ev.native_gflops, ev.vendor_gflops) = measure(d, ev.shape, kCalibrationRuns, true);
    } catch (const Error& e) {
        vendor_error = e.what();  // a vendor library that fails is not chosen
        ev.native_gflops = measure(d, ev.shape, kCalibrationRuns, false).first;
        ev.vendor_gflops = 0;
    }
    ev.path = ev.native_gflops >= kNativeMargin * ev.vendor_gflops ? OpPath::native : OpPath::vendor;
    ev.source = vendor_error.empty() ? "measured now" : "measured now; the vendor path failed: " + vendor_error;
    if (vendor_error.empty()) record(file, ev);
    memory()[{file, key}] = ev;
    return ev;
}

OpPath automatic_path(const Device& device, GemmShape shape) {
    std::string file;
    try {
        file = cache_file();
    } catch (const InvalidArgument&) {
        return path_evidence(device, shape).path;  // reports the bad ACCEL_CACHE_DIR
    }
    const GemmShape cls = path_class(shape);
    // Keyed by the device's address; the weak pointer tells an open device
    // from a closed one whose address a newer device may have taken.
    struct Decision {
        std::weak_ptr<const Device> device;
        OpPath path;
    };
    static std::mutex m;
    static std::map<std::tuple<const Device*, std::size_t, std::size_t, std::size_t, bool, bool, std::string>,
                    Decision>
        decisions;
    const auto key = std::make_tuple(&device, cls.m, cls.n, cls.k, cls.trans_a, cls.trans_b, file);
    {
        std::lock_guard<std::mutex> lock(m);
        const auto it = decisions.find(key);
        if (it != decisions.end() && !it->second.device.expired()) return it->second.path;
    }
    const OpPath path = path_evidence(device, shape).path;
    std::lock_guard<std::mutex> lock(m);
    if (decisions.size() >= 1024)  // devices opened and closed again and again: drop the closed ones'
        for (auto it = decisions.begin(); it != decisions.end();)
            it = it->second.device.expired() ? decisions.erase(it) : std::next(it);
    decisions[key] = {device.weak_from_this(), path};
    return path;
}

}  // namespace ops
}  // namespace accel
