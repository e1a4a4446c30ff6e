// `accel-bench compare`: kernel-time ratios of two saved runs, row by row.
// A difference is called only when it passes --threshold and the two rows'
// ranges of timed runs (kernel_ms min..max) do not overlap: every run of one
// was slower than every run of the other. Back-to-back runs of one machine
// differ by more than 10 % in their medians on a busy or virtual machine;
// their ranges overlap.
#include "commands.hpp"
#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <tuple>

namespace bench {
namespace {

using nlohmann::json;

// How rows of the two files are matched: op, shape, dtype, path and block,
// plus a device part that depends on --by ("op": none).
struct Key {
    std::string op, shape, dtype, path, block, device;
    bool operator<(const Key& o) const {
        return std::tie(op, shape, dtype, path, block, device) <
               std::tie(o.op, o.shape, o.dtype, o.path, o.block, o.device);
    }
    // The problem, without the device: "add 1000 f32 native block 256".
    std::string text() const { return op + " " + shape + " " + dtype + " " + path + (block.empty() ? "" : " block " + block); }
};

std::string str(const json& row, const char* key) {
    return row.contains(key) && row[key].is_string() ? row[key].get<std::string>() : "";
}

// The device a row ran on, short (table: "host:0"; fleet files: "node1 rank 1 cuda:0")
// and long (lines: the short form and the device's name).
struct Device {
    std::string short_name, long_name;
};

Device device_of(const json& row) {
    std::string sel = str(row, "selector").empty() ? str(row, "backend") : str(row, "selector");
    if (sel.empty()) sel = "unnamed device";
    if (row.contains("rank")) sel = str(row, "host") + " rank " + row["rank"].dump() + " " + sel;
    const std::string name = str(row, "device");
    return {sel, name.empty() ? sel : sel + " (" + name + ")"};
}

// "X" when both rows ran on one device, else "X -> Y" (base -> new).
std::string both(const std::string& base, const std::string& next) { return base == next ? base : base + " -> " + next; }

struct Entry {
    Key key;
    double ms;      ///< median kernel time
    double lo, hi;  ///< fastest and slowest timed run (the median where a file has no min/max)
    Device device;
};
using Times = std::vector<Entry>;

// Rows that have a kernel time, in file order; rows without one are listed in `skipped`.
Times kernel_times(const json& doc, const std::string& by, const std::string& file, std::vector<std::string>& skipped) {
    Times out;
    for (const auto& row : doc["rows"]) {
        // Files written before rows had a dtype hold f32 rows.
        Key k{op_text(row), str(row, "shape"), str(row, "dtype").empty() ? "f32" : str(row, "dtype"),
              str(row, "path"), row.value("default_geometry", true) ? "" : str(row, "block"), ""};
        if (by == "backend") k.device = str(row, "backend");
        else if (by == "selector")  // the stable form where the run has it: "opencl:pocl:0" survives reordering
            k.device = str(row, "stable_selector").empty() ? str(row, "selector") : str(row, "stable_selector");
        else if (by == "device") k.device = str(row, "backend") + " " + str(row, "device");
        else if (by == "rank")  // fleet files: one device per rank and host
            k.device = str(row, "host") + " rank " + (row.contains("rank") ? row["rank"].dump() : "0") + " " +
                       str(row, "selector");
        const json* ms = row.contains("kernel_ms") ? &row["kernel_ms"] : nullptr;
        if (!ms || !ms->contains("median") || !(*ms)["median"].is_number() || (*ms)["median"].get<double>() <= 0) {
            skipped.push_back(k.text() + " on " + device_of(row).long_name + " (" + file + ": no kernel time)");
            continue;
        }
        const double median = (*ms)["median"].get<double>();
        auto bound = [&](const char* name) {
            const bool ok = ms->contains(name) && (*ms)[name].is_number() && (*ms)[name].get<double>() > 0;
            return ok ? (*ms)[name].get<double>() : median;
        };
        out.push_back({k, median, std::min(bound("min"), median), std::max(bound("max"), median), device_of(row)});
    }
    return out;
}

// The first key under which `rows` holds more than one row, with those
// rows' devices; empty when each key has one row at most.
std::string ambiguous_key(const Times& rows) {
    std::map<Key, std::vector<std::string>> seen;
    for (const auto& e : rows) seen[e.key].push_back(e.device.long_name);
    for (const auto& [key, devices] : seen) {
        if (devices.size() < 2) continue;
        std::string text = key.text() + " (" + std::to_string(devices.size()) + " rows: ";
        for (std::size_t i = 0; i < devices.size(); ++i) text += (i ? ", " : "") + devices[i];
        return text + ")";
    }
    return "";
}

bool unique_keys(const Times& rows) { return ambiguous_key(rows).empty(); }

// --by auto: the coarsest matching under which each file has at most one row
// per key. Two runs of one device each (two vendors, two GPUs) pair by op,
// shape and path alone; runs of several backends pair backend with backend.
std::string auto_matching(const json& base, const json& next) {
    for (const char* by : {"op", "backend", "selector", "device", "rank"}) {
        std::vector<std::string> ignored;
        if (unique_keys(kernel_times(base, by, "", ignored)) && unique_keys(kernel_times(next, by, "", ignored)))
            return by;
    }
    return "device";
}

}  // namespace

int compare_command(const CompareArgs& a) {
    const double threshold = a.threshold;
    std::string by = a.by;
    const std::string& base_file = a.base;
    const std::string& new_file = a.next;
    const json base_doc = read_results(base_file), new_doc = read_results(new_file);
    if (by == "auto") by = auto_matching(base_doc, new_doc);
    std::vector<std::string> skipped;
    const Times base = kernel_times(base_doc, by, base_file, skipped);
    const Times next_rows = kernel_times(new_doc, by, new_file, skipped);
    // Rows pair one to one: a key with two rows in a file cannot be compared.
    for (const auto& [rows, file] : {std::pair<const Times&, const std::string&>{base, base_file}, {next_rows, new_file}}) {
        const std::string twice = ambiguous_key(rows);
        if (!twice.empty()) {
            std::cerr << "accel-bench compare: --by " << by << " pairs more than one row of " << file
                      << " with one key: " << twice << "; use --by selector, device or auto\n";
            return 2;
        }
    }
    std::map<Key, const Entry*> next, base_keys;
    for (const auto& e : next_rows) next[e.key] = &e;
    for (const auto& e : base) base_keys[e.key] = &e;

    std::cout << "kernel time NEW/BASE (below 1 = NEW is faster); NEW = " << new_file << ", BASE = " << base_file
              << "\nrows are matched by op, shape, dtype, path, block" << (by == "op" ? "" : " and " + by)
              << format("\na row is marked when new/base of the medians is past the %.0f %% threshold: slower or "
                        "faster when the runs' min..max ranges are apart, within noise when they overlap\n\n",
                        threshold * 100);
    TextTable t({"op", "shape", "dtype", "path", "block", by == "op" ? "device (base -> new)" : "device", "base ms",
                 "base min..max", "new ms", "new min..max", "new/base", "speedup", ""},
                6);
    std::vector<std::string> slower, noise, only_base, only_new;
    double log_sum = 0;
    int matched = 0;
    for (const auto& b : base) {
        auto it = next.find(b.key);
        if (it == next.end()) {
            only_base.push_back(b.key.text() + " on " + b.device.long_name);
            continue;
        }
        const Entry& n = *it->second;
        const double ratio = n.ms / b.ms;
        log_sum += std::log(ratio);
        ++matched;
        const bool past_slower = ratio > 1 + threshold, past_faster = ratio < 1 / (1 + threshold);
        const bool apart = n.lo > b.hi || n.hi < b.lo;
        const std::string what = b.key.text() + " on " + both(b.device.long_name, n.device.long_name) +
                                 format(" (%.2fx the base time; base %.4g..%.4g ms, new %.4g..%.4g ms)", ratio, b.lo,
                                        b.hi, n.lo, n.hi);
        if (past_slower && apart) slower.push_back(what);
        if ((past_slower || past_faster) && !apart) noise.push_back(what);
        t.add({b.key.op, b.key.shape, b.key.dtype, b.key.path, b.key.block.empty() ? "default" : b.key.block,
               both(b.device.short_name, n.device.short_name), format("%.4g", b.ms),
               format("%.4g..%.4g", b.lo, b.hi), format("%.4g", n.ms), format("%.4g..%.4g", n.lo, n.hi),
               format("%.2f", ratio), format("%.2fx", 1 / ratio),
               !(past_slower || past_faster) ? "" : !apart ? "within noise" : past_slower ? "SLOWER" : "faster"});
    }
    for (const auto& e : next_rows)
        if (!base_keys.count(e.key)) only_new.push_back(e.key.text() + " on " + e.device.long_name);
    t.write(std::cout);

    if (matched)
        std::cout << format("\ngeometric mean of new/base over %d rows: %.2f (speedup %.2fx)\n", matched,
                            std::exp(log_sum / matched), std::exp(-log_sum / matched));
    else
        std::cout << "\nno rows in common: the files share no op, shape and path" << (by == "op" ? "" : " on one " + by)
                  << "\n";
    auto list = [](const char* title, const std::vector<std::string>& items) {
        if (items.empty()) return;
        std::cout << "\n" << title << " (" << items.size() << "):\n";
        for (const auto& s : items) std::cout << "  " << s << "\n";
    };
    list(("only in " + base_file).c_str(), only_base);
    list(("only in " + new_file).c_str(), only_new);
    list("not comparable", skipped);
    list("past the threshold but within the runs' spread (not counted)", noise);
    if (!matched) return 2;
    if (slower.empty()) return 0;
    std::cout << "\n";
    list(format("slower than the %.0f %% threshold", threshold * 100).c_str(), slower);
    return 1;
}

}  // namespace bench
