// `accel-bench plot`: log-log time (or rate) against size, one line per
// file, device, path and dtype; or, with --roofline, the roofline of every row (Williams,
// Waterman and Patterson, "Roofline", CACM 52(4), 2009: arithmetic intensity
// FLOP/byte against attained GFLOP/s, each device's ceilings as
// min(peak FMA, bandwidth × intensity)); drawn by gnuplot from data files in
// a temporary folder.
#include "commands.hpp"
#include "report.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
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

// What legends put first when several files are plotted: the file's name as given.
std::string file_prefix(const std::vector<std::string>& files, std::size_t i) {
    return files.size() > 1 ? files[i] + ": " : "";
}

// One line (or set of points) of a plot: its legend title and its points.
struct Series {
    std::string title;
    std::vector<std::pair<double, double>> points;  // (size, value)
};

// Series by key: the file's index first (files in the order given), then the
// title, which names everything else that sets series apart. Keying by file
// keeps two files' rows of one device (host:0 of two runs) apart.
using SeriesMap = std::map<std::pair<std::size_t, std::string>, Series>;

void add_point(SeriesMap& m, std::size_t file, const std::string& title, double x, double y) {
    Series& s = m[{file, title}];
    s.title = title;
    s.points.emplace_back(x, y);
}

// The series titles, one per line, for the command's report.
std::string titles(const SeriesMap& m) {
    std::string out;
    for (const auto& [key, s] : m) out += "  " + s.title + "\n";
    return out;
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
            add_point(d.series, f, clean(title), row["size"].get<double>(), y);
            d.size_unit = str(row, "size_unit");
            d.op_texts.insert(op_text(row));
            d.rate_unit = std::string(rate_key) == "gflops" ? "GFLOP/s" : "GB/s";
        }
    }
    return d;
}

// Writes the data files and the script into `dir`; returns the script path.
std::string write_script(const fs::path& dir, const PlotData& d, const std::string& op, bool rate,
                         const std::string& terminal, const std::string& png) {
    std::ofstream script(dir / "plot.gp");
    script << "set terminal " << terminal << " size 1100,700\n"
           << "set output \"" << clean(png) << "\"\n"
           << "set logscale xy\nset grid\nset key below height 1.5\nset format x \"%g\"\n"
           << "set title \"accel-bench: " << (d.op_texts.size() == 1 ? *d.op_texts.begin() : op)
           << (rate ? " rate" : " kernel time") << " (log-log)\"\n"
           << "set xlabel \"size (" << d.size_unit << ")\"\n"
           << "set ylabel \"" << (rate ? d.rate_unit : std::string("kernel time, median (ms)")) << "\"\n"
           << "plot ";
    int i = 0;
    for (const auto& [key, s] : d.series) {
        auto points = s.points;
        std::sort(points.begin(), points.end());
        const fs::path data = dir / ("series" + std::to_string(i) + ".dat");
        std::ofstream f(data);
        for (const auto& p : points) f << p.first << " " << p.second << "\n";
        script << (i ? ", \\\n     " : "") << "\"" << clean(data.string()) << "\" using 1:2 with linespoints title \""
               << s.title << "\"";
        ++i;
    }
    script << "\n";
    return (dir / "plot.gp").string();
}

// The roofline: one point per row with a FLOP and byte count, one series per
// (file, device, path, dtype); one ceiling per device of each file, from that
// file's own figures (each run measured its devices' ceilings).
struct Roofline {
    SeriesMap series;  // x = FLOP/byte, y = GFLOP/s
    struct Ceiling {
        std::string title;
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
                if (bw > 0 && peak > 0) r.roof[{f, device_id(d)}] = {clean(prefix + device_id(d)), bw, peak};
            }
        for (const auto& row : doc["rows"]) {
            const double flops = row.value("flops", 0.0), bytes = row.value("bytes", 0.0);
            const double ms = row.contains("kernel_ms") ? row["kernel_ms"].value("median", 0.0) : 0.0;
            if (flops <= 0 || bytes <= 0 || ms <= 0 || row.contains("error")) continue;
            const std::string dtype = str(row, "dtype").empty() ? "f32" : str(row, "dtype");
            add_point(r.series, f, clean(prefix + device_id(row) + " " + str(row, "path") + " " + dtype),
                      flops / bytes, flops / (ms * 1e6));
        }
    }
    return r;
}

std::string ceiling_title(const Roofline::Ceiling& c) {
    return c.title + " ceilings (" + num(c.gbps) + " GB/s, " + num(c.gflops) + " GFLOP/s)";
}

std::string write_roofline_script(const fs::path& dir, const Roofline& r, const std::string& terminal,
                                  const std::string& png) {
    std::ofstream script(dir / "plot.gp");
    script << "set terminal " << terminal << " size 1100,750\n"
           << "set output \"" << clean(png) << "\"\n"
           << "set logscale xy\nset grid\nset key below height 1.5\nset format x \"%g\"\nset samples 400\n"
           << "set title \"accel-bench roofline: attained GFLOP/s against arithmetic intensity (one point per row; "
              "lines: each device's ceilings)\"\n"
           << "set xlabel \"arithmetic intensity (FLOP per byte moved, op table counts)\"\n"
           << "set ylabel \"GFLOP/s (warm median)\"\n"
           << "set xrange [0.01:1000]\n";
    int i = 0;
    std::string plots;
    for (const auto& [key, c] : r.roof) {
        script << "roof" << i << "(x) = x * " << c.gbps << " < " << c.gflops << " ? x * " << c.gbps << " : "
               << c.gflops << "\n";
        plots += std::string(plots.empty() ? "" : ", \\\n     ") + "roof" + std::to_string(i) +
                 "(x) with lines dashtype 2 lw 2 title \"" + ceiling_title(c) + "\"";
        ++i;
    }
    int k = 0;
    for (const auto& [key, s] : r.series) {
        const fs::path data = dir / ("roof" + std::to_string(k++) + ".dat");
        std::ofstream f(data);
        for (const auto& p : s.points) f << p.first << " " << p.second << "\n";
        plots += std::string(plots.empty() ? "" : ", \\\n     ") + "\"" + clean(data.string()) +
                 "\" using 1:2 with points pointsize 1.5 title \"" + s.title + "\"";
    }
    script << "plot " << plots << "\n";
    return (dir / "plot.gp").string();
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
    for (const char* terminal : {"pngcairo", "png"}) {
        const std::string script = roofline ? write_roofline_script(dir, roof, terminal, out.temp_path())
                                            : write_script(dir, data, op, rate, terminal, out.temp_path());
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
