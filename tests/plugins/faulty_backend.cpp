// A test backend: one device in system memory whose kernels are accel's
// float64 oracle of each call (accel::check::oracle), rounded to the dtype,
// with faults chosen by environment variables:
// - FAULTY_CORRUPT=OP:N adds 1 to element 0 of the first output of the N-th
//   call of OP on the device (e.g. matmul:37), as a driver bug would: the
//   shadow check's tests (tests/trace), which ACCEL_CHECK=oracle must catch
//   at that call and no other.
// - FAULTY_WRONG_GRADIENT=OP gives backward op OP a wrong formula, each a
//   slip a derivation can make: sigmoid_backward dx = dy·y (the factor 1 − y
//   left out), gelu_backward dx = dy·Φ(x) (the term x·φ(x) left out),
//   bce_with_logits_backward dz = σ(z) − t (the scale 1/n left out). The
//   conformance suite's gradient cases must fail naming it
//   (tests/conformance/test_gradients.cpp).
// - FAULTY_DTYPES=f32 claims the kernels in f32 only, as a device without
//   f64 (OpenCL without cl_khr_fp64): cases that need f64 are skipped.
// Everything else is exact.
#include <accel/check.hpp>
#include <accel/error.hpp>
#include <accel/plugin.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace accel;

class FaultyStream final : public Stream {
public:
    explicit FaultyStream(Device& d) : Stream(d) {}
    void do_synchronize() override {}  // work has finished when it returns
};

class FaultyEvent final : public Event {
public:
    explicit FaultyEvent(Device& d) : Event(d) {}
    std::chrono::steady_clock::time_point time;

protected:
    void do_record(Stream&) override { time = std::chrono::steady_clock::now(); }
    void do_synchronize() override {}
};

DeviceInfo faulty_info() {
    DeviceInfo i;
    i.backend = "faulty";
    i.name = "faulty device (float64 oracle, one call corrupted)";
    i.vendor = "accel test";
    i.type = "cpu";
    i.driver_version = "-";
    i.runtime_version = "faulty 1";
    i.compute_units = 1;
    i.global_memory_bytes = std::uint64_t{1} << 32;
    i.timer = "steady_clock (ops run synchronously)";
    return i;
}

// The backward op FAULTY_WRONG_GRADIENT names ("": none).
std::string wrong_gradient() {
    const char* v = std::getenv("FAULTY_WRONG_GRADIENT");
    return v ? v : "";
}

// The wrong formula of FAULTY_WRONG_GRADIENT's op, in place of the oracle's
// outputs `out` for inputs `in` (float64).
void apply_wrong_gradient(Op op, const KernelArgs& a, const std::vector<std::vector<double>>& in,
                          std::vector<std::vector<double>>& out) {
    std::vector<double>& dx = out.at(0);
    for (std::size_t i = 0; i < dx.size(); ++i) {
        if (op == Op::sigmoid_backward) dx[i] = in[0][i] * in[1][i];  // dy·y
        if (op == Op::gelu_backward) dx[i] = in[0][i] * 0.5 * std::erfc(-in[1][i] / std::sqrt(2.0));  // dy·Φ(x)
        if (op == Op::bce_with_logits_backward && a.scalars[0] != 0) dx[i] /= a.scalars[0];  // scale left out
    }
}

// The op and call number FAULTY_CORRUPT names ("" / 0: none).
std::pair<std::string, unsigned long> corruption() {
    const char* v = std::getenv("FAULTY_CORRUPT");
    if (!v) return {"", 0};
    const std::string s = v;
    const auto colon = s.find(':');
    if (colon == std::string::npos) return {"", 0};
    return {s.substr(0, colon), std::strtoul(s.c_str() + colon + 1, nullptr, 10)};
}

std::size_t elements(const std::vector<std::size_t>& dims) {
    std::size_t n = 1;
    for (std::size_t d : dims) n *= d;
    return n;
}

class FaultyDevice final : public Device {
public:
    FaultyDevice() : Device(faulty_info()) {
        const std::vector<Op> ops{Op::add,         Op::mul,      Op::sigmoid,         Op::relu,
                                  Op::relu_backward, Op::sigmoid_backward, Op::matmul, Op::dense,
                                  Op::column_sum,  Op::bce_with_logits, Op::bce_with_logits_backward,
                                  Op::adam_step,   Op::convert,  Op::bias_activation, Op::gelu,
                                  Op::gelu_tanh,   Op::gelu_backward, Op::gelu_tanh_backward};
        const char* only = std::getenv("FAULTY_DTYPES");
        const std::vector<DType> dtypes = only && std::string(only) == "f32" ? std::vector<DType>{DType::f32}
                                                                              : std::vector<DType>{DType::f32, DType::f64};
        kernel_table().claim({{ops, dtypes, OpPath::native}});
        for (Op op : ops)
            for (DType t : dtypes)
                kernel_table().add(op, t, OpPath::native, [this, op](const KernelArgs& a) { run(op, a); });
    }

protected:
    ACCEL_DEVICE_RUNTIME_OVERRIDES  // the runtime every device has (accel/plugin.hpp)

private:
    void run(Op op, const KernelArgs& a) {
        const OpInfo& info = op_info(op);
        check::OpRecord r = check::describe(op, a);
        const auto shapes = operand_shapes(op, a);
        const auto bytes_of = [&](std::size_t operand, DType t) { return elements(shapes[operand]) * dtype_size(t); };
        for (std::size_t i = 0; i < info.inputs.size(); ++i) {
            const auto* p = static_cast<const unsigned char*>(a.in[i]);
            const DType t = op == Op::convert ? a.src_dtype : a.dtype;
            r.inputs.emplace_back(p, p ? p + bytes_of(i, t) : p);
        }
        for (std::size_t o = 0; o < info.outputs.size(); ++o) {
            const auto* p = static_cast<const unsigned char*>(a.out[o]);
            r.outputs_before.emplace_back(p, p + bytes_of(info.inputs.size() + o, a.dtype));
        }
        auto out = check::oracle(r);
        if (!wrong_gradient().empty() && wrong_gradient() == info.name) {
            std::vector<std::vector<double>> in;
            for (std::size_t i = 0; i < r.inputs.size(); ++i) {
                in.emplace_back(elements(shapes[i]));
                convert_elements(r.inputs[i].data(), a.dtype, in.back().data(), DType::f64, in.back().size());
            }
            apply_wrong_gradient(op, a, in, out);
        }
        const auto [corrupt_op, corrupt_call] = corruption();
        if (corrupt_op == info.name && ++calls_ == corrupt_call && !out[0].empty()) out[0][0] += 1.0;
        for (std::size_t o = 0; o < out.size(); ++o)
            convert_elements(out[o].data(), DType::f64, a.out[o], a.dtype, out[o].size());
    }

    std::atomic<unsigned long> calls_{0};
};

DeviceHandle FaultyDevice::do_allocate(std::size_t bytes) {
    void* p = std::malloc(bytes);
    if (!p) throw OutOfMemory("faulty:0 could not allocate " + std::to_string(bytes) + " bytes");
    return p;
}
void FaultyDevice::do_deallocate(DeviceHandle h) noexcept { std::free(h); }
void FaultyDevice::do_copy_h2d(DeviceHandle dst, std::size_t off, const void* src, std::size_t bytes, Stream&, bool) {
    std::memcpy(static_cast<char*>(dst) + off, src, bytes);
}
void FaultyDevice::do_copy_d2h(void* dst, DeviceHandle src, std::size_t off, std::size_t bytes, Stream&, bool) {
    std::memcpy(dst, static_cast<const char*>(src) + off, bytes);
}
void FaultyDevice::do_copy_d2d(DeviceHandle dst, std::size_t doff, DeviceHandle src, std::size_t soff,
                               std::size_t bytes, Stream&, bool) {
    std::memmove(static_cast<char*>(dst) + doff, static_cast<const char*>(src) + soff, bytes);
}
std::unique_ptr<Stream> FaultyDevice::do_create_stream() { return std::make_unique<FaultyStream>(*this); }
std::unique_ptr<Event> FaultyDevice::do_create_event() { return std::make_unique<FaultyEvent>(*this); }
double FaultyDevice::do_elapsed_ms(Event& start, Event& end) {
    return std::chrono::duration<double, std::milli>(static_cast<FaultyEvent&>(end).time -
                                                     static_cast<FaultyEvent&>(start).time)
        .count();
}
void FaultyDevice::do_synchronize() {}

class FaultyBackend final : public Backend {
public:
    std::string name() const override { return "faulty"; }
    Availability probe() override {
        Availability a;
        a.available = true;
        a.device_count = 1;
        return a;
    }
    std::shared_ptr<Device> create_device(int) override { return std::make_shared<FaultyDevice>(); }
};

}  // namespace

ACCEL_DEFINE_PLUGIN("faulty", FaultyBackend, "", 0, 0)
