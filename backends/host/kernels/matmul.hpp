// Host native matmul: the packed, register-blocked CPU GEMM of
// backends/common/cpu_gemm.hpp, tiles of C spread over OpenMP threads.
#pragma once

#include <cstddef>

namespace accel {
namespace host {

/// C[m,n] = op(A)·op(B), row-major, op = transpose when ta/tb (see ops::matmul).
/// Writes every element of C (zeros when k == 0).
void matmul_native(const float* a, const float* b, float* c, std::size_t m, std::size_t n, std::size_t k, bool ta,
                   bool tb);

}  // namespace host
}  // namespace accel
