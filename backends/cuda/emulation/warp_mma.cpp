// accel's CUDA emulation: the warp-wide PTX instructions of the tensor-core
// layer (kernels/warp_mma.cuh), ldmatrix and mma.sync.m16n8k16, implemented
// from the PTX ISA's fragment layouts (described there) over the
// emulation's warp exchange. Test infrastructure.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "../kernels/warp_mma.cuh"

#include <cstdint>
#include <cstring>

namespace accel {
namespace cuda {
namespace emulation {

namespace {

unsigned lane_of_thread() {
    return (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) % warp::kLanes;
}

// The 16-bit value `half` (0: low, 1: high) of register r.
std::uint16_t half_of(std::uint32_t r, unsigned half) { return static_cast<std::uint16_t>(half ? r >> 16 : r & 0xFFFFu); }

std::uint16_t load16(const void* p, unsigned element) {
    std::uint16_t v;
    std::memcpy(&v, static_cast<const unsigned char*>(p) + 2 * element, sizeof v);
    return v;
}

float widen(std::uint16_t bits, bool bf16) {
    return bf16 ? __bfloat162float(__nv_bfloat16{bits}) : __half2float(__half{bits});
}

}  // namespace

void ldmatrix(std::uint32_t* r, unsigned count, const void* row, bool trans) {
    const unsigned char* lanes = warp_exchange(&row, sizeof row);
    const auto row_of = [lanes](unsigned l) {
        const void* p;
        std::memcpy(&p, lanes + l * kMaxExchangeBytes, sizeof p);
        return p;
    };
    for (unsigned l = 0; l < 8 * count; ++l)
        if (reinterpret_cast<std::uintptr_t>(row_of(l)) % 16 != 0)
            illegal_in_block(": ldmatrix given a row address that is not 16-byte aligned");
    const unsigned lane = lane_of_thread(), g = lane / 4, c = lane % 4;
    for (unsigned j = 0; j < count; ++j) {
        const unsigned m = 8 * j;  // matrix j's rows are those of lanes m..m+7
        const std::uint16_t lo = trans ? load16(row_of(m + 2 * c), g) : load16(row_of(m + g), 2 * c);
        const std::uint16_t hi = trans ? load16(row_of(m + 2 * c + 1), g) : load16(row_of(m + g), 2 * c + 1);
        r[j] = lo | static_cast<std::uint32_t>(hi) << 16;
    }
}

void mma_m16n8k16(float* d, const std::uint32_t* a, const std::uint32_t* b, const float* c, bool bf16) {
    // Each lane publishes its fragments widened to f32 (exact), in value order.
    struct Values {
        float a[8], b[4];
    } mine;
    for (unsigned v = 0; v < 8; ++v) mine.a[v] = widen(half_of(a[v / 2], v % 2), bf16);
    for (unsigned v = 0; v < 4; ++v) mine.b[v] = widen(half_of(b[v / 2], v % 2), bf16);
    static_assert(sizeof mine <= kMaxExchangeBytes, "one exchange");
    const unsigned char* published = warp_exchange(&mine, sizeof mine);
    const auto lane_values = [published](unsigned l) {
        return reinterpret_cast<const Values*>(published + l * kMaxExchangeBytes);
    };
    const unsigned lane = lane_of_thread();
    float out[4];
    for (unsigned v = 0; v < 4; ++v) {
        const unsigned row = warp::c_row(lane, v), col = warp::c_col(lane, v);
        float sum = c[v];
        for (unsigned k = 0; k < 16; ++k) {
            // A[row][k]: lane 4·(row % 8) + (k % 8) / 2, value (k % 2) + 2·(row / 8) + 4·(k / 8);
            // B[k][col]: lane 4·col + (k % 8) / 2, value (k % 2) + 2·(k / 8).
            const float x = lane_values(4 * (row % 8) + (k % 8) / 2)->a[k % 2 + 2 * (row / 8) + 4 * (k / 8)];
            const float y = lane_values(4 * col + (k % 8) / 2)->b[k % 2 + 2 * (k / 8)];
            sum += x * y;  // the product is exact (f16, and bf16 within f32's range)
        }
        out[v] = sum;
    }
    std::memcpy(d, out, sizeof out);
}

}  // namespace emulation
}  // namespace cuda
}  // namespace accel
