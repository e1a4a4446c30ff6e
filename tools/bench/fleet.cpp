#include "fleet.hpp"

#include "report.hpp"

#include <accel/version.hpp>

#ifdef ACCEL_HAVE_MPI
#include <accel/mpi.hpp>
#endif

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>
#include <set>
#include <tuple>

namespace bench {
namespace {

using nlohmann::json;

std::string str(const json& j, const char* key) {
    return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// A device of the document: its rank and selector.
using DeviceKey = std::pair<int, std::string>;

int rank_of(const json& j) { return j.contains("rank") && j["rank"].is_number_integer() ? j["rank"].get<int>() : 0; }

// What a row measures, the same on every device: op, shape, path, block.
std::string row_key(const json& row) {
    for (const char* k : {"op", "shape", "path"})
        if (!row.contains(k) || !row[k].is_string())
            throw std::runtime_error(std::string("a row lacks \"") + k + "\"; expected rows of `accel-bench run`");
    std::string key = op_text(row) + " " + str(row, "shape") + " " + str(row, "path");
    if (!row.value("default_geometry", true)) key += " block " + str(row, "block");
    return key;
}

double kernel_ms(const json& row) {
    if (!row.contains("kernel_ms") || !row["kernel_ms"].is_object()) return 0;
    const json& ms = row["kernel_ms"];
    return ms.contains("median") && ms["median"].is_number() ? ms["median"].get<double>() : 0;
}


struct Scores {
    std::vector<FleetDevice> devices;
    // Per row key: device → kernel ms; and the row's best and median.
    std::map<std::string, std::map<DeviceKey, double>> times;
};

Scores score(const json& doc) {
    Scores s;
    std::map<DeviceKey, std::size_t> index;
    auto device = [&](const DeviceKey& k) -> FleetDevice& {
        auto it = index.find(k);
        if (it != index.end()) return s.devices[it->second];
        index[k] = s.devices.size();
        s.devices.push_back(FleetDevice{});
        s.devices.back().rank = k.first;
        s.devices.back().selector = k.second;
        return s.devices.back();
    };
    if (doc.contains("devices") && doc["devices"].is_array())
        for (const auto& d : doc["devices"]) {
            FleetDevice& f = device({rank_of(d), str(d, "selector")});
            f.host = str(d, "host").empty() && doc.contains("machine") ? str(doc["machine"], "hostname") : str(d, "host");
            f.name = str(d, "name");
            f.backend = str(d, "backend");
            f.uuid = str(d, "uuid");
            f.pci_bus_id = str(d, "pci_bus_id");
            f.copy_gbps = figure_or_zero(d, "copy_gbps");
            f.peak_gflops = figure_or_zero(d, "peak_fma_gflops");
            f.error = str(d, "ceiling_error");
        }
    if (doc.contains("fleet") && doc["fleet"].contains("ranks") && doc["fleet"]["ranks"].is_array())
        for (const auto& r : doc["fleet"]["ranks"])
            if (!str(r, "error").empty()) {
                FleetDevice& f = device({rank_of(r), str(r, "selector")});
                f.host = str(r, "host");
                f.error = str(r, "error");
                f.lost = str(r, "lost");
            }
    for (const auto& row : doc["rows"]) {
        const DeviceKey k{rank_of(row), str(row, "selector")};
        FleetDevice& f = device(k);
        if (f.name.empty()) f.name = str(row, "device");
        if (f.backend.empty()) f.backend = str(row, "backend");
        if (f.host.empty()) f.host = str(row, "host");
        const double ms = kernel_ms(row);
        if (ms > 0) s.times[row_key(row)][k] = ms;
    }
    for (auto& f : s.devices) {
        const DeviceKey me{f.rank, f.selector};
        double log_best = 0, log_median = 0, log_sib = 0;
        int n = 0, n_sib = 0;
        std::set<DeviceKey> siblings;
        for (const auto& g : s.devices)
            if (!(g.rank == f.rank && g.selector == f.selector) && g.backend == f.backend && g.name == f.name &&
                !f.name.empty())
                siblings.insert({g.rank, g.selector});
        f.siblings = static_cast<int>(siblings.size());
        for (const auto& [key, per_device] : s.times) {
            auto it = per_device.find(me);
            if (it == per_device.end()) continue;
            std::vector<double> all, others;
            for (const auto& [dk, ms] : per_device) {
                all.push_back(ms);
                if (siblings.count(dk)) others.push_back(ms);
            }
            log_best += std::log(it->second / *std::min_element(all.begin(), all.end()));
            log_median += std::log(it->second / median(all));
            ++n;
            if (!others.empty()) {
                log_sib += std::log(it->second / median(others));
                ++n_sib;
            }
        }
        f.rows = n;
        f.vs_best = n ? std::exp(log_best / n) : 0;
        f.vs_median = n ? std::exp(log_median / n) : 0;
        f.vs_siblings = n_sib ? std::exp(log_sib / n_sib) : 0;
        f.outlier = n_sib > 0 && f.vs_siblings > kOutlierRatio;
    }
    std::sort(s.devices.begin(), s.devices.end(), [](const FleetDevice& a, const FleetDevice& b) {
        return std::tie(a.rank, a.selector) < std::tie(b.rank, b.selector);
    });
    return s;
}

std::string upper(std::string t) {
    for (char& c : t) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return t;
}

std::string identity(const FleetDevice& f) {
    if (!f.uuid.empty()) return f.uuid;
    if (!f.pci_bus_id.empty()) return "pci " + f.pci_bus_id;
    return "-";
}

std::string rule_text() {
    return format("outlier: a device whose kernel time is more than %.0f %% above the median of the other devices "
                  "with the same backend and name (geometric mean over the rows they share)",
                  (kOutlierRatio - 1) * 100);
}

}  // namespace

std::vector<FleetDevice> analyze_fleet(const json& doc) { return score(doc).devices; }

void write_fleet_table(std::ostream& out, const json& doc) {
    const Scores s = score(doc);
    std::set<std::string> hosts;
    for (const auto& f : s.devices) hosts.insert(f.host);
    out << "accel-bench fleet: " << s.devices.size() << " device(s) on " << hosts.size() << " host(s)";
    if (doc.contains("accel_version")) out << ", accel " << str(doc, "accel_version");
    out << "\nx best / x median: kernel time over the fleet's best / median for the same op, shape and path "
           "(geometric mean over the device's rows; 1.00 = as fast as the best)\n"
        << "x siblings: the same against the median of the other devices with the same backend and name\n\n";
    TextTable dev({"rank", "host", "device", "name", "UUID / PCI", "copy GB/s", "peak GFLOP/s", "rows", "x best",
                   "x median", "x siblings", "status"},
                  5);
    for (const auto& f : s.devices) {
        std::string status = !f.lost.empty() ? f.lost : !f.error.empty() ? "error" : f.outlier ? "OUTLIER" : "ok";
        dev.add({std::to_string(f.rank), f.host, f.selector, f.name.size() > 30 ? f.name.substr(0, 29) + "~" : f.name,
                 identity(f), f.copy_gbps > 0 ? num(f.copy_gbps) : "-", f.peak_gflops > 0 ? num(f.peak_gflops) : "-",
                 std::to_string(f.rows), f.rows ? format("%.2f", f.vs_best) : "-",
                 f.rows ? format("%.2f", f.vs_median) : "-",
                 f.siblings ? format("%.2f (%d)", f.vs_siblings, f.siblings) : "-", status});
    }
    dev.write(out);
    out << "\n";

    std::map<DeviceKey, const FleetDevice*> by_key;
    for (const auto& f : s.devices) by_key[{f.rank, f.selector}] = &f;
    TextTable rows({"op shape path", "rank", "host", "device", "kernel ms", "GB/s", "GFLOP/s", "x best", "x median"}, 4);
    std::map<std::pair<std::string, DeviceKey>, const json*> row_of;
    for (const auto& row : doc["rows"]) row_of[{row_key(row), {rank_of(row), str(row, "selector")}}] = &row;
    for (const auto& [key, per_device] : s.times) {
        std::vector<double> all;
        for (const auto& kv : per_device) all.push_back(kv.second);
        const double best = *std::min_element(all.begin(), all.end()), med = median(all);
        for (const auto& [dk, ms] : per_device) {
            const json& row = *row_of[{key, dk}];
            const FleetDevice* f = by_key[dk];
            rows.add({key, std::to_string(dk.first), f ? f->host : "", dk.second, num(ms),
                      row.contains("gbps") ? num(row["gbps"].get<double>()) : "",
                      row.contains("gflops") ? num(row["gflops"].get<double>()) : "", format("%.2f", ms / best),
                      format("%.2f", ms / med)});
        }
    }
    rows.write(out);
    out << "\n" << rule_text() << "\n";
    bool any_siblings = false;
    for (const auto& f : s.devices) {
        any_siblings |= f.siblings > 0;
        if (f.outlier)
            out << format("OUTLIER: rank %d on host %s, %s (%s): %.2fx the kernel time of its %d same-named "
                          "sibling(s) (%.0f %% slower)\n",
                          f.rank, f.host.c_str(), f.selector.c_str(), f.name.c_str(), f.vs_siblings, f.siblings,
                          (f.vs_siblings - 1) * 100);
        if (!f.error.empty())
            out << (f.lost.empty() ? std::string("ERROR") : upper(f.lost)) << ": rank " << f.rank << " on host "
                << f.host << ", " << f.selector << ": " << f.error << "\n";
    }
    if (!any_siblings) out << "no outlier check: no two devices of the fleet share a backend and name\n";
}

int fleet_command(const FleetArgs& a) {
    const json doc = read_results(a.file);
    write_fleet_table(std::cout, doc);
    for (const auto& f : analyze_fleet(doc))
        if (f.outlier) return 1;
    return 0;
}

// ---- MPI -------------------------------------------------------------------

#ifdef ACCEL_HAVE_MPI

struct FleetScope::Impl {
    accel::mpi::Session session;
    // MPI_THREAD_MULTIPLE: the rank watchdog's heartbeat thread (fleet_run).
    Impl(int* argc, char*** argv) : session(argc, argv, MPI_THREAD_MULTIPLE) {}
};

namespace {
bool g_active = false;
int g_rank = 0;
}  // namespace

FleetScope::FleetScope(int* argc, char*** argv) {
    if (!accel::mpi::launched_by_mpi()) return;
    impl_ = std::make_unique<Impl>(argc, argv);
    g_active = true;
    g_rank = impl_->session.rank();
}
FleetScope::~FleetScope() { g_active = false; }
bool FleetScope::active() noexcept { return g_active; }
int FleetScope::rank() noexcept { return g_rank; }

namespace {

// Rank 0: the fleet report of every rank's record (its rank, host,
// selector, error and accel-bench result): devices and rows tagged with rank,
// host and device identity, the ranks' entries, and the outliers. A lost
// rank (no record) gets an entry from its watchdog identity, with "lost"
// (timeout or died) and the reason as its error. `failed` is set when a row
// failed or a rank reported an error or was lost.
json merge_fleet_records(const accel::mpi::Watchdog::Gathered& g, const Machine& m, bool& failed) {
    json doc;
    doc["accel_version"] = ACCEL_VERSION;
    doc["machine"] = {{"cpu", m.cpu}, {"os", m.os}, {"hostname", m.hostname}};
    doc["fleet"] = {{"ranks", json::array()}, {"outlier_rule", rule_text()}};
    doc["devices"] = json::array();
    doc["rows"] = json::array();
    doc["notes"] = json::array();
    doc["unavailable"] = json::array();
    std::vector<std::string> selectors;
    std::set<std::string> hosts;
    for (std::size_t rank = 0; rank < g.records.size(); ++rank) {
        if (g.fates[rank] != accel::mpi::RankFate::delivered) {
            const json who = json::parse(g.identities[rank]);
            selectors.push_back(str(who, "selector"));
            hosts.insert(str(who, "host"));
            doc["fleet"]["ranks"].push_back({{"rank", static_cast<int>(rank)},
                                             {"host", who["host"]},
                                             {"requested", who["requested"]},
                                             {"selector", who["selector"]},
                                             {"device", ""},
                                             {"uuid", ""},
                                             {"pci_bus_id", ""},
                                             {"lost", accel::mpi::fate_name(g.fates[rank])},
                                             {"error", g.reasons[rank] + "; its rows are lost"}});
            failed = true;
            continue;
        }
        json rec = json::parse(g.records[rank]);
        const json& res = rec["result"];
        if (!doc.contains("settings")) doc["settings"] = res["settings"];
        selectors.push_back(str(rec, "selector"));
        hosts.insert(str(rec, "host"));
        json id{{"uuid", ""}, {"pci_bus_id", ""}, {"device", ""}};
        for (json d : res["devices"]) {
            d["rank"] = rec["rank"];
            d["host"] = rec["host"];
            id = {{"uuid", d.value("uuid", "")}, {"pci_bus_id", d.value("pci_bus_id", "")},
                  {"device", d.value("name", "")}};
            doc["devices"].push_back(d);
        }
        for (json row : res["rows"]) {
            row["rank"] = rec["rank"];
            row["host"] = rec["host"];
            row["uuid"] = id["uuid"];
            row["pci_bus_id"] = id["pci_bus_id"];
            if (!row.value("pass", false)) failed = true;
            doc["rows"].push_back(row);
        }
        for (const auto& n : res["notes"])
            doc["notes"].push_back("rank " + std::to_string(rec["rank"].get<int>()) + ": " + n.get<std::string>());
        for (const auto& u : res["unavailable"]) doc["unavailable"].push_back(u);
        json entry{{"rank", rec["rank"]},          {"host", rec["host"]},
                   {"requested", rec["requested"]}, {"selector", rec["selector"]},
                   {"device", id["device"]},        {"uuid", id["uuid"]},
                   {"pci_bus_id", id["pci_bus_id"]}};
        if (rec.contains("shares_device")) entry["shares_device"] = true;
        if (!str(rec, "error").empty()) {
            entry["error"] = rec["error"];
            failed = true;
        }
        doc["fleet"]["ranks"].push_back(entry);
    }
    doc["settings"]["selectors"] = selectors;
    doc["fleet"]["hosts"] = std::vector<std::string>(hosts.begin(), hosts.end());
    json outliers = json::array();
    for (const auto& f : analyze_fleet(doc))
        if (f.outlier)
            outliers.push_back({{"rank", f.rank}, {"host", f.host}, {"selector", f.selector}, {"device", f.name},
                                {"x_siblings", f.vs_siblings}, {"siblings", f.siblings}});
    doc["fleet"]["outliers"] = outliers;
    return doc;
}

// Rank 0: the report to stdout or `output` (table or json) and to
// `json_output`, each file written whole or not at all. A write error is
// reported, not thrown (every rank must reach the broadcast): false then.
bool write_fleet_outputs(const json& doc, std::size_t ranks, const std::string& format, const std::string& output,
                         const std::string& json_output) {
    bool ok = true;
    auto write = [&](const std::string& path, bool json_format) {
        try {
            tool_cli::AtomicFile file(path);
            if (json_format) file.stream() << doc.dump(2) << "\n";
            else write_fleet_table(file.stream(), doc);
            file.commit();
            return true;
        } catch (const std::exception& e) {
            std::cerr << "accel-bench: " << e.what() << "\n";
            ok = false;
            return false;
        }
    };
    if (output.empty()) {
        if (format == "json") std::cout << doc.dump(2) << "\n";
        else write_fleet_table(std::cout, doc);
    } else {
        write(output, format == "json");
    }
    if (!json_output.empty() && write(json_output, true))
        std::cerr << "wrote " << doc["rows"].size() << " rows of " << ranks << " ranks to " << json_output << "\n";
    return ok;
}

// Rank 0: one stderr line per rank that failed and per row that failed.
void report_fleet_failures(const json& doc) {
    for (const auto& e : doc["fleet"]["ranks"])
        if (e.contains("error"))
            std::cerr << "FAIL: rank " << e["rank"].get<int>() << " on host " << str(e, "host") << " ("
                      << (str(e, "selector").empty() ? str(e, "requested") : str(e, "selector"))
                      << "): " << str(e, "error") << "\n";
    for (const auto& row : doc["rows"])
        if (!row.value("pass", false))
            std::cerr << "FAIL: " << op_text(row) << " " << str(row, "shape") << " " << str(row, "path")
                      << " on rank " << row["rank"].get<int>() << " (" << str(row, "host") << ", "
                      << str(row, "selector") << "): "
                      << (str(row, "error").empty() ? "nmse above its threshold" : str(row, "error")) << "\n";
}

}  // namespace

int fleet_run(Settings s, const std::string& backends, const std::string& format, const std::string& output,
              const std::string& json_output, int rank_timeout_seconds) {
    if (format == "csv") throw UsageError("--format csv: a fleet run writes table or json");
    if (backends == "all")
        throw UsageError("--backends all: under MPI every rank runs one device; give one selector or a list dealt "
                         "to ranks, e.g. --backends cuda:local or --backends host,opencl,kokkos");
    const std::string text = !backends.empty() ? backends : accel::env::value("ACCEL_BACKEND").value_or("auto:local");
    const int rank = FleetScope::rank();
    // Read before any collective step, so that a bad ACCEL_RANK_TIMEOUT fails every rank alike.
    const int timeout = rank_timeout_seconds > 0 ? rank_timeout_seconds : accel::mpi::rank_timeout_seconds();

    json me{{"rank", rank}, {"host", accel::host_name()}, {"requested", ""}, {"selector", ""}, {"error", ""}};
    bool placed = false;
    try {
        const accel::mpi::Placement p = accel::mpi::resolve(text);  // collective
        me["requested"] = p.requested;
        me["selector"] = p.selector;
        if (p.shares_device) me["shares_device"] = true;
        s.selectors = {p.selector};
        placed = true;
    } catch (const std::exception& e) {
        me["error"] = e.what();
    }
    accel::mpi::Watchdog watch(json{{"host", me["host"]}, {"requested", me["requested"]}, {"selector", me["selector"]}}.dump(),
                               timeout);  // collective
    s.progress = false;
    s.on_progress = [&watch] { watch.progress(); };
    Results r;
    try {
        if (placed) r = run(s);
        if (!r.rows.empty()) me["selector"] = r.rows.front().selector;  // e.g. "opencl:pocl:0" for "opencl"
    } catch (const std::exception& e) {
        me["error"] = e.what();
    }
    const Machine m = this_machine();
    me["result"] = to_json(s, r, m);
    const auto gathered = watch.gather(me.dump());

    int status = 0;
    if (rank == 0) {
        bool failed = false;
        const json doc = merge_fleet_records(gathered, m, failed);
        const bool written = write_fleet_outputs(doc, gathered.records.size(), format, output, json_output);
        report_fleet_failures(doc);
        status = !written ? 2 : failed ? 1 : 0;
    }
    status = watch.share(status);
    watch.end_job_if_lost(status, "accel-bench");
    return status;
}

#else  // built without MPI

struct FleetScope::Impl {};
FleetScope::FleetScope(int*, char***) {
    if (const int size = accel::launcher_rank_count(); size > 1) {
        std::cerr << "accel-bench: started as one of " << size << " MPI ranks, but built without MPI: every rank "
                  << "would run alone and write its own results. Rebuild with MPI (libopenmpi-dev) for fleet runs\n";
        std::exit(2);
    }
}
FleetScope::~FleetScope() = default;
bool FleetScope::active() noexcept { return false; }
int FleetScope::rank() noexcept { return 0; }
int fleet_run(Settings, const std::string&, const std::string&, const std::string&, const std::string&, int) {
    throw std::runtime_error("accel-bench was built without MPI: no fleet runs");
}

#endif

}  // namespace bench
