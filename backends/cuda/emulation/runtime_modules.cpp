// accel's CUDA emulation: code loaded at run time (cudaLibrary*), for a
// program's own kernels (the plugin compiles them with NVRTC, for real, and
// loads the PTX). The emulation checks what a driver would check first (PTX
// text, a kernel of that name) and runs no device code: a launch answers
// cudaErrorNotSupported. The driver API is not emulated.
#include <cuda_runtime_api.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

// A kernel is its name; its library owns it (unloading ends it, as CUDA's).
struct CUkern_st {
    std::string name;
};

struct CUlib_st {
    std::string ptx;
    std::mutex mutex;
    std::vector<std::unique_ptr<CUkern_st>> kernels;
};

cudaError_t cudaLibraryLoadData(cudaLibrary_t* library, const void* code, cudaJitOption*, void**, unsigned,
                                cudaLibraryOption*, void**, unsigned) {
    if (!library || !code) return cudaErrorInvalidValue;
    const char* text = static_cast<const char*>(code);
    // PTX as NVRTC writes it: a .version and a .target directive up front.
    if (!std::strstr(text, ".version") || !std::strstr(text, ".target")) return cudaErrorInvalidPtx;
    *library = new CUlib_st;
    (*library)->ptx = text;
    return cudaSuccess;
}

cudaError_t cudaLibraryGetKernel(cudaKernel_t* kernel, cudaLibrary_t library, const char* name) {
    if (!kernel || !library || !name) return cudaErrorInvalidValue;
    // ".entry NAME(" exactly: a C++ name NVRTC mangled does not match.
    const std::string entry = std::string(".entry ") + name + "(";
    if (library->ptx.find(entry) == std::string::npos) return cudaErrorSymbolNotFound;
    std::lock_guard<std::mutex> lock(library->mutex);
    library->kernels.push_back(std::make_unique<CUkern_st>(CUkern_st{name}));
    *kernel = library->kernels.back().get();
    return cudaSuccess;
}

cudaError_t cudaLibraryUnload(cudaLibrary_t library) {
    delete library;
    return cudaSuccess;
}

cudaError_t cudaLaunchKernel(const void* func, dim3, dim3, void**, std::size_t, cudaStream_t) {
    return func ? cudaErrorNotSupported : cudaErrorInvalidValue;
}

cudaError_t cudaGetDriverEntryPointByVersion(const char*, void** fn, unsigned, unsigned long long,
                                             cudaDriverEntryPointQueryResult* status) {
    if (fn) *fn = nullptr;
    if (status) *status = cudaDriverEntryPointSymbolNotFound;
    return cudaSuccess;
}
