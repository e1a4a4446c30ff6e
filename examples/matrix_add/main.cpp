// matrix_add: C = A + B on an M×N matrix launched as the textbook 2-D grid
// of 16×16 blocks, on every available backend, checked against the host.
//
// How the 2-D geometry maps onto accel's kernels: elementwise kernels are
// 1-D grid-stride loops over the flattened, row-major tensor. A launch of
// grid (gx, gy) × block (16, 16) has a global thread range of width
// W = 16·gx and height 16·gy; thread (x, y) gets the flat index i = x + W·y
// and handles elements i, i + W·16·gy, … . When N is a multiple of 16,
// W = N and thread (x, y) is exactly element (row y, column x), as in the
// textbook kernel `C[y][x] = A[y][x] + B[y][x]`. Otherwise W > N and the
// flat index no longer equals (row, column), but every element is still
// written exactly once. The host backend reads block.x as elements per task
// and ignores the grid.
#include <example_util.hpp>

#include <accel/reference.hpp>

#include <cmath>
#include <cstdio>

namespace {

constexpr std::size_t kTile = 16;

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
    double m = 0;
    for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, double(std::fabs(a[i] - b[i])));
    return m;
}

}  // namespace

int main(int argc, char** argv) try {
    CLI::App app{"matrix_add: C = A + B on an MxN matrix launched as a 2-D grid of 16x16 blocks on every "
                 "available backend,\nchecked against the host backend and the float64 oracle.",
                 "matrix_add"};
    bool quick = false;
    app.add_flag("--quick", quick, "matrices up to 1000x1000 only");
    std::string backends;
    example::add_backends_option(app, backends);
    if (const auto rc = tool_cli::parse(app, argc, argv)) return *rc;
    std::vector<std::pair<std::size_t, std::size_t>> shapes{{32, 32}, {100, 200}, {1000, 1000}};
    if (!quick) shapes.insert(shapes.end(), {{1023, 4097}, {4096, 4096}});
    const auto devices = example::devices(backends);

    std::printf("matrix_add: C[M,N] = A + B with a 2-D grid of %zux%zu blocks, grid = (ceil(N/%zu), ceil(M/%zu)).\n"
                "thread (x, y) -> flat element x + 16*gx*y; 'exact' = that is element (row y, col x) (N %% 16 == 0).\n"
                "Each result is checked against the host backend (max |diff|) and the float64 oracle (nmse);\n"
                "kernel ms compares the 2-D launch with the device's default 1-D launch.\n\n",
                kTile, kTile, kTile, kTile);
    std::printf("%-10s %-11s %-26s %12s %7s %-9s %-30s %10s %10s %9s %9s %s\n", "device", "M x N", "2-D geometry",
                "threads", "idle %", "mapping", "default geometry", "2-D ms", "1-D ms", "max|diff|", "nmse", "ok");
    bool all_ok = true;
    for (const auto& [m, n] : shapes) {
        const auto a = example::random_floats(m * n, 3), b = example::random_floats(m * n, 4);
        const auto ref = accel::reference::add(a, b);
        std::vector<float> host_c;
        for (const auto& d : devices) {
            accel::LaunchGeometry g2;
            g2.block = {kTile, kTile, 1};
            g2.grid = {accel::ceil_div(n, kTile), accel::ceil_div(m, kTile), 1};
            accel::ops::Options o;
            o.geometry = g2;
            auto A = accel::Tensor::from_host(d, {m, n}, a), B = accel::Tensor::from_host(d, {m, n}, b);
            accel::Tensor C(d, {m, n});
            accel::ops::add(A, B, C, o);
            const std::vector<float> c = C.download();
            if (host_c.empty()) host_c = c;  // devices[0] is the host backend
            const double diff = max_abs_diff(c, host_c), err = accel::reference::nmse(c, ref);
            const bool ok = diff == 0 && err <= accel::nmse_threshold(accel::Op::add, accel::DType::f32);
            all_ok &= ok;
            const double threads = double(g2.grid.volume() * g2.block.volume());
            const double ms_2d = example::kernel_ms(*d, [&] { accel::ops::add(A, B, C, o); });
            const double ms_1d = example::kernel_ms(*d, [&] { accel::ops::add(A, B, C); });
            const std::string shape = std::to_string(m) + " x " + std::to_string(n);
            std::printf("%-10s %-11s %-26s %12.0f %6.1f%% %-9s %-30s %10.4f %10.4f %9.1e %9.1e %s\n",
                        d->selector().c_str(), shape.c_str(), g2.to_string().c_str(), threads,
                        100.0 * (1 - double(m * n) / threads), n % kTile == 0 ? "exact" : "flattened",
                        d->default_geometry(accel::Op::add, accel::DType::f32, 1, m * n).to_string().c_str(), ms_2d, ms_1d, diff, err,
                        ok ? "pass" : "FAIL");
        }
    }
    return all_ok ? 0 : 1;
} catch (const accel::Error& e) {
    std::fprintf(stderr, "matrix_add: %s\n", e.what());
    return 1;
}
