// The smallest complete accel backend: one device in system memory, streams
// that run work as it is submitted, events read from the host clock, and
// kernels for add and relu in f32 and f64 — and an op of its own,
// toy_square, defined when the plugin starts: its table entry (with its
// float64 oracle) and its kernel are all it takes for the conformance suite
// to check it and accel-bench to time it. And a variable of its own,
// ACCEL_TOY_MEMORY_GIB, declared when the plugin loads, and program kernels
// in a language of its own, "toy-scale" (the code is a factor: the kernel
// multiplies its one f32 tensor by it), which libaccel has never heard of. Built outside
// accel's tree against the installed headers and libaccel
// (docs/adding-a-backend.md).
#include <accel/environment.hpp>
#include <accel/error.hpp>
#include <accel/plugin.hpp>

#include <chrono>
#include <cstdlib>
#include <string>
#include <cstring>

namespace {

using namespace accel;

class ToyStream final : public Stream {
public:
    explicit ToyStream(Device& d) : Stream(d) {}
    void do_synchronize() override {}  // work has finished when it returns
};

class ToyEvent final : public Event {
public:
    explicit ToyEvent(Device& d) : Event(d) {}
    std::chrono::steady_clock::time_point time;

protected:
    void do_record(Stream&) override { time = std::chrono::steady_clock::now(); }
    void do_synchronize() override {}
};

const env::Declaration kMemoryVariable{{"ACCEL_TOY_MEMORY_GIB", "a whole number of GiB in 1..64",
                                        "the memory the toy device reports (default 4)", "the toy backend"}};

DeviceInfo toy_info() {
    DeviceInfo i;
    i.backend = "toy";
    i.index = 0;
    i.name = "toy device (system memory)";
    i.vendor = "accel test";
    i.type = "cpu";
    i.driver_version = "-";
    i.runtime_version = "toy 1";
    i.compute_units = 1;
    i.global_memory_bytes = env::read_uint("ACCEL_TOY_MEMORY_GIB", 1, 64).value_or(4) << 30;
    i.timer = "steady_clock (ops run synchronously)";
    i.kernel_languages = {"toy-scale"};
    return i;
}

template <class T>
void add(const KernelArgs& a) {
    const T *x = static_cast<const T*>(a.in[0]), *y = static_cast<const T*>(a.in[1]);
    T* z = static_cast<T*>(a.out[0]);
    for (std::size_t i = 0; i < a.n; ++i) z[i] = x[i] + y[i];
}

template <class T>
void relu(const KernelArgs& a) {
    const T* x = static_cast<const T*>(a.in[0]);
    T* y = static_cast<T*>(a.out[0]);
    for (std::size_t i = 0; i < a.n; ++i) y[i] = x[i] > T(0) || x[i] != x[i] ? x[i] : T(0);  // NaN kept
}

// y = x², one rounding of an exact product per element.
double square_reference(double x, double) { return x * x; }

template <class T>
void square(const KernelArgs& a) {
    const T* x = static_cast<const T*>(a.in[0]);
    T* y = static_cast<T*>(a.out[0]);
    for (std::size_t i = 0; i < a.n; ++i) y[i] = x[i] * x[i];
}

Op define_square() {
    OpInfo info;
    info.name = "toy_square";
    info.math = "y = x * x";
    info.inputs = {"x"};
    info.outputs = {"y"};
    info.nmse = {1e-12, 1e-28, 1e-6, 6e-5};
    info.nmse_reason = "one rounding of an exact product per element";
    info.flops = [](const OpSize& s) { return double(s.n); };
    info.elementwise_reference = square_reference;
    info.input_ranges = {{-4.0f, 4.0f}};
    return define_op(info);
}

// The op's value in this process: defined once, when the plugin starts.
Op square_op() {
    static const Op op = define_square();
    return op;
}

// A "toy-scale" kernel: x[i] *= factor over its tensor, the whole of it per launch.
class ToyScaleKernel final : public BuiltKernel {
public:
    explicit ToyScaleKernel(float factor) : factor_(factor) {}
    void launch(const LaunchGeometry&, const std::vector<ResolvedArg>& args, Stream&) override {
        float* x = static_cast<float*>(args[0].handle);
        for (std::size_t i = 0; i < args[0].bytes / sizeof(float); ++i) x[i] *= factor_;
    }

private:
    float factor_;
};

class ToyDevice final : public Device, public KernelBuilder {
public:
    ToyDevice() : Device(toy_info()) {
        // The kernel table, then the kernels it names.
        std::vector<KernelTable::Claim> table{{{Op::add, Op::relu, square_op()}, {DType::f32, DType::f64}, OpPath::native}};
#ifdef TOY_CLAIM_MISSING
        table.push_back({{Op::relu_backward}, {DType::f32}, OpPath::native});
#endif
        kernel_table().claim(table);
        kernel_table().add(Op::add, DType::f32, OpPath::native, add<float>);
        kernel_table().add(Op::add, DType::f64, OpPath::native, add<double>);
        kernel_table().add(Op::relu, DType::f32, OpPath::native, relu<float>);
        kernel_table().add(Op::relu, DType::f64, OpPath::native, relu<double>);
        kernel_table().add(square_op(), DType::f32, OpPath::native, square<float>);
        kernel_table().add(square_op(), DType::f64, OpPath::native, square<double>);
    }

protected:
    ACCEL_DEVICE_RUNTIME_OVERRIDES  // the runtime every device has (accel/plugin.hpp)
    // Its one capability (accel/capability.hpp): a program's kernels in its
    // own language, toy-scale.
    void* do_capability(std::string_view name) noexcept override {
        return offer_capability<KernelBuilder>(this, name);
    }
    std::shared_ptr<BuiltKernel> build_program_kernel(const KernelSource& source) override {
        const std::string code = source.code_for("toy-scale");
        char* end = nullptr;
        const float factor = std::strtof(code.c_str(), &end);
        if (end == code.c_str() || *end != '\0')
            throw InvalidArgument("kernel '" + source.name + "': toy-scale code is a number (the factor), not '" + code +
                                  "'");
        if (source.params.size() != 1 || source.params[0].type != ParamType::tensor ||
            source.params[0].dtype != DType::f32 || !source.params[0].written)
            throw InvalidArgument("kernel '" + source.name + "': a toy-scale kernel takes one written f32 tensor");
        return std::make_shared<ToyScaleKernel>(factor);
    }
};

DeviceHandle ToyDevice::do_allocate(std::size_t bytes) {
    void* p = std::malloc(bytes);
    if (!p) throw OutOfMemory("toy:0 could not allocate " + std::to_string(bytes) + " bytes");
    return p;
}
void ToyDevice::do_deallocate(DeviceHandle h) noexcept { std::free(h); }
void ToyDevice::do_copy_h2d(DeviceHandle dst, std::size_t off, const void* src, std::size_t bytes, Stream&, bool) {
    std::memcpy(static_cast<char*>(dst) + off, src, bytes);
}
void ToyDevice::do_copy_d2h(void* dst, DeviceHandle src, std::size_t off, std::size_t bytes, Stream&, bool) {
    std::memcpy(dst, static_cast<const char*>(src) + off, bytes);
}
void ToyDevice::do_copy_d2d(DeviceHandle dst, std::size_t doff, DeviceHandle src, std::size_t soff, std::size_t bytes,
                            Stream&, bool) {
    std::memmove(static_cast<char*>(dst) + doff, static_cast<const char*>(src) + soff, bytes);
}
std::unique_ptr<Stream> ToyDevice::do_create_stream() { return std::make_unique<ToyStream>(*this); }
std::unique_ptr<Event> ToyDevice::do_create_event() { return std::make_unique<ToyEvent>(*this); }
double ToyDevice::do_elapsed_ms(Event& start, Event& end) {
    return std::chrono::duration<double, std::milli>(static_cast<ToyEvent&>(end).time -
                                                     static_cast<ToyEvent&>(start).time)
        .count();
}
void ToyDevice::do_synchronize() {}

class ToyBackend final : public Backend {
public:
    ToyBackend() { (void)square_op(); }  // the op exists from the plugin's start: selectable by tools
    std::string name() const override { return "toy"; }
    Availability probe() override { return Availability{true, "", 1, false}; }
    std::shared_ptr<Device> create_device(int) override { return std::make_shared<ToyDevice>(); }
};

}  // namespace

// No selector forms beyond toy[:N]; `auto` never opens it.
ACCEL_DEFINE_PLUGIN("toy", ToyBackend, "", 0, 0)
