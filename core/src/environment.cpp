#include <accel/environment.hpp>
#include <accel/error.hpp>

#include <accel_internal/text.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <mutex>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace accel {
namespace env {

namespace {

struct Declared {
    std::mutex mutex;
    std::vector<Variable> list;
};

Declared& declared() {
    static Declared d;  // constructed on first use: owners declare from their static initializers
    return d;
}

bool is_variable_name(const std::string& name) {
    if (name.size() <= 6 || name.rfind("ACCEL_", 0) != 0) return false;
    for (char c : name)
        if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
    return true;
}

const Declaration kCacheDir{{"ACCEL_CACHE_DIR", "a folder (created when missing), not a file",
                             "where the auto path's measurements, the tuning records (tuning/) and a backend's "
                             "compiled-kernel cache are kept (default $XDG_CACHE_HOME/accel, else ~/.cache/accel)",
                             "libaccel"}};
const Declaration kEnvAllow{{"ACCEL_ENV_ALLOW", "comma-separated name prefixes, each starting with ACCEL_",
                             "ACCEL_ variables of your own that accel leaves alone; an ACCEL_ variable nothing in the "
                             "program declares is an error when it is close to a declared one, else a warning "
                             "(default: none)",
                             "libaccel"}};

}  // namespace

void declare(const Variable& v) {
    if (!is_variable_name(v.name))
        throw std::logic_error("accel::env::declare: '" + detail::echo(v.name) +
                               "' is not a variable name: ACCEL_ followed by A-Z, 0-9 and _");
    if (v.accepted.empty() || v.meaning.empty() || v.owner.empty())
        throw std::logic_error("accel::env::declare: " + v.name + " needs its accepted values, meaning and owner");
    Declared& d = declared();
    std::lock_guard<std::mutex> lock(d.mutex);
    for (const auto& old : d.list) {
        if (old.name != v.name) continue;
        if (old.accepted == v.accepted && old.meaning == v.meaning && old.owner == v.owner) return;
        throw std::logic_error("accel::env::declare: " + v.name + " is declared by " + old.owner +
                               " and again, with other texts, by " + v.owner);
    }
    d.list.push_back(v);
}

std::vector<Variable> variables() {
    Declared& d = declared();
    std::lock_guard<std::mutex> lock(d.mutex);
    return d.list;
}

namespace {
// The declaration of `name` in d (its lock held); throws std::logic_error when there is none.
const Variable& declared_locked(const Declared& d, const std::string& name) {
    for (const auto& v : d.list)
        if (name == v.name) return v;
    throw std::logic_error("accel reads environment variable " + name +
                           ", which nothing declared (accel::env::declare, accel/environment.hpp)");
}
}  // namespace

Variable variable(const std::string& name) {
    Declared& d = declared();
    std::lock_guard<std::mutex> lock(d.mutex);
    return declared_locked(d, name);
}

namespace {

// ACCEL_ENV_ALLOW's prefixes. Read with getenv: the check that needs them
// runs before any declared reader.
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

void check_unknown_variables(const std::vector<std::string>& backends_not_loaded) {
    const auto allowed = allowed_prefixes();
    std::vector<std::string> names;
    for (const auto& v : variables()) names.push_back(v.name);
    for (char** entry = environ; entry && *entry; ++entry) {
        const std::string assignment = *entry;
        if (assignment.rfind("ACCEL_", 0) != 0) continue;
        const std::string name = assignment.substr(0, assignment.find('='));
        bool known = std::find(names.begin(), names.end(), name) != names.end();
        for (const auto& prefix : allowed) known = known || name.rfind(prefix, 0) == 0;
        if (known) continue;
        const std::string closest = accel::closest_name(name, names);
        if (!closest.empty())
            throw InvalidArgument(detail::echo(name) + " (set in the environment) is not an accel variable; did you "
                                  "mean " + closest +
                                  "? (accel-info --env lists accel's variables; a variable of your own under the "
                                  "ACCEL_ prefix is left alone when ACCEL_ENV_ALLOW lists its prefix)");
        static std::mutex warned_mutex;
        static std::vector<std::string> warned;
        std::lock_guard<std::mutex> lock(warned_mutex);
        if (std::find(warned.begin(), warned.end(), name) != warned.end()) continue;
        warned.push_back(name);
        const std::string unloaded = detail::join(backends_not_loaded);
        std::fprintf(stderr,
                     "accel: warning: the environment sets %s, which nothing in this program reads (accel-info --env "
                     "lists what libaccel and the plugins read%s%s); ACCEL_ENV_ALLOW=%s leaves it alone\n",
                     detail::echo(name).c_str(), unloaded.empty() ? "" : "; plugins that did not load: ",
                     unloaded.c_str(), detail::echo(name).c_str());
    }
}

std::optional<std::string> value(const char* name) {
    {
        Declared& d = declared();
        std::lock_guard<std::mutex> lock(d.mutex);
        (void)declared_locked(d, name);  // no copy: read per call by some readers
    }
    return undeclared_value(name);
}

std::optional<std::string> undeclared_value(const char* name) {
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
        // Checked once per value: the automatic path asks at every matmul and
        // dense, and a system call per op costs small models a share of each step.
        static std::mutex checked_mutex;
        static std::string checked;
        {
            std::lock_guard<std::mutex> lock(checked_mutex);
            if (checked == *dir) return *dir;
        }
        struct stat st {};
        if (stat(dir->c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
            reject("ACCEL_CACHE_DIR", *dir, "names an existing file that is not a folder");
        std::lock_guard<std::mutex> lock(checked_mutex);
        checked = *dir;
        return *dir;
    }
    auto get = [](const char* n) { const char* v = std::getenv(n); return std::string(v ? v : ""); };
    if (!get("XDG_CACHE_HOME").empty()) return get("XDG_CACHE_HOME") + "/accel";
    if (!get("HOME").empty()) return get("HOME") + "/.cache/accel";
    return "";
}

}  // namespace env
}  // namespace accel
