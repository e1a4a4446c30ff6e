// vector_add: c = a + b for N = 1e3 … 5e7 on every available backend.
//
// For each N and device it prints the kernel time (device events), the
// end-to-end time (upload a and b, add, download c; host clock) and the share
// of the end-to-end time the host<->device copies take. A device "wins" at N
// when its time beats the host backend's kernel time: the host needs no
// copies, its data already lives in host memory.
#include <example_util.hpp>

#include <accel/reference.hpp>

#include <cstdio>

namespace {

struct Timing {
    double kernel_ms = 0, e2e_ms = 0;
};

// Times c = a + b on `d`; exits with status 1 if the result is wrong.
Timing measure(const std::shared_ptr<accel::Device>& d, const std::vector<float>& a, const std::vector<float>& b,
               const accel::reference::Vec& ref) {
    const std::size_t n = a.size();
    accel::Tensor ta(d, {n}), tb(d, {n}), tc(d, {n});
    std::vector<float> c(n);
    Timing t;
    t.e2e_ms = example::wall_ms([&] {
        ta.upload(a);
        tb.upload(b);
        accel::ops::add(ta, tb, tc);
        tc.download(c.data(), n);
    });
    const double err = accel::reference::nmse(c, ref);
    if (!(err <= accel::nmse_threshold(accel::Op::add, accel::DType::f32))) {
        std::fprintf(stderr, "wrong result on %s at N=%zu: nmse %.3e\n", d->selector().c_str(), n, err);
        std::exit(1);
    }
    t.kernel_ms = example::kernel_ms(*d, [&] { accel::ops::add(ta, tb, tc); });
    return t;
}

}  // namespace

int main(int argc, char** argv) try {
    CLI::App app{"vector_add: c = a + b (float32) for N = 1e3 ... 5e7 on every available backend: kernel time, "
                 "end-to-end time\n(with the copies) and the copies' share, against the host backend.",
                 "vector_add"};
    bool quick = false;
    app.add_flag("--quick", quick, "N up to 1e5 only");
    std::string backends;
    example::add_backends_option(app, backends);
    if (const auto rc = tool_cli::parse(app, argc, argv)) return *rc;
    std::vector<std::size_t> sizes{1000, 10000, 100000};
    if (!quick) sizes.insert(sizes.end(), {1000000, 10000000, 50000000});
    const auto devices = example::devices(backends);

    std::printf("vector_add: c = a + b (float32). kernel = device events around the add; e2e = upload a,b + add + "
                "download c (host clock);\ncopy %% = share of e2e spent outside the kernel. Times in ms, medians.\n\n");
    std::printf("%10s", "N");
    for (const auto& d : devices) std::printf(" | %-30s", d->selector().c_str());
    std::printf("\n%10s", "");
    for (std::size_t i = 0; i < devices.size(); ++i) std::printf(" | %9s %10s %8s", "kernel", "e2e", "copy %");
    std::printf("\n");

    std::vector<std::size_t> wins_kernel(devices.size(), 0), wins_e2e(devices.size(), 0);
    for (std::size_t n : sizes) {
        const auto a = example::random_floats(n, 1), b = example::random_floats(n, 2);
        const auto ref = accel::reference::add(a, b);
        std::printf("%10zu", n);
        double host_kernel = 0;
        for (std::size_t i = 0; i < devices.size(); ++i) {
            const Timing t = measure(devices[i], a, b, ref);
            if (i == 0) host_kernel = t.kernel_ms;
            const double copy = t.e2e_ms > 0 ? 100.0 * std::max(0.0, t.e2e_ms - t.kernel_ms) / t.e2e_ms : 0;
            std::printf(" | %9.4f %10.4f %7.1f%%", t.kernel_ms, t.e2e_ms, copy);
            if (i > 0 && !wins_kernel[i] && t.kernel_ms < host_kernel) wins_kernel[i] = n;
            if (i > 0 && !wins_e2e[i] && t.e2e_ms < host_kernel) wins_e2e[i] = n;
        }
        std::printf("\n");
    }
    std::printf("\n");
    for (std::size_t i = 1; i < devices.size(); ++i) {
        auto when = [](std::size_t n) { return n ? "from N = " + std::to_string(n) : std::string("at no N measured"); };
        std::printf("%s (%s) beats the host backend: kernel only %s; with copies %s\n", devices[i]->selector().c_str(),
                    devices[i]->info().name.c_str(), when(wins_kernel[i]).c_str(), when(wins_e2e[i]).c_str());
    }
    if (devices.size() == 1) std::printf("only the host backend is available here: nothing to compare with\n");
    return 0;
} catch (const accel::Error& e) {
    std::fprintf(stderr, "vector_add: %s\n", e.what());
    return 1;
}
