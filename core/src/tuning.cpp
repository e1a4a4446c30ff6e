// Tuning records (accel/tuning.hpp): the JSON format, the identity checks,
// where records are found, and Device::load_tuning_record.
#include <accel/device.hpp>
#include <accel/environment.hpp>
#include <accel/error.hpp>
#include <accel/tuning.hpp>

#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include <dlfcn.h>
#include <unistd.h>

namespace accel {

bool TuningKey::operator<(const TuningKey& o) const noexcept {
    return std::tie(op, dtype, shape_class) < std::tie(o.op, o.dtype, o.shape_class);
}
bool TuningKey::operator==(const TuningKey& o) const noexcept {
    return op == o.op && dtype == o.dtype && shape_class == o.shape_class;
}
std::string TuningKey::to_string() const {
    return std::string(op_name(op)) + " " + dtype_name(dtype) + " " + shape_class;
}

std::string params_text(const TuningParams& p) {
    std::string s;
    for (const auto& [name, value] : p) s += (s.empty() ? "" : " ") + name + "=" + std::to_string(value);
    return s;
}

std::string Tuning::describe(const TuningKey&, const TuningParams& p) const { return params_text(p); }

const std::vector<std::string>& gemm_shape_classes() noexcept {
    static const std::vector<std::string> classes{"narrow", "small", "large"};
    return classes;
}

const std::string& gemm_shape_class(std::size_t rows, std::size_t cols) noexcept {
    const auto& c = gemm_shape_classes();
    if (cols <= 16) return c[0];
    if (rows * cols <= 65536) return c[1];
    return c[2];
}

TuningShape tuning_shape(const std::string& shape_class, bool quick) {
    if (shape_class == "narrow") return quick ? TuningShape{1024, 16, 256} : TuningShape{4096, 16, 1024};
    if (shape_class == "small") return quick ? TuningShape{128, 128, 128} : TuningShape{256, 256, 256};
    if (shape_class == "large") return quick ? TuningShape{256, 256, 256} : TuningShape{1024, 1024, 1024};
    throw InvalidArgument("tuning_shape: unknown shape class '" + shape_class + "'; expected narrow, small or large");
}

TuningRecord record_for(const DeviceInfo& info) {
    TuningRecord r;
    r.backend = info.backend;
    r.vendor = info.vendor;
    r.name = info.name;
    r.driver_version = info.driver_version;
    r.compute_units = info.compute_units;
    return r;
}

namespace {

using nlohmann::json;

json params_json(const TunedParams& t) {
    json p = json::object();
    for (const auto& [name, value] : t.params) p[name] = value;
    return json{{"params", p}, {"gflops", t.gflops}};
}

// The value of `key` in object `o` of JSON type `type`, else InvalidArgument naming `where`.
const json& field(const json& o, const char* key, json::value_t type, const std::string& where) {
    const auto it = o.find(key);
    if (it == o.end()) throw InvalidArgument(where + " has no \"" + key + "\"");
    const bool number = type == json::value_t::number_float;
    const bool ok = number ? it->is_number() : (type == json::value_t::number_unsigned ? it->is_number_integer() : it->type() == type);
    if (!ok) throw InvalidArgument(where + ": \"" + key + "\" is " + it->type_name() + ", of the wrong type");
    return *it;
}

TunedParams params_from(const json& o, const std::string& where) {
    if (!o.is_object()) throw InvalidArgument(where + " is not an object");
    TunedParams t;
    const json& p = field(o, "params", json::value_t::object, where);
    for (auto it = p.begin(); it != p.end(); ++it) {
        if (!it->is_number_integer())
            throw InvalidArgument(where + ": parameter \"" + it.key() + "\" is not a whole number");
        t.params[it.key()] = it->get<std::int64_t>();
    }
    t.gflops = field(o, "gflops", json::value_t::number_float, where).get<double>();
    if (!(t.gflops >= 0)) throw InvalidArgument(where + ": \"gflops\" is negative");
    return t;
}

Op op_from(const std::string& name, const std::string& where) {
    if (name == op_name(Op::matmul)) return Op::matmul;
    if (name == op_name(Op::dense)) return Op::dense;
    throw InvalidArgument(where + ": op '" + name + "' is not tunable; expected matmul or dense");
}

DType dtype_from(const std::string& name, const std::string& where) {
    for (DType t : {DType::f32, DType::f64, DType::f16, DType::bf16})
        if (name == dtype_name(t)) return t;
    throw InvalidArgument(where + ": dtype '" + name + "' is unknown; expected f32, f64, f16 or bf16");
}

// One run of letters and digits per word, lower-case, joined by '-'.
std::string slug(const std::string& s) {
    std::string out;
    bool dash = false;
    for (unsigned char c : s) {
        if (std::isalnum(c)) {
            if (dash && !out.empty()) out += '-';
            out += static_cast<char>(std::tolower(c));
            dash = false;
        } else {
            dash = true;
        }
    }
    return out.empty() ? "unnamed" : out;
}

std::string own_library_dir() {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&own_library_dir), &info) && info.dli_fname) {
        const std::string p = info.dli_fname;
        const auto slash = p.rfind('/');
        return slash == std::string::npos ? std::string(".") : p.substr(0, slash);
    }
    return ".";
}

}  // namespace

std::string record_to_json(const TuningRecord& r) {
    json entries = json::array();
    for (const TuningEntry& e : r.entries)
        entries.push_back(json{{"op", op_name(e.key.op)},
                               {"dtype", dtype_name(e.key.dtype)},
                               {"shape_class", e.key.shape_class},
                               {"shape", {e.shape.m, e.shape.n, e.shape.k}},
                               {"default", params_json(e.default_params)},
                               {"best", params_json(e.best)}});
    const json doc{{"format", "accel-tuning"},
                   {"format_version", TuningRecord::kFormatVersion},
                   {"device",
                    {{"backend", r.backend},
                     {"vendor", r.vendor},
                     {"name", r.name},
                     {"driver_version", r.driver_version},
                     {"compute_units", r.compute_units}}},
                   {"written_by", r.written_by},
                   {"entries", entries}};
    return doc.dump(2) + "\n";
}

TuningRecord record_from_json(const std::string& text) {
    json doc;
    try {
        doc = json::parse(text);
    } catch (const json::exception& e) {
        throw InvalidArgument(std::string("damaged: not JSON (") + e.what() + ")");
    }
    try {
        if (!doc.is_object()) throw InvalidArgument("the document is not a JSON object");
        const std::string format = field(doc, "format", json::value_t::string, "the record").get<std::string>();
        if (format != "accel-tuning")
            throw InvalidArgument("\"format\" is '" + format + "', not 'accel-tuning'");
        const auto version = field(doc, "format_version", json::value_t::number_unsigned, "the record").get<std::int64_t>();
        if (version != TuningRecord::kFormatVersion)
            throw InvalidArgument("stale: format_version " + std::to_string(version) + ", this accel reads " +
                                  std::to_string(TuningRecord::kFormatVersion) + " (tune again)");
        TuningRecord r;
        const json& d = field(doc, "device", json::value_t::object, "the record");
        r.backend = field(d, "backend", json::value_t::string, "\"device\"").get<std::string>();
        r.vendor = field(d, "vendor", json::value_t::string, "\"device\"").get<std::string>();
        r.name = field(d, "name", json::value_t::string, "\"device\"").get<std::string>();
        r.driver_version = field(d, "driver_version", json::value_t::string, "\"device\"").get<std::string>();
        r.compute_units = field(d, "compute_units", json::value_t::number_unsigned, "\"device\"").get<int>();
        if (doc.contains("written_by") && doc["written_by"].is_string()) r.written_by = doc["written_by"].get<std::string>();
        const json& entries = field(doc, "entries", json::value_t::array, "the record");
        for (std::size_t i = 0; i < entries.size(); ++i) {
            const std::string where = "entry " + std::to_string(i);
            const json& e = entries[i];
            if (!e.is_object()) throw InvalidArgument(where + " is not an object");
            TuningEntry t;
            t.key.op = op_from(field(e, "op", json::value_t::string, where).get<std::string>(), where);
            t.key.dtype = dtype_from(field(e, "dtype", json::value_t::string, where).get<std::string>(), where);
            t.key.shape_class = field(e, "shape_class", json::value_t::string, where).get<std::string>();
            bool known = false;
            for (const auto& c : gemm_shape_classes()) known |= c == t.key.shape_class;
            if (!known)
                throw InvalidArgument(where + ": shape class '" + t.key.shape_class +
                                      "' is unknown; expected narrow, small or large");
            const json& shape = field(e, "shape", json::value_t::array, where);
            if (shape.size() != 3 || !shape[0].is_number_unsigned() || !shape[1].is_number_unsigned() ||
                !shape[2].is_number_unsigned())
                throw InvalidArgument(where + ": \"shape\" is not [m, n, k] of whole numbers");
            t.shape = {shape[0].get<std::size_t>(), shape[1].get<std::size_t>(), shape[2].get<std::size_t>()};
            t.default_params = params_from(field(e, "default", json::value_t::object, where), where + " \"default\"");
            t.best = params_from(field(e, "best", json::value_t::object, where), where + " \"best\"");
            for (const TuningEntry& earlier : r.entries)
                if (earlier.key == t.key) throw InvalidArgument(where + ": " + t.key.to_string() + " a second time");
            r.entries.push_back(std::move(t));
        }
        return r;
    } catch (const InvalidArgument& e) {
        const std::string what = e.what();
        throw InvalidArgument(what.rfind("stale", 0) == 0 ? what : "damaged: " + what);
    } catch (const json::exception& e) {
        throw InvalidArgument(std::string("damaged: ") + e.what());
    }
}

std::string record_mismatch(const TuningRecord& r, const DeviceInfo& info) {
    const auto who = [](const std::string& backend, const std::string& vendor, const std::string& name, int cu) {
        return backend + " '" + name + "' of '" + vendor + "' with " + std::to_string(cu) + " compute units";
    };
    if (r.backend != info.backend || r.vendor != info.vendor || r.name != info.name ||
        r.compute_units != info.compute_units)
        return "foreign: written for " + who(r.backend, r.vendor, r.name, r.compute_units) + ", this device is " +
               who(info.backend, info.vendor, info.name, info.compute_units);
    if (r.driver_version != info.driver_version)
        return "stale: written with driver version '" + r.driver_version + "', this device has '" +
               info.driver_version + "' (tune again: accel-bench tune)";
    return "";
}

std::string record_file_name(const DeviceInfo& info) {
    return slug(info.backend) + "-" + slug(info.vendor) + "-" + slug(info.name) + ".json";
}

std::string tuning_database_dir() {
    return (std::filesystem::path(own_library_dir()) / ACCEL_TUNING_FROM_LIBDIR).lexically_normal().string();
}

std::vector<std::string> record_folders() {
    std::vector<std::string> folders;
    const std::string cache = env::cache_dir();
    if (!cache.empty()) folders.push_back((std::filesystem::path(cache) / "tuning").string());
    folders.push_back(tuning_database_dir());
    return folders;
}

void write_record(const TuningRecord& r, const std::string& path) {
    const std::string text = record_to_json(r);
    std::error_code ec;
    const auto parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << text;
        out.close();
        if (!out) {
            std::remove(tmp.c_str());
            throw Error("writing the tuning record " + path + " failed (could not write " + tmp + ")");
        }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::remove(tmp.c_str());
        throw Error("writing the tuning record " + path + " failed (could not rename " + tmp + " over it)");
    }
}

void Device::load_tuning_record() {
    tuning_record_.clear();
    Tuning* t = tuning();
    std::string state;
    if (!t) {
        state = "none: nothing to tune on this backend";
    } else {
        t->reset_params();
        std::vector<std::string> folders;
        std::string problem;
        try {
            folders = record_folders();
        } catch (const Error& e) {
            problem = std::string("cache not read (") + e.what() + "); ";
            folders = {tuning_database_dir()};
        }
        const std::string file = record_file_name(info_);
        for (const std::string& folder : folders) {
            const std::string path = (std::filesystem::path(folder) / file).string();
            std::ifstream in(path, std::ios::binary);
            if (!in) continue;
            std::ostringstream text;
            text << in.rdbuf();
            std::string why;
            try {
                const TuningRecord r = record_from_json(text.str());
                why = record_mismatch(r, info_);
                if (why.empty()) {
                    // Every entry is checked before any is set: a record is used whole or not at all.
                    const std::vector<TuningKey> keys = t->tunable();
                    for (const TuningEntry& e : r.entries) {
                        bool known = false;
                        for (const TuningKey& k : keys) known |= k == e.key;
                        if (!known) throw InvalidArgument("damaged: " + e.key.to_string() + " is not tunable on this device");
                    }
                    try {
                        for (const TuningEntry& e : r.entries) t->set_params(e.key, e.best.params);
                    } catch (const InvalidArgument& e) {
                        t->reset_params();
                        throw InvalidArgument(std::string("damaged: ") + e.what());
                    }
                    tuning_record_ = path;
                    // The checksum tells two contents of one file apart (the auto path's key).
                    std::uint64_t h = 1469598103934665603ull;
                    for (unsigned char c : text.str()) h = (h ^ c) * 1099511628211ull;
                    char sum[17];
                    std::snprintf(sum, sizeof sum, "%016llx", static_cast<unsigned long long>(h));
                    state = path + " (" + std::to_string(r.entries.size()) + " entries, FNV-1a " + sum + ")";
                    break;
                }
            } catch (const InvalidArgument& e) {
                why = e.what();
            }
            std::fprintf(stderr, "accel: warning: tuning record %s refused for %s (%s): %s; using the defaults\n",
                         path.c_str(), selector().c_str(), info_.name.c_str(), why.c_str());
            problem += path + " refused (" + why.substr(0, why.find(':')) + "); ";
        }
        if (tuning_record_.empty()) state = problem + "none: the defaults (no usable " + file + " in " + [&] {
            std::string list;
            for (const auto& f : folders) list += (list.empty() ? "" : ", ") + f;
            return list;
        }() + ")";
        else if (!problem.empty()) state = problem + state;
    }
    for (auto& [key, value] : info_.extra)
        if (key == "tuning record") {
            value = state;
            return;
        }
    info_.extra.push_back({"tuning record", state});
}

}  // namespace accel
