// `accel-bench --case-file FILE`: the calls a program made (an ACCEL_TRACE
// trace, or a case file of `accel-conformance --write-case-file`) timed on
// each device, side by side, and the program's total: each distinct call's
// time weighted by how often the program made it.
#include "commands.hpp"
#include "report.hpp"

#include <case_call.hpp>
#include <text_width.hpp>
#include <tool_io.hpp>

#include <algorithm>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>

namespace bench {
namespace {

using conformance::CaseFile;
using conformance::TraceCase;

// A batch of back-to-back calls (then one synchronize) is grown until it
// takes this long, so that one synchronize is a small part of its time.
constexpr double kBatchMs = 1.0;
constexpr std::size_t kMaxBatch = 4096;
constexpr int kMinSamples = 5, kMaxSamples = 1000;
// Host time one (call, device) may take in all, whatever --min-time-ms asks.
constexpr double kMaxCallMs = 2000;

// One call's times on one device: per call, over the samples (batches).
struct CallTime {
    double median_ms = 0, min_ms = 0, max_ms = 0;
    std::size_t batch = 0;  // calls per sample
    int samples = 0;
    std::string error;      // why it did not run there (then no times)
};

// The device tensors of a case's operands: inputs drawn uniformly (the op
// table's ranges for elementwise ops; [0, 1] for targets and Adam's second
// moment, which must not be negative; else [-1, 1]), outputs zero; an
// in-place operand (in both lists) one tensor.
struct Operands {
    std::vector<std::unique_ptr<accel::Tensor>> tensors;
    conformance::CaseOperands in, out;
};

Operands make_operands(const TraceCase& c, const std::shared_ptr<accel::Device>& d, std::mt19937_64& g) {
    Operands r;
    const accel::OpInfo* info = accel::find_op(c.op);
    for (std::size_t i = 0; i < c.inputs.size(); ++i) {
        const auto& o = c.inputs[i];
        std::array<float, 2> range{-1.0f, 1.0f};
        if (info && info->input_ranges.size() == info->inputs.size() && i < info->input_ranges.size())
            range = info->input_ranges[i];
        else if (o.name == "t" || o.name == "v")
            range = {0.0f, 1.0f};
        std::uniform_real_distribution<float> u(range[0], range[1]);
        std::vector<float> v(accel::Shape(o.dims).elements());
        for (float& x : v) x = u(g);
        const accel::DType t = c.op == "convert" ? c.src_dtype : c.dtype;
        r.tensors.push_back(std::make_unique<accel::Tensor>(accel::Tensor::from_host(d, accel::Shape(o.dims), v, t)));
        r.in[o.name] = r.tensors.back().get();
    }
    for (const auto& o : c.outputs) {
        if (const auto it = r.in.find(o.name); it != r.in.end()) {
            r.out[o.name] = it->second;
            continue;
        }
        if (c.op == "bce_with_logits_loss") continue;  // its loss is returned, not an operand
        const std::vector<float> zeros(accel::Shape(o.dims).elements(), 0.0f);
        r.tensors.push_back(std::make_unique<accel::Tensor>(accel::Tensor::from_host(d, accel::Shape(o.dims), zeros, c.dtype)));
        r.out[o.name] = r.tensors.back().get();
    }
    return r;
}

// Host ms per call of `k` back-to-back calls and one synchronize.
double batch_ms(accel::Device& d, const std::function<void()>& call, std::size_t k) {
    const auto t0 = Clock::now();
    for (std::size_t i = 0; i < k; ++i) call();
    d.synchronize();
    return ms_since(t0);
}

CallTime time_call(const TraceCase& c, const std::shared_ptr<accel::Device>& d, int warmup, double min_time_ms) {
    CallTime r;
    try {
        std::mt19937_64 g(0x5eed);  // the same data for a case on every device
        Operands ops = make_operands(c, d, g);
        const auto call = [&] { conformance::call_case(c, ops.in, ops.out); };
        for (int i = 0; i < warmup; ++i) batch_ms(*d, call, 1);
        std::size_t k = 1;
        const auto t0 = Clock::now();
        while (k < kMaxBatch && batch_ms(*d, call, k) < kBatchMs && ms_since(t0) < kMaxCallMs / 4) k *= 2;
        std::vector<double> per_call;
        double total = 0;
        while ((int(per_call.size()) < kMinSamples || total < min_time_ms) && int(per_call.size()) < kMaxSamples &&
               ms_since(t0) < kMaxCallMs) {
            const double ms = batch_ms(*d, call, k);
            total += ms;
            per_call.push_back(ms / double(k));
        }
        std::sort(per_call.begin(), per_call.end());
        const std::size_t n = per_call.size(), h = n / 2;
        r.median_ms = n % 2 ? per_call[h] : 0.5 * (per_call[h - 1] + per_call[h]);
        r.min_ms = per_call.front();
        r.max_ms = per_call.back();
        r.batch = k;
        r.samples = int(n);
    } catch (const accel::Error& e) {  // Unsupported, OutOfMemory, ...: that device's cell
        r.error = e.what();
    }
    return r;
}

struct DeviceColumn {
    std::string selector, stable, name;
    std::vector<CallTime> times;  // one per case
    double total_ms = 0;          // Σ calls × median over the cases that ran
    std::size_t calls_timed = 0;  // the program's calls those cases stand for
};

nlohmann::json to_json(const CaseFile& f, const std::vector<DeviceColumn>& cols) {
    nlohmann::json j{{"case_file", f.path}, {"kind", f.kind}, {"calls", f.calls}, {"cases", nlohmann::json::array()},
                     {"devices", nlohmann::json::array()}};
    for (const auto& col : cols)
        j["devices"].push_back({{"selector", col.selector}, {"stable_selector", col.stable}, {"device", col.name},
                                {"total_ms", col.total_ms}, {"calls_timed", col.calls_timed}});
    for (std::size_t i = 0; i < f.cases.size(); ++i) {
        nlohmann::json times = nlohmann::json::array();
        for (const auto& col : cols) {
            const CallTime& t = col.times[i];
            nlohmann::json cell{{"stable_selector", col.stable}};
            if (!t.error.empty()) cell["error"] = t.error;
            else
                cell.update({{"median_ms", t.median_ms}, {"min_ms", t.min_ms}, {"max_ms", t.max_ms},
                             {"batch", t.batch}, {"samples", t.samples}});
            times.push_back(cell);
        }
        j["cases"].push_back({{"call", f.cases[i].text()}, {"calls", f.cases[i].calls}, {"origin", f.cases[i].origin},
                              {"times", times}});
    }
    return j;
}

// Prose wrapped to `width` (fit_text); the table as wide as its calls' text.
void write_table(std::ostream& report, const CaseFile& f, const std::vector<DeviceColumn>& cols, std::size_t width) {
    std::ostringstream out;
    out << "accel-bench --case-file " << f.path << " (" << f.kind << "): " << f.cases.size()
        << " distinct call(s) of " << f.calls << " call(s)\n"
        << "µs per call: the median of batches of back-to-back calls, each batch timed on the host clock up to one "
           "synchronize\n\n";
    std::vector<std::string> header{"call", "calls"};
    for (const auto& col : cols) header.push_back(col.stable + " µs");
    TextTable t(header, 1);
    for (std::size_t i = 0; i < f.cases.size(); ++i) {
        std::vector<std::string> line{f.cases[i].text(), std::to_string(f.cases[i].calls)};
        for (const auto& col : cols) line.push_back(col.times[i].error.empty() ? num(col.times[i].median_ms * 1e3) : "–");
        t.add(line);
    }
    std::vector<std::string> total{"weighted total (µs)", std::to_string(f.calls)};
    for (const auto& col : cols) total.push_back(num(col.total_ms * 1e3) + (col.calls_timed < f.calls ? "*" : ""));
    t.add(total);
    t.write(out);
    out << "\nweighted total: the sum over the distinct calls of (the program's calls of it × its median)\n";
    write_device_legend(out, [&] {
        std::vector<LegendEntry> devices;
        for (const auto& col : cols) devices.push_back({col.stable, col.name, "", "", ""});
        return devices;
    }());
    for (const auto& col : cols)
        if (col.calls_timed < f.calls)
            out << "* " << col.stable << ": " << col.calls_timed << " of the " << f.calls
                << " calls; the others do not run there (notes)\n";
    for (std::size_t i = 0; i < f.cases.size(); ++i)
        for (const auto& col : cols)
            if (!col.times[i].error.empty())
                out << "note: " << f.cases[i].text() << " on " << col.stable << ": " << col.times[i].error << "\n";
    report << fit_text(out.str(), width);
}

// One line per (call, device): call, calls, stable_selector, median_ms, min_ms, max_ms, batch, samples, error.
void write_csv(std::ostream& out, const CaseFile& f, const std::vector<DeviceColumn>& cols) {
    out << "call,calls,stable_selector,device,median_ms,min_ms,max_ms,batch,samples,error\n";
    for (std::size_t i = 0; i < f.cases.size(); ++i)
        for (const auto& col : cols) {
            const CallTime& t = col.times[i];
            out << csv_field(f.cases[i].text()) << "," << f.cases[i].calls << "," << csv_field(col.stable) << ","
                << csv_field(col.name) << ",";
            if (t.error.empty())
                out << format("%.6g,%.6g,%.6g,", t.median_ms, t.min_ms, t.max_ms) << t.batch << "," << t.samples
                    << ",\n";
            else
                out << ",,,,," << csv_field(t.error) << "\n";
        }
}

}  // namespace

int case_file_command(const RunArgs& a) {
    for (const char* name : {"--ops", "--add-sizes", "--matmul-sizes", "--matmul-shapes", "--dense-shapes",
                             "--activations", "--column-sum-shapes", "--paths", "--dtypes", "--block-sizes",
                             "--repeats", "--quick", "--wide"})
        if (a.given(name))
            throw UsageError(std::string(name) + " does not apply with --case-file: the file names the calls "
                             "(ops, dtypes, shapes) and each runs on the path the device chooses, as in the program");
    CaseFile file;
    try {
        file = conformance::read_case_file(a.case_file);
    } catch (const conformance::CaseFileError& e) {
        std::cerr << "accel-bench: --case-file: " << e.what() << "\n";
        return 2;
    }
    const int warmup = a.given("--warmup") ? a.warmup : 1;
    const double min_time_ms = a.given("--min-time-ms") ? a.min_time_ms : 20;
    tool_cli::OptionalOutput out_file(a.output), json_file(a.json_output);  // a bad path fails before the run
    std::vector<DeviceColumn> cols;
    std::vector<std::shared_ptr<accel::Device>> devices;
    for (const auto& sel : resolve_backends(a.backends)) {
        devices.push_back(accel::open_device(sel));
        const accel::DeviceInfo& info = devices.back()->info();
        cols.push_back({sel, info.stable_selector.empty() ? devices.back()->selector() : info.stable_selector,
                        info.name, {}, 0, 0});
    }
    // Call by call, each on every device in turn: a slow spell of the
    // machine hits one call on all devices alike, not every call of one.
    for (const TraceCase& c : file.cases)
        for (std::size_t d = 0; d < devices.size(); ++d) {
            DeviceColumn& col = cols[d];
            if (!a.no_progress) std::cerr << "  " << col.stable << ": " << c.text() << "\n";
            col.times.push_back(time_call(c, devices[d], warmup, min_time_ms));
            if (col.times.back().error.empty()) {
                col.total_ms += double(c.calls) * col.times.back().median_ms;
                col.calls_timed += c.calls;
            }
        }
    std::ostream& out = out_file.stream();
    if (a.format == "json") out << to_json(file, cols).dump(2) << "\n";
    else if (a.format == "csv") write_csv(out, file, cols);
    else write_table(out, file, cols, tool_cli::output_width());
    if (json_file) json_file.stream() << to_json(file, cols).dump(2) << "\n";
    const std::string what = std::to_string(file.cases.size()) + " calls";
    json_file.commit(what);
    out_file.commit(what);
    for (const auto& col : cols)
        if (col.calls_timed < file.calls) return 1;
    return 0;
}

}  // namespace bench
