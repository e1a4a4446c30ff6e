// Graphs (accel/graph.hpp) on the backend under test: a replay gives bitwise
// the results of the eager calls it recorded, for every op in every dtype
// and path the device runs, on fresh random data; a capture runs nothing;
// every call a capture cannot hold is refused and leaves the stream usable.
#include "support/check.hpp"

#include "case_call.hpp"

#include <accel/graph.hpp>

#include <cstring>
#include <map>
#include <thread>

using namespace accel;
using namespace accel_test;
using conformance::TraceCase;

namespace {

std::vector<unsigned char> bits_of(const Tensor& t) {
    std::vector<unsigned char> out(t.bytes());
    if (!out.empty()) t.buffer().download(out.data(), out.size());
    return out;
}

// Tensor bytes of `t`'s dtype holding `values` rounded to it.
void upload_as(Tensor& t, const std::vector<float>& values) {
    std::vector<unsigned char> raw(t.bytes());
    convert_elements(values.data(), DType::f32, raw.data(), t.dtype(), values.size());
    t.buffer().upload(raw.data(), raw.size());
}

Shape shape_of(const conformance::Operand& o) { return Shape(o.dims); }

// Where a case's input `name` is drawn from: the op table's range for the
// elementwise ops, Adam's second moment non-negative, else [-1, 1].
std::array<float, 2> range_of(const TraceCase& c, std::size_t input) {
    if (const OpInfo* info = find_op(c.op))
        if (input < info->input_ranges.size()) return info->input_ranges[input];
    if (c.op == "adam_step" && c.inputs[input].name == "v") return {0.0f, 1.0f};
    return {-1.0f, 1.0f};
}

// One set of a case's operands on the device: inputs from `inputs`, outputs
// NaN (in-place operands are the input's tensor).
struct Operands {
    std::map<std::string, Tensor> tensors;
    conformance::CaseOperands in, out;
};

Operands make_operands(const TraceCase& c, const std::vector<std::vector<float>>& inputs) {
    Operands o;
    for (std::size_t i = 0; i < c.inputs.size(); ++i) {
        const DType t = c.op == "convert" ? c.src_dtype : c.dtype;
        Tensor& x = o.tensors[c.inputs[i].name] = Tensor(device(), shape_of(c.inputs[i]), t);
        upload_as(x, inputs[i]);
        o.in[c.inputs[i].name] = &x;
    }
    for (const auto& operand : c.outputs) {
        auto it = o.tensors.find(operand.name);
        if (it == o.tensors.end()) {
            Tensor y(device(), shape_of(operand), c.dtype);
            upload_as(y, std::vector<float>(y.elements(), std::numeric_limits<float>::quiet_NaN()));
            it = o.tensors.emplace(operand.name, std::move(y)).first;
        }
        o.out[operand.name] = &it->second;
    }
    return o;
}

std::vector<std::vector<float>> draw_inputs(const TraceCase& c, std::mt19937_64& g) {
    std::vector<std::vector<float>> v;
    for (std::size_t i = 0; i < c.inputs.size(); ++i) {
        const auto r = range_of(c, i);
        v.push_back(uniform(g, shape_of(c.inputs[i]).elements(), r[0], r[1]));
    }
    return v;
}

void reupload(const TraceCase& c, Operands& o, const std::vector<std::vector<float>>& inputs) {
    for (std::size_t i = 0; i < c.inputs.size(); ++i) upload_as(*o.in[c.inputs[i].name], inputs[i]);
}

// Every output's bits (in-place operands included), by name.
std::map<std::string, std::vector<unsigned char>> results(const Operands& o) {
    std::map<std::string, std::vector<unsigned char>> r;
    for (const auto& [name, t] : o.out) r[name] = bits_of(*t);
    return r;
}

conformance::Operand operand(const std::string& name, std::vector<std::size_t> dims) { return {name, std::move(dims)}; }

TraceCase make_case(const std::string& op, DType t, std::vector<conformance::Operand> in,
                    std::vector<conformance::Operand> out) {
    TraceCase c;
    c.op = op;
    c.dtype = c.src_dtype = t;
    c.inputs = std::move(in);
    c.outputs = std::move(out);
    return c;
}

// Every op of the op table a program calls (not the kernel-only gemm and
// bias_activation, which matmul and dense compose on the vendor path), and
// dense_backward, in dtype `t`: lengths not a multiple of a vector width,
// every activation, both transposes.
std::vector<TraceCase> every_op(DType t) {
    std::vector<TraceCase> cases;
    const std::size_t n = 1001;
    for (const OpInfo* info : op_table()) {
        if (info->kernel_only || !info->elementwise_reference) continue;
        std::vector<conformance::Operand> in, out;
        for (const auto& name : info->inputs) in.push_back(operand(name, {n}));
        for (const auto& name : info->outputs) out.push_back(operand(name, {n}));
        cases.push_back(make_case(info->name, t, in, out));
    }
    cases.push_back(make_case("bce_with_logits_backward", t, {operand("z", {n}), operand("t", {n})}, {operand("dz", {n})}));
    cases.push_back(make_case("scale", t, {operand("x", {n})}, {operand("y", {n})}));
    cases.push_back(make_case("triad", t, {operand("b", {n}), operand("c", {n})}, {operand("a", {n})}));
    cases.push_back(make_case("dot", t, {operand("a", {n}), operand("b", {n})}, {operand("y", {1})}));
    cases.push_back(make_case("adam_step", t,
                              {operand("p", {n}), operand("grad", {n}), operand("m", {n}), operand("v", {n})},
                              {operand("p", {n}), operand("m", {n}), operand("v", {n})}));
    for (DType from : {DType::f32, DType::f64, DType::f16, DType::bf16}) {
        TraceCase c = make_case("convert", t, {operand("x", {n})}, {operand("y", {n})});
        c.src_dtype = from;
        cases.push_back(c);
    }
    for (bool ta : {false, true})
        for (bool tb : {false, true}) {
            TraceCase c = make_case("matmul", t, {operand("a", ta ? std::vector<std::size_t>{17, 33} : std::vector<std::size_t>{33, 17}),
                                                  operand("b", tb ? std::vector<std::size_t>{29, 17} : std::vector<std::size_t>{17, 29})},
                                    {operand("c", {33, 29})});
            c.trans_a = ta;
            c.trans_b = tb;
            cases.push_back(c);
        }
    for (Activation act : {Activation::none, Activation::relu, Activation::sigmoid, Activation::gelu, Activation::gelu_tanh}) {
        TraceCase c = make_case("dense", t, {operand("x", {40, 30}), operand("w", {10, 30}), operand("bias", {10})},
                                {operand("y", {40, 10})});
        c.activation = act;
        cases.push_back(c);
    }
    cases.push_back(make_case("dense", t, {operand("x", {7, 3}), operand("w", {5, 3})}, {operand("y", {7, 5})}));
    cases.push_back(make_case("column_sum", t, {operand("x", {40, 30})}, {operand("y", {30})}));
    for (Activation act : {Activation::none, Activation::relu, Activation::gelu}) {
        std::vector<conformance::Operand> in{operand("x", {40, 30}), operand("w", {10, 30}), operand("y", {40, 10}),
                                             operand("dy", {40, 10})};
        if (act == Activation::gelu) in.push_back(operand("pre_activation", {40, 10}));
        TraceCase c = make_case("dense_backward", t, in,
                                {operand("dx", {40, 30}), operand("dw", {10, 30}), operand("db", {10})});
        c.activation = act;
        cases.push_back(c);
    }
    return cases;
}

std::string describe(const TraceCase& c, OpPath path) { return c.text() + " (" + path_name(path) + " path)"; }

}  // namespace

TEST_CASE("a replay gives the bits of the eager calls, for every op in every dtype and path") {
    auto g = rng(0x67726170);
    std::size_t checked = 0, not_run = 0;
    Stream& s = device()->default_stream();
    for (DType t : {DType::f32, DType::f64, DType::f16, DType::bf16})
        for (const TraceCase& c : every_op(t))
            for (OpPath path : {OpPath::native, OpPath::vendor}) {
                const bool linear = c.op == "matmul" || c.op == "dense";
                if (path == OpPath::vendor && !linear) continue;
                const std::string what = describe(c, path);
                INFO(what);
                ops::Options o;
                o.path = path == OpPath::native ? ops::PathChoice::native : ops::PathChoice::vendor;
                auto inputs = draw_inputs(c, g);
                Operands eager = make_operands(c, inputs), replayed = make_operands(c, inputs);
                try {
                    conformance::call_case(c, eager.in, eager.out, o);
                } catch (const Unsupported& e) {
                    ++not_run;  // not this device's: the same refusal must come at capture
                    CHECK_THROWS_AS(capture(s, [&] { conformance::call_case(c, replayed.in, replayed.out, o); }),
                                    Unsupported);
                    CHECK_FALSE(capturing());
                    continue;
                }
                const auto poison = results(replayed);
                const Graph graph = capture(s, [&] { conformance::call_case(c, replayed.in, replayed.out, o); });
                REQUIRE_FALSE(graph.empty());
                CHECK_MESSAGE(results(replayed) == poison, "the capture ran something: " << what);
                graph.launch(s);
                CHECK(results(replayed) == results(eager));
                // New contents in the same tensors: the replay reads them.
                inputs = draw_inputs(c, g);
                reupload(c, eager, inputs);
                reupload(c, replayed, inputs);
                conformance::call_case(c, eager.in, eager.out, o);
                graph.launch();
                s.synchronize();
                CHECK(results(replayed) == results(eager));
                ++checked;
            }
    MESSAGE(checked << " calls replayed bit for bit on " << device()->selector() << "; " << not_run
                    << " not run by the device");
    CHECK(checked > 0);
}

TEST_CASE("a graph names its calls, and one op may be several") {
    auto r = rng(0x6e616d65);
    Tensor x = Tensor::from_host(device(), {4, 3}, uniform(r, 12));
    Tensor w = Tensor::from_host(device(), {2, 3}, std::vector<float>(6, 0.5f));
    Tensor y(device(), {4, 2}), dy = Tensor::from_host(device(), {4, 2}, std::vector<float>(8, 1.0f));
    Tensor dx(device(), {4, 3}), dw(device(), {2, 3}), db(device(), {2});
    ops::Options native;
    native.path = ops::PathChoice::native;
    const Graph g = capture(device()->default_stream(), [&] {
        ops::dense(x, w, std::nullopt, y, Activation::relu, native);
        ops::dense_backward(x, w, y, dy, Activation::relu, &dx, dw, &db, native);
    });
    CHECK(g.op_names() == std::vector<std::string>{"dense", "relu_backward", "matmul", "column_sum", "matmul"});
    CHECK(g.size() == 5);
    CHECK(&g.device() == device().get());
    CHECK_FALSE(Graph::mechanism(*device()).empty());
    const Graph nothing = capture(device()->default_stream(), [] {});
    CHECK(nothing.empty());
    nothing.launch();
    const Graph none;
    CHECK(none.empty());
    none.launch();
    CHECK_THROWS_AS(none.device(), InvalidArgument);
}

TEST_CASE("adam_step_from reads the step count at every replay") {
    auto g = rng(0x6164616d);
    const std::size_t n = 257;
    const ops::AdamParams hp{1e-2f, 0.9f, 0.999f, 1e-8f};
    const auto p0 = uniform(g, n), grad = uniform(g, n);
    Tensor pe = Tensor::from_host(device(), {n}, p0), pr = Tensor::from_host(device(), {n}, p0);
    Tensor G = Tensor::from_host(device(), {n}, grad);
    const std::vector<float> zeros(n, 0.0f);
    Tensor me = Tensor::from_host(device(), {n}, zeros), ve = Tensor::from_host(device(), {n}, zeros);
    Tensor mr = Tensor::from_host(device(), {n}, zeros), vr = Tensor::from_host(device(), {n}, zeros);
    std::size_t t = 1;
    const Graph step = capture(device()->default_stream(), [&] { ops::adam_step_from(pr, G, mr, vr, t, hp); });
    for (; t <= 5; ++t) {
        ops::adam_step(pe, G, me, ve, t, hp);
        step.launch();
    }
    CHECK(bits_of(pr) == bits_of(pe));
    CHECK(bits_of(mr) == bits_of(me));
    CHECK(bits_of(vr) == bits_of(ve));
    // A graph that still used the count it was captured with would differ.
    ops::adam_step(pe, G, me, ve, 1, hp);
    step.launch();
    CHECK(bits_of(pr) != bits_of(pe));
    t = 0;
    CHECK_THROWS_WITH_AS(step.launch(), doctest::Contains("step count is 0"), InvalidArgument);
}

// Whether the device should record graphs natively: CUDA, HIP and Vulkan
// always, OpenCL where it reports cl_khr_command_buffer (DeviceInfo says so).
bool records_natively(const Device& d) {
    const std::string& backend = d.info().backend;
    if (backend != "opencl") return backend == "cuda" || backend == "hip" || backend == "vulkan";
    for (const auto& [key, value] : d.info().extra)
        if (key == "command buffers") return contains(value, "graphs replay through them");
    return false;
}

TEST_CASE("CUDA, HIP, Vulkan and OpenCL with command buffers record graphs natively; runs of fixed calls around adam_step_from replay bit for bit") {
    const bool records = records_natively(*device());
    MESSAGE(device()->selector() << ": " << Graph::mechanism(*device()));
    CHECK((device()->capability<GraphRecorder>() != nullptr) == records);
    CHECK(contains(Graph::mechanism(*device()), records ? "one by one" : "enqueued again"));
    auto r = rng(0x6d697865);
    const std::size_t n = 777;
    const ops::AdamParams hp{1e-2f, 0.9f, 0.999f, 1e-8f};
    const auto x0 = uniform(r, n), g0 = uniform(r, n), zeros = std::vector<float>(n, 0.0f);
    struct Step {
        Tensor x, grad, m, v, y, z;
    };
    auto make = [&] {
        return Step{Tensor::from_host(device(), {n}, x0), Tensor::from_host(device(), {n}, g0),
                    Tensor::from_host(device(), {n}, zeros), Tensor::from_host(device(), {n}, zeros),
                    Tensor(device(), {n}), Tensor(device(), {n})};
    };
    Step eager = make(), replayed = make();
    std::size_t t = 1;
    auto calls = [&](Step& s, bool from_count) {
        ops::sigmoid(s.x, s.y);
        ops::gelu(s.y, s.z);
        if (from_count) ops::adam_step_from(s.x, s.grad, s.m, s.v, t, hp);
        else ops::adam_step(s.x, s.grad, s.m, s.v, t, hp);
        ops::mul(s.z, s.x, s.y);
        ops::adam_step_from(s.grad, s.y, s.m, s.v, t, hp);
    };
    const Graph g = capture(device()->default_stream(), [&] { calls(replayed, true); });
    REQUIRE(g.size() == 5);
    for (; t <= 3; ++t) {
        calls(eager, false);
        g.launch();
    }
    CHECK(bits_of(replayed.x) == bits_of(eager.x));
    CHECK(bits_of(replayed.grad) == bits_of(eager.grad));
    CHECK(bits_of(replayed.y) == bits_of(eager.y));
    CHECK(bits_of(replayed.m) == bits_of(eager.m));
    CHECK(bits_of(replayed.v) == bits_of(eager.v));
}

TEST_CASE("a tensor freed while a graph uses it keeps its memory until the graph goes") {
    auto g = rng(0x66726565);
    const std::size_t n = 4099;
    const auto a = uniform(g, n), b = uniform(g, n);
    Tensor c(device(), {n});
    const std::uint64_t before = device()->memory_info().in_use;
    Graph graph;
    {
        Tensor A = Tensor::from_host(device(), {n}, a), B = Tensor::from_host(device(), {n}, b);
        graph = capture(device()->default_stream(), [&] { ops::add(A, B, c); });
    }
    CHECK(device()->memory_info().in_use == before + 2 * n * sizeof(float));  // held by the graph
    graph.launch();
    const auto got = c.download();
    std::vector<float> want(n);
    for (std::size_t i = 0; i < n; ++i) want[i] = a[i] + b[i];
    CHECK(got == want);
    graph = Graph();
    CHECK(device()->memory_info().in_use == before);
}

TEST_CASE("what a capture cannot hold is refused, naming the call, and the stream stays usable") {
    Stream& s = device()->default_stream();
    const std::size_t n = 64;
    Tensor a = Tensor::from_host(device(), {n}, std::vector<float>(n, 1.0f)), b(device(), {n}), c(device(), {n});
    const std::vector<float> host(n, 2.0f);
    std::vector<float> back(n);
    auto other = device()->create_stream();
    auto event = device()->create_event();
    const Graph replay = capture(s, [&] { ops::add(a, a, c); });
    ops::Options on_other;
    on_other.stream = other.get();
    struct Refusal {
        const char* call;
        std::string message;
        std::function<void()> make;
    };
    const std::vector<Refusal> refusals{
        {"allocation", "allocate (256 bytes) while capturing", [&] { Tensor t(device(), {n}); }},
        {"upload", "copy_host_to_device while capturing", [&] { a.upload(host); }},
        {"download", "copy_device_to_host while capturing", [&] { a.download(back.data(), n); }},
        {"async upload", "copy_host_to_device while capturing", [&] { a.upload_async(host.data(), n, s); }},
        {"device copy", "copy_device_to_device while capturing",
         [&] { device()->copy_device_to_device_async(c.buffer(), 0, a.buffer(), 0, a.bytes(), s); }},
        {"stream synchronize", "Stream::synchronize while capturing", [&] { s.synchronize(); }},
        {"device synchronize", "Device::synchronize while capturing", [&] { device()->synchronize(); }},
        {"event record", "Event::record while capturing", [&] { event->record(s); }},
        {"loss", "ops::bce_with_logits_loss while capturing", [&] { (void)ops::bce_with_logits_loss(a, b); }},
        {"another stream", "a graph replays on one stream", [&] { ops::add(a, b, c, on_other); }},
        {"replay", "Graph::launch while capturing", [&] { replay.launch(s); }},
        {"nested capture", "begin_capture: this thread captures already", [&] { begin_capture(s); }},
    };
    for (const Refusal& r : refusals) {
        INFO(r.call);
        begin_capture(s);
        CHECK(capturing());
        ops::add(a, b, c);  // recorded before the refusal
        CHECK_THROWS_WITH_AS(r.make(), doctest::Contains(r.message.c_str()), InvalidArgument);
        if (std::string(r.call) != "nested capture") {
            CHECK_THROWS_WITH_AS(end_capture(s), doctest::Contains("the capture failed, so no graph was made"),
                                 InvalidArgument);
        } else {
            (void)end_capture(s);  // a refused begin_capture leaves the first capture as it was
        }
        CHECK_FALSE(capturing());
        add_works(device(), &s);  // eager again
    }
    // Begun and ended on different streams, or ended without a capture.
    CHECK_THROWS_WITH_AS(end_capture(s), doctest::Contains("does not capture"), InvalidArgument);
    begin_capture(s);
    CHECK_THROWS_WITH_AS(end_capture(*other), doctest::Contains("the capture is abandoned"), InvalidArgument);
    CHECK_FALSE(capturing());
    // A capture whose code throws is abandoned; the exception passes on.
    CHECK_THROWS_AS(capture(s, [&] { throw std::runtime_error("the program's own error"); }), std::runtime_error);
    CHECK_FALSE(capturing());
    // A graph replays only on its device's streams, and records only its device's ops.
    if (device()->info().backend != "host") {
        auto host = open_device("host");
        Tensor h = Tensor::from_host(host, {n}, std::vector<float>(n, 1.0f)), hc(host, {n});
        begin_capture(s);
        CHECK_THROWS_WITH_AS(ops::add(h, h, hc), doctest::Contains("a graph replays on one stream"), InvalidArgument);
        CHECK_THROWS_AS(end_capture(s), InvalidArgument);
        CHECK_THROWS_WITH_AS(replay.launch(host->default_stream()), doctest::Contains("replay it on a stream of its device"),
                             InvalidArgument);
    }
    add_works(device(), other.get());
}

TEST_CASE("another thread's work is not captured") {
    Stream& s = device()->default_stream();
    const std::size_t n = 1000;
    auto g = rng(0x74687264);
    const auto a = uniform(g, n);
    Tensor A = Tensor::from_host(device(), {n}, a), C(device(), {n});
    begin_capture(s);
    std::thread other([&] { add_works(device()); });
    other.join();
    ops::add(A, A, C);
    const Graph graph = end_capture(s);
    CHECK(graph.size() == 1);
    graph.launch();
    const auto got = C.download();
    for (std::size_t i = 0; i < n; i += 97) CHECK(got[i] == a[i] + a[i]);
}

TEST_CASE("deterministic mode holds in a replay") {
    const Determinism& p = device()->info().determinism;
    if (!(p.reproducible && p.batch_invariant)) {
        MESSAGE(device()->selector() << " promises no deterministic kernels: the mode refuses its ops, captured or not");
        return;
    }
    auto g = rng(0x64657465);
    const auto a = uniform(g, 64 * 48), b = uniform(g, 48 * 40);
    Tensor A = Tensor::from_host(device(), {64, 48}, a), B = Tensor::from_host(device(), {48, 40}, b);
    Tensor C(device(), {64, 40}), C_eager(device(), {64, 40});
    ops::Options o;  // auto path: deterministic mode makes it native, at capture as eagerly
    o.deterministic = true;
    const Graph graph = capture(device()->default_stream(), [&] { ops::matmul(A, B, C, {}, o); });
    for (int i = 0; i < 3; ++i) {
        graph.launch();
        ops::matmul(A, B, C_eager, {}, o);
        CHECK(bits_of(C) == bits_of(C_eager));
    }
}
