// Interop with CUDA both ways (accel/interop/cuda.hpp) on a CUDA device: a
// cudaMalloc'd pointer the program made, wrapped as a tensor and used by
// ops::matmul, the result read through accel's own cudaStream_t; a stream
// over the program's cudaStream_t ordering accel's op after the program's
// work there; the errors of memory that is not the device's; a program's
// CUDA C++ kernel compiled by NVRTC to PTX (and, on a GPU, run).
//
// The program's side calls the CUDA runtime the plugin uses: on accel's CUDA
// emulation (the cuda-emulated tests) the emulated plugin's own functions
// (control.h), on a GPU libcudart.so.13's.
#include "support/check.hpp"

#include <accel/interop/cuda.hpp>
#include <accel/user_kernel.hpp>

#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

using namespace accel;
using namespace accel_test;
namespace cu = accel::interop::cuda;

namespace {

bool on_cuda() {
    if (device()->info().backend == "cuda") return true;
    MESSAGE("skipped: " << device()->selector() << " is not a CUDA device");
    return false;
}

// The program's CUDA runtime calls, from the runtime accel's plugin uses.
struct Runtime {
    cudaError_t (*malloc)(void**, std::size_t) = nullptr;
    cudaError_t (*free)(void*) = nullptr;
    cudaError_t (*memcpy_async)(void*, const void*, std::size_t, cudaMemcpyKind, cudaStream_t) = nullptr;
    cudaError_t (*stream_create)(cudaStream_t*, unsigned) = nullptr;
    cudaError_t (*stream_destroy)(cudaStream_t) = nullptr;
    cudaError_t (*stream_synchronize)(cudaStream_t) = nullptr;
    cudaError_t (*launch_host_func)(cudaStream_t, cudaHostFn_t, void*) = nullptr;
    bool emulated = false;
};

const Runtime& runtime() {
    static const Runtime r = [] {
        Runtime rt;
        // The emulated plugin, when it is the one loaded (dlopen gives the same object).
        void* (*emulated)(const char*) = nullptr;
        if (const char* dir = std::getenv("ACCEL_PLUGIN_PATH")) {
            const std::string path = std::string(dir) + "/libaccel-backend-cuda.so";
            if (void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD))
                emulated = reinterpret_cast<void* (*)(const char*)>(dlsym(h, "accel_cuda_emulation_runtime_function"));
        }
        void* cudart = emulated ? nullptr : dlopen("libcudart.so.13", RTLD_NOW | RTLD_LOCAL);
        auto fn = [&](const char* name) -> void* {
            void* p = emulated ? emulated(name) : cudart ? dlsym(cudart, name) : nullptr;
            REQUIRE_MESSAGE(p, "no " << name << " in the CUDA runtime the plugin uses");
            return p;
        };
        rt.emulated = emulated != nullptr;
        rt.malloc = reinterpret_cast<decltype(rt.malloc)>(fn("cudaMalloc"));
        rt.free = reinterpret_cast<decltype(rt.free)>(fn("cudaFree"));
        rt.memcpy_async = reinterpret_cast<decltype(rt.memcpy_async)>(fn("cudaMemcpyAsync"));
        rt.stream_create = reinterpret_cast<decltype(rt.stream_create)>(fn("cudaStreamCreateWithFlags"));
        rt.stream_destroy = reinterpret_cast<decltype(rt.stream_destroy)>(fn("cudaStreamDestroy"));
        rt.stream_synchronize = reinterpret_cast<decltype(rt.stream_synchronize)>(fn("cudaStreamSynchronize"));
        rt.launch_host_func = reinterpret_cast<decltype(rt.launch_host_func)>(fn("cudaLaunchHostFunc"));
        return rt;
    }();
    return r;
}

// Device memory the program owns, holding `v`.
struct ProgramMemory {
    void* ptr = nullptr;
    std::size_t bytes = 0;
    ProgramMemory(const std::vector<float>& v, cudaStream_t s) : bytes(v.size() * sizeof(float)) {
        REQUIRE(runtime().malloc(&ptr, bytes) == cudaSuccess);
        REQUIRE(runtime().memcpy_async(ptr, v.data(), bytes, cudaMemcpyHostToDevice, s) == cudaSuccess);
        REQUIRE(runtime().stream_synchronize(s) == cudaSuccess);
    }
    ~ProgramMemory() { runtime().free(ptr); }
};

std::vector<float> read_back(const void* ptr, std::size_t n, cudaStream_t s) {
    std::vector<float> out(n);
    REQUIRE(runtime().memcpy_async(out.data(), ptr, n * sizeof(float), cudaMemcpyDeviceToHost, s) == cudaSuccess);
    REQUIRE(runtime().stream_synchronize(s) == cudaSuccess);
    return out;
}

}  // namespace

TEST_CASE("a cudaMalloc pointer the program made is a tensor ops::matmul reads, read back through accel's stream") {
    if (!on_cuda()) return;
    auto g = rng(4601);
    const std::size_t m = 37, k = 19, n = 23;
    const auto a = uniform(g, m * k), b = uniform(g, k * n);
    cudaStream_t accel_stream = cu::stream(device()->default_stream());
    ProgramMemory ma(a, accel_stream), mb(b, accel_stream);
    CHECK(cu::ordinal(*device()) == 0);
    {
        Tensor A = cu::tensor_over(device(), ma.ptr, {m, k}), B = cu::tensor_over(device(), mb.ptr, {k, n});
        Tensor C(device(), {m, n});
        ops::matmul(A, B, C);
        // In order after the matmul on accel's own stream.
        expect_close(read_back(cu::data(C), m * n, accel_stream), reference::matmul(a, b, m, n, k),
                     threshold(Op::matmul), "matmul over program memory");
        CHECK(cu::data<const float>(A) == ma.ptr);
    }
    // The program's memory is the program's: still there, unchanged.
    CHECK(read_back(ma.ptr, m * k, accel_stream) == a);
}

TEST_CASE("a stream over the program's cudaStream_t runs accel's op after the program's own work") {
    if (!on_cuda()) return;
    auto g = rng(4602);
    const std::size_t n = 1000 + g() % 3000;
    const auto x = uniform(g, n), y = uniform(g, n);
    cudaStream_t mine = nullptr;
    REQUIRE(runtime().stream_create(&mine, cudaStreamNonBlocking) == cudaSuccess);
    ProgramMemory mx(std::vector<float>(n, 0.0f), mine);
    {
        auto stream = cu::stream_over(*device(), mine);
        CHECK(cu::stream(*stream) == mine);
        // The program's work: a slow step, then x arrives; accel's add must wait for both.
        REQUIRE(runtime().launch_host_func(
                    mine, [](void*) { std::this_thread::sleep_for(std::chrono::milliseconds(100)); }, nullptr) ==
                cudaSuccess);
        REQUIRE(runtime().memcpy_async(mx.ptr, x.data(), n * sizeof(float), cudaMemcpyHostToDevice, mine) ==
                cudaSuccess);
        Tensor X = cu::tensor_over(device(), mx.ptr, {n});
        Tensor Y = Tensor::from_host(device(), {n}, y), Out(device(), {n});
        ops::Options o;
        o.stream = stream.get();
        ops::add(X, Y, Out, o);
        stream->synchronize();
        const auto got = Out.download();
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < n; ++i) wrong += got[i] != x[i] + y[i];
        CHECK_MESSAGE(wrong == 0, wrong << " of " << n << " elements not the program's x + y");
    }
    // accel's stream is gone; the program's is not.
    CHECK(runtime().stream_synchronize(mine) == cudaSuccess);
    CHECK(runtime().stream_destroy(mine) == cudaSuccess);
}

TEST_CASE("memory that is not the CUDA device's is a clear error") {
    if (!on_cuda()) return;
    std::vector<float> host(64);
    const std::string msg = message_of([&] { (void)cu::tensor_over(device(), host.data(), {64}); });
    CHECK(contains(msg, "not CUDA device memory"));
    CHECK_THROWS_AS((void)cu::tensor_over(device(), host.data(), {64}), InvalidArgument);
    // A range running past the end of the program's allocation.
    ProgramMemory m(std::vector<float>(16, 1.0f), cu::stream(device()->default_stream()));
    CHECK_THROWS_AS((void)cu::tensor_over(device(), m.ptr, {1u << 20}), InvalidArgument);
    CHECK_THROWS_AS((void)device()->native_object("cuda", "queue_family"), Unsupported);
    try {
        void* context = cu::context(*device());
        CHECK(context != nullptr);
    } catch (const Unsupported& e) {
        CHECK(runtime().emulated);  // only the emulation has no driver API
        MESSAGE("no context: " << std::string(e.what()));
    }
}

TEST_CASE("NVRTC compiles a program's CUDA C++ kernel to PTX, caches it, and reports its errors with the log") {
    if (!on_cuda()) return;
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("accel-cuda-cache-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    ScopedEnv cache("ACCEL_CACHE_DIR", dir.c_str());
    KernelSource s;
    s.name = "vector_add";
    s.params = {KernelParam::in("a"), KernelParam::in("b"), KernelParam::out("c"), KernelParam::scalar("n", ParamType::u32)};
    s.code["cuda"] = R"(
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, unsigned n) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
})";
    UserKernel k(s);
    k.build(*device());  // NVRTC ran: the PTX loaded and has the kernel's entry
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir / "cuda-kernels")) files.push_back(e.path());
    CHECK(files.size() == 1);
    UserKernel(s).build(*device());  // from the cache

    KernelSource bad = s;
    bad.code["cuda"] = "extern \"C\" __global__ void vector_add(const float* a) { undeclared_name = 1; }";
    const std::string log = message_of([&] { UserKernel(bad).build(*device()); });
    CHECK(contains(log, "undeclared_name"));
    CHECK(contains(log, "compiler log"));
    CHECK_THROWS_AS(UserKernel(bad).build(*device()), DeviceError);

    KernelSource mangled = s;  // no extern "C": NVRTC mangles the name
    mangled.code["cuda"] = "__global__ void vector_add(const float* a, const float* b, float* c, unsigned n) {}";
    const std::string why = message_of([&] { UserKernel(mangled).build(*device()); });
    CHECK(contains(why, "extern \"C\""));
    CHECK_THROWS_AS(UserKernel(mangled).build(*device()), InvalidArgument);
    fs::remove_all(dir);
}
