// accel-determinism-digest: one fixed workload of every op, run in
// deterministic mode on the device ACCEL_BACKEND names, printed as one line
// per op and dtype: "<op> <dtype> <digest>", the digest a 64-bit FNV-1a hash
// of the outputs' bytes (bits, not values). Two runs of the program print the
// same lines exactly when every op gave the same bits: same_digests.cmake
// compares runs under 1 and 2 threads of the runtime.
//
// Usage: accel-determinism-digest [--seed N] [--dtypes LIST]   (default seed 1,
//        dtypes f32,f64,f16,bf16)
// Exit status: 0 printed; 1 an error; 77 the backend is not available here.
#include <accel/accel.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <functional>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace accel;

// FNV-1a over bytes (Fowler, Noll, Vo), 64-bit.
std::uint64_t fnv1a(const std::vector<unsigned char>& bytes, std::uint64_t h = 14695981039346656037ull) {
    for (unsigned char b : bytes) h = (h ^ b) * 1099511628211ull;
    return h;
}

std::vector<unsigned char> bits_of(const Tensor& t) {
    std::vector<unsigned char> out(t.bytes());
    if (!out.empty()) t.buffer().download(out.data(), out.size());
    return out;
}

// The hash of the tensors' bits, in order.
std::uint64_t digest(std::initializer_list<const Tensor*> ts) {
    std::uint64_t h = 14695981039346656037ull;
    for (const Tensor* t : ts) h = fnv1a(bits_of(*t), h);
    return h;
}

// Products past the host backend's one-thread size (2^20 multiply-adds), so
// that thread counts split them.
constexpr std::size_t kM = 300, kN = 200, kK = 150;

void digest_all(const std::shared_ptr<Device>& dev, std::uint64_t seed, const std::vector<DType>& dtypes) {
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f), unit(0.0f, 1.0f);
    const auto values = [&](std::size_t n, bool probabilities = false) {
        std::vector<float> v(n);
        for (auto& x : v) x = probabilities ? unit(g) : u(g);
        return v;
    };
    ops::Options o;
    o.deterministic = true;
    for (DType dt : dtypes) {
        const auto t = [&](std::size_t r, std::size_t c, bool probabilities = false) {
            return Tensor::from_host(dev, {r, c}, values(r * c, probabilities), dt);
        };
        const Tensor a = t(kM, kK), at = t(kK, kM), b = t(kK, kN), bt = t(kN, kK), x = t(kM, kN), y = t(kM, kN);
        const Tensor bias = Tensor::from_host(dev, {kN}, values(kN), dt), targets = t(kM, kN, true);
        const auto out = [&](std::size_t r, std::size_t c) { return Tensor(dev, {r, c}, dt); };
        struct Call {
            const char* name;
            Op op;
            std::function<std::uint64_t()> run;
        };
        const std::vector<Call> calls{
            {"add", Op::add, [&] { Tensor c = out(kM, kN); ops::add(x, y, c, o); return digest({&c}); }},
            {"mul", Op::mul, [&] { Tensor c = out(kM, kN); ops::mul(x, y, c, o); return digest({&c}); }},
            {"sigmoid", Op::sigmoid, [&] { Tensor c = out(kM, kN); ops::sigmoid(x, c, o); return digest({&c}); }},
            {"gelu_tanh_backward", Op::gelu_tanh_backward,
             [&] { Tensor c = out(kM, kN); ops::gelu_tanh_backward(y, x, c, o); return digest({&c}); }},
            {"column_sum", Op::column_sum,
             [&] { Tensor c(dev, {kN}, dt); ops::column_sum(x, c, o); return digest({&c}); }},
            {"matmul", Op::matmul,
             [&] {
                 std::uint64_t h = 0;
                 for (int form = 0; form < 4; ++form) {
                     const bool ta = form & 1, tb = form & 2;
                     Tensor c = out(kM, kN);
                     ops::matmul(ta ? at : a, tb ? bt : b, c, {ta, tb}, o);
                     h = h * 31 + digest({&c});
                 }
                 return h;
             }},
            {"dense", Op::dense,
             [&] {
                 std::uint64_t h = 0;
                 for (Activation act : {Activation::none, Activation::relu, Activation::sigmoid, Activation::gelu,
                                        Activation::gelu_tanh}) {
                     Tensor c = out(kM, kN);
                     ops::dense(a, bt, std::cref(bias), c, act, o);
                     h = h * 31 + digest({&c});
                 }
                 return h;
             }},
            {"dense_backward", Op::matmul,
             [&] {
                 Tensor z = out(kM, kN), h = out(kM, kN), dx = out(kM, kK), dw = out(kN, kK);
                 Tensor db(dev, {kN}, dt);
                 ops::dense(a, bt, std::cref(bias), z, Activation::none, o);
                 ops::dense(a, bt, std::cref(bias), h, Activation::gelu, o);
                 ops::dense_backward(a, bt, h, y, Activation::gelu, &dx, dw, &db, o, z);
                 return digest({&dx, &dw, &db});
             }},
            {"bce_with_logits", Op::bce_with_logits,
             [&] {
                 Tensor l = out(kM, kN), dz = out(kM, kN);
                 ops::bce_with_logits(x, targets, l, o);
                 ops::bce_with_logits_backward(x, targets, dz, o);
                 const float loss = ops::bce_with_logits_loss(x, targets, o);
                 Tensor mean = Tensor::from_host(dev, {1}, std::vector<float>{loss});
                 return digest({&l, &dz, &mean});
             }},
            {"adam_step", Op::adam_step,
             [&] {
                 Tensor p = t(kM, kN);
                 Tensor m = Tensor::from_host(dev, {kM, kN}, std::vector<float>(kM * kN, 0.0f), dt);
                 Tensor v = Tensor::from_host(dev, {kM, kN}, std::vector<float>(kM * kN, 0.0f), dt);
                 for (std::size_t step = 1; step <= 3; ++step) ops::adam_step(p, y, m, v, step, {}, o);
                 return digest({&p, &m, &v});
             }},
        };
        for (const Call& c : calls) {
            if (!dev->kernel_table().supports(c.op, dt, OpPath::native)) {
                std::printf("%s %s not-run\n", c.name, dtype_name(dt));
                continue;
            }
            const std::uint64_t h = c.run();
            std::printf("%s %s %016llx\n", c.name, dtype_name(dt), static_cast<unsigned long long>(h));
        }
    }
}

}  // namespace

int main(int argc, char** argv) try {
    std::uint64_t seed = 1;
    std::vector<DType> dtypes{DType::f32, DType::f64, DType::f16, DType::bf16};
    for (int i = 1; i < argc; i += 2) {
        const std::string flag = argv[i];
        if (i + 1 >= argc || (flag != "--seed" && flag != "--dtypes")) {
            std::fprintf(stderr, "usage: accel-determinism-digest [--seed N] [--dtypes f32,f64,...]\n");
            return 2;
        }
        const std::string value = argv[i + 1];
        if (flag == "--seed") {
            char* end = nullptr;
            seed = std::strtoull(value.c_str(), &end, 10);
            if (value.empty() || *end) {
                std::fprintf(stderr, "accel-determinism-digest: --seed takes a whole number, not '%s'\n", value.c_str());
                return 2;
            }
            continue;
        }
        dtypes.clear();
        for (std::size_t p = 0; p <= value.size();) {
            const std::size_t comma = std::min(value.find(',', p), value.size());
            dtypes.push_back(parse_dtype(value.substr(p, comma - p)));  // InvalidArgument naming the dtypes
            p = comma + 1;
        }
    }
    std::shared_ptr<Device> dev;
    try {
        dev = default_device();
    } catch (const BackendUnavailable& e) {
        std::printf("SKIPPED: %s\n", e.what());
        return 77;
    }
    std::printf("# %s (%s), seed %llu\n", dev->selector().c_str(), dev->name().c_str(),
                static_cast<unsigned long long>(seed));
    digest_all(dev, seed, dtypes);
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "accel-determinism-digest: %s\n", e.what());
    return 1;
}
