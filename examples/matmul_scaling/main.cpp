// matmul_scaling: GFLOP/s of C = A·B (N×N, float32) as N grows, for every
// available device and both paths: native (accel's own tiled kernel, the same
// algorithm everywhere) and vendor (CPU BLAS, CLBlast, cuBLAS, Kokkos Kernels).
#include <example_util.hpp>

#include <accel/reference.hpp>

#include <cstdio>

namespace {

// Rows of A checked against the float64 oracle (the full float64 product of a large N takes too long).
constexpr std::size_t kCheckedRows = 4;

struct Column {
    std::shared_ptr<accel::Device> device;
    accel::OpPath path;
    std::string title;
};

}  // namespace

int main(int argc, char** argv) try {
    CLI::App app{"matmul_scaling: GFLOP/s of C = A·B (NxN, float32) as N doubles from 64, for every available "
                 "device and both\npaths (native: accel's tiled kernel; vendor: CPU BLAS, CLBlast, cuBLAS, Kokkos "
                 "Kernels).",
                 "matmul_scaling"};
    bool quick = false;
    std::size_t max_n = 0;
    app.add_flag("--quick", quick, "N = 64, 128 only");
    CLI::Option* max_n_opt =
        app.add_option("--max-n", max_n, "the largest N (default 4096 when a GPU is available, else 2048)")
            ->check(CLI::Range(std::size_t{64}, std::size_t{1} << 16))
            ->excludes(app.get_option("--quick"));
    std::string backends;
    example::add_backends_option(app, backends);
    if (const auto rc = tool_cli::parse(app, argc, argv)) return *rc;
    const auto devices = example::devices(backends);
    bool gpu = false;
    for (const auto& d : devices) gpu |= d->info().type == "gpu";
    if (quick) max_n = 128;
    else if (!max_n_opt->count()) max_n = gpu ? 4096 : 2048;

    std::vector<Column> columns;
    for (const auto& d : devices)
        for (accel::OpPath p : {accel::OpPath::native, accel::OpPath::vendor})
            if (d->kernel_table().supports(accel::Op::matmul, p))
                columns.push_back({d, p, d->selector() + " " + accel::path_name(p)});

    std::printf("matmul_scaling: C[N,N] = A[N,N]·B[N,N], float32, GFLOP/s = 2·N^3 / kernel time (device events, "
                "median).\nEach result is checked on %zu rows against the float64 oracle (nmse <= %.0e).\n\n",
                kCheckedRows, accel::nmse_threshold(accel::Op::matmul, accel::DType::f32));
    for (const auto& c : columns) std::printf("  %-22s %s\n", c.title.c_str(), c.device->info().name.c_str());
    std::printf("\n%6s", "N");
    for (const auto& c : columns) std::printf(" %22s", c.title.c_str());
    std::printf("\n");

    bool all_ok = true;
    for (std::size_t n = 64; n <= max_n; n *= 2) {
        const auto a = example::random_floats(n * n, 5), b = example::random_floats(n * n, 6);
        // Oracle on the first kCheckedRows rows of C.
        const std::vector<float> a_rows(a.begin(), a.begin() + kCheckedRows * n);
        const auto ref = accel::reference::matmul(a_rows, b, kCheckedRows, n, n);
        std::printf("%6zu", n);
        for (const auto& c : columns) {
            accel::ops::Options o;
            o.path = c.path == accel::OpPath::vendor ? accel::ops::PathChoice::vendor : accel::ops::PathChoice::native;
            auto A = accel::Tensor::from_host(c.device, {n, n}, a), B = accel::Tensor::from_host(c.device, {n, n}, b);
            accel::Tensor C(c.device, {n, n});
            const double ms = example::kernel_ms(*c.device, [&] { accel::ops::matmul(A, B, C, {}, o); }, 3);
            std::vector<float> got(kCheckedRows * n);
            C.buffer().download(got.data(), got.size() * sizeof(float));  // row-major: first rows first
            const bool ok = accel::reference::nmse(got, ref) <= accel::nmse_threshold(accel::Op::matmul, accel::DType::f32);
            all_ok &= ok;
            std::printf(" %21.2f%s", 2.0 * double(n) * n * n / (ms * 1e6), ok ? " " : "!");
        }
        std::printf("\n");
        std::fflush(stdout);
    }
    if (!all_ok) std::printf("\n'!' marks a result that failed the oracle check\n");
    return all_ok ? 0 : 1;
} catch (const accel::Error& e) {
    std::fprintf(stderr, "matmul_scaling: %s\n", e.what());
    return 1;
}
