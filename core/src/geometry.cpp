#include <accel/error.hpp>
#include <accel/geometry.hpp>

#include <algorithm>
#include <sstream>

namespace accel {

std::string LaunchGeometry::to_string() const {
    std::ostringstream s;
    s << "grid(" << grid.x << "," << grid.y << "," << grid.z << ") block(" << block.x << "," << block.y << ","
      << block.z << ")";
    return s.str();
}

std::size_t ceil_div(std::size_t a, std::size_t b) {
    if (b == 0) throw InvalidArgument("ceil_div: divisor is 0; it must be positive");
    return a / b + (a % b != 0);
}

namespace {
// The block of a 1-D geometry, given to `what`, is within the device's limits.
void check_block_1d(std::size_t block, const LaunchLimits& limits, const char* what) {
    if (block == 0 || block > limits.max_block_size || block > limits.max_block_dims.x)
        throw InvalidArgument(std::string(what) + ": block of " + std::to_string(block) +
                              " threads; it must be in 1.." + std::to_string(std::min(
                                  limits.max_block_size, limits.max_block_dims.x)) + " on this device");
}
}  // namespace

LaunchGeometry geometry_1d(std::size_t n, std::size_t block, const LaunchLimits& limits) {
    check_block_1d(block, limits, "geometry_1d");
    LaunchGeometry g;
    g.block = {block, 1, 1};
    g.grid = {std::max<std::size_t>(1, std::min(ceil_div(n, block), limits.max_grid_dims.x)), 1, 1};
    check_geometry(g, limits, "geometry_1d");  // limits of 0 leave no geometry to give
    return g;
}

LaunchGeometry geometry_1d_fit(std::size_t n, std::size_t block, const LaunchLimits& limits) {
    check_block_1d(block, limits, "geometry_1d_fit");
    return geometry_1d(n, n <= kSmallBlock ? std::min(block, kSmallBlock) : block, limits);
}

LaunchGeometry geometry_2d(std::size_t rows, std::size_t cols, Dim3 block, std::size_t tile_x,
                           std::size_t tile_y, const LaunchLimits& limits) {
    LaunchGeometry g;
    g.block = block;
    g.grid = {std::max<std::size_t>(1, ceil_div(cols, tile_x)), std::max<std::size_t>(1, ceil_div(rows, tile_y)), 1};
    check_geometry(g, limits, "geometry_2d");
    return g;
}

namespace {
// Tiles along grid x and y that cover a rows × cols output with layout t.
Dim3 tiles_needed(const TileLayout& t, std::size_t rows, std::size_t cols, const std::string& what) {
    if (t.tile_rows == 0 || t.tile_cols == 0)
        throw InvalidArgument(what + ": the backend's tile layout has a zero extent (" + std::to_string(t.tile_rows) +
                              "x" + std::to_string(t.tile_cols) + "); a tile must cover at least one element");
    const std::size_t along_rows = std::max<std::size_t>(1, ceil_div(rows, t.tile_rows));
    const std::size_t along_cols = std::max<std::size_t>(1, ceil_div(cols, t.tile_cols));
    return t.rows_along_x ? Dim3{along_rows, along_cols, 1} : Dim3{along_cols, along_rows, 1};
}
}  // namespace

LaunchGeometry tiled_geometry(const TileLayout& t, std::size_t rows, std::size_t cols, const LaunchLimits& limits,
                              const std::string& what) {
    LaunchGeometry g;
    g.block = t.block;
    g.grid = tiles_needed(t, rows, cols, what);
    check_geometry(g, limits, what);
    return g;
}

void check_tiled_geometry(const LaunchGeometry& g, const TileLayout& t, std::size_t rows, std::size_t cols,
                          const std::string& what) {
    const Dim3 need = tiles_needed(t, rows, cols, what);
    if (g.block == t.block && g.grid.z == 1 && g.grid.x >= need.x && g.grid.y >= need.y) return;
    const auto dims = [](const Dim3& d) {
        return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
    };
    throw InvalidArgument(what + ": launch geometry " + g.to_string() + " rejected: the native kernel computes " +
                          std::to_string(t.tile_rows) + "x" + std::to_string(t.tile_cols) +
                          " tiles (rows x columns) of the " + std::to_string(rows) + "x" + std::to_string(cols) +
                          " output, one per block, " + (t.rows_along_x ? "row" : "column") +
                          " tiles along grid x; it needs block" + dims(t.block) + " and a grid of at least " +
                          dims(need) + " (leave Options::geometry unset for that default)");
}

void check_geometry(const LaunchGeometry& g, const LaunchLimits& l, const std::string& what) {
    auto fail = [&](const std::string& why) {
        throw InvalidArgument(what + ": launch geometry " + g.to_string() + " rejected: " + why);
    };
    if (g.grid.x == 0 || g.grid.y == 0 || g.grid.z == 0 || g.block.x == 0 || g.block.y == 0 || g.block.z == 0)
        fail("every extent must be at least 1");
    // volume() gives SIZE_MAX when x·y·z overflows: too many for any device,
    // even one whose max_block_size is SIZE_MAX.
    const std::size_t threads = g.block.volume();
    if (threads == SIZE_MAX || threads > l.max_block_size)
        fail("block has " + (threads == SIZE_MAX ? std::string("more threads than a size_t counts") :
                             std::to_string(threads) + " threads") +
             "; this device allows at most " + std::to_string(l.max_block_size) + " per block");
    const char* axis[] = {"x", "y", "z"};
    const std::size_t b[] = {g.block.x, g.block.y, g.block.z}, mb[] = {l.max_block_dims.x, l.max_block_dims.y,
                                                                        l.max_block_dims.z};
    const std::size_t gr[] = {g.grid.x, g.grid.y, g.grid.z}, mg[] = {l.max_grid_dims.x, l.max_grid_dims.y,
                                                                      l.max_grid_dims.z};
    for (int i = 0; i < 3; ++i) {
        if (b[i] > mb[i])
            fail(std::string("block.") + axis[i] + " = " + std::to_string(b[i]) + " exceeds the device's " +
                 std::to_string(mb[i]));
        if (gr[i] > mg[i])
            fail(std::string("grid.") + axis[i] + " = " + std::to_string(gr[i]) + " exceeds the device's " +
                 std::to_string(mg[i]));
    }
}

}  // namespace accel
