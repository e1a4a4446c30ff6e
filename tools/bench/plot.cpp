// `accel-bench plot`: log-log time (or rate) against size, one line per
// device and path, drawn by gnuplot from data files in a temporary folder.
#include "cli.hpp"
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

struct Series {
    std::vector<std::pair<double, double>> points;  // (size, value)
};

struct PlotData {
    std::map<std::string, Series> series;  // by legend title
    std::string size_unit, rate_unit;
};

// Points of `op` from every file; the legend names the machine too when several files are given.
PlotData collect(const std::vector<std::string>& files, const std::string& op, bool rate) {
    PlotData d;
    for (const auto& file : files) {
        const json doc = read_results(file);
        const std::string host = doc.contains("machine") ? str(doc["machine"], "hostname") : "";
        for (const auto& row : doc["rows"]) {
            if (str(row, "op") != op || !row.contains("kernel_ms") || !row.contains("size")) continue;
            const char* rate_key = row.contains("gflops") ? "gflops" : "gbps";
            if (rate && !row.contains(rate_key)) continue;
            const double y = rate ? row[rate_key].get<double>() : row["kernel_ms"].value("median", 0.0);
            if (y <= 0) continue;
            std::string title = str(row, "device") + " (" + str(row, "selector") + ", " + str(row, "path");
            if (!row.value("default_geometry", true)) title += ", block " + str(row, "block");
            title += ")";
            if (files.size() > 1) title = (host.empty() ? file : host) + ": " + title;
            d.series[clean(title)].points.emplace_back(row["size"].get<double>(), y);
            d.size_unit = str(row, "size_unit");
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
           << "set title \"accel-bench: " << op << (rate ? " rate" : " kernel time") << " (log-log)\"\n"
           << "set xlabel \"size (" << d.size_unit << ")\"\n"
           << "set ylabel \"" << (rate ? d.rate_unit : std::string("kernel time, median (ms)")) << "\"\n"
           << "plot ";
    int i = 0;
    for (const auto& [title, s] : d.series) {
        auto points = s.points;
        std::sort(points.begin(), points.end());
        const fs::path data = dir / ("series" + std::to_string(i) + ".dat");
        std::ofstream f(data);
        for (const auto& p : points) f << p.first << " " << p.second << "\n";
        script << (i ? ", \\\n     " : "") << "\"" << clean(data.string()) << "\" using 1:2 with linespoints title \""
               << title << "\"";
        ++i;
    }
    script << "\n";
    return (dir / "plot.gp").string();
}

}  // namespace

int plot_command(const std::vector<std::string>& argv) {
    const Args args = parse_args(argv, {}, {"-o", "--op", "--metric"});
    if (args.positional.empty()) throw UsageError("plot needs at least one RESULTS.json");
    std::string png, op, metric = "time";
    for (const auto& [name, value] : args.options) {
        if (name == "-o") png = value;
        else if (name == "--op") op = value;
        else if (name == "--metric") metric = value;
    }
    if (png.empty()) throw UsageError("plot needs -o out.png");
    if (metric != "time" && metric != "rate")
        throw UsageError("--metric: unknown value '" + metric + "'; valid: time, rate");
    const bool rate = metric == "rate";
    if (op.empty()) {  // default: the first op of the first file
        const json doc = read_results(args.positional[0]);
        if (doc["rows"].empty()) throw std::runtime_error("'" + args.positional[0] + "' has no rows to plot");
        op = str(doc["rows"][0], "op");
    }

    const std::string gnuplot = find_on_path("gnuplot");
    if (gnuplot.empty()) {
        std::cerr << "accel-bench plot: gnuplot was not found on PATH; install it "
                     "(Debian/Ubuntu: apt-get install gnuplot-nox) and run again\n";
        return 2;
    }
    const PlotData data = collect(args.positional, op, rate);
    if (data.series.empty())
        throw std::runtime_error("no rows of op '" + op + "' with " + (rate ? "a rate" : "a kernel time") +
                                 " in the given file(s)");

    std::string tmpl = (fs::temp_directory_path() / "accel-bench-plot-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("cannot create a temporary folder in " +
                                                        fs::temp_directory_path().string());
    const fs::path dir = tmpl;
    std::string log;
    bool ok = false;
    // pngcairo draws nicer lines; the libgd png terminal is the fallback.
    for (const char* terminal : {"pngcairo", "png"}) {
        fs::remove(png);
        const std::string script = write_script(dir, data, op, rate, terminal, png);
        const std::string err = (dir / "gnuplot.err").string();
        const int rc = std::system((shell_quote(gnuplot) + " " + shell_quote(script) + " 2> " + shell_quote(err)).c_str());
        std::ifstream e(err);
        log.assign(std::istreambuf_iterator<char>(e), {});
        std::error_code ec;
        if (rc == 0 && fs::file_size(png, ec) > 0 && !ec) {
            ok = true;
            break;
        }
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
    if (!ok) {
        std::cerr << "accel-bench plot: gnuplot could not write '" << png << "':\n" << log;
        return 2;
    }
    std::cout << "wrote " << png << ": " << op << " " << metric << ", " << data.series.size() << " line(s)\n";
    return 0;
}

}  // namespace bench
