// `accel-bench compare`: kernel-time ratios of two saved runs, row by row.
// Each row's timed samples of the two files are tested against each other
// (two-sided Mann–Whitney U at --alpha) and the ratio new/base estimated
// with its confidence interval (Hodges–Lehmann on the logs of the times);
// a row is SLOWER or faster only when the test rejects and the estimate is
// past --min-effect (docs/benchmarking.md, "How compare decides").
#include "commands.hpp"
#include "report.hpp"
#include "stats.hpp"
#include <text_width.hpp>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
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
    // The stable form ("opencl:pocl:0") where the file has it: files written
    // before Device::selector() returned it hold an index ("opencl:0") there.
    std::string sel = !str(row, "stable_selector").empty() ? str(row, "stable_selector")
                      : !str(row, "selector").empty()       ? str(row, "selector")
                                                            : str(row, "backend");
    if (sel.empty()) sel = "unnamed device";
    if (row.contains("rank")) sel = str(row, "host") + " rank " + row["rank"].dump() + " " + sel;
    const std::string name = str(row, "device");
    return {sel, name.empty() ? sel : sel + " (" + name + ")"};
}

// "X" when both rows ran on one device, else "X -> Y" (base -> new).
std::string both(const std::string& base, const std::string& next) { return base == next ? base : base + " -> " + next; }

struct Entry {
    Key key;
    double ms;                    ///< median kernel time
    std::vector<double> samples;  ///< the timed samples (ms); empty in files written before rows kept them
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
        std::vector<double> samples;
        if (ms->contains("samples") && (*ms)["samples"].is_array())
            for (const auto& v : (*ms)["samples"])
                if (v.is_number() && v.get<double>() > 0) samples.push_back(v.get<double>());
        out.push_back({k, (*ms)["median"].get<double>(), std::move(samples), device_of(row)});
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

// Several runs of one side as one: each row's observations are its medians,
// one per run that has it (the run is the unit, so the variation between
// runs is in the test), its time their median; rows in the first run's order.
Times runs_as_samples(const std::vector<Times>& runs) {
    Times out;
    std::map<Key, std::size_t> at;
    for (const Times& run : runs)
        for (const Entry& e : run) {
            const auto [it, first] = at.emplace(e.key, out.size());
            if (first) out.push_back({e.key, 0, {}, e.device});
            out[it->second].samples.push_back(e.ms);
        }
    for (Entry& e : out) e.ms = stats::median(e.samples);
    return out;
}

// A device whose rows all moved one way, by more than the minimum effect
// in their geometric mean: the machine's state differed between the two
// runs (load, clocks), which no row's samples can tell from the build.
// `moved`: per device, log new/base of each paired row's medians.
void write_drift_notes(std::ostream& out, const std::map<std::string, std::vector<double>>& moved, double effect) {
    for (const auto& [device, logs] : moved) {
        if (logs.size() < 4) continue;
        double mean = 0;
        std::size_t up = 0;
        for (double l : logs) {
            mean += l / double(logs.size());
            up += l > 0;
        }
        const std::size_t same_way = mean > 0 ? up : logs.size() - up;
        if (std::fabs(mean) > std::log(1 + effect) && same_way * 4 >= logs.size() * 3)
            out << format("note: %zu of the %zu rows on %s moved the same way (geometric mean new/base %.2f): "
                          "the machine was likely in another state in one run (load, clocks); rerun both "
                          "on a quiet machine, or compare several interleaved runs a side, before reading its "
                          "rows as the build's\n",
                          same_way, logs.size(), device.c_str(), std::exp(mean));
    }
}

// One side of a compare: its one file's rows, or its runs' (runs_as_samples).
// Rows pair one to one: a key with two rows in a file cannot be compared
// (said on stderr; std::nullopt).
std::optional<Times> read_side(const std::vector<json>& docs, const std::vector<std::string>& files,
                               const std::string& by, std::vector<std::string>& skipped) {
    std::vector<Times> each;
    for (std::size_t i = 0; i < docs.size(); ++i) {
        each.push_back(kernel_times(docs[i], by, files[i], skipped));
        const std::string twice = ambiguous_key(each.back());
        if (!twice.empty()) {
            std::cerr << "accel-bench compare: --by " << by << " pairs more than one row of " << files[i]
                      << " with one key: " << twice << "; use --by selector, device or auto\n";
            return std::nullopt;
        }
    }
    return each.size() == 1 ? each.front() : runs_as_samples(each);
}

// "a.json,b.json" as its files.
std::vector<std::string> file_list(const std::string& text) {
    std::vector<std::string> files;
    std::stringstream s(text);
    std::string f;
    while (std::getline(s, f, ','))
        if (!f.empty()) files.push_back(f);
    return files;
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

// What compare says of one pair of rows.
struct Verdict {
    std::string word;      ///< "SLOWER", "faster", "small", "same", "no verdict", "no test"
    double ratio = 0;      ///< new/base: the Hodges–Lehmann estimate where tested, else of the medians
    stats::Interval ci;    ///< of the ratio, at 1 - alpha (ok false where not tested)
    double p = 1;          ///< the U test's two-sided p-value; only where tested
    bool tested = false;
    std::string why;       ///< for "no verdict" and "no test": what was missing
};

Verdict judge(const Entry& b, const Entry& n, double alpha, double effect) {
    Verdict v;
    v.ratio = n.ms / b.ms;
    if (b.samples.empty() || n.samples.empty()) {
        v.word = "no test";
        v.why = "no samples in " + std::string(b.samples.empty() ? "BASE" : "NEW") +
                " (a file written before rows kept their samples): median ratio only";
        return v;
    }
    if (stats::smallest_p(b.samples.size(), n.samples.size()) > alpha) {
        v.word = "no verdict";
        v.why = format("%zu and %zu samples: the U test cannot reach p < %g with so few", b.samples.size(),
                       n.samples.size(), alpha);
        return v;
    }
    // On the logs: the shift of log times is the log of the ratio of times.
    std::vector<double> lb, ln;
    for (double t : b.samples) lb.push_back(std::log(t));
    for (double t : n.samples) ln.push_back(std::log(t));
    const stats::UTest u = stats::mann_whitney(lb, ln);
    const stats::Shift hl = stats::hodges_lehmann(lb, ln, 1 - alpha);
    v.tested = true;
    v.p = u.p;
    v.ratio = std::exp(hl.estimate);
    v.ci = {std::exp(hl.interval.lo), std::exp(hl.interval.hi), hl.interval.ok};
    const bool significant = u.p < alpha;
    v.word = !significant                     ? "same"
             : v.ratio > 1 + effect           ? "SLOWER"
             : v.ratio < 1 / (1 + effect)     ? "faster"
                                              : "small";
    return v;
}

}  // namespace

int compare_command(const CompareArgs& a) {
    const double alpha = a.alpha, effect = a.min_effect;
    std::string by = a.by;
    const std::string& base_file = a.base;
    const std::string& new_file = a.next;
    const std::vector<std::string> base_files = file_list(base_file), new_files = file_list(new_file);
    if (base_files.empty() || new_files.empty() || (base_files.size() == 1) != (new_files.size() == 1)) {
        std::cerr << "accel-bench compare: BASE has " << base_files.size() << " file(s) and NEW " << new_files.size()
                  << ": give one file a side (its samples are tested), or two or more a side, comma-separated "
                     "(each file's median is one observation); see accel-bench compare --help\n";
        return 2;
    }
    const bool runs = base_files.size() > 1;
    std::vector<json> base_docs, new_docs;
    for (const auto& f : base_files) base_docs.push_back(read_results(f));
    for (const auto& f : new_files) new_docs.push_back(read_results(f));
    if (by == "auto") by = auto_matching(base_docs.front(), new_docs.front());
    std::vector<std::string> skipped;
    const std::optional<Times> base_times = read_side(base_docs, base_files, by, skipped),
                               new_times = read_side(new_docs, new_files, by, skipped);
    if (!base_times || !new_times) return 2;
    const Times& base = *base_times;
    const Times& next_rows = *new_times;
    std::map<Key, const Entry*> next, base_keys;
    for (const auto& e : next_rows) next[e.key] = &e;
    for (const auto& e : base) base_keys[e.key] = &e;

    // Within the terminal's width unless --wide: optional columns left out, prose wrapped.
    const std::size_t width = a.wide ? 0 : tool_cli::output_width();
    std::ostringstream out;
    auto finish = [&](int rc) {
        std::cout << fit_text(out.str(), width);
        return rc;
    };
    const int confidence = int(std::lround((1 - alpha) * 100));
    out << "kernel time NEW/BASE (below 1 = NEW is faster); NEW = " << new_file << ", BASE = " << base_file
              << "\nrows are matched by op, shape, dtype, path, block" << (by == "op" ? "" : " and " + by)
              << "; device: BASE's, and \"-> NEW's\" where that differs"
              << (runs ? format("\nthe run is the unit: each row's observations are its medians, one per file (%zu base "
                                "and %zu new runs), so the variation between runs is in the test",
                                base_files.size(), new_files.size())
                       : std::string())
              << format("\neach row's samples are tested by a two-sided Mann-Whitney U test at alpha = %g; new/base is "
                        "the Hodges-Lehmann estimate of the ratio with its %d %% confidence interval (the ratio of the "
                        "medians where a file has no samples); SLOWER or faster: p < alpha and the ratio past the "
                        "minimum effect of %g %%; small: p < alpha within it; same: p >= alpha; no verdict: too few "
                        "samples for p < alpha; no test: a file without samples\n\n",
                        alpha, confidence, effect * 100);
    TextTable t({"op", "shape", "dtype", "path", "block", "device", "base ms",
                 "new ms", "samples", "new/base", format("%d %% CI", confidence), "p", "speedup", ""},
                6);
    std::vector<std::string> slower, faster, untested, undecided, only_base, only_new;
    double log_sum = 0;
    int matched = 0;
    // Per device (table name): log new/base of each paired row's medians, for the drift note.
    std::map<std::string, std::vector<double>> moved;
    for (const auto& b : base) {
        auto it = next.find(b.key);
        if (it == next.end()) {
            only_base.push_back(b.key.text() + " on " + b.device.long_name);
            continue;
        }
        const Entry& n = *it->second;
        const Verdict v = judge(b, n, alpha, effect);
        log_sum += std::log(n.ms / b.ms);
        ++matched;
        moved[both(b.device.short_name, n.device.short_name)].push_back(std::log(n.ms / b.ms));
        const std::string what =
            b.key.text() + " on " + both(b.device.long_name, n.device.long_name) +
            format(" (%.2fx the base time", v.ratio) +
            (v.tested ? format(", %d %% CI %s, p = %.2g; medians %.4g -> %.4g ms, %zu and %zu samples)", confidence,
                               v.ci.ok ? format("%.2f..%.2f", v.ci.lo, v.ci.hi).c_str() : "unbounded", v.p, b.ms,
                               n.ms, b.samples.size(), n.samples.size())
                      : format("; medians %.4g -> %.4g ms): ", b.ms, n.ms) + v.why);
        if (v.word == "SLOWER") slower.push_back(what);
        if (v.word == "faster") faster.push_back(what);
        if (v.word == "no test") untested.push_back(what);
        if (v.word == "no verdict") undecided.push_back(what);
        const std::string count = b.samples.empty() && n.samples.empty() ? "–"
                                  : std::to_string(b.samples.size()) + "/" + std::to_string(n.samples.size());
        t.add({b.key.op, b.key.shape, b.key.dtype, b.key.path, b.key.block.empty() ? "default" : b.key.block,
               both(b.device.short_name, n.device.short_name), format("%.4g", b.ms), format("%.4g", n.ms), count,
               format("%.3f", v.ratio), v.tested && v.ci.ok ? format("%.3f..%.3f", v.ci.lo, v.ci.hi) : "–",
               v.tested ? format("%.2g", v.p) : "–", format("%.2fx", 1 / v.ratio), v.word});
    }
    for (const auto& e : next_rows)
        if (!base_keys.count(e.key)) only_new.push_back(e.key.text() + " on " + e.device.long_name);
    t.set_optional({"block", "speedup", "samples", "p", "base ms", "new ms", "path"});
    t.write(out, width);

    if (matched)
        out << format("\ngeometric mean of new/base of the medians over %d rows: %.2f (speedup %.2fx)\n",
                            matched, std::exp(log_sum / matched), std::exp(-log_sum / matched));
    else
        out << "\nno rows in common: the files share no op, shape and path" << (by == "op" ? "" : " on one " + by)
                  << "\n";
    write_drift_notes(out, moved, effect);
    auto list = [&out](const std::string& title, const std::vector<std::string>& items) {
        if (items.empty()) return;
        out << "\n" << title << " (" << items.size() << "):\n";
        for (const auto& s : items) out << "  " << s << "\n";
    };
    list("only in " + base_file, only_base);
    list("only in " + new_file, only_new);
    list("not comparable", skipped);
    list("no test possible (not counted)", untested);
    list("no verdict: too few samples (not counted)", undecided);
    list(format("faster beyond the %g %% minimum effect", effect * 100), faster);
    if (!matched) return finish(2);
    if (slower.empty()) return finish(0);
    list(format("slower beyond the %g %% minimum effect", effect * 100), slower);
    return finish(1);
}

}  // namespace bench
