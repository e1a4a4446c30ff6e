// A backend for the shadow check's tests (tests/check): one device in system
// memory whose kernels are accel's float64 oracle of each call
// (accel::check::oracle), rounded to the dtype — and which corrupts one
// call on purpose, as a driver bug would: FAULTY_CORRUPT=OP:N adds 1 to
// element 0 of the first output of the N-th call of OP on the device
// (e.g. matmul:37). Everything else is exact, so ACCEL_CHECK=oracle passes
// every other call.
#include <accel/check.hpp>
#include <accel/error.hpp>
#include <accel/plugin.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>

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
                                  Op::adam_step,   Op::convert,  Op::bias_activation};
        kernel_table().claim({{ops, {DType::f32, DType::f64}, OpPath::native}});
        for (Op op : ops)
            for (DType t : {DType::f32, DType::f64})
                kernel_table().add(op, t, OpPath::native, [this, op](const KernelArgs& a) { run(op, a); });
    }

protected:
    ACCEL_DEVICE_RUNTIME_OVERRIDES

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
