#include <accel/error.hpp>
#include <accel/plugin.hpp>
#include <accel/registry.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>

namespace accel {

namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

std::string trim(const std::string& s) {
    auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return "";
    auto e = s.find_last_not_of(" \t\r\n");
    return s.substr(b, e - b + 1);
}

const char* kGrammar = "auto | host | opencl[:N] | kokkos[:N] | cuda[:N] (N = device index, 0-based)";

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

std::vector<std::string> plugin_dirs() {
    std::vector<std::string> dirs;
    if (const char* env = std::getenv("ACCEL_PLUGIN_PATH")) {
        std::stringstream ss(env);
        std::string d;
        while (std::getline(ss, d, ':'))
            if (!d.empty()) dirs.push_back(d);
    }
    dirs.push_back(own_directory());
    return dirs;
}

// One plugin, loaded at most once per process and never unloaded (objects
// of its classes may live until exit).
struct Plugin {
    bool tried = false;
    Backend* backend = nullptr;
    std::string path;   // loaded file, or the files tried
    std::string error;  // why it could not be loaded
};

std::mutex& registry_mutex() {
    static std::mutex m;
    return m;
}

Plugin& load_plugin(const std::string& name) {
    static std::map<std::string, Plugin> plugins;
    Plugin& p = plugins[name];
    if (p.tried) return p;
    p.tried = true;
    const std::string file = "libaccel-backend-" + name + ".so";
    std::vector<std::string> tried;
    for (const auto& dir : plugin_dirs()) {
        std::string full = dir + "/" + file;
        tried.push_back(full);
        if (FILE* f = std::fopen(full.c_str(), "rb")) {
            std::fclose(f);
        } else {
            continue;
        }
        p.path = full;
        void* h = dlopen(full.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            const char* e = dlerror();
            p.error = "plugin " + full + " could not be loaded: " + (e ? e : "unknown loader error");
            return p;
        }
        auto entry = reinterpret_cast<accel_plugin_entry_fn>(dlsym(h, "accel_backend_plugin"));
        if (!entry) {
            p.error = "plugin " + full + " does not export accel_backend_plugin(); it is not an accel plugin";
            return p;
        }
        const accel_plugin_info* info = entry();
        if (!info || info->abi_version != ACCEL_PLUGIN_ABI) {
            p.error = "plugin " + full + " was built for plugin ABI " +
                      std::to_string(info ? info->abi_version : -1) + " but this libaccel needs ABI " +
                      std::to_string(ACCEL_PLUGIN_ABI) + "; rebuild the plugin with this accel";
            return p;
        }
        if (name != info->backend_name) {
            p.error = "plugin " + full + " says it implements '" + info->backend_name + "', not '" + name + "'";
            return p;
        }
        try {
            p.backend = info->backend();
        } catch (const std::exception& e) {
            p.error = "plugin " + full + " failed to start: " + e.what();
        }
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
    try {
        st.availability = p.backend->probe();
    } catch (const std::exception& e) {
        st.availability = Availability{};
        st.availability.reason = std::string("probe failed: ") + e.what();
    }
    if (st.availability.available && st.availability.device_count == 0) {
        st.availability.available = false;
        if (st.availability.reason.empty()) st.availability.reason = "no device found";
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
    return index < 0 ? backend : backend + ":" + std::to_string(index);
}

const std::vector<std::string>& known_backends() {
    static const std::vector<std::string> names{"cuda", "opencl", "kokkos", "host"};
    return names;
}

Selector parse_selector(const std::string& text) {
    const std::string t = lower(trim(text));
    auto bad = [&](const std::string& why) {
        throw InvalidArgument("backend selector '" + text + "' " + why + "; expected " + kGrammar);
    };
    if (t.empty()) bad("is empty");
    Selector sel;
    auto colon = t.find(':');
    sel.backend = t.substr(0, colon);
    const auto& names = known_backends();
    if (sel.backend != "auto" && std::find(names.begin(), names.end(), sel.backend) == names.end())
        bad("names unknown backend '" + sel.backend + "'");
    if (colon == std::string::npos) return sel;
    if (sel.backend == "auto") bad("gives a device index to 'auto', which picks the device itself");
    const std::string idx = t.substr(colon + 1);
    if (idx.empty() || idx.size() > 6 || !std::all_of(idx.begin(), idx.end(), [](unsigned char c) { return std::isdigit(c); }))
        bad("has device index '" + idx + "', which is not a non-negative whole number");
    sel.index = std::stoi(idx);
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

Backend& get_backend(const std::string& name) {
    const auto& names = known_backends();
    if (std::find(names.begin(), names.end(), name) == names.end())
        throw InvalidArgument("unknown backend '" + name + "'; expected one of cuda, opencl, kokkos, host");
    std::lock_guard<std::mutex> lock(registry_mutex());
    Plugin& p = load_plugin(name);
    if (!p.backend) throw BackendUnavailable("backend '" + name + "' cannot be used: " + p.error);
    return *p.backend;
}

std::shared_ptr<Device> open_device(const std::string& selector) {
    std::lock_guard<std::mutex> lock(registry_mutex());
    std::vector<BackendStatus> all;
    for (const auto& n : known_backends()) all.push_back(status_locked(n));
    Selector sel;
    try {
        sel = parse_selector(selector);
    } catch (const InvalidArgument& e) {
        throw InvalidArgument(std::string(e.what()) + "\n" + status_table(all));
    }

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
    const std::string asked = "backend selector '" + selector + "'";
    if (!st.availability.available)
        throw BackendUnavailable(asked + ": backend '" + chosen + "' cannot be used: " + st.availability.reason +
                                 "\n" + status_table(all));
    const int index = sel.index < 0 ? 0 : sel.index;
    if (index >= st.availability.device_count)
        throw BackendUnavailable(asked + ": device index " + std::to_string(index) + " is out of range; backend '" +
                                 chosen + "' has " + std::to_string(st.availability.device_count) +
                                 " device(s), indices 0.." + std::to_string(st.availability.device_count - 1) +
                                 "\n" + status_table(all));

    static std::map<std::string, std::weak_ptr<Device>> cache;
    const std::string key = chosen + ":" + std::to_string(index);
    if (auto d = cache[key].lock()) return d;
    std::shared_ptr<Device> d = load_plugin(chosen).backend->create_device(index);
    cache[key] = d;
    return d;
}

std::string selector_from_env() {
    const char* env = std::getenv("ACCEL_BACKEND");
    return (env && *trim(env).c_str()) ? std::string(env) : std::string("auto");
}

std::shared_ptr<Device> default_device() {
    const std::string sel = selector_from_env();
    try {
        return open_device(sel);
    } catch (const BackendUnavailable& e) {
        throw BackendUnavailable(std::string("ACCEL_BACKEND=") + sel + ": " + e.what());
    }
}

}  // namespace accel
