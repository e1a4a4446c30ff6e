// `accel-bench compare`: kernel-time ratios of two saved runs, row by row.
#include "cli.hpp"
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
    std::string text() const {
        return op + " " + shape + " " + dtype + " " + path + (block.empty() ? "" : " block " + block) + " on " + device;
    }
};

std::string str(const json& row, const char* key) {
    return row.contains(key) && row[key].is_string() ? row[key].get<std::string>() : "";
}

using Times = std::vector<std::pair<Key, double>>;

// Rows that have a kernel time, in file order; rows without one are listed in `skipped`.
Times kernel_times(const json& doc, const std::string& by, const std::string& file,
                                   std::vector<std::string>& skipped) {
    Times out;
    for (const auto& row : doc["rows"]) {
        // Files written before rows had a dtype hold f32 rows.
        Key k{str(row, "op"), str(row, "shape"), str(row, "dtype").empty() ? "f32" : str(row, "dtype"),
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
            skipped.push_back(k.text() + " (" + file + ": no kernel time)");
            continue;
        }
        out.emplace_back(k, (*ms)["median"].get<double>());
    }
    return out;
}

bool unique_keys(const Times& rows) {
    std::map<Key, int> seen;
    for (const auto& kv : rows)
        if (++seen[kv.first] > 1) return false;
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

int compare_command(const std::vector<std::string>& argv) {
    const Args args = parse_args(argv, {}, {"--threshold", "--by"});
    if (args.positional.size() != 2)
        throw UsageError("compare needs exactly two files, BASE.json and NEW.json (got " +
                         std::to_string(args.positional.size()) + ")");
    double threshold = 0.10;
    std::string by = "auto";
    for (const auto& [name, value] : args.options) {
        if (name == "--threshold") threshold = parse_number(value, name);
        else if (name == "--by") by = value;
    }
    if (by != "auto" && by != "op" && by != "device" && by != "selector" && by != "backend" && by != "rank")
        throw UsageError("--by: unknown value '" + by + "'; valid: auto (default: the coarsest that pairs each "
                         "row with at most one), op (op, shape and path only: two devices compared), backend, "
                         "selector (e.g. cuda:0 with cuda:0), device (backend + device name), rank (fleet "
                         "files of an MPI run: host, rank and selector)");

    const std::string& base_file = args.positional[0];
    const std::string& new_file = args.positional[1];
    const json base_doc = read_results(base_file), new_doc = read_results(new_file);
    if (by == "auto") by = auto_matching(base_doc, new_doc);
    std::vector<std::string> skipped;
    const auto base = kernel_times(base_doc, by, base_file, skipped);
    const Times next_rows = kernel_times(new_doc, by, new_file, skipped);
    const std::map<Key, double> next(next_rows.begin(), next_rows.end());
    const std::map<Key, double> base_keys(base.begin(), base.end());

    std::cout << "kernel time NEW/BASE (below 1 = NEW is faster); NEW = " << new_file << ", BASE = " << base_file
              << "\nrows are matched by op, shape, dtype, path, block" << (by == "op" ? "" : " and " + by) << "\n\n";
    const std::string device_column = by == "op" ? "devices" : by;
    TextTable t({"op", "shape", "dtype", "path", "block", device_column, "base ms", "new ms", "new/base", "speedup", ""},
                6);
    std::vector<std::string> slower, only_base, only_new;
    double log_sum = 0;
    int matched = 0;
    for (const auto& [key, base_ms] : base) {
        auto it = next.find(key);
        if (it == next.end()) {
            only_base.push_back(key.text());
            continue;
        }
        const double ratio = it->second / base_ms;
        log_sum += std::log(ratio);
        ++matched;
        const bool is_slower = ratio > 1 + threshold;
        if (is_slower) slower.push_back(key.text() + format(" (%.2fx the base time)", ratio));
        t.add({key.op, key.shape, key.dtype, key.path, key.block.empty() ? "default" : key.block,
               by == "op" ? "(one each)" : key.device,
               format("%.4g", base_ms), format("%.4g", it->second), format("%.2f", ratio), format("%.2fx", 1 / ratio),
               is_slower ? "SLOWER" : ratio < 1 / (1 + threshold) ? "faster" : ""});
    }
    for (const auto& kv : next_rows)
        if (!base_keys.count(kv.first)) only_new.push_back(kv.first.text());
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
