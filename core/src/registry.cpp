// The registry: finds backend plugins, checks what they hand over, and opens
// devices by selector (see accel/registry.hpp).
#include <accel/environment.hpp>
#include <accel/error.hpp>
#include <accel/plugin.hpp>
#include <accel/registry.hpp>

#include "cpu_libraries.hpp"
#include <accel_internal/instrument.hpp>
#include <accel_internal/text.hpp>

#include <dirent.h>
#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <exception>
#include <map>
#include <mutex>
#include <sstream>

namespace accel {

namespace {

using detail::echo;
using detail::join;

const env::Declaration kBackendVariable{
    {"ACCEL_BACKEND",
     "a backend selector: auto | NAME[:N] for a backend found here | the named forms a backend adds (accel-info lists "
     "them, such as NAME:PLATFORM) | BACKEND:local (MPI programs only); MPI programs also take a comma list, one selector "
     "per rank",
     "the device default_device() opens (default auto)", "libaccel"}};
const env::Declaration kPluginPathVariable{{"ACCEL_PLUGIN_PATH", "colon-separated existing folders",
                                            "folders searched for backend plugins before libaccel's own folder",
                                            "libaccel"}};
const env::Declaration kDeterministicVariable{
    {"ACCEL_DETERMINISTIC", "1 (on) or 0 (off)",
     "deterministic mode of every device opened: bitwise-reproducible results, batch-invariant products (default 0)",
     "libaccel"}};

const std::string kFilePrefix = "libaccel-backend-";
const std::string kFileSuffix = ".so";
constexpr std::size_t kMaxNameLength = 32;
constexpr std::size_t kMaxFormsLength = 400;
constexpr int kMaxAutoRank = 1000;
// A probe reporting more devices than this is broken (garbage in the count).
constexpr int kMaxDevices = 4096;

bool all_digits(const std::string& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// A word of a device name: a letter, then [a-z0-9_.-]* (the text is lower-cased already).
bool is_word(const std::string& s) {
    return !s.empty() && std::islower(static_cast<unsigned char>(s[0])) && std::all_of(s.begin(), s.end(), [](unsigned char c) {
        return std::islower(c) || std::isdigit(c) || c == '_' || c == '.' || c == '-';
    });
}

// Why `name` cannot name a backend, or "" when it can (accel_plugin_info::backend_name).
std::string backend_name_defect(const std::string& name) {
    const bool word = !name.empty() && name.size() <= kMaxNameLength && std::islower(static_cast<unsigned char>(name[0])) &&
                      std::all_of(name.begin(), name.end(), [](unsigned char c) { return std::islower(c) || std::isdigit(c) || c == '_'; });
    if (!word)
        return "'" + echo(name) + "' is not a backend name (a lower-case letter, then lower-case letters, digits or "
               "'_', at most " + std::to_string(kMaxNameLength) + " characters)";
    if (name == "auto" || name == "all")
        return "'" + name + "' is reserved (selectors and accel-bench use it for every backend or the automatic choice)";
    return "";
}

// Why Availability::named_only of backend `backend` is malformed ("" when it
// is not): each entry must be a selector BACKEND:DEVICE[:I] of that backend
// naming the device by a word (see is_word), at most kMaxDevices of them.
std::string named_only_defect(const std::vector<std::string>& named_only, const std::string& backend) {
    if (named_only.size() > static_cast<std::size_t>(kMaxDevices))
        return "list of " + std::to_string(named_only.size()) + " entries; at most " + std::to_string(kMaxDevices) +
               " are expected";
    for (const auto& selector : named_only) {
        const std::string rest = selector.rfind(backend + ":", 0) == 0 ? selector.substr(backend.size() + 1) : "";
        const auto colon = rest.find(':');
        const bool ok = rest.size() <= 64 && is_word(rest.substr(0, colon)) &&
                        (colon == std::string::npos || all_digits(rest.substr(colon + 1)));
        if (!ok)
            return "'" + echo(selector) + "'; expected " + backend + ":DEVICE[:I] (DEVICE a lower-case word, I an index)";
    }
    return "";
}

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

// ACCEL_PLUGIN_PATH's folders (empty entries skipped, as in PATH). Throws
// InvalidArgument when an entry is not a folder: a mistyped folder must not
// leave the plugins beside libaccel in use unnoticed.
std::vector<std::string> env_plugin_dirs() {
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

// One backend's plugin file, loaded at most once per process and never
// unloaded (objects of its classes may live until exit).
struct Plugin {
    std::string name;                   // from the file name
    std::string path;                   // the file used
    std::vector<std::string> shadowed;  // same-named files beside libaccel that `path` replaces
    bool tried = false;                 // loaded (or failed to) already
    Backend* backend = nullptr;         // null: unusable, `error` says why
    std::string error;
    std::string selector_forms;
    int auto_rank = 0;
    bool auto_cpu_fallback = false;
};

// What the search of the plugin folders found: once per process.
struct Found {
    bool done = false;
    std::vector<std::string> dirs;          // searched, in order
    std::string path_error;                 // a bad ACCEL_PLUGIN_PATH ("" when fine)
    std::map<std::string, Plugin> plugins;  // by backend name, in name order
};

std::mutex& registry_mutex() {
    static std::mutex m;
    return m;
}

std::string real_path(const std::string& p) {
    char buf[PATH_MAX];
    return realpath(p.c_str(), buf) ? std::string(buf) : p;
}

// The plugin files of one folder, in name order: name -> full path.
std::map<std::string, std::string> plugin_files(const std::string& dir) {
    std::map<std::string, std::string> files;
    DIR* d = opendir(dir.c_str());
    if (!d) return files;
    while (const dirent* e = readdir(d)) {
        const std::string f = e->d_name;
        if (f.size() <= kFilePrefix.size() + kFileSuffix.size() || f.compare(0, kFilePrefix.size(), kFilePrefix) != 0 ||
            f.compare(f.size() - kFileSuffix.size(), kFileSuffix.size(), kFileSuffix) != 0)
            continue;
        files[f.substr(kFilePrefix.size(), f.size() - kFilePrefix.size() - kFileSuffix.size())] = dir + "/" + f;
    }
    closedir(d);
    return files;
}

// Searches ACCEL_PLUGIN_PATH's folders, then libaccel's own, for
// libaccel-backend-NAME.so. A plugin in ACCEL_PLUGIN_PATH replaces one of
// the same name beside libaccel (how a user tries another build); the same
// name in two ACCEL_PLUGIN_PATH folders is ambiguous and refused, naming
// both files. Called under the registry lock.
Found& found_locked() {
    static Found f;
    if (f.done) return f;
    f.done = true;
    std::vector<std::string> env_dirs;
    try {
        env_dirs = env_plugin_dirs();
    } catch (const InvalidArgument& e) {
        f.path_error = e.what();
    }
    f.dirs = env_dirs;
    f.dirs.push_back(own_directory());
    std::map<std::string, std::string> seen_real;  // name -> real path of the file used
    for (std::size_t i = 0; i < f.dirs.size(); ++i) {
        const bool from_env = i < env_dirs.size();
        for (const auto& [name, path] : plugin_files(f.dirs[i])) {
            auto it = f.plugins.find(name);
            if (it == f.plugins.end()) {
                Plugin& p = f.plugins[name];
                p.name = name;
                p.path = path;
                seen_real[name] = real_path(path);
                if (!f.path_error.empty()) p.error = f.path_error;
                const std::string defect = backend_name_defect(name);
                if (!defect.empty()) p.error = "plugin " + path + ": its file name gives the backend name " + defect;
                continue;
            }
            if (real_path(path) == seen_real[name]) continue;  // one folder listed twice
            Plugin& p = it->second;
            if (from_env && p.error.empty())
                p.error = "two plugins for backend '" + name + "' in ACCEL_PLUGIN_PATH: " + p.path + " and " + path +
                          "; remove one, or leave one of the folders out of ACCEL_PLUGIN_PATH";
            else if (!from_env)
                p.shadowed.push_back(path);
        }
    }
    return f;
}

std::string searched(const Found& f) {
    std::string list;
    for (const auto& d : f.dirs) list += (list.empty() ? "" : ", ") + d;
    return list;
}

// "unknown backend 'hots'; did you mean host?", then the backends found and
// where plugins were looked for (the name alone is echoed: it is all of the
// text that matters).
std::string unknown_backend_message(const std::string& name, const Found& f) {
    std::vector<std::string> names;
    for (const auto& entry : f.plugins) names.push_back(entry.first);
    const std::string closest = accel::closest_name(name, names);
    return "unknown backend '" + echo(name) + "'" + (closest.empty() ? "" : "; did you mean " + closest + "?") +
           "\nbackends found: " + (names.empty() ? "none" : detail::join(names)) + ", and auto (no " + kFilePrefix +
           echo(name) + kFileSuffix + " in " + searched(f) + "; ACCEL_PLUGIN_PATH adds folders)";
}

// Checks the optional fields of a plugin's info; "" when they are fine.
std::string info_defect(const accel_plugin_info& info) {
    if (info.selector_forms) {
        std::size_t n = 0;  // read within the first kMaxFormsLength + 1 bytes only
        while (n <= kMaxFormsLength && info.selector_forms[n]) ++n;
        if (n > kMaxFormsLength)
            return "has selector_forms longer than " + std::to_string(kMaxFormsLength) + " characters";
        for (std::size_t i = 0; i < n; ++i)
            if (info.selector_forms[i] < 0x20 || info.selector_forms[i] > 0x7e)
                return "has selector_forms with a character that is not printable ASCII";
    }
    if (info.auto_rank < 0 || info.auto_rank > kMaxAutoRank)
        return "has auto_rank " + std::to_string(info.auto_rank) + "; 0.." + std::to_string(kMaxAutoRank) +
               " is expected";
    if (info.auto_cpu_fallback != 0 && info.auto_cpu_fallback != 1)
        return "has auto_cpu_fallback " + std::to_string(info.auto_cpu_fallback) + "; 0 or 1 is expected";
    return "";
}

// Loads the file p.path as the plugin of backend p.name and checks all it
// hands over. On any defect p.error says what was wrong (and what would be
// right) and p.backend stays null; nothing a plugin returns is trusted.
void start_plugin(Plugin& p) {
    const std::string& name = p.name;
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
                    " backend_name); it must name '" + name + "', as its file name does");
    if (name != info->backend_name)
        return fail("says it implements '" + echo(info->backend_name) + "', not '" + name +
                    "' as its file name says; name the file libaccel-backend-" + echo(info->backend_name) + ".so");
    const std::string defect = info_defect(*info);
    if (!defect.empty()) return fail(defect);
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
    p.selector_forms = info->selector_forms ? info->selector_forms : "";
    p.auto_rank = info->auto_rank;
    p.auto_cpu_fallback = info->auto_cpu_fallback == 1;
    p.backend = backend;
}

// The plugin of backend `name` (loaded on first use), or nullptr when no
// plugin file has that name.
Plugin* load_plugin(const std::string& name) {
    Found& f = found_locked();
    auto it = f.plugins.find(name);
    if (it == f.plugins.end()) return nullptr;
    Plugin& p = it->second;
    if (p.tried) return &p;
    p.tried = true;
    if (!p.error.empty()) return &p;
    detail::prepare_cpu_libraries();
    start_plugin(p);
    return &p;
}

BackendStatus status_locked(Plugin& p) {
    BackendStatus st;
    st.name = p.name;
    load_plugin(p.name);
    st.plugin_path = p.path;
    st.shadowed = p.shadowed;
    st.plugin_found = p.backend != nullptr;
    if (!p.backend) {
        st.availability.reason = p.error;
        return st;
    }
    st.selector_forms = p.selector_forms;
    st.auto_rank = p.auto_rank;
    st.auto_cpu_fallback = p.auto_cpu_fallback;
    Availability& a = st.availability;
    const std::string self = "plugin " + p.path + ": probe()";
    try {
        a = p.backend->probe();
    } catch (const std::exception& e) {
        // The one place a failed probe becomes a reason (Backend::probe's contract).
        a = Availability{};
        a.reason = p.name + ": " + echo(e.what(), 512);
    } catch (...) {
        a = Availability{};
        a.reason = self + " threw a non-standard exception; a probe throws std::exception or reports in "
                          "Availability::reason";
    }
    const std::string bad_name = named_only_defect(a.named_only, p.name);
    if (a.available && a.device_count == 0 && a.named_only.empty()) {
        a.available = false;
        if (a.reason.empty()) a.reason = "no device found";
    } else if (a.available && (a.device_count < 0 || a.device_count > kMaxDevices)) {
        a.available = false;
        a.reason = self + " reports available with " + std::to_string(a.device_count) + " device(s); a count in 1.." +
                   std::to_string(kMaxDevices) + " is expected";
    } else if (a.available && !bad_name.empty()) {
        a.available = false;
        a.reason = self + " reports a device opened only by name " + bad_name;
    }
    if (!a.available) {
        a.named_only.clear();
        a.device_count = 0;
        a.has_gpu = false;
        if (a.reason.empty()) a.reason = self + " reports unavailable without a reason";
    }
    return st;
}

// Every plugin tried, then the environment checked against the variables
// they and libaccel declared.
std::vector<BackendStatus> statuses_locked() {
    std::vector<BackendStatus> all;
    std::vector<std::string> not_loaded;
    for (auto& entry : found_locked().plugins) {
        all.push_back(status_locked(entry.second));
        if (!entry.second.backend) not_loaded.push_back(entry.first);
    }
    env::check_unknown_variables(not_loaded);
    return all;
}

std::string status_table(const std::vector<BackendStatus>& all) {
    std::string s = "Backends on this machine:";
    for (const auto& st : all) s += "\n  " + st.summary();
    if (all.empty()) s += " none (no libaccel-backend-NAME.so in " + searched(found_locked()) + ")";
    return s;
}

// The accepted selector forms, from the plugins found (loads them, for the
// forms each adds). Called under the registry lock.
std::string grammar_locked() {
    std::string names, forms;
    for (auto& entry : found_locked().plugins) {
        Plugin& p = *load_plugin(entry.first);
        names += (names.empty() ? "" : " | ") + p.name + "[:N]";
        if (p.backend && !p.selector_forms.empty()) forms += " | " + p.selector_forms;
    }
    return "auto" + (names.empty() ? std::string() : " | " + names + " (N = device index, 0-based)") + forms +
           " | BACKEND:local (one device per MPI rank; MPI programs only)";
}

Selector parse_selector_locked(const std::string& text) {
    const std::string t = detail::lower(detail::trim(text));
    // The text is echoed once, shortened: it may be anything a user typed.
    auto bad = [&](const std::string& why) {
        throw InvalidArgument("backend selector '" + echo(text) + "' " + why + "; expected " + grammar_locked());
    };
    if (t.empty()) bad("is empty");
    if (t.find(',') != std::string::npos)
        bad("is a comma list, one selector per MPI rank, which only an MPI program takes (accel::mpi::resolve; "
            "accel-bench, accel-conformance and mlp_train built with MPI and started by mpirun/srun); a single "
            "process names one device");
    Selector sel;
    auto colon = t.find(':');
    sel.backend = t.substr(0, colon);
    const Found& f = found_locked();
    if (sel.backend != "auto" && !f.plugins.count(sel.backend)) {
        if (!backend_name_defect(sel.backend).empty())
            bad("does not start with a backend name (a lower-case letter, then lower-case letters, digits or '_')");
        throw InvalidArgument("backend selector names " + unknown_backend_message(sel.backend, f));
    }
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

Plugin& require_known_backend(const std::string& name) {
    Found& f = found_locked();
    Plugin* p = load_plugin(name);
    if (!p) throw InvalidArgument(unknown_backend_message(name, f));
    return *p;
}

// The index on backend `st` that `sel` names (by index, by a name its
// find_device resolves, or auto's preferred device), checked against the
// device count.
int device_index_locked(const Selector& sel, const BackendStatus& st, Plugin& p, const std::string& asked,
                        const std::vector<BackendStatus>& all) {
    int index = sel.index < 0 ? 0 : sel.index;
    const Availability& a = st.availability;
    if (sel.backend == "auto" && a.preferred_index > 0 && a.preferred_index < a.device_count) index = a.preferred_index;
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
    // A device opened only by name lies past the indexed ones.
    const int named = sel.device.empty() ? 0 : static_cast<int>(a.named_only.size());
    if (index >= a.device_count + named) {
        const std::string only_by_name = join(a.named_only);
        throw BackendUnavailable(asked + ": device index " + std::to_string(index) + " is out of range; backend '" +
                                 st.name + "' has " + std::to_string(a.device_count) + " device(s), indices 0.." +
                                 std::to_string(a.device_count - 1) +
                                 (only_by_name.empty() ? std::string()
                                                       : " (and, opened only by name, " + only_by_name + ")") +
                                 "\n" + status_table(all));
    }
    return index;
}

// Device `index` of backend `p`, created once and shared while it lives.
std::shared_ptr<Device> create_device_locked(Plugin& p, int index, const std::string& asked,
                                             std::vector<BackendStatus>& all) {
    static std::map<std::string, std::weak_ptr<Device>> cache;
    const std::string key = p.name + ":" + std::to_string(index);
    if (auto d = cache[key].lock()) return d;
    const std::string call = "plugin " + p.path + ": create_device(" + std::to_string(index) + ")";
    const bool deterministic = env::read_flag("ACCEL_DETERMINISTIC").value_or(false);  // a bad value: before the device exists
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
            if (s.name == p.name) s = status_locked(p);
        throw BackendUnavailable(asked + ": backend '" + p.name + "' cannot be used: " + p.error + "\n" +
                                 status_table(all));
    }
    d->set_deterministic(deterministic);
    d->load_tuning_record();
    cache[key] = d;
    return d;
}

}  // namespace

std::string Selector::to_string() const {
    if (index >= 0) return backend + ":" + std::to_string(index);
    return device.empty() ? backend : backend + ":" + device;
}

std::vector<std::string> known_backends() {
    std::lock_guard<std::mutex> lock(registry_mutex());
    std::vector<std::string> names;
    for (const auto& entry : found_locked().plugins) names.push_back(entry.first);
    return names;
}

std::vector<std::string> plugin_folders() {
    std::lock_guard<std::mutex> lock(registry_mutex());
    return found_locked().dirs;
}

std::string selector_grammar() {
    std::lock_guard<std::mutex> lock(registry_mutex());
    return grammar_locked();
}

Selector parse_selector(const std::string& text) {
    std::lock_guard<std::mutex> lock(registry_mutex());
    return parse_selector_locked(text);
}

std::string BackendStatus::summary() const {
    if (availability.available)
        return name + ": available, " + std::to_string(availability.device_count) + " device(s)" +
               (availability.has_gpu ? ", GPU" : "") +
               (availability.named_only.empty() ? std::string()
                                                : " (and, opened only by name, " + join(availability.named_only) + ")");
    return name + ": unavailable — " + availability.reason;
}

std::vector<BackendStatus> backend_statuses() {
    std::lock_guard<std::mutex> lock(registry_mutex());
    return statuses_locked();
}

std::string auto_backend(const std::vector<BackendStatus>& all) {
    const BackendStatus* best = nullptr;
    auto consider = [&](bool gpu) {
        for (const auto& st : all) {
            if (!st.availability.available) continue;
            const bool fits = gpu ? st.availability.has_gpu && st.auto_rank > 0 : st.auto_cpu_fallback;
            if (fits && (!best || st.auto_rank > best->auto_rank)) best = &st;
        }
    };
    consider(true);
    if (!best) consider(false);
    return best ? best->name : std::string();
}

Backend& get_backend(const std::string& name) {
    std::lock_guard<std::mutex> lock(registry_mutex());
    Plugin& p = require_known_backend(name);
    if (!p.backend) throw BackendUnavailable("backend '" + name + "' cannot be used: " + p.error);
    return *p.backend;
}

std::string backend_plugin_file(const std::string& name) {
    std::lock_guard<std::mutex> lock(registry_mutex());
    const Plugin& p = require_known_backend(name);
    return p.backend ? p.path : std::string();
}

std::shared_ptr<Device> open_device(const std::string& selector) {
    instrument::start_from_environment();  // ACCEL_TRACE, ACCEL_CHECK: before the lock (the check may open a device)
    std::lock_guard<std::mutex> lock(registry_mutex());
    const Found& f = found_locked();
    if (!f.path_error.empty()) throw InvalidArgument(f.path_error);  // the caller's error, before any plugin's
    std::vector<BackendStatus> all = statuses_locked();
    Selector sel;
    try {
        sel = parse_selector_locked(selector);
    } catch (const InvalidArgument& e) {
        throw InvalidArgument(std::string(e.what()) + "\n" + status_table(all));
    }
    if (sel.device == "local")
        throw InvalidArgument("backend selector '" + echo(selector) + "' binds each MPI rank to its own device, " +
                              "which needs the rank: it is resolved by the accel_mpi library (accel::mpi::open_local_" +
                              "device) and by accel-bench, accel-conformance and mlp_train when they are built with " +
                              "MPI and started by mpirun/srun. In a single process name the device instead, e.g. '" +
                              sel.backend + (sel.backend == "auto" ? "" : ":0") + "'");
    const std::string asked = "backend selector '" + echo(selector) + "'";
    std::string chosen = sel.backend;
    if (chosen == "auto") {
        chosen = auto_backend(all);
        if (chosen.empty())
            throw BackendUnavailable(asked + ": no available backend reports a GPU or opens the CPU when none does "
                                     "(the host backend)\n" + status_table(all));
    }
    const BackendStatus& st = *std::find_if(all.begin(), all.end(), [&](const BackendStatus& s) { return s.name == chosen; });
    if (!st.availability.available)
        throw BackendUnavailable(asked + ": backend '" + chosen + "' cannot be used: " + st.availability.reason +
                                 "\n" + status_table(all));
    Plugin& p = *load_plugin(chosen);
    const int index = device_index_locked(sel, st, p, asked, all);
    return create_device_locked(p, index, asked, all);
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
