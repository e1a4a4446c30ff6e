// HIP vendor path: rocBLAS, loaded by name at run time, the twin of
// backends/cuda/cuda_vendor.cpp. Debian and many ROCm installs lack rocBLAS,
// so the plugin never links it: the first device opened looks for
// librocblas.so.4 (ROCm 6), .3 (ROCm 5), .0 and librocblas.so, and the vendor
// path is then available on every device, or unsupported with the loader's
// reason. The few entry points used are declared here with their rocBLAS
// values (rocblas-types.h): column-major, int dimensions, host scalars.
//
// Precision policy, per dtype (as the CUDA vendor path):
//   f32   rocblas_sgemm: FP32 throughout (rocBLAS has no TF32 mode on these
//         targets).
//   f64   rocblas_dgemm.
//   f16,  rocblas_gemm_ex with A, B, C and D in f16_r / bf16_r and
//   bf16  compute_type f32_r: products and sums in FP32, D rounded once to
//         16 bits.
#include "../cuda/cuda_device.hpp"

#include <accel/error.hpp>

#include <dlfcn.h>

#include <climits>
#include <cstdint>
#include <mutex>
#include <string>

#ifdef ACCEL_CUDA_EMULATION
#include "emulation/rocblas_emulation.h"
#endif

namespace accel {
namespace cuda {

namespace {

// rocBLAS's types and enumerators (values from rocblas-types.h).
using rocblas_handle = void*;
using rocblas_status = int;
using rocblas_int = std::int32_t;
constexpr rocblas_status kSuccess = 0;
enum rocblas_operation : int { rocblas_operation_none = 111, rocblas_operation_transpose = 112 };
enum rocblas_datatype : int {
    rocblas_datatype_f16_r = 150,
    rocblas_datatype_f32_r = 151,
    rocblas_datatype_bf16_r = 168
};
constexpr int kGemmAlgoStandard = 0;

// The entry points, looked up once per process.
struct RocblasApi {
    rocblas_status (*create_handle)(rocblas_handle*);
    rocblas_status (*destroy_handle)(rocblas_handle);
    rocblas_status (*set_stream)(rocblas_handle, hipStream_t);
    rocblas_status (*sgemm)(rocblas_handle, rocblas_operation, rocblas_operation, rocblas_int, rocblas_int, rocblas_int,
                            const float*, const float*, rocblas_int, const float*, rocblas_int, const float*, float*,
                            rocblas_int);
    rocblas_status (*dgemm)(rocblas_handle, rocblas_operation, rocblas_operation, rocblas_int, rocblas_int, rocblas_int,
                            const double*, const double*, rocblas_int, const double*, rocblas_int, const double*,
                            double*, rocblas_int);
    rocblas_status (*gemm_ex)(rocblas_handle, rocblas_operation, rocblas_operation, rocblas_int, rocblas_int,
                              rocblas_int, const void*, const void*, rocblas_datatype, rocblas_int, const void*,
                              rocblas_datatype, rocblas_int, const void*, const void*, rocblas_datatype, rocblas_int,
                              void*, rocblas_datatype, rocblas_int, rocblas_datatype, int, std::int32_t,
                              std::uint32_t);
    const char* (*status_to_string)(rocblas_status);
    rocblas_status (*get_version_string)(char*, std::size_t);
    std::string library;  // the file it came from
};

// Looks up `name` in `lib`; false (with `why` set) when it is missing.
template <class F>
bool bind(void* lib, const char* name, F& fn, std::string& why) {
#ifdef ACCEL_CUDA_EMULATION
    (void)lib;
    fn = reinterpret_cast<F>(rocblas_emulation::symbol(name));
#else
    fn = reinterpret_cast<F>(dlsym(lib, name));
#endif
    if (!fn) why = std::string("it lacks ") + name;
    return fn != nullptr;
}

// The rocBLAS of this process, or null with `why` set. The library is never
// unloaded (handles on other devices may still use it).
const RocblasApi* rocblas(std::string& why) {
    static std::once_flag once;
    static RocblasApi api;
    static const RocblasApi* found = nullptr;
    static std::string missing;
    std::call_once(once, [] {
        void* lib = nullptr;
#ifdef ACCEL_CUDA_EMULATION
        api.library = "the accel HIP emulation's reference GEMM";
#else
        std::string tried;
        for (const char* name : {"librocblas.so.4", "librocblas.so.3", "librocblas.so.0", "librocblas.so"}) {
            lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
            if (lib) {
                api.library = name;
                break;
            }
            const char* err = dlerror();
            tried += std::string(tried.empty() ? "" : "; ") + (err ? err : name);
        }
        if (!lib) {
            missing = "rocBLAS not found (install ROCm's rocblas package; tried: " + tried + ")";
            return;
        }
#endif
        std::string why;
        if (bind(lib, "rocblas_create_handle", api.create_handle, why) &&
            bind(lib, "rocblas_destroy_handle", api.destroy_handle, why) &&
            bind(lib, "rocblas_set_stream", api.set_stream, why) && bind(lib, "rocblas_sgemm", api.sgemm, why) &&
            bind(lib, "rocblas_dgemm", api.dgemm, why) && bind(lib, "rocblas_gemm_ex", api.gemm_ex, why) &&
            bind(lib, "rocblas_status_to_string", api.status_to_string, why) &&
            bind(lib, "rocblas_get_version_string", api.get_version_string, why))
            found = &api;
        else
            missing = api.library + " is not a usable rocBLAS: " + why;
    });
    why = missing;
    return found;
}

std::string status_text(const RocblasApi& api, rocblas_status s) {
    const char* text = api.status_to_string(s);
    return std::string(text ? text : "rocblas_status") + " (" + std::to_string(s) + ")";
}

}  // namespace

// rocBLAS state of one device: one handle, bound to each call's stream.
struct VendorBlas {
    const RocblasApi* api = nullptr;
    rocblas_handle handle = nullptr;
    std::mutex mutex;  // guards rocblas_set_stream + the call that follows
};

void VendorBlasDeleter::operator()(VendorBlas* blas) const noexcept {
    if (blas->handle) blas->api->destroy_handle(blas->handle);
    delete blas;
}

VendorBlasPtr vendor_blas_start(std::string& description) {
    std::string why;
    const RocblasApi* api = rocblas(why);
    if (!api) {
        description = "none: " + why;
        return nullptr;
    }
    VendorBlasPtr blas(new VendorBlas);
    blas->api = api;
    const rocblas_status st = api->create_handle(&blas->handle);
    if (st != kSuccess) {
        blas->handle = nullptr;
        description = "none: rocblas_create_handle failed: " + status_text(*api, st);
        return nullptr;
    }
    char version[64] = "unknown version";
    if (api->get_version_string(version, sizeof version) != kSuccess) std::snprintf(version, sizeof version, "?");
    description = "rocBLAS " + std::string(version) + " (" + api->library +
                  "), FP32 sgemm; f64 dgemm; f16/bf16 gemm_ex with FP32 compute";
    return blas;
}

namespace {

// Throws DeviceError for a failed rocBLAS call, naming it and its status.
void check_blas(const RocblasApi& api, rocblas_status s, const char* call, const char* file, int line) {
    if (s == kSuccess) return;
    throw DeviceError(call_site(call, file, line) + ": " + status_text(api, s), s, status_text(api, s));
}
#define ACCEL_ROCBLAS_CHECK(call) check_blas(*blas.api, (call), #call, __FILE__, __LINE__)

// The rocBLAS arguments of one row-major gemm: column-major Cᵀ[n,m] =
// op(B)ᵀ[n,k]·op(A)ᵀ[k,m], B first (the identity cuda_vendor.cpp explains).
struct GemmShape {
    rocblas_operation op_b, op_a;
    rocblas_int n, m, k;
    rocblas_int ldb, lda, ldc;
};

GemmShape gemm_shape(std::size_t m, std::size_t n, std::size_t k, bool ta, bool tb) {
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
        throw Unsupported("gemm (vendor): rocBLAS takes int dimensions but m=" + std::to_string(m) + ", n=" +
                          std::to_string(n) + ", k=" + std::to_string(k) + "; use the native path");
    const auto mi = static_cast<rocblas_int>(m), ni = static_cast<rocblas_int>(n), ki = static_cast<rocblas_int>(k);
    const rocblas_operation T = rocblas_operation_transpose, N = rocblas_operation_none;
    return GemmShape{tb ? T : N, ta ? T : N, ni, mi, ki, tb ? ki : ni, ta ? mi : ki, ni};
}

// f16/bf16: rocblas_gemm_ex with `type` for A, B, C, D and FP32 compute
// (alpha and beta are then float); D is C.
void gemm_ex(VendorBlas& blas, const void* a, const void* b, void* c, rocblas_datatype type, std::size_t m,
             std::size_t n, std::size_t k, bool ta, bool tb, double beta, hipStream_t stream) {
    const GemmShape g = gemm_shape(m, n, k, ta, tb);
    const float one = 1.0f, beta32 = static_cast<float>(beta);
    std::lock_guard<std::mutex> lock(blas.mutex);
    ACCEL_ROCBLAS_CHECK(blas.api->set_stream(blas.handle, stream));
    ACCEL_ROCBLAS_CHECK(blas.api->gemm_ex(blas.handle, g.op_b, g.op_a, g.n, g.m, g.k, &one, b, type, g.ldb, a, type,
                                          g.lda, &beta32, c, type, g.ldc, c, type, g.ldc, rocblas_datatype_f32_r,
                                          kGemmAlgoStandard, 0, 0));
}

// f32/f64: rocBLAS's gemm of T (`gemm`, named `name` in errors), with alpha 1
// and beta in T.
template <class T, class Gemm>
void gemm_of(VendorBlas& blas, Gemm gemm, const char* name, const T* a, const T* b, T* c, std::size_t m,
             std::size_t n, std::size_t k, bool ta, bool tb, double beta, hipStream_t stream) {
    const GemmShape g = gemm_shape(m, n, k, ta, tb);
    const T one = 1, beta_t = static_cast<T>(beta);
    std::lock_guard<std::mutex> lock(blas.mutex);
    ACCEL_ROCBLAS_CHECK(blas.api->set_stream(blas.handle, stream));
    check_blas(*blas.api, gemm(blas.handle, g.op_b, g.op_a, g.n, g.m, g.k, &one, b, g.ldb, a, g.lda, &beta_t, c, g.ldc),
               name, __FILE__, __LINE__);
}

}  // namespace

void vendor_gemm(VendorBlas& blas, const float* a, const float* b, float* c, std::size_t m, std::size_t n,
                 std::size_t k, bool ta, bool tb, double beta, hipStream_t stream) {
    gemm_of(blas, blas.api->sgemm, "rocblas_sgemm", a, b, c, m, n, k, ta, tb, beta, stream);
}

void vendor_gemm(VendorBlas& blas, const double* a, const double* b, double* c, std::size_t m, std::size_t n,
                 std::size_t k, bool ta, bool tb, double beta, hipStream_t stream) {
    gemm_of(blas, blas.api->dgemm, "rocblas_dgemm", a, b, c, m, n, k, ta, tb, beta, stream);
}

void vendor_gemm(VendorBlas& blas, const __half* a, const __half* b, __half* c, std::size_t m, std::size_t n,
                 std::size_t k, bool ta, bool tb, double beta, hipStream_t stream) {
    gemm_ex(blas, a, b, c, rocblas_datatype_f16_r, m, n, k, ta, tb, beta, stream);
}

void vendor_gemm(VendorBlas& blas, const hip_bfloat16* a, const hip_bfloat16* b, hip_bfloat16* c, std::size_t m,
                 std::size_t n, std::size_t k, bool ta, bool tb, double beta, hipStream_t stream) {
    gemm_ex(blas, a, b, c, rocblas_datatype_bf16_r, m, n, k, ta, tb, beta, stream);
}

}  // namespace cuda
}  // namespace accel
