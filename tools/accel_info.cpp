// accel-info: every backend (available, or why not), each device's facts and
// stable selector, and the device the current ACCEL_BACKEND opens.
// Matmul/dense: which path PathChoice::automatic takes, where recorded;
// `--measure-paths` measures it first where it is not recorded yet.
// Each device's physical identity (host, UUID, PCI bus id where the runtime
// reports them) is shown, and one physical device seen through two backends
// (a GPU through CUDA and OpenCL) is flagged: benchmarking or training on
// both at once shares one GPU, not two.
// Exit status: 0; 1 when a device of a backend reported available cannot be
// opened (the line of that device says why); 2 when ACCEL_BACKEND (or `auto`
// when it is unset) opens no device (the last line says why).
// `--ops [--format md|csv]` prints only the op-support matrix of every device
// (op_support.hpp), the form docs/ops/support.md and .csv are generated in.
// Lines are wrapped to the terminal (output_width()); `--wide` keeps them whole.
#include "op_support.hpp"

#include <accel/accel.hpp>
#include <tool_cli.hpp>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

namespace {

// Per op (those of accel::ops), the dtypes that run native and vendor here.
void print_op_support(std::string& out, const accel::Device& d) {
    out += tool_cli::format("      ops: dtypes native | vendor\n");
    for (const accel::OpInfo* op : accel::op_table()) {
        if (op->kernel_only) continue;
        std::string line;
        for (accel::OpPath path : {accel::OpPath::native, accel::OpPath::vendor}) {
            std::string dtypes;
            for (accel::DType t : accel::kAllDTypes)
                if (d.kernel_table().supports(op->op, t, path)) dtypes += std::string(dtypes.empty() ? "" : " ") + accel::dtype_name(t);
            line += (path == accel::OpPath::vendor ? " | " : "") + (dtypes.empty() ? std::string("-") : dtypes);
        }
        out += tool_cli::format("        %-26s %s\n", op->name.c_str(), line.c_str());
    }
}

// One device's facts; `seen` holds the devices printed before it (a second
// view of one physical device is flagged).
void print_device(std::string& out, accel::Device& dev, bool named_only, const std::string& backend,
                  std::vector<accel::DeviceInfo>& seen, bool measure_paths) {
    const std::string selector = dev.selector();
    const auto& info = dev.info();
    if (!named_only)
        out += tool_cli::format("  [%s] %s\n", selector.c_str(), info.name.c_str());
    else
        out += tool_cli::format("  [%s] %s\n      a simulator: opened only by this name, never by an index, auto or "
                    "all (not counted in %s's indices)\n",
                    selector.c_str(), info.name.c_str(), backend.c_str());
    out += tool_cli::format("      vendor %s, type %s\n", info.vendor.c_str(), info.type.c_str());
    out += tool_cli::format("      host %s, UUID %s, PCI bus id %s\n", info.host.c_str(),
                info.uuid.empty() ? "(not reported)" : info.uuid.c_str(),
                info.pci_bus_id.empty() ? "(not reported)" : info.pci_bus_id.c_str());
    for (const auto& other : seen)
        if (accel::same_physical_device(other, info))
            out += tool_cli::format("      SAME PHYSICAL DEVICE as [%s:%d] (%s): one piece of hardware seen through "
                        "two backends; do not count it twice\n",
                        other.backend.c_str(), other.index,
                        !info.uuid.empty() && info.uuid == other.uuid ? "same UUID" : "same PCI bus id");
    seen.push_back(info);
    out += tool_cli::format("      driver %s; runtime %s\n", info.driver_version.c_str(), info.runtime_version.c_str());
    const accel::MemoryInfo mem = dev.memory_info();
    out += tool_cli::format("      compute units %d, global memory %.2f GiB (accel holds %.1f MiB in use, %.1f MiB "
                "cached)\n",
                info.compute_units, info.global_memory_bytes / 1073741824.0, mem.in_use / 1048576.0,
                mem.cached / 1048576.0);
    out += tool_cli::format("      max block %zu threads (%zu, %zu, %zu), max grid (%zu, %zu, %zu)\n",
                info.limits.max_block_size, info.limits.max_block_dims.x, info.limits.max_block_dims.y,
                info.limits.max_block_dims.z, info.limits.max_grid_dims.x, info.limits.max_grid_dims.y,
                info.limits.max_grid_dims.z);
    out += tool_cli::format("      timer %s\n", info.timer.c_str());
    std::string languages;
    for (const auto& l : info.kernel_languages) languages += (languages.empty() ? "" : ", ") + l;
    out += tool_cli::format("      program kernels in: %s\n", languages.empty() ? "none" : languages.c_str());
    out += tool_cli::format("      graphs (accel::capture): %s\n", accel::Graph::mechanism(dev).c_str());
    out += tool_cli::format("      page-locked host memory: %s\n",
                            accel::PageLockedBuffer::available(dev)
                                ? "yes (accel::PageLockedBuffer; copies from and to it take the DMA path)"
                                : "none (copies of any host memory take one path)");
    const accel::Determinism& det = info.determinism;
    out += tool_cli::format("      deterministic mode (%s): %s%s\n", dev.deterministic() ? "on" : "off",
                !det.reproducible       ? "not promised, its ops are refused"
                : det.batch_invariant ? "bitwise across runs, streams and thread counts; "
                                        "products batch-invariant"
                                      : "bitwise across runs, streams and thread counts; products "
                                        "refused (not batch-invariant)",
                det.basis.empty() ? "" : ("\n        (" + det.basis + ")").c_str());
    const accel::Subnormals& sub = info.subnormals;
    std::string flushed;
    for (accel::DType t : sub.flushed) flushed += (flushed.empty() ? "" : ", ") + std::string(accel::dtype_name(t));
    out += tool_cli::format("      subnormals: %s%s\n",
                flushed.empty() ? "kept in every dtype" : ("flushed to zero in " + flushed).c_str(),
                sub.basis.empty() ? "" : ("\n        (" + sub.basis + ")").c_str());
    print_op_support(out, dev);
    if (dev.kernel_table().supports(accel::Op::matmul, accel::OpPath::vendor)) {
        // Reads the record only, unless asked to measure.
        if (measure_paths) accel::ops::path_evidence(dev);
        if (const auto ev = accel::ops::recorded_path_evidence(dev))
            out += tool_cli::format("      auto path at 256^3: %s (native %.3g, vendor %.3g GFLOP/s; %s); "
                        "other shapes are measured by class\n",
                        accel::path_name(ev->path), ev->native_gflops, ev->vendor_gflops,
                        ev->source.c_str());
        else
            out += tool_cli::format("      auto path: the faster of native and vendor per shape class, measured at "
                        "the first automatic matmul or dense of each class (no record at 256^3 yet)\n");
    }
    for (const auto& kv : info.extra) out += tool_cli::format("      %s: %s\n", kv.first.c_str(), kv.second.c_str());
}

// A backend's line, its plugin and when `auto` opens it, then its devices;
// returns how many of them failed to open.
int print_backend(std::string& out, const accel::BackendStatus& st, std::vector<accel::DeviceInfo>& seen, bool measure_paths) {
    out += st.summary() + "\n";
    if (st.plugin_found) {
        out += "  plugin " + st.plugin_path;
        for (const auto& other : st.shadowed) out += " (replaces " + other + ")";
        std::vector<std::string> when;
        const std::string rank = "(rank " + std::to_string(st.auto_rank) + ")";
        if (st.auto_rank > 0)
            when.push_back(st.availability.has_gpu ? "opens its first device, a GPU " + rank
                                                   : "opens its first device if that is a GPU " + rank +
                                                         "; none here is");
        if (st.auto_cpu_fallback) when.push_back("opens it when no backend has a GPU");
        std::string text = when.empty() ? "never: name it to use it" : when.front();
        if (when.size() > 1) text += "; " + when.back();
        out += "\n  auto: " + text + "\n";
    }
    if (!st.availability.available) return 0;
    // The devices by index, then those opened only by name (simulators).
    std::vector<std::string> selectors;
    for (int i = 0; i < st.availability.device_count; ++i) selectors.push_back(st.name + ":" + std::to_string(i));
    for (const auto& s : st.availability.named_only) selectors.push_back(s);
    int failures = 0;
    for (std::size_t k = 0; k < selectors.size(); ++k) {
        try {
            auto d = accel::open_device(selectors[k]);
            print_device(out, *d, k >= static_cast<std::size_t>(st.availability.device_count), st.name, seen,
                         measure_paths);
        } catch (const accel::Error& e) {
            out += tool_cli::format("  [%s] cannot be opened: %s\n", selectors[k].c_str(), e.what());
            ++failures;
        }
    }
    return failures;
}

// --env: every variable declared here (libaccel's, the plugins', this program's).
void print_environment(std::string& out) {
    for (const auto& v : accel::env::variables()) {
        const char* here = std::getenv(v.name.c_str());
        out += tool_cli::format("%s%s%s\n    read by %s; accepted: %s\n    %s\n", v.name.c_str(), here ? "=" : " (unset)",
                    here ? here : "", v.owner.c_str(), v.accepted.c_str(), v.meaning.c_str());
    }
}

// --ops: the op-support matrix; 1 when a device failed.
int print_op_matrix(const std::string& format) {
    const op_support::Matrix m = op_support::collect();
    std::cout << (format == "csv" ? op_support::to_csv(m) : op_support::to_markdown(m));
    for (const auto& line : m.unavailable) std::cerr << "accel-info: not in the matrix: " << line << "\n";
    for (const auto& line : m.failed) std::cerr << "accel-info: not in the matrix: " << line << "\n";
    return m.failed.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"accel-info: every backend (available, or why not), each device's facts, stable selector and "
                 "physical identity,\nand the device ACCEL_BACKEND (default auto) opens.",
                 "accel-info"};
    app.footer("exit status: 0; 1 when a device of a backend reported available cannot be opened; 2 when "
               "ACCEL_BACKEND opens no device, or a usage error.");
    bool measure_paths = false;
    app.add_flag("--measure-paths", measure_paths,
                 "measure which matmul/dense path `auto` takes on devices with no record of it yet");
    bool list_env = false;
    auto* env_flag = app.add_flag("--env", list_env,
                                  "list accel's environment variables (value here, accepted values, meaning) and exit");
    bool list_ops = false;
    auto* ops_flag = app.add_flag("--ops", list_ops,
                                  "print only the op-support matrix: each op x dtype x path on every device, and why "
                                  "each gap (docs/ops/support.md); backends and devices left out are named on stderr");
    ops_flag->excludes(env_flag)->excludes("--measure-paths");
    bool wide = false;
    app.add_flag("--wide", wide,
                 "keep every line whole (default: lines wrapped to $COLUMNS, the terminal's width or 100 columns)")
        ->excludes(ops_flag);
    std::string format = "md";
    app.add_option("--format", format, "the form of --ops: md (Markdown, for people) or csv (one line per cell)")
        ->check(tool_cli::one_of("format", {"md", "csv"}))
        ->needs(ops_flag);
    if (const auto rc = tool_cli::parse(app, argc, argv)) return *rc;
    try {
        (void)accel::backend_statuses();  // loads every plugin (their variables) and checks the environment
    } catch (const accel::Error& e) {
        std::cerr << "accel-info: " << e.what() << "\n";
        return 2;
    }
    // Long values (platform texts, kernel descriptions, paths) wrapped to the
    // terminal, their continuation lines indented under the value.
    std::string out;
    auto print = [&](int rc) {
        std::cout << (wide ? out : tool_cli::wrap_lines(out, tool_cli::output_width(), 4));
        return rc;
    };
    if (list_env) {
        print_environment(out);
        return print(0);
    }
    if (list_ops) return print_op_matrix(format);
    out += "accel " + std::string(ACCEL_VERSION) + "\n";
    out += "ACCEL_BACKEND=" + accel::env::value("ACCEL_BACKEND").value_or("(unset: auto)") + "\n\n";
    int failures = 0;
    std::vector<accel::DeviceInfo> seen;
    out += "plugin folders searched:";
    for (const auto& dir : accel::plugin_folders()) out += " " + dir;
    out += "\nselectors: " + accel::selector_grammar() + "\n\n";
    for (const auto& st : accel::backend_statuses()) failures += print_backend(out, st, seen, measure_paths);
    const std::string selector = accel::selector_from_env();
    try {
        const auto d = accel::default_device();
        out += tool_cli::format("\nACCEL_BACKEND=%s opens %s (%s)\n", selector.c_str(), d->selector().c_str(),
                d->info().name.c_str());
    } catch (const accel::Error& e) {
        out += tool_cli::format("\nACCEL_BACKEND=%s opens no device: %s\n", selector.c_str(), e.what());
        return print(2);
    }
    return print(failures ? 1 : 0);
}
