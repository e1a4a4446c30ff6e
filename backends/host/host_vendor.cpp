// Host vendor path: a CPU BLAS's cblas_sgemm (and cblas_dgemm, and
// OpenBLAS's cblas_sbgemm for bf16 where built in), loaded at run time.
//
// Why dlopen instead of linking: OpenBLAS picks its kernels once, when the
// library loads, from the CPU it recognizes. Debian's OpenBLAS 0.3.21 does not
// recognize recent Xeons (e.g. family 6 model 207) and falls back to its
// Prescott (SSE3) kernels: sgemm N=1024 measured ~70 GFLOP/s instead of ~344
// with OPENBLAS_CORETYPE=SkylakeX. The variable must be set before the library
// loads — before ANY plugin loads, since another plugin may link an OpenBLAS
// (Kokkos Kernels does) — so the registry sets it from the CPU's features
// before it loads the first plugin, when the user has not set it
// (accel::openblas_coretype_note(), accel/registry.hpp). A user's own setting
// is never changed. The library used, its version and its core are in
// accel-info.
//
// Threads: host kernels run on OpenMP's thread team, so the OpenMP build of
// OpenBLAS (Debian: libopenblas0-openmp) is preferred — it shares that team.
// The pthreads build keeps its own threads spinning after each call, and they
// starve the OpenMP workers: measured here, a 128×128 native matmul right
// after a vendor one took 4.96 ms instead of 0.10 ms, and the vendor call
// itself 0.43 ms instead of 0.06 ms.
//
// ACCEL_HOST_BLAS selects the library: "openblas", "blis", or a path to any
// shared library exporting cblas_sgemm. Default: OpenBLAS (OpenMP build, then
// any), then BLIS (which detects the CPU itself), then the system
// libcblas/libblas. A library asked for by ACCEL_HOST_BLAS that cannot be used
// fails opening the host device (cblas()); only the default search may end
// with no library, which accel-info then reports.
#include "host_device.hpp"

#include "../common/device_names.hpp"
#include "../common/dynamic_library.hpp"

#include <accel/environment.hpp>
#include <accel/error.hpp>
#include <accel/registry.hpp>

#include <Eigen/Core>

#include <cstdlib>
#include <algorithm>
#include <cctype>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace accel {
namespace host {

namespace {

const env::Declaration kBlasVariable{
    {"ACCEL_HOST_BLAS",
     "openblas, blis, or a CBLAS library exporting cblas_sgemm: a path (with a '/') or a file name ending in .so or .so.N",
     "the host backend's vendor library (default: OpenBLAS, then BLIS, then the system CBLAS)", "the host backend"}};

// The library ACCEL_HOST_BLAS asks for: "openblas", "blis", a path or a
// file name for dlopen; nullopt when unset. Throws InvalidArgument for any
// other value.
std::optional<std::string> choice() {
    const auto v = env::value("ACCEL_HOST_BLAS");
    if (!v) return std::nullopt;
    const std::string word = v->size() <= 8 ? lower(*v) : "";
    if (word == "openblas" || word == "blis") return word;
    const auto so = v->rfind(".so");
    const bool file_name = so != std::string::npos && so > 0 &&
                           (so + 3 == v->size() || (*v)[so + 3] == '.');  // NAME.so or NAME.so.N...
    if (v->find('/') != std::string::npos || file_name) return *v;
    env::reject("ACCEL_HOST_BLAS", *v, "is neither openblas, blis nor a library's path or file name");
}

struct Loaded {
    Cblas blas;
    std::string error;  // why ACCEL_HOST_BLAS cannot be honoured; empty when it can (or is unset)
};

Loaded load() {
    Loaded loaded;
    Cblas& out = loaded.blas;
    std::optional<std::string> chosen;
    try {
        chosen = choice();
    } catch (const InvalidArgument& e) {
        loaded.error = e.what();
        return loaded;
    }
    std::vector<std::string> candidates;
    const std::string c = chosen.value_or("");
    if (c.empty() || c == "openblas") {
        const std::string openmp = preferred_openblas_dir();
        if (!openmp.empty()) candidates.push_back(openmp + "/libopenblas.so.0");
        candidates.push_back("libopenblas.so.0");
    }
    if (c.empty() || c == "blis") candidates.push_back("libblis.so.4");
    if (c.empty()) {
        candidates.push_back("libcblas.so.3");
        candidates.push_back("libblas.so.3");
    }
    if (!c.empty() && c != "openblas" && c != "blis") candidates.push_back(c);

    std::string errors;
    for (const auto& lib : candidates) {
        // OPENBLAS_CORETYPE was settled by the registry before any plugin loaded.
        const std::string note = lib.find("openblas") != std::string::npos ? openblas_coretype_note() : "";
        void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            const char* e = dlerror();
            errors += (errors.empty() ? "" : "; ") + std::string(e ? e : lib + ": not loadable");
            dl::clear_error();
            continue;
        }
        auto sgemm = reinterpret_cast<Cblas::Sgemm>(dl::optional_symbol(h, "cblas_sgemm"));
        if (!sgemm) {
            errors += (errors.empty() ? "" : "; ") + lib + " has no cblas_sgemm";
            continue;
        }
        out.sgemm = sgemm;
        out.dgemm = reinterpret_cast<Cblas::Dgemm>(dl::optional_symbol(h, "cblas_dgemm"));
        out.sbgemm = reinterpret_cast<Cblas::Sbgemm>(dl::optional_symbol(h, "cblas_sbgemm"));
        out.description = lib;
        out.library = lib.substr(lib.rfind('/') + 1);
        using CharFn = char* (*)();
        if (auto cfg = reinterpret_cast<CharFn>(dl::optional_symbol(h, "openblas_get_config"))) out.description += " (" + std::string(cfg());
        if (auto core = reinterpret_cast<CharFn>(dl::optional_symbol(h, "openblas_get_corename")))
            out.description += ", core " + std::string(core()) + ")";
        if (!note.empty()) out.description += "; " + note;
        return loaded;
    }
    if (chosen) {
        // The library asked for is not there: an error, not a run without it.
        try {
            env::reject("ACCEL_HOST_BLAS", *env::value("ACCEL_HOST_BLAS"),
                        "names a library that cannot be used: " + (errors.empty() ? "nothing to load" : errors));
        } catch (const InvalidArgument& e) {
            loaded.error = e.what();
        }
        return loaded;
    }
    out.description = "none: " + (errors.empty() ? std::string("no library to try") : errors) +
                      " (install libopenblas0 or libblis4, or set ACCEL_HOST_BLAS to a CBLAS library)";
    return loaded;
}

}  // namespace

const Cblas& cblas() {
    static const Loaded lib = load();
    if (!lib.error.empty()) throw InvalidArgument(lib.error);
    return lib.blas;
}

template <class T>
void gemm_vendor(const Cblas& blas, const T* a, const T* b, T* c, std::size_t m, std::size_t n, std::size_t k, bool ta,
                 bool tb, double beta) {
    constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;  // CBLAS enum values
    const int lda = ta ? static_cast<int>(m) : static_cast<int>(k);
    const int ldb = tb ? static_cast<int>(k) : static_cast<int>(n);
    const int ldc = n > 0 ? static_cast<int>(n) : 1;
    // One call at a time: the BLAS already uses every core, and OpenBLAS's
    // OpenMP build is not safe for concurrent calls from threads it did not start.
    static std::mutex one_call_at_a_time;
    std::lock_guard<std::mutex> lock(one_call_at_a_time);
    const int op_a = ta ? kTrans : kNoTrans, op_b = tb ? kTrans : kNoTrans;
    if constexpr (std::is_same<T, Eigen::bfloat16>::value) {
        // sbgemm writes float32: C is widened (when beta reads it), summed
        // into in f32, and rounded once to bf16.
        static_assert(sizeof(Eigen::bfloat16) == sizeof(std::uint16_t), "bf16 is stored in 16 bits");
        std::vector<float> c32(m * n);
        if (beta != 0)
            for (std::size_t i = 0; i < c32.size(); ++i) c32[i] = static_cast<float>(c[i]);
        blas.sbgemm(kRowMajor, op_a, op_b, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f,
                    reinterpret_cast<const std::uint16_t*>(a), lda > 0 ? lda : 1,
                    reinterpret_cast<const std::uint16_t*>(b), ldb > 0 ? ldb : 1, static_cast<float>(beta),
                    c32.data(), ldc);
        for (std::size_t i = 0; i < c32.size(); ++i) c[i] = static_cast<Eigen::bfloat16>(c32[i]);
    } else if constexpr (std::is_same<T, float>::value)
        blas.sgemm(kRowMajor, op_a, op_b, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f, a,
                   lda > 0 ? lda : 1, b, ldb > 0 ? ldb : 1, static_cast<float>(beta), c, ldc);
    else
        blas.dgemm(kRowMajor, op_a, op_b, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0, a,
                   lda > 0 ? lda : 1, b, ldb > 0 ? ldb : 1, beta, c, ldc);
}

template void gemm_vendor<float>(const Cblas&, const float*, const float*, float*, std::size_t, std::size_t,
                                 std::size_t, bool, bool, double);
template void gemm_vendor<double>(const Cblas&, const double*, const double*, double*, std::size_t, std::size_t,
                                  std::size_t, bool, bool, double);
template void gemm_vendor<Eigen::bfloat16>(const Cblas&, const Eigen::bfloat16*, const Eigen::bfloat16*,
                                           Eigen::bfloat16*, std::size_t, std::size_t, std::size_t, bool, bool,
                                           double);

}  // namespace host
}  // namespace accel
