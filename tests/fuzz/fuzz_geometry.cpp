// Fuzzes the launch-geometry checks with any device limits: check_geometry,
// geometry_1d and geometry_2d either refuse with accel::InvalidArgument (a
// short, one-line message) or give a geometry that is within the limits,
// checked here independently in 128-bit arithmetic, and that covers the
// problem (geometry_1d: unless its grid was clamped to the limit).
#include "fuzz.hpp"
#include "values.hpp"

#include <accel/error.hpp>
#include <accel/geometry.hpp>

#include <cstdint>

namespace {

using u128 = unsigned __int128;

accel::Dim3 fuzzed_dim3(FuzzedDataProvider& in) {
    accel::Dim3 d;
    d.x = fuzzed_extent(in);
    d.y = fuzzed_extent(in);
    d.z = fuzzed_extent(in);
    return d;
}

bool within(const accel::LaunchGeometry& g, const accel::LaunchLimits& l) {
    const accel::Dim3 &b = g.block, &gr = g.grid, &mb = l.max_block_dims, &mg = l.max_grid_dims;
    if (!b.x || !b.y || !b.z || !gr.x || !gr.y || !gr.z) return false;
    if (b.x > mb.x || b.y > mb.y || b.z > mb.z || gr.x > mg.x || gr.y > mg.y || gr.z > mg.z) return false;
    const u128 xy = u128(b.x) * b.y;  // < 2^128: cannot wrap
    return xy <= l.max_block_size && xy * b.z <= l.max_block_size;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider in(data, size);
    accel::LaunchLimits limits;
    limits.max_block_size = fuzzed_extent(in);
    limits.max_block_dims = fuzzed_dim3(in);
    limits.max_grid_dims = fuzzed_dim3(in);
    accel::LaunchGeometry g;
    try {
        switch (in.ConsumeIntegralInRange<int>(0, 2)) {
            case 0: {
                g = {fuzzed_dim3(in), fuzzed_dim3(in)};
                accel::check_geometry(g, limits, "fuzz");
                break;
            }
            case 1: {
                const std::size_t n = fuzzed_extent(in), block = fuzzed_extent(in);
                g = accel::geometry_1d(n, block, limits);
                ACCEL_FUZZ_CHECK(g.block.x == block && g.block.y == 1 && g.block.z == 1);
                ACCEL_FUZZ_CHECK(g.grid.y == 1 && g.grid.z == 1);
                ACCEL_FUZZ_CHECK(u128(g.grid.x) * block >= n || g.grid.x == limits.max_grid_dims.x);
                break;
            }
            default: {
                const std::size_t rows = fuzzed_extent(in), cols = fuzzed_extent(in);
                const accel::Dim3 block = fuzzed_dim3(in);
                const std::size_t tile_x = fuzzed_extent(in), tile_y = fuzzed_extent(in);
                g = accel::geometry_2d(rows, cols, block, tile_x, tile_y, limits);
                ACCEL_FUZZ_CHECK(g.block == block);
                ACCEL_FUZZ_CHECK(u128(g.grid.x) * tile_x >= cols && u128(g.grid.y) * tile_y >= rows);
                break;
            }
        }
    } catch (const accel::InvalidArgument& e) {
        ACCEL_FUZZ_CHECK_MESSAGE(e.what());
        return 0;
    }
    ACCEL_FUZZ_CHECK(within(g, limits));
    return 0;
}
