// accel-replay: reruns one kernel call recorded by the shadow check
// (ACCEL_CHECK, accel/check.hpp) on any backends, and prints each result's
// error against the float64 oracle, beside what the recording device wrote.
// A small file that shows a backend's divergence, for a bug report.
// Exit status: 0 every backend ran the call within the op's threshold; 1 one
// diverged (or could not run it); 2 a usage error or an unreadable record.
#include <accel/accel.hpp>
#include <tool_cli.hpp>

#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string shape_text(const std::vector<std::size_t>& dims) {
    std::string s = "[";
    for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
    return s + "]";
}

std::string verdict(const accel::check::Comparison& c, double threshold) {
    std::ostringstream s;
    s.precision(4);
    s << c.nmse << (c.nmse <= threshold ? "  ok" : "  DIVERGES") << "  (worst element: output " << c.output << "["
      << c.index << "] = " << c.got << ", oracle " << c.want << ")";
    return s.str();
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"accel-replay: reruns one kernel call recorded by ACCEL_CHECK on the backends given and prints each "
                 "result's NMSE\nagainst the float64 oracle, beside the recording device's own result.",
                 "accel-replay"};
    app.footer("exit status: 0 every backend that runs the call is within the op's threshold (one without the\n"
               "call's dtype or path is listed as such); 1 one diverges, or fails to open or run it; 2 a usage\n"
               "error or a record that cannot be read.");
    std::string file, backends = "host";
    app.add_option("record", file, "a record written by ACCEL_CHECK (accel-check-*.cbor)")->required();
    app.add_option("--backends", backends, "comma-separated selectors to rerun the call on (default host)")
        ->type_name("LIST");
    if (const auto rc = tool_cli::parse(app, argc, argv)) return *rc;

    accel::check::OpRecord r;
    std::vector<std::vector<double>> want, scale;
    try {
        r = accel::check::load(file);
        want = accel::check::oracle(r);
        scale = accel::check::scale(r, want);
    } catch (const accel::Error& e) {
        std::cerr << "accel-replay: " << e.what() << "\n";
        return 2;
    }
    const accel::OpInfo& info = *accel::find_op(r.op);
    const auto shapes = accel::operand_shapes(info.op, accel::check::kernel_args(r));
    std::cout << "op " << r.seq << " (call " << r.of_op << " of " << r.op << ") recorded on " << r.device << " ("
              << r.device_name << "): " << accel::dtype_name(r.dtype) << " " << accel::path_name(r.path);
    for (std::size_t i = 0; i < shapes.size(); ++i)
        std::cout << " " << (i < info.inputs.size() ? info.inputs[i] : info.outputs[i - info.inputs.size()])
                  << shape_text(shapes[i]);
    if (r.op == "dense" || r.op == "bias_activation") std::cout << " activation " << accel::activation_name(r.act);
    const double threshold = accel::nmse_threshold(info.op, r.dtype);
    std::cout << "\nerror measured as in ACCEL_CHECK: Σ(got − oracle)² / Σ(magnitude the result is computed at)²; "
                 "threshold of " << r.op << " in " << accel::dtype_name(r.dtype) << ": " << threshold << "\n\n";
    int diverged = 0;
    if (!r.outputs_got.empty()) {
        std::vector<std::vector<double>> got;
        for (const auto& bytes : r.outputs_got) got.push_back(accel::check::widen(bytes, r.dtype));
        const auto c = accel::check::compare(got, want, scale);
        std::cout << "  recorded on " << r.device << ": NMSE " << verdict(c, threshold) << "\n";
    }
    std::stringstream list(backends);
    std::string selector;
    while (std::getline(list, selector, ',')) {
        try {
            auto device = accel::open_device(selector);
            accel::OpPath path = r.path;
            const auto got = accel::check::rerun(r, *device, &path);
            const auto c = accel::check::compare(got, want, scale);
            if (c.nmse > threshold) ++diverged;
            std::cout << "  " << device->selector() << " (" << device->name() << ", " << accel::path_name(path)
                      << "): NMSE " << verdict(c, threshold) << "\n";
        } catch (const accel::Unsupported& e) {
            // A fact of that device (no such dtype or path there), not a divergence.
            std::cout << "  " << selector << ": does not run this call: " << e.what() << "\n";
        } catch (const accel::Error& e) {
            ++diverged;
            std::cout << "  " << selector << ": cannot run it: " << e.what() << "\n";
        }
    }
    return diverged ? 1 : 0;
}
