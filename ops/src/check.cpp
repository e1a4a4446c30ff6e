// The observed kernel call (trace event and shadow check) and the records
// accel-replay reruns. See accel/check.hpp and accel/trace.hpp.
#include <accel/check.hpp>
#include <accel/environment.hpp>
#include <accel/reference.hpp>
#include <accel/registry.hpp>
#include <accel/tensor.hpp>

#include <accel_internal/instrument.hpp>
#include <accel_internal/ops_layer.hpp>
#include "kernel_call.hpp"
#include <accel_internal/text.hpp>

#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <mutex>
#include <sstream>

namespace accel {

std::string detail::dims_text(const std::vector<std::size_t>& dims) {
    std::string t = "[";
    for (std::size_t i = 0; i < dims.size(); ++i) t += (i ? "," : "") + std::to_string(dims[i]);
    return t + "]";
}

namespace {

const env::Declaration kCheckVariable{{"ACCEL_CHECK", "oracle, or a device selector",
                                       "runs every kernel call a second time (float64 oracle, or that device) and "
                                       "compares (default: off; accel/check.hpp)",
                                       "libaccel (ops)"}};
const env::Declaration kCheckModeVariable{{"ACCEL_CHECK_MODE", "stop or warn (any case)",
                                           "what a divergence found by ACCEL_CHECK does: throw accel::CheckFailed "
                                           "(stop, default) or print and go on",
                                           "libaccel (ops)"}};
const env::Declaration kCheckDirVariable{{"ACCEL_CHECK_DIR", "an existing folder",
                                          "where ACCEL_CHECK writes the operands of a diverging call (default: the "
                                          "working folder)",
                                          "libaccel (ops)"}};

using json = nlohmann::json;

constexpr int kRecordVersion = 1;
constexpr int kMostRecordsInWarnMode = 16;  // files one run writes when it goes on past divergences

struct CheckConfig {
    std::mutex mutex;
    bool on = false;
    bool oracle = true;         // else against `selector`
    std::string selector;
    bool warn = false;
    std::string dir = ".";
    std::shared_ptr<Device> other;  // opened at the first call checked
    int records_written = 0;
    std::uint64_t compared = 0;  // calls whose outputs were compared with the reference
    std::uint64_t past = 0;      // of those, calls past their op's threshold
};

CheckConfig& config() {
    static CheckConfig* c = new CheckConfig;  // never destroyed: checks may run during exit
    return *c;
}

// Shapes as the trace and messages print them: "a[256,30] b[30,1024] -> c[256,1024]".
std::string shapes_text(Op op, const KernelArgs& a) {
    const OpInfo& info = op_info(op);
    const auto shapes = operand_shapes(op, a);
    std::string s;
    auto one = [&](const std::string& name, const std::vector<std::size_t>& dims) {
        s += name + detail::dims_text(dims);
    };
    for (std::size_t i = 0; i < info.inputs.size(); ++i) {
        if (!a.in[i]) continue;  // an absent optional operand
        if (!s.empty()) s += " ";
        one(info.inputs[i], shapes[i]);
    }
    s += s.empty() ? "->" : " ->";
    for (std::size_t o = 0; o < info.outputs.size(); ++o) {
        s += " ";
        one(info.outputs[o], shapes[info.inputs.size() + o]);
    }
    return s;
}

std::size_t elements_of(const std::vector<std::size_t>& dims) {
    std::size_t n = 1;
    for (std::size_t d : dims) n *= d;
    return n;
}

DType input_dtype(Op op, DType dtype, DType src_dtype) { return op == Op::convert ? src_dtype : dtype; }

// (rows, cols) of the default geometry the front-end asks for this call.
std::pair<std::size_t, std::size_t> launch_extent(Op op, const KernelArgs& a) {
    if (op_info(op).tiled) return {a.m, a.n};
    if (op == Op::bias_activation) return {1, a.m * a.n};
    if (op == Op::dot) return {1, std::max<std::size_t>(a.n, 1)};  // as ops::dot: at least one block
    return {1, a.n};
}

std::string file_name_piece(std::string s) {
    for (char& c : s)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '-';
    return s;
}

// C = op(A)·op(B) + beta·C_before (beta 0: C is not read, whatever it holds,
// as in BLAS). On magnitudes, with |beta|, it gives gemm's scale.
reference::Vec gemm_of(const check::OpRecord& r, const reference::Vec& a, const reference::Vec& b, double beta,
                       const reference::Vec& c_before) {
    reference::Vec c = reference::matmul(a, b, r.m, r.n, r.k, r.trans_a, r.trans_b);
    if (beta != 0)
        for (std::size_t i = 0; i < c.size(); ++i) c[i] += beta * c_before[i];
    return c;
}

// z[row, c] = alpha·y[row, c] + bias[c] over [m, n], bias_activation's input
// to its activation (alpha 0: y is not read; no bias: 0).
reference::Vec epilogue_input(const check::OpRecord& r, double alpha, const reference::Vec& y,
                              const reference::Vec& bias) {
    reference::Vec z(r.m * r.n);
    for (std::size_t row = 0; row < r.m; ++row)
        for (std::size_t c = 0; c < r.n; ++c) {
            const std::size_t i = row * r.n + c;
            z[i] = (alpha != 0 ? alpha * y[i] : 0.0) + (bias.empty() ? 0.0 : bias[c]);
        }
    return z;
}

double activate(Activation act, double v) {
    switch (act) {  // no default: a new Activation must say its function here
        case Activation::none: return v;
        case Activation::relu: return reference::element::relu(v, 0);
        case Activation::sigmoid: return reference::element::sigmoid(v, 0);
        case Activation::gelu: return reference::element::gelu(v, 0);
        case Activation::gelu_tanh: return reference::element::gelu_tanh(v, 0);
    }
    return v;
}

}  // namespace

namespace check {

OpRecord describe(Op op, const KernelArgs& a) {
    OpRecord r;
    r.op = op_info(op).name;
    r.dtype = a.dtype;
    r.src_dtype = a.src_dtype;
    r.path = a.path;
    r.m = a.m;
    r.n = a.n;
    r.k = a.k;
    r.trans_a = a.trans_a;
    r.trans_b = a.trans_b;
    r.act = a.act;
    r.scalars = a.scalars;
    return r;
}

KernelArgs kernel_args(const OpRecord& r) {
    KernelArgs a;
    a.dtype = r.dtype;
    a.src_dtype = r.src_dtype;
    a.path = r.path;
    a.m = r.m;
    a.n = r.n;
    a.k = r.k;
    a.trans_a = r.trans_a;
    a.trans_b = r.trans_b;
    a.act = r.act;
    a.scalars = r.scalars;
    return a;
}

std::vector<double> widen(const std::vector<unsigned char>& bytes, DType dtype) {
    std::vector<double> out(bytes.size() / dtype_size(dtype));
    convert_elements(bytes.data(), dtype, out.data(), DType::f64, out.size());
    return out;
}

std::vector<std::vector<double>> oracle(const OpRecord& r) {
    const OpInfo* info = find_op(r.op);
    if (!info) throw InvalidArgument("check::oracle: the op table has no op named '" + r.op + "'");
    const Op op = info->op;
    std::vector<reference::Vec> in;
    for (const auto& bytes : r.inputs) in.push_back(widen(bytes, input_dtype(op, r.dtype, r.src_dtype)));
    std::vector<reference::Vec> before;
    for (const auto& bytes : r.outputs_before) before.push_back(widen(bytes, r.dtype));
    switch (op) {
        case Op::matmul: return {reference::matmul(in[0], in[1], r.m, r.n, r.k, r.trans_a, r.trans_b)};
        case Op::gemm: return {gemm_of(r, in[0], in[1], r.scalars[0], before[0])};
        case Op::dense: return {reference::dense(in[0], in[1], in[2], r.m, r.k, r.n, r.act)};
        case Op::column_sum: return {reference::column_sum(in[0], r.m, r.n)};
        case Op::bias_activation: {
            reference::Vec y = epilogue_input(r, r.scalars[0], before[0], in[0]);
            for (double& v : y) v = activate(r.act, v);
            return {y};
        }
        case Op::bce_with_logits_backward: return {reference::bce_with_logits_backward(in[0], in[1], r.scalars[0])};
        case Op::scale: return {reference::scale(in[0], r.scalars[0])};
        case Op::triad: return {reference::triad(in[0], in[1], r.scalars[0])};
        case Op::dot: return {{reference::dot(in[0], in[1])}};
        case Op::adam_step: {  // inputs p, grad, m, v; outputs p, m, v (AdamScalarArgs)
            const AdamScalarArgs hp = AdamScalarArgs::of(kernel_args(r));
            reference::Vec p = in[0], m = in[2], v = in[3];
            for (std::size_t i = 0; i < p.size(); ++i) {
                const double g = in[1][i];
                m[i] = hp.beta1 * m[i] + (1.0 - hp.beta1) * g;
                v[i] = hp.beta2 * v[i] + (1.0 - hp.beta2) * g * g;
                p[i] -= hp.step_size * m[i] / (std::sqrt(v[i]) / hp.bias_correction2_sqrt + hp.eps);
            }
            return {p, m, v};
        }
        case Op::convert: {  // the input rounded once to the output's dtype
            std::vector<unsigned char> rounded(r.n * dtype_size(r.dtype));
            convert_elements(r.inputs[0].data(), r.src_dtype, rounded.data(), r.dtype, r.n);
            return {widen(rounded, r.dtype)};
        }
        default: break;
    }
    if (!info->elementwise_reference)
        throw Unsupported("check: " + r.op + " has no float64 oracle (an op defined without an elementwise "
                          "reference); check it against a device instead (ACCEL_CHECK=<selector>)");
    return {reference::elementwise(op, in)};
}

std::vector<std::vector<double>> rerun(const OpRecord& r, Device& device, OpPath* path_used) {
    const OpInfo* info = find_op(r.op);
    if (!info) throw InvalidArgument("check::rerun: the op table has no op named '" + r.op + "'");
    const Op op = info->op;
    KernelArgs a = check::kernel_args(r);
    if (!device.kernel_table().supports(op, r.dtype, a.path)) a.path = OpPath::native;
    if (!device.kernel_table().supports(op, r.dtype, a.path))
        throw Unsupported(std::string(op_name(op)) + " cannot run on " + device.selector() + ": " +
                          device.kernel_table().unsupported_reason(op, r.dtype, r.path));
    instrument::Quiet quiet;
    std::shared_ptr<Device> owner = device.shared_from_this();
    std::vector<Buffer> ins, outs;
    for (std::size_t i = 0; i < r.inputs.size(); ++i) {
        ins.emplace_back(owner, r.inputs[i].size());
        ins.back().upload(r.inputs[i].data(), r.inputs[i].size());
        a.in[i] = ins.back().handle();
    }
    for (std::size_t o = 0; o < r.outputs_before.size(); ++o) {
        outs.emplace_back(owner, r.outputs_before[o].size());
        outs.back().upload(r.outputs_before[o].data(), r.outputs_before[o].size());
        a.out[o] = outs.back().handle();
    }
    // adam_step's in-place operands are one buffer seen as input and output.
    if (op == Op::adam_step) {
        a.in[0] = a.out[0];
        a.in[2] = a.out[1];
        a.in[3] = a.out[2];
    }
    Stream& s = device.default_stream();
    a.stream = &s;
    const auto [rows, cols] = launch_extent(op, a);
    if (op != Op::gemm) detail::default_launch(device, op, a, rows, cols);
    Buffer partials;  // dot's one value per block (DotArgs)
    if (op == Op::dot) {
        partials = Buffer(owner, std::max<std::size_t>(1, DotArgs::blocks_of(a.geometry)) * (r.dtype == DType::f64 ? 8 : 4));
        a.out[1] = partials.handle();
    }
    detail::run_kernel(device, op, a);
    s.synchronize();
    std::vector<std::vector<double>> got;
    for (std::size_t o = 0; o < outs.size(); ++o) {
        std::vector<unsigned char> bytes(outs[o].size());
        outs[o].download(bytes.data(), bytes.size());
        got.push_back(widen(bytes, r.dtype));
    }
    if (path_used) *path_used = a.path;
    return got;
}

std::vector<std::vector<double>> scale(const OpRecord& r, const std::vector<std::vector<double>>& want) {
    const OpInfo* info = find_op(r.op);
    if (!info) throw InvalidArgument("check::scale: the op table has no op named '" + r.op + "'");
    const Op op = info->op;
    const DType in_type = input_dtype(op, r.dtype, r.src_dtype);
    auto magnitudes = [](std::vector<double> v) {
        for (double& x : v) x = std::fabs(x);
        return v;
    };
    std::vector<reference::Vec> in;
    for (const auto& bytes : r.inputs) in.push_back(magnitudes(widen(bytes, in_type)));
    std::vector<reference::Vec> before;
    for (const auto& bytes : r.outputs_before) before.push_back(magnitudes(widen(bytes, r.dtype)));
    if (want.size() != r.outputs_before.size())
        throw InvalidArgument("check::scale: " + std::to_string(want.size()) + " reference outputs for " + r.op +
                              ", which has " + std::to_string(r.outputs_before.size()));
    auto plus = [](reference::Vec a, const reference::Vec& b) {
        for (std::size_t i = 0; i < a.size(); ++i) a[i] += std::fabs(b[i]);
        return a;
    };
    // z's magnitudes through an activation: relu passes at most them, the
    // sigmoid scales an error in z by at most 1/4, gelu and gelu_tanh by at
    // most 1.13 (gelu' peaks at Φ(√2) + √2·φ(√2) = 1.129).
    auto through = [](reference::Vec z, Activation act) {
        const double slope = act == Activation::sigmoid ? 0.25
                             : act == Activation::gelu || act == Activation::gelu_tanh ? 1.13
                                                                                          : 1.0;
        for (double& x : z) x *= slope;
        return z;
    };
    switch (op) {
        case Op::matmul: return {reference::matmul(in[0], in[1], r.m, r.n, r.k, r.trans_a, r.trans_b)};
        case Op::gemm: return {gemm_of(r, in[0], in[1], std::fabs(r.scalars[0]), before[0])};
        case Op::dense: {
            const reference::Vec z = reference::dense(in[0], in[1], in[2], r.m, r.k, r.n, Activation::none);
            return {plus(through(z, r.act), want[0])};
        }
        case Op::column_sum: return {reference::column_sum(in[0], r.m, r.n)};
        case Op::bias_activation:
            return {plus(through(epilogue_input(r, std::fabs(r.scalars[0]), before[0], in[0]), r.act), want[0])};
        case Op::add: return {plus(in[0], in[1])};
        case Op::sigmoid_backward: {  // dy·y − dy·y²
            reference::Vec s(in[0].size());
            for (std::size_t i = 0; i < s.size(); ++i) s[i] = in[0][i] * in[1][i] * (1.0 + in[1][i]);
            return {s};
        }
        case Op::bce_with_logits: {  // max(z, 0) − z·t + log1p(exp(−|z|))
            reference::Vec s(in[0].size());
            for (std::size_t i = 0; i < s.size(); ++i)
                s[i] = in[0][i] + in[0][i] * in[1][i] + std::log1p(std::exp(-in[0][i]));
            return {s};
        }
        case Op::bce_with_logits_backward: {  // scale·(σ(z) − t)
            const std::vector<double> z = widen(r.inputs[0], in_type);
            reference::Vec s(z.size());
            for (std::size_t i = 0; i < s.size(); ++i)
                s[i] = std::fabs(r.scalars[0]) * (reference::element::sigmoid(z[i], 0) + in[1][i]);
            return {s};
        }
        case Op::triad: {  // b + s·c
            reference::Vec s(in[0].size());
            for (std::size_t i = 0; i < s.size(); ++i) s[i] = in[0][i] + std::fabs(r.scalars[0]) * in[1][i];
            return {s};
        }
        case Op::dot: {  // a sum of products of any sign: Σ|a·b|
            double s = 0;
            for (std::size_t i = 0; i < in[0].size(); ++i) s += in[0][i] * in[1][i];
            return {{s}};
        }
        case Op::gelu_backward:  // dy·(Φ(x) + x·φ(x)), terms that cancel near x = −0.75:
        case Op::gelu_tanh_backward: {  // |Φ| <= 1 and |x·φ(x)| <= φ(1) = 0.242 (the tanh form's alike)
            reference::Vec s(in[0].size());
            for (std::size_t i = 0; i < s.size(); ++i) s[i] = 1.25 * in[0][i];
            return {s};
        }
        case Op::adam_step: {  // p − u; m' = β1·m + (1 − β1)·g; v' has no cancellation
            const AdamScalarArgs hp = AdamScalarArgs::of(kernel_args(r));
            const std::vector<double> p = widen(r.inputs[0], in_type);
            reference::Vec sp(p.size()), sm(p.size());
            for (std::size_t i = 0; i < p.size(); ++i) {
                sp[i] = std::fabs(p[i]) + std::fabs(p[i] - want[0][i]);
                sm[i] = hp.beta1 * in[2][i] + (1.0 - hp.beta1) * in[1][i];
            }
            return {sp, sm, magnitudes(want[2])};
        }
        default: break;  // no cancellation: the result's own magnitude
    }
    std::vector<std::vector<double>> out;
    for (const auto& w : want) out.push_back(magnitudes(w));
    return out;
}

Comparison compare(const std::vector<std::vector<double>>& got, const std::vector<std::vector<double>>& want,
                   const std::vector<std::vector<double>>& scale) {
    if (got.size() != want.size() || (!scale.empty() && scale.size() != want.size()))
        throw InvalidArgument("check::compare: " + std::to_string(got.size()) + " outputs against " +
                              std::to_string(want.size()));
    Comparison worst;
    for (std::size_t o = 0; o < got.size(); ++o) {
        if (got[o].size() != want[o].size() || (!scale.empty() && scale[o].size() != want[o].size()))
            throw InvalidArgument("check::compare: output " + std::to_string(o) + " has " +
                                  std::to_string(got[o].size()) + " elements against " + std::to_string(want[o].size()));
        double err = 0, norm = 0, biggest = -1;
        std::size_t at = 0;
        bool special = false;  // a non-finite value where the reference has another
        for (std::size_t i = 0; i < got[o].size(); ++i) {
            const double g = got[o][i], w = want[o][i];
            if (!std::isfinite(g) || !std::isfinite(w)) {
                const bool same = (std::isnan(g) && std::isnan(w)) || g == w;
                if (!same && !special) {
                    special = true;
                    at = i;
                }
                continue;
            }
            const double d = g - w;
            const double at_scale = scale.empty() || !std::isfinite(scale[o][i]) ? w : scale[o][i];
            err += d * d;
            norm += at_scale * at_scale;
            if (!special && std::fabs(d) > biggest) {
                biggest = std::fabs(d);
                at = i;
            }
        }
        const std::size_t n = got[o].size();
        const double e = special ? std::numeric_limits<double>::infinity()
                                 : (n == 0 ? 0.0 : (norm > 0 ? err / norm : err / double(n)));
        if (o == 0 || e > worst.nmse) {
            worst.nmse = e;
            worst.output = o;
            worst.index = at;
            worst.got = n ? got[o][at] : 0.0;
            worst.want = n ? want[o][at] : 0.0;
        }
    }
    return worst;
}

void save(const OpRecord& r, const std::string& path) {
    json j;
    j["format"] = "accel-op-record";
    j["version"] = kRecordVersion;
    j["op"] = r.op;
    j["dtype"] = dtype_name(r.dtype);
    j["src_dtype"] = dtype_name(r.src_dtype);
    j["path"] = path_name(r.path);
    j["m"] = r.m;
    j["n"] = r.n;
    j["k"] = r.k;
    j["trans_a"] = r.trans_a;
    j["trans_b"] = r.trans_b;
    j["act"] = activation_name(r.act);
    j["scalars"] = r.scalars;
    auto blobs = [](const std::vector<std::vector<unsigned char>>& v) {
        json a = json::array();
        for (const auto& b : v) a.push_back(json::binary(b));
        return a;
    };
    j["inputs"] = blobs(r.inputs);
    j["outputs_before"] = blobs(r.outputs_before);
    j["outputs_got"] = blobs(r.outputs_got);
    j["seq"] = r.seq;
    j["of_op"] = r.of_op;
    j["device"] = r.device;
    j["device_name"] = r.device_name;
    j["reference"] = r.reference;
    j["nmse"] = r.nmse;
    j["threshold"] = r.threshold;
    const std::vector<std::uint8_t> bytes = json::to_cbor(j);
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    f.close();
    if (!f) throw InvalidArgument("check: cannot write the record '" + path + "'; give a writable folder (ACCEL_CHECK_DIR)");
}

OpRecord load(const std::string& path) {
    const auto bad = [&](const std::string& why) -> InvalidArgument {
        return InvalidArgument("'" + path + "' is not a usable accel op record: " + why);
    };
    std::ifstream f(path, std::ios::binary);
    if (!f) throw InvalidArgument("cannot open '" + path + "'; give a file written by ACCEL_CHECK");
    const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    json j = json::from_cbor(bytes, true, false);
    if (j.is_discarded() || !j.is_object()) throw bad("it is not a CBOR map");
    try {
        if (j.value("format", "") != "accel-op-record") throw bad("its format is not accel-op-record");
        if (j.at("version").get<int>() != kRecordVersion)
            throw bad("version " + j.at("version").dump() + ", this accel reads version " + std::to_string(kRecordVersion));
        OpRecord r;
        r.op = j.at("op").get<std::string>();
        const OpInfo* info = find_op(r.op);
        if (!info) throw bad("the op table has no op named '" + detail::echo(r.op) + "'");
        r.dtype = parse_dtype(j.at("dtype").get<std::string>());
        r.src_dtype = parse_dtype(j.at("src_dtype").get<std::string>());
        const std::string path_text = j.at("path").get<std::string>();
        if (path_text != "native" && path_text != "vendor") throw bad("path '" + detail::echo(path_text) + "'");
        r.path = path_text == "native" ? OpPath::native : OpPath::vendor;
        r.m = j.at("m").get<std::size_t>();
        r.n = j.at("n").get<std::size_t>();
        r.k = j.at("k").get<std::size_t>();
        constexpr std::size_t kMostElements = std::size_t(1) << 31;  // 2^31 per dimension: a record, not a data set
        if (r.m > kMostElements || r.n > kMostElements || r.k > kMostElements) throw bad("sizes beyond 2^31");
        r.trans_a = j.at("trans_a").get<bool>();
        r.trans_b = j.at("trans_b").get<bool>();
        const std::string act = j.at("act").get<std::string>();
        bool known = false;
        for (Activation a :
             {Activation::none, Activation::sigmoid, Activation::relu, Activation::gelu, Activation::gelu_tanh})
            if (act == activation_name(a)) {
                r.act = a;
                known = true;
            }
        if (!known) throw bad("activation '" + detail::echo(act) + "'");
        r.scalars = j.at("scalars").get<std::array<double, 8>>();
        auto blobs = [&](const char* key) {
            std::vector<std::vector<unsigned char>> v;
            for (const json& b : j.at(key)) {
                if (!b.is_binary()) throw bad(std::string(key) + " holds something other than bytes");
                v.emplace_back(b.get_binary().begin(), b.get_binary().end());
            }
            return v;
        };
        r.inputs = blobs("inputs");
        r.outputs_before = blobs("outputs_before");
        r.outputs_got = blobs("outputs_got");
        // Every operand's size must be its shape's.
        KernelArgs a = check::kernel_args(r);
        for (std::size_t i = 0; i < r.inputs.size() && i < a.in.size(); ++i)
            if (!r.inputs[i].empty()) a.in[i] = &a;  // present (any non-null handle)
        const auto shapes = operand_shapes(info->op, a);
        if (r.inputs.size() != info->inputs.size() || r.outputs_before.size() != info->outputs.size() ||
            (!r.outputs_got.empty() && r.outputs_got.size() != info->outputs.size()))
            throw bad("it has " + std::to_string(r.inputs.size()) + " inputs and " +
                      std::to_string(r.outputs_before.size()) + " outputs; " + r.op + " takes " +
                      std::to_string(info->inputs.size()) + " and " + std::to_string(info->outputs.size()));
        for (std::size_t i = 0; i < r.inputs.size(); ++i) {
            const std::size_t want = elements_of(shapes[i]) * dtype_size(input_dtype(info->op, r.dtype, r.src_dtype));
            const bool optional = (info->op == Op::dense && i == 2) || (info->op == Op::bias_activation && i == 0);
            if (r.inputs[i].size() != want && !(optional && r.inputs[i].empty()))
                throw bad("input '" + info->inputs[i] + "' has " + std::to_string(r.inputs[i].size()) +
                          " bytes; its shape needs " + std::to_string(want));
        }
        for (std::size_t o = 0; o < r.outputs_before.size(); ++o) {
            const std::size_t want = elements_of(shapes[info->inputs.size() + o]) * dtype_size(r.dtype);
            if (r.outputs_before[o].size() != want || (!r.outputs_got.empty() && r.outputs_got[o].size() != want))
                throw bad("output '" + info->outputs[o] + "' does not have the " + std::to_string(want) +
                          " bytes its shape needs");
        }
        r.seq = j.value("seq", std::uint64_t{0});
        r.of_op = j.value("of_op", std::uint64_t{0});
        r.device = j.value("device", "");
        r.device_name = j.value("device_name", "");
        r.reference = j.value("reference", "");
        r.nmse = j.value("nmse", 0.0);
        r.threshold = j.value("threshold", 0.0);
        return r;
    } catch (const json::exception& e) {
        throw bad(std::string("a field is missing or of the wrong type (") + e.what() + ")");
    } catch (const InvalidArgument& e) {
        if (std::string(e.what()).rfind("'" + path + "'", 0) == 0) throw;
        throw bad(e.what());
    }
}

void start(const std::string& against, bool warn, const std::string& record_dir) {
    const std::string what = detail::trim(against);
    if (what.empty())
        throw InvalidArgument("check::start: say what to check against: \"oracle\" or a device selector such as \"host\"");
    const bool oracle = detail::lower(what) == "oracle";
    if (!oracle) (void)parse_selector(what);  // throws InvalidArgument naming the accepted forms
    CheckConfig& c = config();
    std::lock_guard<std::mutex> lock(c.mutex);
    c.on = true;
    c.oracle = oracle;
    c.selector = oracle ? "" : what;
    c.warn = warn;
    c.dir = record_dir.empty() ? "." : record_dir;
    c.other.reset();
    c.records_written = 0;
    c.compared = c.past = 0;
    instrument::set_checking(true);
}

void stop() noexcept {
    CheckConfig& c = config();
    std::shared_ptr<Device> other;
    {
        std::lock_guard<std::mutex> lock(c.mutex);
        c.on = false;
        other.swap(c.other);
        instrument::set_checking(false);
    }
}

bool active() noexcept {
    CheckConfig& c = config();
    std::lock_guard<std::mutex> lock(c.mutex);
    return c.on;
}

}  // namespace check

namespace instrument {

namespace {

// At exit of a run checked through ACCEL_CHECK: one line, so that a run
// whose every call agreed still shows that it was checked.
void print_check_summary() {
    CheckConfig& c = config();
    std::lock_guard<std::mutex> lock(c.mutex);
    std::fprintf(stderr, "accel check summary: %llu kernel call(s) compared with %s, %llu past their op's threshold\n",
                 static_cast<unsigned long long>(c.compared),
                 c.oracle ? "the float64 oracle" : c.selector.c_str(), static_cast<unsigned long long>(c.past));
}

}  // namespace

namespace {

void start_check_from_environment() {
    const std::optional<std::string> against = env::value("ACCEL_CHECK");
    if (!against) return;
    const std::optional<std::string> mode = env::read_word("ACCEL_CHECK_MODE", {"stop", "warn"});
    const std::string dir = env::value("ACCEL_CHECK_DIR").value_or(".");
    // Checked now, not at the first divergence: a run must not pass its
    // checks and then find nowhere to write what diverged.
    struct stat st {};
    if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        env::reject("ACCEL_CHECK_DIR", dir, "is not an existing folder");
    try {
        check::start(*against, mode && *mode == "warn", dir);
    } catch (const InvalidArgument& e) {
        env::reject("ACCEL_CHECK", *against, std::string("is not oracle or a device selector: ") + e.what());
    }
    static std::once_flag summary_registered;
    std::call_once(summary_registered, [] { std::atexit(print_check_summary); });
}

// Core's open_device starts the check (core/src/trace.cpp, through ops_layer).
const bool kCheckStarterRegistered = (ops_layer::register_check_starter(&start_check_from_environment), true);

}  // namespace

}  // namespace instrument

namespace {

// `bytes` of the operand behind handle h (a null optional operand reads as nothing).
std::vector<unsigned char> read_operand(Device& d, DeviceHandle h, std::size_t bytes, Stream& s) {
    std::vector<unsigned char> out(bytes);
    if (bytes && h) d.read_handle(out.data(), h, 0, bytes, s);
    return out;
}

// The operands of a call, read before it runs.
check::OpRecord snapshot(Device& d, Op op, const KernelArgs& a) {
    const OpInfo& info = op_info(op);
    check::OpRecord r = check::describe(op, a);
    const auto shapes = operand_shapes(op, a);
    a.stream->synchronize();
    const DType in_type = input_dtype(op, a.dtype, a.src_dtype);
    for (std::size_t i = 0; i < info.inputs.size(); ++i)
        r.inputs.push_back(read_operand(d, a.in[i], elements_of(shapes[i]) * dtype_size(in_type), *a.stream));
    for (std::size_t o = 0; o < info.outputs.size(); ++o)
        r.outputs_before.push_back(
            read_operand(d, a.out[o], elements_of(shapes[info.inputs.size() + o]) * dtype_size(a.dtype), *a.stream));
    return r;
}

// Compares the call's outputs with the reference; throws CheckFailed (or
// warns) past the threshold.
void verify(Device& d, Op op, const KernelArgs& a, check::OpRecord r, instrument::CallNumber call) {
    CheckConfig& c = config();
    bool oracle = true, warn = false;
    std::string dir, selector;
    std::shared_ptr<Device> other;
    {
        std::lock_guard<std::mutex> lock(c.mutex);
        if (!c.on) return;
        oracle = c.oracle;
        warn = c.warn;
        dir = c.dir;
        selector = c.selector;
        other = c.other;
    }
    if (!oracle && !other) {
        other = open_device(selector);  // the caller's error (BackendUnavailable) when it cannot be opened
        std::lock_guard<std::mutex> lock(c.mutex);
        if (!c.other) c.other = other;
    }
    a.stream->synchronize();
    const OpInfo& info = op_info(op);
    const auto shapes = operand_shapes(op, a);
    std::vector<std::vector<double>> got;
    for (std::size_t o = 0; o < info.outputs.size(); ++o) {
        r.outputs_got.push_back(
            read_operand(d, a.out[o], elements_of(shapes[info.inputs.size() + o]) * dtype_size(a.dtype), *a.stream));
        got.push_back(check::widen(r.outputs_got.back(), a.dtype));
    }
    std::vector<std::vector<double>> want;
    std::string reference;
    if (!oracle && (other->kernel_table().supports(op, a.dtype, a.path) || other->kernel_table().supports(op, a.dtype, OpPath::native))) {
        want = check::rerun(r, *other);
        reference = other->selector() + " (" + other->info().name + ")";
    } else {
        try {
            want = check::oracle(r);
        } catch (const Unsupported&) {
            return;  // nothing to compare with
        }
        reference = "the float64 oracle";
    }
    const check::Comparison cmp = check::compare(got, want, check::scale(r, want));
    const double threshold = nmse_threshold(op, a.dtype);
    {
        std::lock_guard<std::mutex> lock(c.mutex);
        ++c.compared;
        c.past += cmp.nmse > threshold;
    }
    if (cmp.nmse <= threshold) return;

    r.seq = call.seq;
    r.of_op = call.of_op;
    r.device = d.selector();
    r.device_name = d.info().name;
    r.reference = reference;
    r.nmse = cmp.nmse;
    r.threshold = threshold;
    std::string record_path;
    {
        std::lock_guard<std::mutex> lock(c.mutex);
        if (!warn || c.records_written < kMostRecordsInWarnMode) {
            ++c.records_written;
            record_path = dir + "/accel-check-" + file_name_piece(d.selector()) + "-op" + std::to_string(call.seq) +
                          "-" + info.name + ".cbor";
        }
    }
    std::string written;
    if (!record_path.empty()) {
        try {
            check::save(r, record_path);
            written = "its operands are in " + record_path + " (rerun it: accel-replay " + record_path +
                      " --backends host," + d.selector() + ")";
        } catch (const InvalidArgument& e) {
            written = std::string("its operands could not be written: ") + e.what();
            record_path.clear();
        }
    } else {
        written = "no record written (" + std::to_string(kMostRecordsInWarnMode) + " already)";
    }
    const std::string output = info.outputs[cmp.output];
    const std::string message =
        "accel check: op " + std::to_string(call.seq) + " on " + d.selector() + " (" + d.info().name + "), call " +
        std::to_string(call.of_op) + " of " + info.name + ": " + dtype_name(a.dtype) + " " + path_name(a.path) + " " +
        shapes_text(op, a) + " on " + instrument::stream_name(d, *a.stream) + " differs from " + reference +
        ": NMSE " + detail::number(cmp.nmse) + " exceeds the threshold " + detail::number(threshold) + " of " + info.name + " in " +
        dtype_name(a.dtype) + "; worst element " + output + "[" + std::to_string(cmp.index) + "] = " +
        detail::number(cmp.got) + " where the reference gives " + detail::number(cmp.want) + "; " + written;
    if (warn) {
        std::fprintf(stderr, "%s\n", message.c_str());
        return;
    }
    throw CheckFailed(message, record_path);
}

}  // namespace

void detail::trace_call(instrument::Span& span, Op op, const KernelArgs& a) {
    span.arg("dtype", dtype_name(a.dtype));
    if (op == Op::convert) span.arg("src_dtype", dtype_name(a.src_dtype));
    span.arg("path", path_name(a.path));
    span.arg("shapes", shapes_text(op, a));
    if (op == Op::dense || op == Op::bias_activation) span.arg("activation", activation_name(a.act));
    // What the shapes leave open: a square operand's layout, and (for a
    // reader that does not parse the shapes) whether the bias was given.
    if (op == Op::matmul || op == Op::gemm) {
        span.arg("trans_a", a.trans_a);
        span.arg("trans_b", a.trans_b);
    }
    if (op == Op::dense) span.arg("bias", a.in[2] != nullptr);
    if (op == Op::bias_activation) span.arg("bias", a.in[0] != nullptr);
}

void detail::run_observed(Device& d, Op op, const KernelArgs& a, const Kernel& kernel) {
    const instrument::CallNumber call = instrument::next_call(d, op);
    const bool checking = instrument::g_active.load() & instrument::kChecking;
    check::OpRecord before;
    if (checking) {
        instrument::Quiet quiet;
        before = snapshot(d, op, a);
    }
    {
        instrument::Span span(d, op_name(op), "op", a.stream);
        if (span.live()) {
            const OpInfo& info = op_info(op);
            const OpSize size{a.m, a.n, a.k};
            span.arg("seq", std::uint64_t{call.seq});
            span.arg("of_op", std::uint64_t{call.of_op});
            trace_call(span, op, a);
            if (info.bytes) span.arg("bytes", info.bytes(size, a.dtype));
            if (info.flops) span.arg("flops", info.flops(size));
        }
        kernel(a);
    }
    if (checking) {
        instrument::Quiet quiet;
        verify(d, op, a, std::move(before), call);
    }
}

}  // namespace accel
