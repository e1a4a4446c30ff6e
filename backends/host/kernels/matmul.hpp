// Host native matmul: the packed, register-blocked CPU GEMM of
// backends/common/cpu_gemm.hpp, tiles of C spread over OpenMP threads.
#pragma once

#include <cstddef>

namespace accel {
namespace host {

/// C[m,n] = op(A)·op(B), row-major (A stored [m,k], or [k,m] when ta; B
/// stored [k,n], or [n,k] when tb; see ops::matmul), accumulated in the
/// element type (f32 or f64). Writes every element of C (zeros when k == 0).
/// Runs on the OpenMP team; thread-safe for distinct C.
void matmul_native(const float* a, const float* b, float* c, std::size_t m, std::size_t n, std::size_t k, bool ta,
                   bool tb);
void matmul_native(const double* a, const double* b, double* c, std::size_t m, std::size_t n, std::size_t k, bool ta,
                   bool tb);

}  // namespace host
}  // namespace accel
