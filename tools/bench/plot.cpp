// `accel-bench plot`: log-log time (or rate) against size, one line per
// file, device, path and dtype, with the spread of the runs; or, with
// --roofline, the roofline of every row (Williams, Waterman and Patterson,
// "Roofline", CACM 52(4), 2009: arithmetic intensity FLOP/byte against
// attained GFLOP/s, each device's ceilings as min(peak FMA, bandwidth ×
// intensity)); drawn by gnuplot from a script
// that holds its data (in a temporary folder; plot --script keeps a copy).
#include "commands.hpp"
#include "report.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

namespace bench {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// The full path of `name` on PATH, or "" when none is executable.
std::string find_on_path(const std::string& name) {
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path ? path : "");
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
        const std::string p = (dir.empty() ? "." : dir) + "/" + name;
        struct stat st {};
        if (stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0) return p;
    }
    return "";
}

std::string str(const json& row, const char* key) {
    return row.contains(key) && row[key].is_string() ? row[key].get<std::string>() : "";
}

// gnuplot strings are double-quoted: keep titles free of quotes and backslashes.
std::string clean(std::string s) {
    std::replace(s.begin(), s.end(), '"', '\'');
    std::replace(s.begin(), s.end(), '\\', '/');
    return s;
}

std::string shell_quote(const std::string& s) {
    std::string o = "'";
    for (char c : s) o += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return o + "'";
}

// A row's or device's stable selector ("opencl:pocl:0"), else its selector;
// in fleet files (rows and devices carry "rank") with its host and rank, as
// ranks on several hosts may each have a cuda:0.
std::string device_id(const json& j) {
    const std::string sel = str(j, "stable_selector").empty() ? str(j, "selector") : str(j, "stable_selector");
    return j.contains("rank") ? str(j, "host") + " rank " + j["rank"].dump() + " " + sel : sel;
}

// A file as legends name it: its name without the folders.
std::string file_name(const std::string& path) { return fs::path(path).filename().string(); }

// What legends put first when several files are plotted: the file's name.
std::string file_prefix(const std::vector<std::string>& files, std::size_t i) {
    return files.size() > 1 ? file_name(files[i]) + ": " : "";
}

// How a plot tells series apart (docs/benchmarking.md, "Plot"):
// colour names the device, the same in every plot and file; the marker
// names path and dtype (filled: native, open: vendor; circle f32, square
// f64, triangle f16, diamond bf16); the line style names the file.

// A fixed palette of ten hues no two of which read alike (matplotlib's tab10).
constexpr const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
constexpr std::size_t kColours = sizeof(kPalette) / sizeof(kPalette[0]);

// FNV-1a (Fowler, Noll and Vo): a hash that is the same on every machine
// and standard library, as std::hash need not be.
std::uint64_t fnv1a(const std::string& s) {
    std::uint64_t h = 14695981039346656037ull;
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    return h;
}

// Each device's colour: its id's hash picks a palette slot, so that a
// device keeps its colour in every plot and file; a slot taken by a device
// earlier in id order moves to the next free one (two devices of one plot
// never share a colour while the palette lasts).
std::map<std::string, std::string> device_colours(const std::set<std::string>& ids) {
    std::map<std::string, std::string> out;
    std::vector<bool> used(kColours, false);
    for (const auto& id : ids) {
        std::size_t slot = fnv1a(id) % kColours;
        for (std::size_t tries = 0; used[slot] && tries < kColours; ++tries) slot = (slot + 1) % kColours;
        used[slot] = true;
        out[id] = kPalette[slot];
        if (std::all_of(used.begin(), used.end(), [](bool u) { return u; })) used.assign(kColours, false);
    }
    return out;
}

// gnuplot's point types: filled (native) and open (vendor) shapes per dtype.
int marker(const std::string& path, const std::string& dtype) {
    const bool open = path == "vendor";
    if (dtype == "f64") return open ? 4 : 5;    // square
    if (dtype == "f16") return open ? 8 : 9;    // triangle
    if (dtype == "bf16") return open ? 12 : 13; // diamond
    return open ? 6 : 7;                        // circle: f32
}

// gnuplot's dash types: solid for the first file, then dashed, dotted, ...
int dash(std::size_t file) { return int(file % 5) + 1; }

// One point with its spread: y from y_low to y_high (min..max of the warm runs).
struct Point {
    double x, y, y_low, y_high;
    bool cache_resident = false;
};

// One line (or set of points) of a plot: its legend title, its style's
// facts and its points.
struct Series {
    std::string title, device, device_name, path, dtype;
    std::size_t file = 0;
    std::vector<Point> points;
};

// Series by key: the file's index first (files in the order given), then the
// title, which names everything else that sets series apart. Keying by file
// keeps two files' rows of one device (host:0 of two runs) apart.
using SeriesMap = std::map<std::pair<std::size_t, std::string>, Series>;

void add_point(SeriesMap& m, std::size_t file, const std::string& title, const json& row, const Point& p) {
    Series& s = m[{file, title}];
    s.title = title;
    s.device = device_id(row);
    s.device_name = str(row, "device");
    s.path = str(row, "path");
    s.dtype = str(row, "dtype").empty() ? "f32" : str(row, "dtype");
    s.file = file;
    s.points.push_back(p);
}

// The series titles, one per line, for the command's report.
std::string titles(const SeriesMap& m) {
    std::string out;
    for (const auto& [key, s] : m) out += "  " + s.title + "\n";
    return out;
}

// The spread of a row's rate (or, with rate = false, its kernel time):
// the rate of the slowest and of the fastest warm run. {y, y} when the row
// has no min/max.
std::pair<double, double> spread(const json& row, double y, bool rate) {
    const json& k = row["kernel_ms"];
    const double median = k.value("median", 0.0), lo = k.value("min", 0.0), hi = k.value("max", 0.0);
    if (!(median > 0 && lo > 0 && hi >= lo)) return {y, y};
    return rate ? std::pair{y * median / hi, y * median / lo} : std::pair{lo, hi};
}

struct PlotData {
    SeriesMap series;  // one per (file, device, path, dtype, op with activation, block)
    std::string size_unit, rate_unit;
    std::set<std::string> op_texts;  // the ops with their activations: "dense+sigmoid", "dense+relu"
};

// Points of `op` from every file; the legend names the file too when several files are given.
PlotData collect(const std::vector<std::string>& files, const std::string& op, bool rate) {
    PlotData d;
    for (std::size_t f = 0; f < files.size(); ++f) {
        const json doc = read_results(files[f]);
        for (const auto& row : doc["rows"]) {
            if (str(row, "op") != op || !row.contains("kernel_ms") || !row.contains("size")) continue;
            const char* rate_key = row.contains("gflops") ? "gflops" : "gbps";
            if (rate && !row.contains(rate_key)) continue;
            const double y = rate ? row[rate_key].get<double>() : row["kernel_ms"].value("median", 0.0);
            if (y <= 0) continue;
            const std::string dtype = str(row, "dtype").empty() ? "f32" : str(row, "dtype");
            std::string title = file_prefix(files, f) + str(row, "device") + " (" + device_id(row) + ", " +
                                str(row, "path") + ", " + dtype;
            if (op_text(row) != op) title += ", " + op_text(row).substr(op.size() + 1);  // dense rows' activation
            if (!row.value("default_geometry", true)) title += ", block " + str(row, "block");
            title += ")";
            const auto [lo, hi] = spread(row, y, rate);
            add_point(d.series, f, clean(title), row, {row["size"].get<double>(), y, lo, hi});
            d.size_unit = str(row, "size_unit");
            d.op_texts.insert(op_text(row));
            d.rate_unit = std::string(rate_key) == "gflops" ? "GFLOP/s" : "GB/s";
        }
    }
    return d;
}

// A series' points as an inline data block (x y y_low y_high), sorted by x.
std::string data_block(const std::string& name, std::vector<Point> points) {
    std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) { return a.x < b.x; });
    std::ostringstream s;
    s.precision(9);
    s << "$" << name << " << EOD\n";
    for (const auto& p : points) s << p.x << " " << p.y << " " << p.y_low << " " << p.y_high << "\n";
    s << "EOD\n";
    return s.str();
}

// The style of a series: its device's colour, its marker and its file's dashes.
std::string style(const Series& s, const std::map<std::string, std::string>& colours) {
    return "lc rgb \"" + colours.at(s.device) + "\" pt " + std::to_string(marker(s.path, s.dtype)) + " dt " +
           std::to_string(dash(s.file));
}

std::set<std::string> devices_of(const SeriesMap& m) {
    std::set<std::string> ids;
    for (const auto& [key, s] : m) ids.insert(s.device);
    return ids;
}

// The key: one entry per device (its colour), per marker (path and dtype)
// and, with several files, per file (its line style), rather than one per
// series: a plot of 4 devices in 4 dtypes and 2 paths has 4 + 8 entries,
// not 32. Entries are empty plots (NaN) that only draw in the key.
std::string key_entries(const SeriesMap& m, const std::map<std::string, std::string>& colours,
                        const std::map<std::string, std::string>& names, const std::vector<std::string>& files) {
    std::string out;
    const auto add = [&](const std::string& entry) { out += ", \\\n     NaN " + entry; };
    for (const auto& [id, colour] : colours) {
        const auto name = names.find(id);
        add("with lines lw 4 lc rgb \"" + colour + "\" title \"" +
            clean(id + (name == names.end() || name->second.empty() ? "" : ": " + name->second)) + "\"");
    }
    std::set<std::pair<std::string, std::string>> markers;  // (path, dtype), native first
    for (const auto& [key, s] : m) markers.insert({s.path == "vendor" ? "~vendor" : s.path, s.dtype});
    for (const auto& [path, dtype] : markers) {
        const std::string p = path == "~vendor" ? "vendor" : path;
        add("with points pt " + std::to_string(marker(p, dtype)) + " ps 1.5 lc rgb \"black\" title \"" + clean(p) +
            " " + clean(dtype) + "\"");
    }
    if (files.size() > 1)
        for (std::size_t f = 0; f < files.size(); ++f)
            add("with lines lw 2 dt " + std::to_string(dash(f)) + " lc rgb \"black\" title \"file " +
                clean(file_name(files[f])) + "\"");
    return out;
}

std::map<std::string, std::string> device_names(const SeriesMap& m) {
    std::map<std::string, std::string> names;
    for (const auto& [key, s] : m) names[s.device] = s.device_name;
    return names;
}

// The key's layout: below the plot, in columns, small enough to leave the plot its room.
const char* kKey = "set key below horizontal font \",8\" samplen 3\n";

const char* kStyleNote = "colour: device, marker: path (filled native, open vendor) and dtype, line style: file; "
                         "error bars: fastest..slowest warm run";

// The gnuplot script of a time or rate plot, its data inline: it renders
// on its own (plot --script keeps it).
std::string time_script(const PlotData& d, const std::vector<std::string>& files, const std::string& op, bool rate,
                        const std::string& terminal, const std::string& png) {
    std::ostringstream script;
    script << "set terminal " << terminal << " size 1200,760\n"
           << "set output \"" << clean(png) << "\"\n"
           << "set logscale xy\nset grid\n" << kKey << "set format x \"%g\"\nset format y \"%g\"\nset bars 0.6\n"
           << "set autoscale xfix\nset offsets graph 0.04, graph 0.04, 0, 0\n"  // the sizes span the plot
           << "set title \"accel-bench: " << (d.op_texts.size() == 1 ? *d.op_texts.begin() : op)
           << (rate ? " rate" : " kernel time") << " (log-log)\\n{/*0.8 " << kStyleNote << "}\"\n"
           << "set xlabel \"size (" << d.size_unit << ")\"\n"
           << "set ylabel \"" << (rate ? d.rate_unit + " (warm median)" : std::string("kernel time, warm median (ms)"))
           << "\"\n";
    std::set<double> sizes;  // a tic at each size run, when they are few
    for (const auto& [key, s] : d.series)
        for (const auto& p : s.points) sizes.insert(p.x);
    if (sizes.size() <= 12) {
        script << "set xtics (";
        for (auto it = sizes.begin(); it != sizes.end(); ++it) script << (it == sizes.begin() ? "" : ", ") << *it;
        script << ")\n";
    }
    const auto colours = device_colours(devices_of(d.series));
    std::string plots;
    int i = 0;
    for (const auto& [key, s] : d.series) {
        const std::string name = "series" + std::to_string(i++);
        script << data_block(name, s.points);
        plots += std::string(plots.empty() ? "" : ", \\\n     ") + "$" + name +
                 " using 1:2:3:4 with yerrorlines lw 1.5 ps 1.2 " + style(s, colours) + " notitle";
    }
    script << "plot " << plots << key_entries(d.series, colours, device_names(d.series), files) << "\n";
    return script.str();
}

// The roofline: one point per row with a FLOP and byte count, one series per
// (file, device, path, dtype); one ceiling per device of each file, from that
// file's own figures (each run measured its devices' ceilings).
struct Roofline {
    SeriesMap series;  // x = FLOP/byte, y = GFLOP/s
    struct Ceiling {
        std::string title, device, name;
        std::size_t file;
        double gbps, gflops;
    };
    std::map<std::pair<std::size_t, std::string>, Ceiling> roof;  // by (file, device)
};

Roofline collect_roofline(const std::vector<std::string>& files) {
    Roofline r;
    for (std::size_t f = 0; f < files.size(); ++f) {
        const json doc = read_results(files[f]);
        const std::string prefix = file_prefix(files, f);
        if (doc.contains("devices"))
            for (const auto& d : doc["devices"]) {
                const double bw = figure_or_zero(d, "bandwidth_ceiling_gbps"), peak = figure_or_zero(d, "peak_fma_gflops");
                if (bw > 0 && peak > 0)
                    r.roof[{f, device_id(d)}] = {clean(prefix + device_id(d)), device_id(d), str(d, "name"), f, bw, peak};
            }
        for (const auto& row : doc["rows"]) {
            const double flops = row.value("flops", 0.0), bytes = row.value("bytes", 0.0);
            const double ms = row.contains("kernel_ms") ? row["kernel_ms"].value("median", 0.0) : 0.0;
            if (flops <= 0 || bytes <= 0 || ms <= 0 || row.contains("error")) continue;
            const std::string dtype = str(row, "dtype").empty() ? "f32" : str(row, "dtype");
            const double y = flops / (ms * 1e6);
            const auto [lo, hi] = spread(row, y, true);
            Point p{flops / bytes, y, lo, hi, row.value("cache_resident", false)};
            add_point(r.series, f, clean(prefix + device_id(row) + " " + str(row, "path") + " " + dtype), row, p);
        }
    }
    return r;
}

std::string ceiling_title(const Roofline::Ceiling& c) {
    return c.title + " ceilings (" + num(c.gbps) + " GB/s, " + num(c.gflops) + " GFLOP/s)";
}

// Ceilings within this factor of each other draw as one line: their labels
// are stacked and the lines drawn under it wider, so that each shows.
constexpr double kSameCeiling = 1.25;

std::string roofline_script(const Roofline& r, const std::vector<std::string>& files, const std::string& terminal,
                            const std::string& png) {
    std::ostringstream script;
    script << "set terminal " << terminal << " size 1200,800\n"
           << "set output \"" << clean(png) << "\"\n"
           << "set logscale xy\nset grid\n" << kKey << "set format x \"%g\"\nset format y \"%g\"\nset samples 400\n"
           << "set bars 0.6\n"
           << "set title \"accel-bench roofline: attained GFLOP/s against arithmetic intensity (one point per row; "
              "lines: each device's ceilings, labelled)\\n{/*0.8 "
           << kStyleNote << "}\"\n"
           << "set xlabel \"arithmetic intensity (FLOP per byte moved, op table counts)\"\n"
           << "set ylabel \"GFLOP/s (warm median)\"\n"
           << "set xrange [0.01:1000]\n";
    std::set<std::string> ids = devices_of(r.series);
    for (const auto& [key, c] : r.roof) ids.insert(c.device);
    const auto colours = device_colours(ids);
    auto names = device_names(r.series);
    for (const auto& [key, c] : r.roof) names.emplace(c.device, c.name);
    // The ceilings, highest peak first: each one's label above the knee of
    // its roof (where no row can be), stacked above those of ceilings it
    // would overlap; the y range grows at the top to hold the stack.
    std::vector<const Roofline::Ceiling*> order;
    for (const auto& [key, c] : r.roof) order.push_back(&c);
    std::stable_sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->gflops > b->gflops; });
    std::string plots;
    std::size_t stack = 0;  // the most labels stacked at one roof
    for (std::size_t i = 0; i < order.size(); ++i) {
        const Roofline::Ceiling& c = *order[i];
        std::size_t below = 0, same_after = 0;  // labels stacked under this one; equal lines drawn after it
        for (std::size_t j = 0; j < order.size(); ++j) {
            const bool near = order[j]->gflops <= c.gflops * kSameCeiling && c.gflops <= order[j]->gflops * kSameCeiling;
            if (near && j < i) ++below;
            if (near && j > i && order[j]->gbps <= c.gbps * kSameCeiling && c.gbps <= order[j]->gbps * kSameCeiling)
                ++same_after;
        }
        const std::string colour = colours.at(c.device);
        script << "roof" << i << "(x) = x * " << c.gbps << " < " << c.gflops << " ? x * " << c.gbps << " : "
               << c.gflops << "\n"
               << "set label " << i + 1 << " \"" << ceiling_title(c) << "\" at first " << c.gflops / c.gbps << ", first "
               << c.gflops << " left offset char 0.5, char " << 0.7 + 1.1 * double(below) << " textcolor rgb \"" << colour
               << "\" font \",9\"\n";
        stack = std::max(stack, below + 1);
        plots += std::string(plots.empty() ? "" : ", \\\n     ") + "roof" + std::to_string(i) + "(x) with lines lw " +
                 num(1.5 + 2.0 * double(same_after)) + " dt " + std::to_string(dash(c.file)) + " lc rgb \"" + colour +
                 "\" notitle";
    }
    int k = 0;
    std::vector<Point> cache;
    for (const auto& [key, s] : r.series) {
        const std::string name = "roof" + std::to_string(k++) + "_points";
        script << data_block(name, s.points);
        for (const auto& p : s.points)
            if (p.cache_resident) cache.push_back(p);
        plots += std::string(plots.empty() ? "" : ", \\\n     ") + "$" + name +
                 " using 1:2:3:4 with yerrorbars ps 1.5 " + style(s, colours) + " notitle";
    }
    // Room above the highest roof for its labels: a label's line is about
    // 1/35 of the plot's height; gnuplot's offset is a fraction of the range
    // before it grew.
    const double room = std::min(0.5, double(stack + 1) / 35.0);
    script << "set offsets 0, 0, graph " << room / (1 - room) << ", 0\n";
    plots += key_entries(r.series, colours, names, files);
    if (!cache.empty()) {
        script << data_block("cache_resident", cache);
        plots += ", \\\n     $cache_resident using 1:2 with points pt 6 ps 3.2 lw 1.5 lc rgb \"black\" title "
                 "\"ringed: cache-resident (in the last-level cache)\"";
    }
    script << "plot " << plots << "\n";
    return script.str();
}

}  // namespace

int plot_command(const PlotArgs& a) {
    const std::string& png = a.output;
    const std::string& metric = a.metric;
    const bool roofline = a.roofline;
    std::string op = a.op;
    const bool rate = metric == "rate";
    if (op.empty() && !roofline) {  // default: the first op of the first file
        const json doc = read_results(a.files[0]);
        if (doc["rows"].empty()) throw std::runtime_error("'" + a.files[0] + "' has no rows to plot");
        op = str(doc["rows"][0], "op");
    }

    const std::string gnuplot = find_on_path("gnuplot");
    if (gnuplot.empty()) {
        std::cerr << "accel-bench plot: gnuplot was not found on PATH; install it "
                     "(Debian/Ubuntu: apt-get install gnuplot-nox) and run again\n";
        return 2;
    }
    const PlotData data = roofline ? PlotData{} : collect(a.files, op, rate);
    const Roofline roof = roofline ? collect_roofline(a.files) : Roofline{};
    if (roofline && roof.series.empty())
        throw std::runtime_error("no rows with FLOP and byte counts and a kernel time in the given file(s) (files "
                                 "of an accel-bench older than the roofline lack them)");
    if (!roofline && data.series.empty())
        throw std::runtime_error("no rows of op '" + op + "' with " + (rate ? "a rate" : "a kernel time") +
                                 " in the given file(s)");

    // gnuplot writes a temporary file beside the PNG, renamed onto it once
    // complete: a failed plot leaves no PNG and keeps an existing one.
    tool_cli::AtomicFile out(png);
    std::string tmpl = (fs::temp_directory_path() / "accel-bench-plot-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("cannot create a temporary folder in " +
                                                        fs::temp_directory_path().string());
    const fs::path dir = tmpl;
    std::string log;
    bool ok = false;
    // pngcairo draws nicer lines; the libgd png terminal is the fallback.
    const auto script_text = [&](const std::string& terminal, const std::string& to) {
        return roofline ? roofline_script(roof, a.files, terminal, to) : time_script(data, a.files, op, rate, terminal, to);
    };
    for (const char* terminal : {"pngcairo", "png"}) {
        const std::string script = (dir / "plot.gp").string();
        std::ofstream(script) << script_text(terminal, out.temp_path());
        const std::string err = (dir / "gnuplot.err").string();
        const int rc = std::system((shell_quote(gnuplot) + " " + shell_quote(script) + " 2> " + shell_quote(err)).c_str());
        std::ifstream e(err);
        log.assign(std::istreambuf_iterator<char>(e), {});
        std::error_code ec;
        if (rc == 0 && fs::file_size(out.temp_path(), ec) > 0 && !ec) {
            ok = true;
            break;
        }
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
    if (!ok) {
        std::cerr << "accel-bench plot: gnuplot could not write '" << png << "' (no file written):\n" << log;
        return 2;
    }
    if (!a.script.empty()) {  // the script as it renders the PNG named by -o
        tool_cli::AtomicFile script(a.script);
        script.stream() << script_text("pngcairo", png);
        script.commit();
    }
    out.commit();
    // What was drawn, the legend's titles one per line.
    if (roofline) {
        std::cout << "wrote " << png << ": roofline, " << roof.series.size() << " series, " << roof.roof.size()
                  << " device ceiling(s):\n";
        for (const auto& [key, c] : roof.roof) std::cout << "  " << ceiling_title(c) << "\n";
        std::cout << titles(roof.series);
    } else {
        std::cout << "wrote " << png << ": " << op << " " << metric << ", " << data.series.size() << " line(s):\n"
                  << titles(data.series);
    }
    return 0;
}

}  // namespace bench
