#include <accel/environment.hpp>
#include <accel/error.hpp>

#include <accel_internal/text.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <mutex>
#include <cstdlib>
#include <stdexcept>

namespace accel {
namespace env {

const std::vector<Variable>& variables() noexcept {
    // The one list of accel's variables; docs/environment.md's table names the same ones.
    static const std::vector<Variable> table{
        {"ACCEL_BACKEND",
         "a backend selector: auto | NAME[:N] for a backend found here | the named forms a backend adds "
         "(accel-info lists them, e.g. opencl:pocl) | BACKEND:local (MPI programs only); MPI programs also take a "
         "comma list, one selector per rank",
         "the device default_device() opens (default auto)"},
        {"ACCEL_PLUGIN_PATH", "colon-separated existing folders",
         "folders searched for backend plugins before libaccel's own folder"},
        {"ACCEL_OP_PATH", "native, vendor or auto (any case)",
         "the path of matmul/dense when a call does not name one (default auto)"},
        {"ACCEL_DETERMINISTIC", "1 (on) or 0 (off)",
         "deterministic mode of every device opened: bitwise-reproducible results, batch-invariant products "
         "(default 0)"},
        {"ACCEL_HOST_BLAS",
         "openblas, blis, or a CBLAS library exporting cblas_sgemm: a path (with a '/') or a file name ending in "
         ".so or .so.N",
         "the host backend's vendor library (default: OpenBLAS, then BLIS, then the system CBLAS)"},
        {"ACCEL_HOST_THREADS", "the number of worker threads",
         "worker threads of the host backend (default: all hardware threads)"},
        {"ACCEL_CUDA_TF32", "1 (TF32 tensor-core sgemm) or 0 (FP32)",
         "whether cuBLAS may use TF32 tensor cores on the vendor path (default 0)"},
        {"ACCEL_VULKAN_COPY", "auto, shader or transfer (any case)",
         "how the Vulkan backend copies device to device: its compute shader, vkCmdCopyBuffer, or auto (default: "
         "the shader on GPUs, vkCmdCopyBuffer on CPU drivers)"},
        {"ACCEL_CACHE_DIR", "a folder (created when missing), not a file",
         "where the auto path's measurements, the tuning records (tuning/) and the Vulkan pipeline cache are kept "
         "(default $XDG_CACHE_HOME/accel, "
         "else ~/.cache/accel)"},
        {"ACCEL_TRACE", "a file to write (its folder must exist)",
         "writes a Chrome trace event file of every op, copy, synchronize and allocation (default: none; "
         "accel/trace.hpp)"},
        {"ACCEL_CHECK", "oracle, or a device selector",
         "runs every kernel call a second time (float64 oracle, or that device) and compares (default: off; "
         "accel/check.hpp)"},
        {"ACCEL_CHECK_MODE", "stop or warn (any case)",
         "what a divergence found by ACCEL_CHECK does: throw accel::CheckFailed (stop, default) or print and go on"},
        {"ACCEL_CHECK_DIR", "an existing folder",
         "where ACCEL_CHECK writes the operands of a diverging call (default: the working folder)"},
        {"ACCEL_TEST_SEED", "a seed", "seed of the conformance suite's random data (default: random, printed)"},
        {"ACCEL_TEST_MAX_WORK", "the most elements or multiply-adds of one case",
         "leaves the conformance suite's larger cases out (default: no limit)"},
        {"ACCEL_STRESS_OPS", "the number of ops", "ops of the reliability suite's stress test (default 10000)"},
        {"ACCEL_TEST_DEVICES", "comma-separated selectors",
         "the devices the transfer tests copy between, every pair (default host)"},
        {"ACCEL_OVERSUBSCRIBE", "1 (ranks may share a device) or 0 (they may not)",
         "under MPI, whether BACKEND:local lets more ranks of a node than devices share them (default 0)"},
        {"ACCEL_RANK_TIMEOUT", "a whole number of seconds in 1..86400",
         "under MPI, how long a rank may make no progress (a row, a test case) before accel-bench and "
         "accel-conformance judge it hung and report without it (default 300)"},
        {"ACCEL_MPI", "1 (an MPI rank) or 0 (not one)",
         "whether the process is an MPI rank (default: detected from mpirun/srun's variables)"},
        {"ACCEL_CUDA_EMULATION_FAULTS", "NAME[@DEVICE]=VALUE entries separated by ; (backends/cuda/emulation/control.h)",
         "faults the CUDA emulation injects, for accel's own tests (default: none)"},
        {"ACCEL_HIP_EMULATION_FAULTS", "NAME[@DEVICE]=VALUE entries separated by ; (backends/cuda/emulation/control.h)",
         "faults and the wavefront width (warp_size=32|64) of the emulated HIP runtime, for accel's own tests "
         "(default: none, wavefront 64)"},
        {"ACCEL_ENV_ALLOW", "comma-separated name prefixes, each starting with ACCEL_",
         "ACCEL_ variables of your own that accel leaves alone; any other ACCEL_ variable accel does not know is an "
         "error naming the closest known one (default: none)"},
    };
    return table;
}

const Variable& variable(const std::string& name) {
    for (const auto& v : variables())
        if (name == v.name) return v;
    throw std::logic_error("accel reads environment variable " + name +
                           ", which is not in accel::env::variables() (core/src/environment.cpp)");
}

namespace {

// ACCEL_ENV_ALLOW's prefixes. Read with getenv, not value(): value() runs
// the check that needs them.
std::vector<std::string> allowed_prefixes() {
    std::vector<std::string> out;
    const char* raw = std::getenv("ACCEL_ENV_ALLOW");
    std::string list = raw ? raw : "";
    std::size_t start = 0;
    while (start <= list.size()) {
        const std::size_t comma = std::min(list.find(',', start), list.size());
        const std::string prefix = detail::trim(list.substr(start, comma - start));
        if (!prefix.empty()) {
            if (prefix.rfind("ACCEL_", 0) != 0 || prefix == "ACCEL_")
                reject("ACCEL_ENV_ALLOW", list,
                       "holds '" + detail::echo(prefix) + "', which is not a prefix longer than ACCEL_ itself");
            out.push_back(prefix);
        }
        start = comma + 1;
    }
    return out;
}

}  // namespace

void check_unknown_variables() {
    const auto allowed = allowed_prefixes();
    for (char** entry = environ; entry && *entry; ++entry) {
        const std::string assignment = *entry;
        if (assignment.rfind("ACCEL_", 0) != 0) continue;
        const std::string name = assignment.substr(0, assignment.find('='));
        bool known = false;
        for (const auto& v : variables()) known = known || name == v.name;
        for (const auto& prefix : allowed) known = known || name.rfind(prefix, 0) == 0;
        if (known) continue;
        std::vector<std::string> names;
        for (const auto& v : variables()) names.push_back(v.name);
        const std::string closest = detail::closest_name(name, names);
        throw InvalidArgument("the environment sets " + detail::echo(name) + ", which is not an accel variable" +
                              (closest.empty() ? std::string() : "; did you mean " + closest + "?") +
                              " (accel-info --env lists accel's variables; a variable of your own under the ACCEL_ "
                              "prefix is left alone when ACCEL_ENV_ALLOW lists its prefix)");
    }
}

std::optional<std::string> value(const char* name) {
    (void)variable(name);
    // The first read checks the whole environment; a failed check is not
    // remembered, so every later read reports it again.
    static std::once_flag checked;
    std::call_once(checked, check_unknown_variables);
    const char* v = std::getenv(name);
    if (!v) return std::nullopt;
    std::string t = detail::trim(v);
    if (t.empty()) return std::nullopt;
    return t;
}

void reject(const char* name, const std::string& value, const std::string& why) {
    throw InvalidArgument(std::string(name) + "='" + detail::echo(value) + "' " + why + "; expected " +
                          variable(name).accepted);
}

std::optional<std::uint64_t> read_uint(const char* name, std::uint64_t lo, std::uint64_t hi) {
    const auto v = value(name);
    if (!v) return std::nullopt;
    const std::string range = "a whole number in " + std::to_string(lo) + ".." + std::to_string(hi);
    const std::string digits = (*v)[0] == '+' ? v->substr(1) : *v;
    bool ok = !digits.empty() && digits.size() <= 20;
    for (char c : digits) ok = ok && c >= '0' && c <= '9';
    std::uint64_t n = 0;
    if (ok) {
        errno = 0;
        char* end = nullptr;
        const unsigned long long parsed = std::strtoull(digits.c_str(), &end, 10);
        ok = errno == 0 && end && *end == '\0';  // ERANGE: past 2^64-1
        n = parsed;
    }
    if (!ok) reject(name, *v, "is not " + range);
    if (n < lo || n > hi) reject(name, *v, "is outside " + std::to_string(lo) + ".." + std::to_string(hi));
    return n;
}

std::optional<std::string> read_word(const char* name, const std::vector<std::string>& words) {
    const auto v = value(name);
    if (!v) return std::nullopt;
    const std::string l = detail::lower(*v);
    for (const auto& w : words)
        if (l == detail::lower(w)) return w;
    reject(name, *v, "is not an accepted value");
}

std::optional<bool> read_flag(const char* name) {
    const auto v = value(name);
    if (!v) return std::nullopt;
    if (*v == "1") return true;
    if (*v == "0") return false;
    reject(name, *v, "is neither 1 nor 0");
}

std::string cache_dir() {
    if (const auto dir = value("ACCEL_CACHE_DIR")) {
        struct stat st {};
        if (stat(dir->c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
            reject("ACCEL_CACHE_DIR", *dir, "names an existing file that is not a folder");
        return *dir;
    }
    auto get = [](const char* n) { const char* v = std::getenv(n); return std::string(v ? v : ""); };
    if (!get("XDG_CACHE_HOME").empty()) return get("XDG_CACHE_HOME") + "/accel";
    if (!get("HOME").empty()) return get("HOME") + "/.cache/accel";
    return "";
}

}  // namespace env
}  // namespace accel
