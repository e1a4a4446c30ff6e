// accel/geometry.hpp — launch geometry in CUDA terms, shared by every backend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace accel {

/// Three extents (x fastest). Used for grid sizes (in blocks) and block sizes
/// (in threads / work-items).
struct Dim3 {
    std::size_t x = 1, y = 1, z = 1;
    /// Product x*y*z (elements, threads or blocks depending on use), or
    /// SIZE_MAX when it does not fit a size_t (never a wrapped, small value).
    std::size_t volume() const noexcept {
        std::size_t xy = 0, xyz = 0;
        if (__builtin_mul_overflow(x, y, &xy) || __builtin_mul_overflow(xy, z, &xyz)) return SIZE_MAX;
        return xyz;
    }
    bool operator==(const Dim3& o) const noexcept { return x == o.x && y == o.y && z == o.z; }
    bool operator!=(const Dim3& o) const noexcept { return !(*this == o); }
};

/// How a kernel is launched, in CUDA terms: `grid` counts blocks, `block`
/// counts threads per block.
///  - CUDA: <<<grid, block>>>.
///  - OpenCL: local size = block, global size (NDRange) = grid × block.
///  - Kokkos: league size = grid.x*grid.y, team size = block volume; for
///    RangePolicy kernels block.x is the chunk size (see backends/kokkos).
///  - host: block.x is the number of elements per task; grid is ignored.
/// Elementwise kernels use grid-stride loops, so any grid ≥ 1 is correct;
/// tiled kernels (matmul, dense) document the block shapes they accept.
struct LaunchGeometry {
    Dim3 grid;
    Dim3 block;
    std::string to_string() const;
};

/// Limits a device puts on launch geometry.
struct LaunchLimits {
    std::size_t max_block_size = 1024;      ///< max threads per block (work-group size)
    Dim3 max_block_dims{1024, 1024, 64};    ///< max threads per block per dimension
    Dim3 max_grid_dims{2147483647u, 65535u, 65535u};  ///< max blocks per dimension
};

/// ceil(a / b) for b > 0 (ArrayFire's divup). Throws InvalidArgument if b == 0.
std::size_t ceil_div(std::size_t a, std::size_t b);

/// A 1-D geometry covering n elements with `block` threads per block; the
/// grid is clamped to limits.max_grid_dims.x (kernels are grid-stride, so a
/// clamped grid stays correct). n == 0 yields grid 1. Throws InvalidArgument
/// if block is 0 or above limits.max_block_size, or if the result is outside
/// `limits` (see check_geometry).
LaunchGeometry geometry_1d(std::size_t n, std::size_t block, const LaunchLimits& limits);

/// Blocks of geometry_1d_fit for n ≤ kSmallBlock elements: a vector of
/// 16 floats (AVX-512), what a CPU OpenCL runtime runs a work-group in.
constexpr std::size_t kSmallBlock = 16;

/// geometry_1d(n, b, limits) with b = min(block, kSmallBlock) when n ≤
/// kSmallBlock, else `block`. What default geometries use, so that a launch
/// over a few elements runs no large block of idle threads (an OpenCL
/// runtime on a CPU runs a work-group's work-items one after another: PoCL's
/// add of one element in a work-group of 4096 cost twice a bare enqueue).
/// Two sizes, not one fitted to each n: PoCL compiles a kernel once per
/// work-group size. Throws as geometry_1d (`block` itself must be within
/// the limits). Thread-safe (pure).
LaunchGeometry geometry_1d_fit(std::size_t n, std::size_t block, const LaunchLimits& limits);

/// A 2-D geometry covering a rows×cols output with block (bx, by) threads,
/// grid = (ceil(cols/tile_x), ceil(rows/tile_y)) where a block produces a
/// tile_x × tile_y output tile. Throws InvalidArgument if it exceeds limits.
LaunchGeometry geometry_2d(std::size_t rows, std::size_t cols, Dim3 block, std::size_t tile_x,
                           std::size_t tile_y, const LaunchLimits& limits);

/// How the native kernel of a tiled op (matmul, dense) covers its output
/// C[rows, cols] (row-major): each block of `block` threads computes one
/// tile of tile_rows × tile_cols elements of C. Tiles of rows run along
/// grid x when rows_along_x (CUDA's convention, grid.x having the largest
/// limit), else tiles of columns do (OpenCL: the NDRange's x is the column
/// index); grid.z is 1. A backend states it per output shape
/// (Device::tile_layout), and the op front-end builds the default geometry
/// from it and checks a caller's geometry against it: one check for every
/// backend.
struct TileLayout {
    Dim3 block;
    std::size_t tile_rows = 1;  ///< rows of C per block (elements)
    std::size_t tile_cols = 1;  ///< columns of C per block (elements)
    bool rows_along_x = false;
    /// Which of the backend's compiled kernels has this tile, in the
    /// backend's own numbering, where block and tile extents do not tell
    /// them apart (OpenCL's general and narrow tiles); 0 elsewhere. The
    /// backend launches the kernel of the layout it gets back in
    /// KernelArgs::tile.
    std::size_t variant = 0;
};

/// The smallest geometry of layout `t` covering a rows × cols output (at
/// least one block along each axis). Throws InvalidArgument, naming `what`,
/// when a tile extent is 0 or the geometry exceeds `limits`. Thread-safe (pure).
LaunchGeometry tiled_geometry(const TileLayout& t, std::size_t rows, std::size_t cols, const LaunchLimits& limits,
                              const std::string& what);

/// Throws InvalidArgument unless g has t's block, grid.z == 1 and at least
/// the tiles along x and y that cover a rows × cols output; the message
/// names `what`, the geometry given, and the block and smallest grid that
/// would be right. Thread-safe (pure).
void check_tiled_geometry(const LaunchGeometry& g, const TileLayout& t, std::size_t rows, std::size_t cols,
                          const std::string& what);

/// Throws InvalidArgument naming the offending field and the device's limit
/// when g has a zero extent, a block volume above max_block_size or of
/// SIZE_MAX (what Dim3::volume() gives on overflow), or any block/grid
/// dimension above its maximum. `what` names the op for the message. Thread-safe (pure).
void check_geometry(const LaunchGeometry& g, const LaunchLimits& limits, const std::string& what);

}  // namespace accel
