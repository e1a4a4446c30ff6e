// OpenCL vendor path: CLBlast's GEMM (https://github.com/CNugteren/CLBlast),
// linked when CMake found it (ACCEL_HAVE_CLBLAST): SGEMM for f32 and DGEMM for
// f64. f16 and bf16 have no vendor path: CLBlast has no bfloat16, and its
// HGEMM accumulates in half precision where accel's f16 accumulates in float
// (NMSE 2e-5 against the op table's 1e-6 at K = 1024). CLBlast compiles and
// tunes its kernels per device and precision on the first call, so the first
// vendor matmul of a dtype on a device is slow; time later calls.
#include "opencl_device.hpp"

#include <accel/error.hpp>

#include <mutex>

#ifdef ACCEL_HAVE_CLBLAST
#include <clblast.h>
#endif

namespace accel {
namespace opencl {

namespace {
// Serializes every CLBlast call: its caches are process-wide, and concurrent
// first calls were seen to free a database entry another thread still read
// (heap-use-after-free in clblast::Database::Database under AddressSanitizer).
std::mutex& clblast_mutex() {
    static std::mutex m;
    return m;
}
#ifdef ACCEL_HAVE_CLBLAST
// CLBlast's program cache is a static object: destroyed at exit, it releases
// its programs into a runtime whose per-thread state is already gone
// (Oclgrind: heap corruption in clReleaseProgram). It is cleared instead
// among the main thread's thread_local destructors, which run before any
// static destructor, by a sentinel made after CLBlast's first call on that
// thread: made after the runtime's own thread_local objects, it is destroyed
// before them.
struct ClblastCacheClearedAtExit {
    ~ClblastCacheClearedAtExit() {
        if (on_main_thread()) release_vendor_caches();
    }
};

// C = op(A)·op(B) + beta·C in T (float or double), row-major: the leading
// dimensions are the stored row lengths of the operands.
template <class T>
clblast::StatusCode gemm(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, cl_mem a, cl_mem b,
                         double beta, cl_mem c, cl_command_queue* q) {
    using clblast::Transpose;
    return clblast::Gemm<T>(clblast::Layout::kRowMajor, ta ? Transpose::kYes : Transpose::kNo,
                            tb ? Transpose::kYes : Transpose::kNo, m, n, k, T(1), a, 0, ta ? m : k, b, 0, tb ? k : n,
                            static_cast<T>(beta), c, 0, n, q, nullptr);
}
#endif
}  // namespace

void release_vendor_caches() noexcept {
#ifdef ACCEL_HAVE_CLBLAST
    std::lock_guard<std::mutex> lock(clblast_mutex());
    clblast::ClearCache();
#endif
}

bool have_vendor_blas() noexcept {
#ifdef ACCEL_HAVE_CLBLAST
    return true;
#else
    return false;
#endif
}

std::string vendor_blas_description() {
#ifdef ACCEL_HAVE_CLBLAST
    return "CLBlast " + std::to_string(CLBLAST_VERSION_MAJOR) + "." + std::to_string(CLBLAST_VERSION_MINOR) + "." +
           std::to_string(CLBLAST_VERSION_PATCH) + " (kernels compiled and tuned per device on first use)";
#else
    return "none: this plugin was built without CLBlast (install libclblast-dev and reconfigure)";
#endif
}

// C[m,n] = op(A)·op(B) + beta·C with CLBlast (row-major), in dtype t (f32, or
// f64: has_vendor_gemm(t)); k > 0.
void OpenclDevice::k_gemm_vendor(DType t, DeviceHandle ha, DeviceHandle hb, DeviceHandle hc, std::size_t m,
                                 std::size_t n, std::size_t k, bool ta, bool tb, double beta, Stream& s) {
    cl_mem a = static_cast<cl_mem>(ha), b = static_cast<cl_mem>(hb), c = static_cast<cl_mem>(hc);
    if (static_cast<OpenclStream&>(s).recording()) throw CannotRecord{};  // before CLBlast enqueues anything
#ifdef ACCEL_HAVE_CLBLAST
    if (!has_vendor_gemm(t))
        throw Unsupported(std::string("gemm (vendor, ") + dtype_name(t) + ", " + selector() +
                          "): CLBlast does not run this dtype here");
    const bool f64 = t == DType::f64;
    cl_command_queue q = static_cast<OpenclStream&>(s).queue();
    std::lock_guard<std::mutex> lock(clblast_mutex());
    const auto status =
        f64 ? gemm<double>(ta, tb, m, n, k, a, b, beta, c, &q) : gemm<float>(ta, tb, m, n, k, a, b, beta, c, &q);
    static thread_local ClblastCacheClearedAtExit clear_at_exit;
    (void)clear_at_exit;
    const cl_int code = static_cast<cl_int>(status);
    if (code != CL_SUCCESS) {
        // CLBlast shares OpenCL's codes; its own (-1024 and below) have no CL name.
        const std::string name = code > -1000 ? cl_error_name(code) : "CLBlast status " + std::to_string(code);
        throw DeviceError("gemm (vendor, " + std::string(dtype_name(t)) + ", " + selector() + "): clblast::Gemm<" +
                              (f64 ? "double" : "float") + "> failed: " + name + " (" + std::to_string(code) +
                              ") for M=" + std::to_string(m) + " N=" + std::to_string(n) + " K=" + std::to_string(k),
                          code, name);
    }
#else
    (void)t, (void)a, (void)b, (void)c, (void)m, (void)n, (void)k, (void)ta, (void)tb, (void)beta, (void)s;
    throw Unsupported("gemm: the vendor path needs CLBlast, and this OpenCL plugin was built without "
                      "it; use the native path");
#endif
}

}  // namespace opencl
}  // namespace accel
