// accel/tuning.hpp — tuned kernel parameters: what a tunable kernel is keyed
// by, a parameter set, the shape classes, and the tuning record, the file
// that holds one device's tuned parameters (written by `accel-bench tune`,
// read by libaccel when the device opens).
//
// A record is a JSON file (format "accel-tuning", format_version 1):
//
//   { "format": "accel-tuning", "format_version": 1,
//     "device": { "backend": "opencl", "vendor": "...", "name": "...",
//                 "driver_version": "...", "compute_units": 2 },
//     "written_by": "accel-bench tune ...",
//     "entries": [ { "op": "matmul", "dtype": "f32", "shape_class": "large",
//                    "shape": [1024, 1024, 1024],
//                    "default": { "params": { "bx": 4, ... }, "gflops": 78.1 },
//                    "best":    { "params": { "bx": 8, ... }, "gflops": 121.4 } } ] }
//
// Where records are found (load order; the first usable one is used):
//   1. the cache: <cache_dir()>/tuning/<record_file_name(info)>, written by
//      `accel-bench tune` on this machine;
//   2. the database installed with accel: <libdir>/../share/accel/tuning/
//      <record_file_name(info)> (data/tuning/ in the source tree; the build
//      tree holds a copy at build/<preset>/share/accel/tuning/).
// A file found under a device's name is refused, with a warning on stderr
// naming the file and what is wrong, when it is damaged (not JSON, a field
// missing or of the wrong type, an unknown op, dtype or shape class, a
// parameter set the device does not accept), foreign (another backend,
// vendor, device name or compute-unit count) or stale (another driver
// version or format version); the device then runs its defaults.
#pragma once

#include <accel/dtype.hpp>
#include <accel/op_table.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace accel {

struct DeviceInfo;

/// A tunable kernel: an op (matmul or dense), the dtype of its tensors, and
/// the shape class of its output (gemm_shape_class).
struct TuningKey {
    Op op = Op::matmul;
    DType dtype = DType::f32;
    std::string shape_class;  ///< one of gemm_shape_classes()
    bool operator<(const TuningKey& o) const noexcept;
    bool operator==(const TuningKey& o) const noexcept;
    /// "matmul f32 large". Never throws beyond std::bad_alloc.
    std::string to_string() const;
};

/// One parameter set of a tunable kernel: the backend's own parameter names
/// (OpenCL: "bx", "by", "wm", "wn", "vw", "tk", "ku") → whole numbers.
using TuningParams = std::map<std::string, std::int64_t>;

/// "bx=16 by=16 tk=16 ..." (names in order). Never throws beyond std::bad_alloc.
std::string params_text(const TuningParams& p);

/// How many candidates a key gets at most, the default included, in a quick
/// search (Tuning::candidates with quick = true; accel-bench tune --quick).
constexpr std::size_t kQuickCandidates = 8;

/// A backend's candidates in the order a tuner tries them: `def` (already
/// converted) first, then `others` (the backend's parameter structs P, none
/// equal to the default) nearest first by `distance(candidate)` (a stable
/// sort: ties keep `others`' order), each turned into TuningParams by
/// `to_params`; at most kQuickCandidates in all when `quick`. Thread-safe as
/// its arguments are.
template <class P, class Distance, class ToParams>
std::vector<TuningParams> nearest_first(TuningParams def, std::vector<P> others, Distance distance,
                                        ToParams to_params, bool quick) {
    std::stable_sort(others.begin(), others.end(),
                     [&](const P& a, const P& b) { return distance(a) < distance(b); });
    std::vector<TuningParams> out{std::move(def)};
    for (const P& p : others) {
        if (quick && out.size() >= kQuickCandidates) break;
        out.push_back(to_params(p));
    }
    return out;
}

/// The shape classes of matmul and dense outputs C[rows, cols], in order:
/// "narrow" (cols ≤ 16: an MLP's output layer), "small" (rows·cols ≤ 65536,
/// e.g. 256×256), "large" (the rest). Never throws; thread-safe.
const std::vector<std::string>& gemm_shape_classes() noexcept;

/// The shape class of a matmul/dense output C[rows, cols] (row-major, rows =
/// M, cols = N); depends on the output's shape only, so that the launch
/// geometry follows from it (Device::tile_layout). Never throws.
const std::string& gemm_shape_class(std::size_t rows, std::size_t cols) noexcept;

/// The problem the tuner measures a class on: C[m, n] = A[m, k]·B[k, n] for
/// matmul, y[m, n] = x[m, k]·W[n, k]ᵀ for dense. `quick`: a smaller one.
struct TuningShape {
    std::size_t m = 0, n = 0, k = 0;
};
/// The tuner's shape for `shape_class` (narrow 4096×16×1024, small 256³,
/// large 1024³; quick: 1024×16×256, 128³, 256³). Throws InvalidArgument
/// for an unknown class.
TuningShape tuning_shape(const std::string& shape_class, bool quick);

/// One measured parameter set of a record entry.
struct TunedParams {
    TuningParams params;
    double gflops = 0;  ///< GFLOP/s (2·m·n·k / median time) on the entry's shape
};

/// One entry of a record: the default and the best parameters found for a key.
struct TuningEntry {
    TuningKey key;
    TuningShape shape;  ///< the shape measured
    TunedParams default_params;
    TunedParams best;
};

/// One device's tuning record (the file format above).
struct TuningRecord {
    static constexpr int kFormatVersion = 1;
    std::string backend, vendor, name, driver_version;  ///< DeviceInfo's fields
    int compute_units = 0;
    std::string written_by;  ///< the command that wrote it, for people
    std::vector<TuningEntry> entries;
};

/// The record's identity fields filled from `info` (no entries).
TuningRecord record_for(const DeviceInfo& info);

/// The record as JSON text (the format above), pretty-printed.
std::string record_to_json(const TuningRecord& r);

/// Parses a record's JSON text. Throws InvalidArgument saying what is wrong
/// (not JSON, another format or format_version, a field missing or of the
/// wrong type, an unknown op, dtype or shape class, a key twice).
TuningRecord record_from_json(const std::string& text);

/// Why record `r` does not belong to the device `info` describes, or "" when
/// it does: "foreign: written for ... , this device is ..." (backend,
/// vendor, name or compute units differ) or "stale: written with driver ...,
/// this device has ..." (driver version). Never throws beyond std::bad_alloc.
std::string record_mismatch(const TuningRecord& r, const DeviceInfo& info);

/// The file name of `info`'s record: "<backend>-<vendor>-<name>.json", each
/// part lower-case letters and digits with '-' for every other run of
/// characters, e.g. "opencl-intel-r-corporation-intel-r-xeon-r-cpu-....json".
std::string record_file_name(const DeviceInfo& info);

/// The folders searched for `info`'s record, in order (the file-format
/// comment): the cache's tuning folder (when cache_dir() is set) and the
/// installed database. Throws InvalidArgument for a bad ACCEL_CACHE_DIR.
std::vector<std::string> record_folders();

/// The installed database folder (<libaccel's folder>/../share/accel/tuning).
std::string tuning_database_dir();

/// Writes `r` to `path` whole or not at all (a temporary file renamed over
/// it), its folder created when missing. Throws Error naming the file
/// when it cannot be written (accel::Error).
void write_record(const TuningRecord& r, const std::string& path);

}  // namespace accel
