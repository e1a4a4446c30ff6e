// `accel-bench compare`: kernel-time ratios of two saved runs, row by row.
#include "commands.hpp"
#include "report.hpp"

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
    double ms;
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
        out.push_back({k, (*ms)["median"].get<double>(), device_of(row)});
    }
    return out;
}

bool unique_keys(const Times& rows) {
    std::map<Key, int> seen;
    for (const auto& e : rows)
        if (++seen[e.key] > 1) return false;
    return true;
}

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
    std::map<Key, const Entry*> next, base_keys;
    for (const auto& e : next_rows) next[e.key] = &e;
    for (const auto& e : base) base_keys[e.key] = &e;

    std::cout << "kernel time NEW/BASE (below 1 = NEW is faster); NEW = " << new_file << ", BASE = " << base_file
              << "\nrows are matched by op, shape, dtype, path, block" << (by == "op" ? "" : " and " + by) << "\n\n";
    TextTable t({"op", "shape", "dtype", "path", "block", by == "op" ? "device (base -> new)" : "device", "base ms",
                 "new ms", "new/base", "speedup", ""},
                6);
    std::vector<std::string> slower, only_base, only_new;
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
        const bool is_slower = ratio > 1 + threshold;
        if (is_slower)
            slower.push_back(b.key.text() + " on " + both(b.device.long_name, n.device.long_name) +
                             format(" (%.2fx the base time)", ratio));
        t.add({b.key.op, b.key.shape, b.key.dtype, b.key.path, b.key.block.empty() ? "default" : b.key.block,
               both(b.device.short_name, n.device.short_name), format("%.4g", b.ms), format("%.4g", n.ms),
               format("%.2f", ratio), format("%.2fx", 1 / ratio),
               is_slower ? "SLOWER" : ratio < 1 / (1 + threshold) ? "faster" : ""});
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
    if (!matched) return 2;
    if (slower.empty()) return 0;
    std::cout << "\n";
    list(format("slower than the %.0f %% threshold", threshold * 100).c_str(), slower);
    return 1;
}

}  // namespace bench
