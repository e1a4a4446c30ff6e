#include <accel/environment.hpp>
#include <accel/error.hpp>
#include <accel/plugin.hpp>
#include <accel/registry.hpp>

#include "text.hpp"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <exception>
#include <map>
#include <mutex>
#include <sstream>

namespace accel {

namespace {

using detail::echo;

const char* kGrammar =
    "auto | host | opencl[:N] | kokkos[:N] | cuda[:N] (N = device index, 0-based) | "
    "opencl:PLATFORM[:I] (e.g. opencl:pocl, opencl:intel:1) | opencl:gpu|cpu|accelerator | "
    "BACKEND:local (one device per MPI rank; MPI programs only)";

bool all_digits(const std::string& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// A word of a device name: a letter, then [a-z0-9_.-]* (the text is lower-cased already).
bool is_word(const std::string& s) {
    return !s.empty() && std::islower(static_cast<unsigned char>(s[0])) && std::all_of(s.begin(), s.end(), [](unsigned char c) {
        return std::islower(c) || std::isdigit(c) || c == '_' || c == '.' || c == '-';
    });
}

// A probe reporting more devices than this is broken (garbage in the count).
constexpr int kMaxDevices = 4096;

// The directory holding libaccel itself, found through a symbol of ours.
std::string own_directory() {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&own_directory), &info) && info.dli_fname) {
        std::string p = info.dli_fname;
        auto slash = p.rfind('/');
        return slash == std::string::npos ? std::string(".") : p.substr(0, slash);
    }
    return ".";
}

// ACCEL_PLUGIN_PATH's folders (empty entries skipped, as in PATH), then
// libaccel's own. Throws InvalidArgument when an entry is not a folder: a
// mistyped folder must not leave the plugins beside libaccel in use unnoticed.
std::vector<std::string> plugin_dirs() {
    std::vector<std::string> dirs;
    if (const auto env = env::value("ACCEL_PLUGIN_PATH")) {
        std::stringstream ss(*env);
        std::string d;
        while (std::getline(ss, d, ':')) {
            if (d.empty()) continue;
            struct stat st {};
            const bool exists = stat(d.c_str(), &st) == 0;
            if (!exists || !S_ISDIR(st.st_mode))
                env::reject("ACCEL_PLUGIN_PATH", *env,
                            "names '" + echo(d) + "', which " + (exists ? "is not a folder" : "does not exist"));
            dirs.push_back(d);
        }
    }
    dirs.push_back(own_directory());
    return dirs;
}

// What the exception in flight says, whatever its type (plugins are
// untrusted: they may throw anything). Call only inside a catch block.
std::string thrown() {
    try {
        throw;
    } catch (const std::exception& e) {
        return "'" + echo(e.what(), 512) + "'";
    } catch (...) {
        return "a non-standard exception";
    }
}

// One plugin, loaded at most once per process and never unloaded (objects
// of its classes may live until exit).
struct Plugin {
    bool tried = false;
    Backend* backend = nullptr;  // null: unusable, `error` says why
    std::string path;   // loaded file, or the files tried
    std::string error;  // why it cannot be used
};

std::mutex& registry_mutex() {
    static std::mutex m;
    return m;
}

// The OpenBLAS core type for this CPU, or null when the CPU has neither
// AVX-512 (F/BW/DQ/VL) nor AVX2+FMA or is not x86.
const char* openblas_coretype_for_this_cpu() {
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
        return "SkylakeX";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
    return nullptr;
}

std::mutex& coretype_mutex() {
    static std::mutex m;
    return m;
}

std::string& coretype_note() {
    static std::string note;
    return note;
}

// Before the first plugin is loaded (see openblas_coretype_note()); called
// under the registry lock. setenv runs before any plugin can start threads.
// OpenMP's wait policy, before the first plugin (and so libgomp) loads:
// libgomp reads its environment once, when it loads, and by default an idle
// worker spins for up to GOMP_SPINCOUNT = 300000 pause loops (milliseconds)
// before it sleeps. When another process keeps a core busy, the spinning
// worker spends its share of that core waiting, and when work comes it sits
// behind the other process for a scheduler time slice: host ops then took
// ~10-24 ms whatever their size (add 1e5: 11.8 ms, dense 64x784x128: 23.9 ms
// with a busy loop on the other core of 2). 1000 spins — the count libgomp
// itself uses when threads outnumber cores — keeps the idle-machine timings
// (add 1e5: 0.009 ms, dense: 0.10-0.15 ms) and gives 0.05 ms / 0.26 ms under
// the same busy loop. A user's own OMP_WAIT_POLICY or GOMP_SPINCOUNT is
// never changed; an application that already loaded libgomp keeps its own.
void prepare_openmp_environment() {
    if (!std::getenv("OMP_WAIT_POLICY") && !std::getenv("GOMP_SPINCOUNT")) setenv("GOMP_SPINCOUNT", "1000", 0);
}

void prepare_blas_environment() {
    static bool done = false;
    if (done) return;
    done = true;
    prepare_openmp_environment();
    std::string note;
    if (const char* own = std::getenv("OPENBLAS_CORETYPE")) {
        note = std::string("OPENBLAS_CORETYPE=") + own + " from the environment";
    } else if (const char* core = openblas_coretype_for_this_cpu()) {
        if (setenv("OPENBLAS_CORETYPE", core, 0) == 0)
            note = std::string("OPENBLAS_CORETYPE=") + core + " set by accel from the CPU's features";
    }
    // The OpenMP OpenBLAS first (see preferred_openblas_dir()): a plugin that
    // links libopenblas.so.0 or libblas.so.3 (Kokkos Kernels) then gets these,
    // since the dynamic linker reuses a loaded library of the same soname.
    // ACCEL_HOST_BLAS is checked where the host plugin reads it (a bad value
    // fails opening the host device); here any value but openblas only means
    // that OpenBLAS need not come first.
    const auto host_blas = env::value("ACCEL_HOST_BLAS");
    const std::string dir = preferred_openblas_dir();
    if (!dir.empty() && (!host_blas || detail::lower(*host_blas) == "openblas")) {
        bool loaded = true;
        for (const char* lib : {"libopenblas.so.0", "libblas.so.3"})
            loaded = dlopen((dir + "/" + lib).c_str(), RTLD_NOW | RTLD_LOCAL) != nullptr && loaded;
        if (loaded) note += std::string(note.empty() ? "" : "; ") + "OpenMP OpenBLAS of " + dir + " loaded first";
    }
    std::lock_guard<std::mutex> lock(coretype_mutex());
    coretype_note() = note;
}

// Loads the file p.path as the plugin of backend `name` and checks all it
// hands over. On any defect p.error says what was wrong (and what would be
// right) and p.backend stays null; nothing a plugin returns is trusted.
void start_plugin(Plugin& p, const std::string& name) {
    auto fail = [&](const std::string& why) { p.error = "plugin " + p.path + " " + why; };
    void* h = dlopen(p.path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char* e = dlerror();
        return fail(std::string("could not be loaded: ") + (e ? e : "unknown loader error"));
    }
    auto entry = reinterpret_cast<accel_plugin_entry_fn>(dlsym(h, "accel_backend_plugin"));
    if (!entry) return fail("does not export accel_backend_plugin(); it is not an accel plugin");
    const accel_plugin_info* info = nullptr;
    try {
        info = entry();
    } catch (...) {
        return fail("is broken: accel_backend_plugin() threw " + thrown());
    }
    if (!info)
        return fail("is broken: accel_backend_plugin() returned no plugin info (null); "
                    "a plugin returns its accel_plugin_info (ACCEL_DEFINE_PLUGIN)");
    // The ABI first: the other fields are laid out as this ABI says.
    if (info->abi_version != ACCEL_PLUGIN_ABI)
        return fail("was built for plugin ABI " + std::to_string(info->abi_version) + " but this libaccel needs ABI " +
                    std::to_string(ACCEL_PLUGIN_ABI) + "; rebuild the plugin with this accel");
    if (info->kernel_args_size != sizeof(KernelArgs))
        return fail("was built with a KernelArgs of " + std::to_string(info->kernel_args_size) +
                    " bytes but this libaccel's has " + std::to_string(sizeof(KernelArgs)) +
                    " (headers of another accel version); rebuild the plugin with this accel");
    if (!info->backend_name || !*info->backend_name)
        return fail(std::string("names no backend (") + (info->backend_name ? "empty" : "null") +
                    " backend_name); it must name '" + name + "'");
    if (name != info->backend_name)
        return fail("says it implements '" + echo(info->backend_name) + "', not '" + name + "'");
    if (!info->backend)
        return fail("has no backend() function (null in its accel_plugin_info); rebuild it with ACCEL_DEFINE_PLUGIN");
    Backend* backend = nullptr;
    std::string self;
    try {
        backend = info->backend();
        if (!backend) return fail("failed to start: backend() returned null instead of its Backend object");
        self = backend->name();
    } catch (...) {
        return fail(std::string("failed to start: ") + (backend ? "Backend::name()" : "backend()") + " threw " +
                    thrown());
    }
    if (self != name) return fail("is inconsistent: its Backend calls itself '" + echo(self) + "', not '" + name + "'");
    p.backend = backend;
}

Plugin& load_plugin(const std::string& name) {
    static std::map<std::string, Plugin> plugins;
    Plugin& p = plugins[name];
    if (p.tried) return p;
    p.tried = true;
    prepare_blas_environment();
    const std::string file = "libaccel-backend-" + name + ".so";
    std::vector<std::string> dirs;
    try {
        dirs = plugin_dirs();
    } catch (const InvalidArgument& e) {
        p.error = e.what();
        return p;
    }
    std::vector<std::string> tried;
    for (const auto& dir : dirs) {
        std::string full = dir + "/" + file;
        tried.push_back(full);
        if (FILE* f = std::fopen(full.c_str(), "rb")) {
            std::fclose(f);
        } else {
            continue;
        }
        p.path = full;
        start_plugin(p, name);
        return p;
    }
    std::string list;
    for (const auto& t : tried) list += (list.empty() ? "" : ", ") + t;
    p.path = list;
    p.error = "plugin file " + file + " not found (looked for " + list +
              "); accel was built without this backend, or set ACCEL_PLUGIN_PATH to the folder holding it";
    return p;
}

BackendStatus status_locked(const std::string& name) {
    BackendStatus st;
    st.name = name;
    Plugin& p = load_plugin(name);
    st.plugin_path = p.path;
    st.plugin_found = p.backend != nullptr;
    if (!p.backend) {
        st.availability.reason = p.error;
        return st;
    }
    Availability& a = st.availability;
    const std::string self = "plugin " + p.path + ": probe()";
    try {
        a = p.backend->probe();
    } catch (...) {
        a = Availability{};
        a.reason = self + " threw " + thrown() + "; a probe reports failures in Availability::reason";
    }
    if (a.available && a.device_count == 0) {
        a.available = false;
        if (a.reason.empty()) a.reason = "no device found";
    } else if (a.available && (a.device_count < 0 || a.device_count > kMaxDevices)) {
        a.available = false;
        a.reason = self + " reports available with " + std::to_string(a.device_count) + " device(s); a count in 1.." +
                   std::to_string(kMaxDevices) + " is expected";
    }
    if (!a.available) {
        a.device_count = 0;
        a.has_gpu = false;
        if (a.reason.empty()) a.reason = self + " reports unavailable without a reason";
    }
    return st;
}

std::string status_table(const std::vector<BackendStatus>& all) {
    std::string s = "Backends on this machine:";
    for (const auto& st : all) s += "\n  " + st.summary();
    return s;
}

}  // namespace

std::string Selector::to_string() const {
    if (index >= 0) return backend + ":" + std::to_string(index);
    return device.empty() ? backend : backend + ":" + device;
}

const std::vector<std::string>& known_backends() {
    static const std::vector<std::string> names{"cuda", "opencl", "kokkos", "host"};
    return names;
}

Selector parse_selector(const std::string& text) {
    const std::string t = detail::lower(detail::trim(text));
    // The text is echoed once, shortened: it may be anything a user typed.
    auto bad = [&](const std::string& why) {
        throw InvalidArgument("backend selector '" + echo(text) + "' " + why + "; expected " + kGrammar);
    };
    if (t.empty()) bad("is empty");
    if (t.find(',') != std::string::npos)
        bad("is a comma list, one selector per MPI rank, which only an MPI program takes (accel::mpi::resolve; "
            "accel-bench, accel-conformance and mlp_train built with MPI and started by mpirun/srun); a single "
            "process names one device");
    Selector sel;
    auto colon = t.find(':');
    sel.backend = t.substr(0, colon);
    const auto& names = known_backends();
    if (sel.backend != "auto" && std::find(names.begin(), names.end(), sel.backend) == names.end())
        throw InvalidArgument("backend selector names unknown backend '" + echo(sel.backend) + "'; expected " +
                              kGrammar);
    if (colon == std::string::npos) return sel;
    if (sel.backend == "auto" && t.substr(colon + 1) == "local") {
        sel.device = "local";
        return sel;
    }
    if (sel.backend == "auto") bad("gives a device to 'auto', which picks the device itself");
    const std::string rest = t.substr(colon + 1);
    if (all_digits(rest)) {
        if (rest.size() > 6) bad("has a device index above 999999");
        sel.index = std::stoi(rest);
        return sel;
    }
    // A device named otherwise: WORD or WORD:INDEX.
    const auto second = rest.find(':');
    const std::string word = rest.substr(0, second);
    const std::string within = second == std::string::npos ? "" : rest.substr(second + 1);
    if (rest.size() > 64 || !is_word(word) ||
        (second != std::string::npos && (!all_digits(within) || within.size() > 6)))
        bad("names a device neither by index (N, a non-negative whole number) nor as NAME or NAME:I (NAME of "
            "a letter, then letters, digits, '_', '.', '-'; I a non-negative whole number)");
    sel.device = rest;
    return sel;
}

std::string BackendStatus::summary() const {
    if (availability.available)
        return name + ": available, " + std::to_string(availability.device_count) + " device(s)" +
               (availability.has_gpu ? ", GPU" : "");
    return name + ": unavailable — " + availability.reason;
}

std::vector<BackendStatus> backend_statuses() {
    std::lock_guard<std::mutex> lock(registry_mutex());
    std::vector<BackendStatus> all;
    for (const auto& n : known_backends()) all.push_back(status_locked(n));
    return all;
}

namespace {
void require_known_backend(const std::string& name) {
    const auto& names = known_backends();
    if (std::find(names.begin(), names.end(), name) == names.end())
        throw InvalidArgument("unknown backend '" + echo(name) + "'; expected one of cuda, opencl, kokkos, host");
}
}  // namespace

Backend& get_backend(const std::string& name) {
    require_known_backend(name);
    std::lock_guard<std::mutex> lock(registry_mutex());
    Plugin& p = load_plugin(name);
    if (!p.backend) throw BackendUnavailable("backend '" + name + "' cannot be used: " + p.error);
    return *p.backend;
}

std::string backend_plugin_file(const std::string& name) {
    require_known_backend(name);
    std::lock_guard<std::mutex> lock(registry_mutex());
    const Plugin& p = load_plugin(name);
    return p.backend ? p.path : std::string();
}

std::shared_ptr<Device> open_device(const std::string& selector) {
    std::lock_guard<std::mutex> lock(registry_mutex());
    (void)plugin_dirs();  // a bad ACCEL_PLUGIN_PATH is the caller's error, before any plugin's
    std::vector<BackendStatus> all;
    for (const auto& n : known_backends()) all.push_back(status_locked(n));
    Selector sel;
    try {
        sel = parse_selector(selector);
    } catch (const InvalidArgument& e) {
        throw InvalidArgument(std::string(e.what()) + "\n" + status_table(all));
    }

    if (sel.device == "local")
        throw InvalidArgument("backend selector '" + echo(selector) + "' binds each MPI rank to its own device, " +
                              "which needs the rank: it is resolved by the accel_mpi library (accel::mpi::open_local_" +
                              "device) and by accel-bench, accel-conformance and mlp_train when they are built with " +
                              "MPI and started by mpirun/srun. In a single process name the device instead, e.g. '" +
                              sel.backend + (sel.backend == "auto" ? "" : ":0") + "'");
    std::string chosen = sel.backend;
    if (chosen == "auto") {
        chosen = "host";
        for (const auto& st : all)
            if (st.availability.available && st.availability.has_gpu) {
                chosen = st.name;
                break;
            }
    }
    const BackendStatus& st = *std::find_if(all.begin(), all.end(), [&](const BackendStatus& s) { return s.name == chosen; });
    const std::string asked = "backend selector '" + echo(selector) + "'";
    if (!st.availability.available)
        throw BackendUnavailable(asked + ": backend '" + chosen + "' cannot be used: " + st.availability.reason +
                                 "\n" + status_table(all));
    int index = sel.index < 0 ? 0 : sel.index;
    if (sel.backend == "auto" && st.availability.preferred_index > 0 &&
        st.availability.preferred_index < st.availability.device_count)
        index = st.availability.preferred_index;
    Plugin& p = load_plugin(chosen);
    if (!sel.device.empty()) {
        const std::string call = "plugin " + p.path + ": find_device(\"" + sel.device + "\")";
        try {
            index = p.backend->find_device(sel.device);
        } catch (const InvalidArgument& e) {
            throw InvalidArgument(asked + ": " + e.what());
        } catch (const BackendUnavailable& e) {
            throw BackendUnavailable(asked + ": " + e.what() + "\n" + status_table(all));
        } catch (...) {
            throw BackendUnavailable(asked + ": " + call + " threw " + thrown());
        }
        if (index < 0)
            throw BackendUnavailable(asked + ": " + call + " returned the invalid index " + std::to_string(index));
    }
    if (index >= st.availability.device_count)
        throw BackendUnavailable(asked + ": device index " + std::to_string(index) + " is out of range; backend '" +
                                 chosen + "' has " + std::to_string(st.availability.device_count) +
                                 " device(s), indices 0.." + std::to_string(st.availability.device_count - 1) +
                                 "\n" + status_table(all));

    static std::map<std::string, std::weak_ptr<Device>> cache;
    const std::string key = chosen + ":" + std::to_string(index);
    if (auto d = cache[key].lock()) return d;
    const std::string call = "plugin " + p.path + ": create_device(" + std::to_string(index) + ")";
    std::shared_ptr<Device> d;
    try {
        d = p.backend->create_device(index);
    } catch (const Error&) {
        throw;  // the backend's own report (DeviceError, OutOfMemory, ...)
    } catch (...) {
        throw BackendUnavailable(asked + ": " + call + " threw " + thrown());
    }
    if (!d) {
        // A broken plugin: no further use of it, and every status says why.
        p.error = call + " returned null instead of a device";
        p.backend = nullptr;
        for (auto& s : all)
            if (s.name == chosen) s = status_locked(chosen);
        throw BackendUnavailable(asked + ": backend '" + chosen + "' cannot be used: " + p.error + "\n" +
                                 status_table(all));
    }
    cache[key] = d;
    return d;
}

std::string preferred_openblas_dir() {
#if defined(__x86_64__)
    const char* dir = "/usr/lib/x86_64-linux-gnu/openblas-openmp";
#elif defined(__aarch64__)
    const char* dir = "/usr/lib/aarch64-linux-gnu/openblas-openmp";
#else
    const char* dir = nullptr;
#endif
    return dir && access((std::string(dir) + "/libopenblas.so.0").c_str(), R_OK) == 0 ? dir : "";
}

std::string openblas_coretype_note() {
    std::lock_guard<std::mutex> lock(coretype_mutex());
    return coretype_note();
}

int launcher_rank_count() noexcept {
    const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
    const int n = size ? std::atoi(size) : 1;
    return n > 1 ? n : 1;
}

std::string selector_from_env() {
    // Checked where it is parsed: parse_selector(), or accel::mpi::resolve for a comma list.
    return env::value("ACCEL_BACKEND").value_or("auto");
}

std::shared_ptr<Device> default_device() {
    const std::string sel = selector_from_env();
    // open_device's message quotes the selector already.
    try {
        return open_device(sel);
    } catch (const BackendUnavailable& e) {
        throw BackendUnavailable(std::string("ACCEL_BACKEND: ") + e.what());
    } catch (const InvalidArgument& e) {
        // Another variable's error (ACCEL_PLUGIN_PATH, ACCEL_HOST_THREADS, ...) names itself.
        if (std::string(e.what()).rfind("ACCEL_", 0) == 0) throw;
        throw InvalidArgument(std::string("ACCEL_BACKEND: ") + e.what());
    }
}

}  // namespace accel
