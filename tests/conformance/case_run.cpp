// The cases of --case-file as doctest test cases: data, the call on each
// path, the oracle, the verdict. See case_run.hpp.
#include "case_run.hpp"

#include <case_call.hpp>

#include "support/check.hpp"
#include "support/silent_reporter.hpp"

#include <cmath>
#include <cstdio>
#include <deque>
#include <iostream>
#include <limits>
#include <map>
#include <sstream>

using namespace accel;

namespace conformance {
namespace {

// The registered cases and the names doctest holds pointers to (a deque:
// its elements never move).
std::deque<TraceCase> g_cases;
std::deque<std::string> g_names, g_files;
std::map<std::string, const TraceCase*> g_by_name;
const TraceCase* g_current = nullptr;  // the case doctest is about to run (CaseTracker)
std::vector<std::string> g_failures;   // one line per failed (case, path, output)
std::size_t g_ran = 0;                 // cases started in this run

// One output of one call: what came back and what the oracle says.
struct Output {
    std::string name;
    std::vector<double> got;
    reference::Vec want;
};

Tensor put(const std::vector<float>& v, const std::vector<std::size_t>& dims, DType t) {
    return Tensor::from_host(accel_test::device(), Shape(dims), v, t);
}

Tensor nan_tensor(const std::vector<std::size_t>& dims, DType t) {
    const Shape s(dims);
    return put(std::vector<float>(s.elements(), std::numeric_limits<float>::quiet_NaN()), dims, t);
}

std::size_t elements(const std::vector<std::size_t>& dims) {
    std::size_t n = 1;
    for (std::size_t d : dims) n *= d;
    return n;
}

const std::vector<std::size_t>& dims_of(const std::vector<Operand>& ops, const std::string& name) {
    for (const auto& o : ops)
        if (o.name == name) return o.dims;
    throw std::logic_error("validated case without operand " + name);
}

bool has(const std::vector<Operand>& ops, const std::string& name) {
    for (const auto& o : ops)
        if (o.name == name) return true;
    return false;
}

// Values drawn uniformly in [lo, hi) and rounded to t: what the device holds.
std::vector<float> draw(std::mt19937_64& g, std::size_t n, DType t, float lo = -1.0f, float hi = 1.0f) {
    return accel_test::stored(accel_test::uniform(g, n, lo, hi), t);
}

std::vector<Output> run_matmul(const TraceCase& c, const ops::Options& o, std::mt19937_64& g) {
    const auto &da = c.inputs[0].dims, &db = c.inputs[1].dims;
    const std::size_t m = c.trans_a ? da[1] : da[0], k = c.trans_a ? da[0] : da[1], n = c.trans_b ? db[0] : db[1];
    const auto a = draw(g, m * k, c.dtype), b = draw(g, k * n, c.dtype);
    auto A = put(a, da, c.dtype), B = put(b, db, c.dtype);
    auto C = nan_tensor({m, n}, c.dtype);
    call_case(c, {{"a", &A}, {"b", &B}}, {{"c", &C}}, o);
    return {{"c", C.download_as<double>(), reference::matmul(a, b, m, n, k, c.trans_a, c.trans_b)}};
}

std::vector<Output> run_dense(const TraceCase& c, const ops::Options& o, std::mt19937_64& g) {
    const auto& dx = dims_of(c.inputs, "x");
    const std::size_t batch = dx[0], in = dx[1], out = dims_of(c.inputs, "w")[0];
    const bool with_bias = has(c.inputs, "bias");
    const auto x = draw(g, batch * in, c.dtype), w = draw(g, out * in, c.dtype);
    const auto b = with_bias ? draw(g, out, c.dtype) : std::vector<float>{};
    auto X = put(x, dx, c.dtype), W = put(w, {out, in}, c.dtype);
    auto Y = nan_tensor({batch, out}, c.dtype);
    std::optional<Tensor> Bias;
    CaseOperands operands{{"x", &X}, {"w", &W}};
    if (with_bias) operands["bias"] = &Bias.emplace(put(b, {out}, c.dtype));
    call_case(c, operands, {{"y", &Y}}, o);
    return {{"y", Y.download_as<double>(), reference::dense(x, w, b, batch, in, out, c.activation)}};
}

// The gradients of dense from a forward computed here in float64 (y, and z
// for gelu's derivative, rounded to the dtype as the program's forward
// stores them); the oracle's dz is rounded to the dtype too, as the device's
// gradient-before-activation kernel writes it.
std::vector<Output> run_dense_backward(const TraceCase& c, const ops::Options& o, std::mt19937_64& g) {
    const auto& dx = dims_of(c.inputs, "x");
    const std::size_t batch = dx[0], in = dx[1], out = dims_of(c.inputs, "w")[0];
    const DType t = c.dtype;
    const auto x = draw(g, batch * in, t), w = draw(g, out * in, t), b = draw(g, out, t), dy = draw(g, batch * out, t);
    const auto to_float = [](const reference::Vec& v) { return std::vector<float>(v.begin(), v.end()); };
    const auto y = accel_test::stored(to_float(reference::dense(x, w, b, batch, in, out, c.activation)), t);
    const auto z = accel_test::stored(to_float(reference::dense(x, w, b, batch, in, out, Activation::none)), t);
    std::vector<float> dz(batch * out);
    for (std::size_t i = 0; i < dz.size(); ++i) {
        double v = dy[i];
        if (c.activation == Activation::relu) v = y[i] > 0 ? v : 0.0;
        if (c.activation == Activation::sigmoid) v = v * double(y[i]) * (1.0 - double(y[i]));
        if (c.activation == Activation::gelu) v = reference::element::gelu_backward(v, z[i]);
        if (c.activation == Activation::gelu_tanh) v = reference::element::gelu_tanh_backward(v, z[i]);
        dz[i] = static_cast<float>(v);
    }
    dz = accel_test::stored(dz, t);
    auto X = put(x, {batch, in}, t), W = put(w, {out, in}, t), Y = put(y, {batch, out}, t), DY = put(dy, {batch, out}, t);
    auto Z = put(z, {batch, out}, t);
    auto DX = nan_tensor({batch, in}, t), DW = nan_tensor({out, in}, t), DB = nan_tensor({out}, t);
    const bool want_dx = has(c.outputs, "dx"), want_db = has(c.outputs, "db");
    CaseOperands inputs{{"x", &X}, {"w", &W}, {"y", &Y}, {"dy", &DY}}, outputs{{"dw", &DW}};
    if (has(c.inputs, "pre_activation")) inputs["pre_activation"] = &Z;
    if (want_dx) outputs["dx"] = &DX;
    if (want_db) outputs["db"] = &DB;
    call_case(c, inputs, outputs, o);
    std::vector<Output> r{{"dw", DW.download_as<double>(), reference::matmul(dz, x, out, in, batch, true, false)}};
    if (want_db) r.push_back({"db", DB.download_as<double>(), reference::column_sum(dz, batch, out)});
    if (want_dx) r.push_back({"dx", DX.download_as<double>(), reference::matmul(dz, w, batch, in, out, false, false)});
    return r;
}

std::vector<Output> run_bce_loss(const TraceCase& c, const ops::Options& o, std::mt19937_64& g) {
    const auto& dims = c.inputs[0].dims;
    const std::size_t n = elements(dims);
    const auto z = draw(g, n, c.dtype, -8.0f, 8.0f), t = draw(g, n, c.dtype, 0.0f, 1.0f);
    auto Z = put(z, dims, c.dtype), T = put(t, dims, c.dtype);
    const float loss = call_case(c, {{"z", &Z}, {"t", &T}}, {}, o);
    double sum = 0;
    for (double v : reference::bce_with_logits(z, t)) sum += v;
    return {{"loss", {double(loss)}, {n ? sum / double(n) : std::nan("")}}};
}

// The ops of one shape: elementwise ops with an oracle in the table, and
// bce_with_logits_backward, adam_step, convert.
std::vector<Output> run_one_shape(const TraceCase& c, const OpInfo& info, const ops::Options& o, std::mt19937_64& g) {
    const auto& dims = c.inputs[0].dims;
    const std::size_t n = elements(dims);
    const DType t = c.dtype;
    if (info.op == Op::convert) {
        auto x = draw(g, n, c.src_dtype, -1000.0f, 1000.0f);
        auto X = put(x, dims, c.src_dtype);
        auto Y = nan_tensor(dims, t);
        call_case(c, {{"x", &X}}, {{"y", &Y}}, o);
        const auto want = accel_test::stored(x, t);
        return {{"y", Y.download_as<double>(), reference::Vec(want.begin(), want.end())}};
    }
    if (info.op == Op::bce_with_logits_backward) {
        const auto z = draw(g, n, t, -8.0f, 8.0f), p = draw(g, n, t, 0.0f, 1.0f);
        auto Z = put(z, dims, t), P = put(p, dims, t);
        auto dZ = nan_tensor(dims, t);
        call_case(c, {{"z", &Z}, {"t", &P}}, {{"dz", &dZ}}, o);
        return {{"dz", dZ.download_as<double>(), reference::bce_with_logits_backward(z, p, n ? 1.0 / double(n) : 0.0)}};
    }
    if (info.op == Op::scale || info.op == Op::triad) {  // the cases' s (kCaseScalar)
        const bool triad = info.op == Op::triad;
        const auto b = draw(g, n, t, -4.0f, 4.0f), x = draw(g, n, t, -4.0f, 4.0f);
        auto B = put(b, dims, t), X = put(x, dims, t);
        auto Y = nan_tensor(dims, t);
        const reference::Vec bd(b.begin(), b.end()), xd(x.begin(), x.end());
        if (triad) {
            call_case(c, {{"b", &B}, {"c", &X}}, {{"a", &Y}}, o);
            return {{"a", Y.download_as<double>(), reference::triad(bd, xd, kCaseScalar)}};
        }
        call_case(c, {{"x", &X}}, {{"y", &Y}}, o);
        return {{"y", Y.download_as<double>(), reference::scale(xd, kCaseScalar)}};
    }
    if (info.op == Op::adam_step) {  // one step from zero moments, the suite's hyper-parameters
        const auto p0 = draw(g, n, t), gr = draw(g, n, t);
        auto P = put(p0, dims, t), G = put(gr, dims, t);
        auto M = put(std::vector<float>(n, 0.0f), dims, t), V = put(std::vector<float>(n, 0.0f), dims, t);
        call_case(c, {{"p", &P}, {"grad", &G}, {"m", &M}, {"v", &V}}, {{"p", &P}, {"m", &M}, {"v", &V}}, o);
        const ops::AdamParams& hp = kCaseAdamParams;
        reference::Vec p(p0.begin(), p0.end()), m(n, 0.0), v(n, 0.0);
        reference::adam_step(p, reference::Vec(gr.begin(), gr.end()), m, v, kCaseAdamStep, double(hp.lr), double(hp.beta1),
                             double(hp.beta2), double(hp.eps));
        return {{"p", P.download_as<double>(), p}, {"m", M.download_as<double>(), m}, {"v", V.download_as<double>(), v}};
    }
    std::vector<reference::FVec> x;
    std::vector<Tensor> tx;
    for (const auto& range : info.input_ranges) {
        x.push_back(draw(g, n, t, range[0], range[1]));
        tx.push_back(put(x.back(), dims, t));
    }
    CaseOperands in;
    for (std::size_t i = 0; i < tx.size(); ++i) in[info.inputs[i]] = &tx[i];
    auto y = nan_tensor(dims, t);
    call_case(c, in, {{info.outputs[0], &y}}, o);
    return {{info.outputs[0], y.download_as<double>(), reference::elementwise(info.op, x)}};
}

// The op whose kernels and paths a case exercises, and its threshold.
Op op_of(const TraceCase& c) {
    if (c.op == "dense_backward") return Op::matmul;
    if (c.op == "bce_with_logits_loss") return Op::column_sum;
    return find_op(c.op)->op;
}

std::vector<Output> run_call(const TraceCase& c, const ops::Options& o, std::mt19937_64& g) {
    if (c.op == "dense_backward") return run_dense_backward(c, o, g);
    if (c.op == "bce_with_logits_loss") return run_bce_loss(c, o, g);
    const OpInfo& info = op_info(op_of(c));
    if (info.op == Op::matmul) return run_matmul(c, o, g);
    if (info.op == Op::dense) return run_dense(c, o, g);
    if (info.op == Op::column_sum) {
        const auto& dims = c.inputs[0].dims;
        const auto x = draw(g, elements(dims), c.dtype, 0.0f, 1.0f);  // one sign: see the op table
        auto X = put(x, dims, c.dtype);
        auto Y = nan_tensor({dims[1]}, c.dtype);
        call_case(c, {{"x", &X}}, {{"y", &Y}}, o);
        return {{"y", Y.download_as<double>(), reference::column_sum(x, dims[0], dims[1])}};
    }
    if (info.op == Op::dot) {
        const auto& dims = c.inputs[0].dims;
        const auto a = draw(g, elements(dims), c.dtype, 0.0f, 1.0f), b = draw(g, elements(dims), c.dtype, 0.0f, 1.0f);
        auto A = put(a, dims, c.dtype), B = put(b, dims, c.dtype);
        auto Y = nan_tensor({1}, c.dtype);
        call_case(c, {{"a", &A}, {"b", &B}}, {{"y", &Y}}, o);
        return {{"y", Y.download_as<double>(),
                 {reference::dot(reference::Vec(a.begin(), a.end()), reference::Vec(b.begin(), b.end()))}}};
    }
    return run_one_shape(c, info, o, g);
}

// The work of a case, for ACCEL_TEST_MAX_WORK: its multiply-adds or elements.
std::size_t work_of(const TraceCase& c) {
    std::size_t most = 0;
    for (const auto* list : {&c.inputs, &c.outputs})
        for (const Operand& o : *list) most = std::max(most, elements(o.dims));
    if (c.op == "matmul") {
        const auto& a = c.inputs[0].dims;
        most = std::max(most, elements(a) * (c.trans_b ? c.inputs[1].dims[0] : c.inputs[1].dims[1]));
    } else if (c.op == "dense" || c.op == "dense_backward") {
        most = std::max(most, elements(dims_of(c.inputs, "x")) * dims_of(c.inputs, "w")[0]);
    }
    return most;
}

std::uint64_t fnv1a(const std::string& s) {
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ull;
    return h;
}

std::string number(double v) {
    std::ostringstream s;
    s.precision(4);
    s << v;
    return s.str();
}

// The test case every registered case runs: the case CaseTracker saw start.
void run_current_case() {
    const TraceCase* current = g_current;
    REQUIRE_MESSAGE(current != nullptr, "no case of the case file is running (a test case of its suite ran unregistered)");
    const TraceCase& c = *current;
    ++g_ran;
    const std::string text = c.text();
    if (!accel_test::runs_at_size(work_of(c), text)) return;
    const Op op = op_of(c);
    const double threshold = nmse_threshold(op, c.dtype);
    auto g = accel_test::rng(fnv1a(text));
    // doctest's messages print a const char* as a pointer: the names as strings.
    const std::string op_text = op_name(op), dtype_text = dtype_name(c.dtype);
    for (ops::PathChoice path : accel_test::paths(op)) {
        ops::Options o;
        o.path = path;
        const std::string path_text = accel_test::name(path);
        std::vector<Output> outputs;
        try {
            outputs = run_call(c, o, g);
        } catch (const Unsupported& e) {
            std::cout << "  skip  " << text << " [" << path_text << "]: " << e.what() << "\n";
            continue;
        } catch (const std::exception& e) {
            g_failures.push_back(text + " [" + path_text + "]: " + e.what());
            FAIL_CHECK("case FAILED: " << text << " on the " << path_text << " path: " << std::string(e.what())
                                       << " (from " << c.origin << ")");
            continue;
        }
        for (const Output& out : outputs) {
            // An empty output (a dimension of 0) has nothing to compare: it passes when it is empty.
            const double nmse = out.want.empty() && out.got.empty() ? 0.0 : reference::nmse(out.got, out.want);
            const bool pass = nmse <= threshold;  // +inf for a NaN or Inf: fails
            std::cout << (pass ? "  pass  " : "  FAIL  ") << text << " [" << path_text << "] " << out.name
                      << ": NMSE " << number(nmse) << (pass ? " <= " : " > ") << number(threshold) << "\n";
            if (pass) {
                CHECK(pass);
                continue;
            }
            g_failures.push_back(text + " [" + path_text + "] " + out.name + ": NMSE " + number(nmse) +
                                 " > threshold " + number(threshold) + " of " + op_text + " in " +
                                 dtype_text);
            FAIL_CHECK("case FAILED: " << text << " on the " << path_text << " path: output " << out.name
                                       << " has NMSE " << number(nmse) << ", past the threshold " << number(threshold)
                                       << " of " << op_text << " in " << dtype_text << " (from "
                                       << c.origin << ", " << c.calls << " call(s); seed " << accel_test::seed()
                                       << ")");
        }
    }
    std::cout.flush();
}

// Tells run_current_case which case doctest started, and lists the failed
// cases at the end of the run.
struct CaseTracker : accel_test::SilentReporter {
    using SilentReporter::SilentReporter;
    void test_case_start(const doctest::TestCaseData& tc) override {
        const auto it = g_by_name.find(tc.m_name ? tc.m_name : "");
        g_current = it == g_by_name.end() ? nullptr : it->second;
    }
    void test_run_end(const doctest::TestRunStats&) override {
        if (!g_ran) return;
        std::cout << "\ncase file: " << g_ran << " case(s) run, " << g_failures.size() << " failure(s)"
                  << (g_failures.empty() ? "" : ":") << "\n";
        for (const auto& f : g_failures) std::cout << "  FAILED: " << f << "\n";
        std::cout.flush();
    }
};
REGISTER_LISTENER("accel-case-file", 2, CaseTracker);

}  // namespace

void register_cases(const CaseFile& file) {
    static doctest::detail::TestSuite suite;
    (void)(suite * kCaseSuite);
    unsigned line = 0;
    for (const TraceCase& c : file.cases) {
        g_cases.push_back(c);
        g_names.push_back("case: " + c.text());
        g_by_name[g_names.back()] = &g_cases.back();
        // doctest prints FILE:LINE: a case file's line; a trace's event index
        // ("t.json, traceEvents:17"). Test cases are told apart by (line, name).
        unsigned at = ++line;
        std::string where = c.origin;
        const std::size_t event = c.origin.find(": traceEvents[");
        const std::size_t colon = c.origin.rfind(':');
        if (event != std::string::npos) {
            where = c.origin.substr(0, event) + ", traceEvents";
            at = static_cast<unsigned>(std::stoul(c.origin.substr(event + 14)));
        } else if (colon != std::string::npos && colon + 1 < c.origin.size()) {
            where = c.origin.substr(0, colon);
            at = static_cast<unsigned>(std::stoul(c.origin.substr(colon + 1)));
        }
        g_files.push_back(where);
        doctest::detail::regTest(doctest::detail::TestCase(run_current_case, g_files.back().c_str(), at, suite) *
                                 g_names.back().c_str());
    }
}

std::optional<int> use_case_file(const Command& cmd) {
    if (cmd.case_file.empty()) {
        if (!cmd.write_case_file.empty()) return usage_error("--write-case-file needs --case-file, the trace to read");
        return std::nullopt;
    }
    CaseFile file;
    try {
        file = read_case_file(cmd.case_file);
    } catch (const CaseFileError& e) {
        std::cerr << "accel-conformance: --case-file: " << e.what() << "\n";
        return 2;
    }
    if (!cmd.write_case_file.empty()) {
        try {
            write_case_file(file, cmd.write_case_file);
        } catch (const std::exception& e) {
            std::cerr << "accel-conformance: --write-case-file: " << e.what() << "\n";
            return 1;
        }
        std::cout << "wrote " << file.cases.size() << " case(s), the distinct calls of " << file.calls
                  << " call(s) in " << file.path << ", to " << cmd.write_case_file;
        if (file.enclosed) std::cout << " (" << file.enclosed << " kernel call(s) inside composed calls left out)";
        std::cout << "\n";
        return 0;
    }
    register_cases(file);
    return std::nullopt;
}

}  // namespace conformance
