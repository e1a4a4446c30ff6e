// Reading a program's calls from a trace or a case file, and writing case
// files. See case_file.hpp.
#include "case_file.hpp"

#include <tool_io.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

namespace conformance {

const std::vector<ComposedCall>& composed_calls() {
    using accel::Op;
    static const std::vector<ComposedCall> calls{
        {"dense_backward",
         {Op::matmul, Op::column_sum, Op::relu_backward, Op::sigmoid_backward, Op::gelu_backward,
          Op::gelu_tanh_backward}},
        {"bce_with_logits_loss", {Op::bce_with_logits, Op::column_sum}}};
    return calls;
}

const ComposedCall* find_composed_call(const std::string& name) {
    for (const ComposedCall& c : composed_calls())
        if (name == c.name) return &c;
    return nullptr;
}
namespace {

using json = nlohmann::json;
using Dims = std::vector<std::size_t>;

constexpr std::size_t kMostProblemsListed = 20;  // then "and N more": a wrong file says so in a screenful

// Times closer than this are one (µs; ts + dur of an enclosed event can
// round past its enclosing event's end by a few ulps).
constexpr double kSameTimeUs = 1e-3;


std::string dims_text(const Dims& d) {
    std::string t = "[";
    for (std::size_t i = 0; i < d.size(); ++i) t += (i ? "," : "") + std::to_string(d[i]);
    return t + "]";
}

std::string operands_text(const std::vector<Operand>& ops) {
    std::string t;
    for (const auto& o : ops) t += (t.empty() ? "" : " ") + o.name + dims_text(o.dims);
    return t;
}

// The ops a case can name, for messages.
std::string accepted_ops() {
    std::string list;
    for (const accel::OpInfo* info : accel::op_table())
        if (!info->kernel_only) list += info->name + ", ";
    for (const ComposedCall& c : composed_calls()) list += std::string(c.name) + ", ";
    return list.substr(0, list.size() - 2);
}

bool is_composed_call(const std::string& op) { return find_composed_call(op) != nullptr; }

// The table entry of `name`, the plugins loaded first when no built-in op
// has that name (a backend may define ops); null when none has it.
const accel::OpInfo* find_op_anywhere(const std::string& name) {
    if (const accel::OpInfo* info = accel::find_op(name)) return info;
    (void)accel::backend_statuses();
    return accel::find_op(name);
}

// One expected operand: its name and whether it may be left out.
struct Slot {
    std::string name;
    bool optional = false;
};

// The operands `op` takes: inputs, outputs.
std::pair<std::vector<Slot>, std::vector<Slot>> slots_of(const std::string& op) {
    if (op == "dense_backward")
        return {{{"x"}, {"w"}, {"y"}, {"dy"}, {"pre_activation", true}}, {{"dx", true}, {"dw"}, {"db", true}}};
    if (op == "bce_with_logits_loss") return {{{"z"}, {"t"}}, {{"loss"}}};
    const accel::OpInfo& info = *accel::find_op(op);
    std::vector<Slot> in, out;
    for (const auto& name : info.inputs) in.push_back({name, info.op == accel::Op::dense && name == "bias"});
    for (const auto& name : info.outputs) out.push_back({name});
    return {in, out};
}

std::string slots_text(const std::vector<Slot>& slots) {
    std::string t;
    for (const auto& s : slots) t += (t.empty() ? "" : " ") + (s.optional ? "[" + s.name + "]" : s.name);
    return t;
}

// The operands `got` name the slots in order, optional ones possibly absent.
void check_names(const std::string& op, const std::vector<Operand>& got, const std::vector<Slot>& want,
                 const char* side, const std::string& signature) {
    std::size_t g = 0;
    for (const Slot& s : want) {
        if (g < got.size() && got[g].name == s.name) {
            ++g;
        } else if (!s.optional) {
            throw std::invalid_argument(op + " takes " + signature + ": " + side + " '" + s.name + "' is " +
                                        (g < got.size() ? "not where '" + got[g].name + "' is" : "missing"));
        }
    }
    if (g < got.size())
        throw std::invalid_argument(op + " takes " + signature + ": " + side + " '" + got[g].name +
                                    "' is not one of them (or out of order)");
}

const Operand* named(const std::vector<Operand>& ops, const std::string& name) {
    for (const auto& o : ops)
        if (o.name == name) return &o;
    return nullptr;
}

// Throws naming `what` when `o` is not of rank `rank`.
void need_rank(const std::string& op, const Operand& o, std::size_t rank) {
    if (o.dims.size() != rank)
        throw std::invalid_argument(op + ": " + o.name + dims_text(o.dims) + " has rank " +
                                    std::to_string(o.dims.size()) + "; it takes rank " + std::to_string(rank));
}

void need_dims(const std::string& op, const Operand& o, const Dims& want, const std::string& why) {
    if (o.dims != want)
        throw std::invalid_argument(op + ": " + o.name + dims_text(o.dims) + " must be " + o.name + dims_text(want) +
                                    " (" + why + ")");
}

void validate_matmul(const TraceCase& c) {
    const Operand &a = c.inputs[0], &b = c.inputs[1], &out = c.outputs[0];
    for (const Operand* o : {&a, &b, &out}) need_rank(c.op, *o, 2);
    const std::size_t m = c.trans_a ? a.dims[1] : a.dims[0], ka = c.trans_a ? a.dims[0] : a.dims[1];
    const std::size_t kb = c.trans_b ? b.dims[1] : b.dims[0], n = c.trans_b ? b.dims[0] : b.dims[1];
    if (ka != kb)
        throw std::invalid_argument("matmul: inner dimensions differ: op(a) is [" + std::to_string(m) + "," +
                                    std::to_string(ka) + "] (a" + dims_text(a.dims) + (c.trans_a ? " transposed" : "") +
                                    ") and op(b) is [" + std::to_string(kb) + "," + std::to_string(n) + "] (b" +
                                    dims_text(b.dims) + (c.trans_b ? " transposed" : "") +
                                    "); op(a)'s columns must equal op(b)'s rows (trans_a: a is stored [k,m]; "
                                    "trans_b: b is stored [n,k])");
    need_dims(c.op, out, {m, n}, "rows of op(a), columns of op(b)");
}

void validate_dense(const TraceCase& c) {
    const Operand &x = *named(c.inputs, "x"), &w = *named(c.inputs, "w"), &y = c.outputs[0];
    for (const Operand* o : {&x, &w, &y}) need_rank(c.op, *o, 2);
    const std::size_t batch = x.dims[0], in = x.dims[1], out = w.dims[0];
    need_dims(c.op, w, {out, in}, "[out, in], in = x's columns");
    if (const Operand* bias = named(c.inputs, "bias")) need_dims(c.op, *bias, {out}, "[out], out = w's rows");
    need_dims(c.op, y, {batch, out}, "[batch, out]");
}

void validate_dense_backward(const TraceCase& c) {
    const Operand &x = *named(c.inputs, "x"), &w = *named(c.inputs, "w");
    need_rank(c.op, x, 2);
    need_rank(c.op, w, 2);
    const std::size_t batch = x.dims[0], in = x.dims[1], out = w.dims[0];
    need_dims(c.op, w, {out, in}, "[out, in], in = x's columns");
    for (const char* name : {"y", "dy", "pre_activation"})
        if (const Operand* o = named(c.inputs, name)) need_dims(c.op, *o, {batch, out}, "[batch, out]");
    if (const Operand* o = named(c.outputs, "dx")) need_dims(c.op, *o, {batch, in}, "x's shape");
    need_dims(c.op, *named(c.outputs, "dw"), {out, in}, "w's shape");
    if (const Operand* o = named(c.outputs, "db")) need_dims(c.op, *o, {out}, "[out]");
    const bool needs_z = c.activation == accel::Activation::gelu || c.activation == accel::Activation::gelu_tanh;
    if (needs_z && !named(c.inputs, "pre_activation"))
        throw std::invalid_argument(std::string("dense_backward with activation=") +
                                    accel::activation_name(c.activation) +
                                    " needs pre_activation[batch,out] (its derivative is not a function of y)");
}

// Every operand of one shape: the elementwise ops, convert, adam_step,
// bce_with_logits_loss's inputs.
void validate_same_shape(const TraceCase& c, const std::vector<Operand>& operands) {
    for (const Operand& o : operands) {
        if (o.dims.empty() || o.dims.size() > 2)
            throw std::invalid_argument(c.op + ": " + o.name + dims_text(o.dims) + " has rank " +
                                        std::to_string(o.dims.size()) + "; its operands are of rank 1 or 2");
        if (o.dims != operands[0].dims)
            throw std::invalid_argument(c.op + ": " + o.name + dims_text(o.dims) + " differs from " +
                                        operands[0].name + dims_text(operands[0].dims) +
                                        "; its operands all have one shape");
    }
}

// Splits "a[40,30]" into name and dimensions; throws saying what an operand is.
Operand parse_operand(const std::string& token) {
    const auto bad = [&token](const std::string& why) {
        return std::invalid_argument("'" + token + "' is not an operand (" + why +
                                     "); operands are NAME[D1,D2] with whole numbers, e.g. a[40,30], x[300], loss[]");
    };
    const std::size_t open = token.find('[');
    if (open == std::string::npos || open == 0 || token.back() != ']') throw bad("no NAME[...]");
    Operand o{token.substr(0, open), {}};
    for (char ch : o.name)
        if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_') throw bad("a name of letters, digits and _");
    const std::string inside = token.substr(open + 1, token.size() - open - 2);
    if (inside.empty()) return o;
    std::stringstream parts(inside);
    std::string part;
    while (std::getline(parts, part, ',')) {
        if (part.empty() || part.size() > 15 ||
            !std::all_of(part.begin(), part.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); }))
            throw bad("dimension '" + part + "' is not a whole number below 10^15");
        o.dims.push_back(std::stoull(part));
    }
    if (inside.back() == ',') throw bad("an empty dimension");
    return o;
}

// "a[40,30] b[30,10] -> c[40,10]" (the trace's shapes arg; a case line's
// operands) into `c`'s inputs and outputs.
void parse_shapes(const std::vector<std::string>& tokens, TraceCase& c) {
    bool outputs = false;
    for (const auto& t : tokens) {
        if (t == "->") {
            if (outputs) throw std::invalid_argument("'->' appears twice; write INPUTS -> OUTPUTS");
            outputs = true;
            continue;
        }
        (outputs ? c.outputs : c.inputs).push_back(parse_operand(t));
    }
    if (!outputs) throw std::invalid_argument("no '->' between the inputs and the outputs; write INPUTS -> OUTPUTS");
}

std::vector<std::string> words(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}

accel::DType dtype_named(const std::string& name) {
    try {
        return accel::parse_dtype(name);
    } catch (const accel::Error& e) {
        throw std::invalid_argument(e.what());
    }
}

accel::Activation activation_named(const std::string& name) {
    try {
        return accel::ops::parse_activation(name);
    } catch (const accel::Error& e) {
        throw std::invalid_argument(e.what());
    }
}

// One line of a case file (comment stripped, not blank).
TraceCase parse_line(const std::string& line) {
    const auto w = words(line);
    if (w.size() < 3)
        throw std::invalid_argument("a case is OP DTYPE INPUTS -> OUTPUTS [activation=NAME] [trans_a] [trans_b] "
                                    "[src_dtype=DTYPE], e.g. 'matmul f32 a[40,30] b[30,10] -> c[40,10]'");
    TraceCase c;
    c.op = w[0];
    c.dtype = c.src_dtype = dtype_named(w[1]);
    std::vector<std::string> shapes;
    bool src_given = false;
    for (std::size_t i = 2; i < w.size(); ++i) {
        const std::string& t = w[i];
        if (t.rfind("activation=", 0) == 0) {
            c.activation = activation_named(t.substr(11));
        } else if (t.rfind("src_dtype=", 0) == 0) {
            c.src_dtype = dtype_named(t.substr(10));
            src_given = true;
        } else if (t == "trans_a" || t == "trans_b") {
            (t == "trans_a" ? c.trans_a : c.trans_b) = true;
        } else if (t.find('=') != std::string::npos) {
            throw std::invalid_argument("unknown setting '" + t +
                                        "'; a case takes activation=NAME, src_dtype=DTYPE, trans_a, trans_b");
        } else {
            shapes.push_back(t);
        }
    }
    parse_shapes(shapes, c);
    if (src_given && c.op != "convert") throw std::invalid_argument("src_dtype= applies to convert only");
    c.calls = 1;
    return c;
}

// The problems found so far; throws them all at the end.
struct Problems {
    std::vector<std::string> list;
    void add(const std::string& where, const std::string& what) { list.push_back(where + ": " + what); }
    void throw_if_any(const std::string& path) const {
        if (list.empty()) return;
        std::string text = std::to_string(list.size()) + " problem(s) in " + path + "; nothing was run:";
        for (std::size_t i = 0; i < list.size() && i < kMostProblemsListed; ++i) text += "\n  " + list[i];
        if (list.size() > kMostProblemsListed)
            text += "\n  and " + std::to_string(list.size() - kMostProblemsListed) + " more";
        throw CaseFileError(text);
    }
};

// Adds `c` to `file` (or counts it for the case it repeats).
void add_case(CaseFile& file, std::map<std::string, std::size_t>& index, TraceCase c) {
    const std::string key = c.text();
    auto it = index.find(key);
    if (it != index.end()) {
        file.cases[it->second].calls += c.calls;
        return;
    }
    index.emplace(key, file.cases.size());
    file.cases.push_back(std::move(c));
}

void read_case_lines(const std::string& text, CaseFile& file) {
    Problems problems;
    std::map<std::string, std::size_t> index;
    std::istringstream in(text);
    std::size_t number = 0;
    for (std::string line; std::getline(in, line);) {
        ++number;
        const std::string where = file.path + ":" + std::to_string(number);
        line = line.substr(0, line.find('#'));
        if (words(line).empty()) continue;
        try {
            TraceCase c = parse_line(line);
            c.origin = where;
            validate(c);
            ++file.calls;
            add_case(file, index, std::move(c));
        } catch (const std::invalid_argument& e) {
            problems.add(where, e.what());
        }
    }
    problems.throw_if_any(file.path);
}

// One op event of a trace on a host thread's track, for the enclosure sweep.
struct Event {
    std::size_t index = 0;  // in traceEvents
    double start = 0, end = 0;
    bool composed = false;
};

// The transposes of a matmul event written before they were recorded: the
// one layout its shapes fit, else a problem.
void infer_transposes(TraceCase& c) {
    int fits = 0;
    TraceCase trial = c;
    for (int t = 0; t < 4; ++t) {
        trial.trans_a = t & 1;
        trial.trans_b = t & 2;
        try {
            validate(trial);
        } catch (const std::invalid_argument&) {
            continue;
        }
        if (!fits++) c.trans_a = trial.trans_a, c.trans_b = trial.trans_b;
    }
    if (fits > 1)
        throw std::invalid_argument("matmul without trans_a/trans_b args (a trace from before accel recorded them) "
                                    "whose shapes fit more than one layout; trace the program again");
}

// The case of op event `e` (ph X, cat op or composed).
TraceCase case_of_event(const json& e) {
    const std::string name = e.at("name").get<std::string>();
    const json& args = e.at("args");
    const auto text = [&](const char* key) -> std::string {
        if (!args.contains(key) || !args[key].is_string())
            throw std::invalid_argument(std::string("its args have no ") + key + " (" +
                                        (e.value("cat", "") == "composed"
                                             ? "a composed call traced before accel recorded its operands; trace the "
                                               "program again"
                                             : "not an op event as accel writes them") +
                                        ")");
        return args[key].get<std::string>();
    };
    TraceCase c;
    c.op = name;
    c.dtype = c.src_dtype = dtype_named(text("dtype"));
    if (args.contains("src_dtype")) c.src_dtype = dtype_named(text("src_dtype"));
    parse_shapes(words(text("shapes")), c);
    if (args.contains("activation")) c.activation = activation_named(text("activation"));
    const bool transposes = args.contains("trans_a") || args.contains("trans_b");
    c.trans_a = args.value("trans_a", false);
    c.trans_b = args.value("trans_b", false);
    if (name == "matmul" && !transposes) infer_transposes(c);
    c.calls = 1;
    return c;
}

void read_trace(const json& doc, CaseFile& file) {
    if (!doc.is_object() || !doc.contains("traceEvents") || !doc["traceEvents"].is_array())
        throw CaseFileError(file.path + " is JSON but not a trace: it has no traceEvents array (--case-file takes a "
                            "file ACCEL_TRACE wrote, or a case file of lines 'OP DTYPE INPUTS -> OUTPUTS ...')");
    const json& events = doc["traceEvents"];
    // The op events per host-thread track (pid, tid); device-time copies
    // (args.device_ms, on the stream tracks) repeat them and are left out.
    std::map<std::pair<long long, long long>, std::vector<Event>> tracks;
    Problems problems;
    for (std::size_t i = 0; i < events.size(); ++i) {
        const json& e = events[i];
        if (!e.is_object() || e.value("ph", "") != "X") continue;
        const std::string cat = e.value("cat", "");
        if (cat != "op" && cat != "composed") continue;
        if (e.contains("args") && e["args"].is_object() && e["args"].contains("device_ms")) continue;
        const std::string where = file.path + ": traceEvents[" + std::to_string(i) + "]";
        if (!e.contains("name") || !e["name"].is_string() || !e.contains("pid") || !e["pid"].is_number() ||
            !e.contains("tid") || !e["tid"].is_number() || !e.contains("ts") || !e["ts"].is_number() ||
            !e.contains("dur") || !e["dur"].is_number() || !e.contains("args") || !e["args"].is_object()) {
            problems.add(where, "an op event needs name, pid, tid, ts, dur and args (a complete event as accel "
                                "writes it)");
            continue;
        }
        const double ts = e["ts"].get<double>();
        tracks[{e["pid"].get<long long>(), e["tid"].get<long long>()}].push_back(
            {i, ts, ts + e["dur"].get<double>(), cat == "composed"});
    }
    // A call inside a composed call on its track is part of it. Events on
    // one track nest (a trace's events either enclose each other or do not
    // overlap), so one sweep in order of start (the enclosing one first:
    // longer, or written later, as an enclosing event ends last) finds them.
    std::vector<std::size_t> top_level;
    for (auto& [track, list] : tracks) {
        std::sort(list.begin(), list.end(), [](const Event& a, const Event& b) {
            if (a.start != b.start) return a.start < b.start;
            if (a.end != b.end) return a.end > b.end;
            return a.index > b.index;
        });
        std::vector<const Event*> open;  // the composed calls enclosing the sweep's position
        for (const Event& e : list) {
            while (!open.empty() && open.back()->end + kSameTimeUs < e.start) open.pop_back();
            if (!open.empty() && e.end <= open.back()->end + kSameTimeUs) {
                ++file.enclosed;
            } else {
                top_level.push_back(e.index);
            }
            if (e.composed) open.push_back(&e);
        }
    }
    std::sort(top_level.begin(), top_level.end());
    std::map<std::string, std::size_t> index;
    for (std::size_t i : top_level) {
        const json& e = events[i];
        const std::string where = file.path + ": traceEvents[" + std::to_string(i) + "] (" +
                                  e["name"].get<std::string>() + ")";
        try {
            TraceCase c = case_of_event(e);
            c.origin = file.path + ": traceEvents[" + std::to_string(i) + "]";
            validate(c);
            ++file.calls;
            add_case(file, index, std::move(c));
        } catch (const std::exception& ex) {  // invalid_argument, and json's type errors
            problems.add(where, ex.what());
        }
    }
    problems.throw_if_any(file.path);
}

}  // namespace

std::string TraceCase::text() const {
    std::string t = op + " " + accel::dtype_name(dtype) + " " + operands_text(inputs) + (inputs.empty() ? "->" : " ->");
    if (!outputs.empty()) t += " " + operands_text(outputs);
    if (op == "dense" || op == "dense_backward") t += std::string(" activation=") + accel::activation_name(activation);
    if (trans_a) t += " trans_a";
    if (trans_b) t += " trans_b";
    if (op == "convert") t += std::string(" src_dtype=") + accel::dtype_name(src_dtype);
    return t;
}

void validate(const TraceCase& c) {
    const accel::OpInfo* info = is_composed_call(c.op) ? nullptr : find_op_anywhere(c.op);
    if (!is_composed_call(c.op)) {
        if (!info) throw std::invalid_argument("unknown op '" + c.op + "'; accepted: " + accepted_ops());
        if (info->kernel_only)
            throw std::invalid_argument("'" + c.op + "' is a kernel the front-end composes matmul and dense from on "
                                        "the vendor path, not a call a program makes; accepted: " + accepted_ops());
    }
    const auto [in, out] = slots_of(c.op);
    const std::string signature = slots_text(in) + " -> " + slots_text(out) + " ([...]: may be left out)";
    check_names(c.op, c.inputs, in, "input", signature);
    check_names(c.op, c.outputs, out, "output", signature);
    if ((c.trans_a || c.trans_b) && c.op != "matmul") throw std::invalid_argument("trans_a and trans_b apply to matmul only");
    if (c.activation != accel::Activation::none && c.op != "dense" && c.op != "dense_backward")
        throw std::invalid_argument("activation= applies to dense and dense_backward only");
    if (c.src_dtype != c.dtype && c.op != "convert") throw std::invalid_argument("src_dtype applies to convert only");
    for (const auto* list : {&c.inputs, &c.outputs})
        for (const Operand& o : *list) {
            if (o.dims.size() > 2)
                throw std::invalid_argument(c.op + ": " + o.name + dims_text(o.dims) + " has rank " +
                                            std::to_string(o.dims.size()) + "; accel's tensors have rank 1 or 2");
            double elements = 1;
            for (std::size_t d : o.dims) elements *= static_cast<double>(d);
            if (elements > 1e12)
                throw std::invalid_argument(c.op + ": " + o.name + dims_text(o.dims) + " has more than 10^12 elements");
        }
    if (c.op == "matmul") return validate_matmul(c);
    if (c.op == "dense") return validate_dense(c);
    if (c.op == "dense_backward") return validate_dense_backward(c);
    if (c.op == "column_sum") {
        need_rank(c.op, c.inputs[0], 2);
        return need_dims(c.op, c.outputs[0], {c.inputs[0].dims[1]}, "[cols] of x[rows,cols]");
    }
    if (c.op == "bce_with_logits_loss") {
        validate_same_shape(c, c.inputs);
        return need_dims(c.op, c.outputs[0], {}, "the mean, a scalar: loss[]");
    }
    if (c.op == "dot") {
        validate_same_shape(c, c.inputs);
        return need_dims(c.op, c.outputs[0], {1}, "one element, the sum: y[1]");
    }
    std::vector<Operand> all = c.inputs;
    all.insert(all.end(), c.outputs.begin(), c.outputs.end());
    validate_same_shape(c, all);
    const bool checkable = info->elementwise_reference || info->op == accel::Op::bce_with_logits_backward ||
                           info->op == accel::Op::adam_step || info->op == accel::Op::convert ||
                           info->op == accel::Op::scale || info->op == accel::Op::triad;
    if (!checkable)
        throw std::invalid_argument("op '" + c.op + "' has no float64 oracle accel-conformance can check it with (an "
                                    "op a program defined needs an elementwise_reference in its OpInfo)");
}

CaseFile read_case_file(const std::string& path) {
    CaseFile file;
    file.path = path;
    std::ifstream in(path, std::ios::binary);
    if (!in) throw CaseFileError("cannot read " + path + ": no such file, or not readable");
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && text[first] == '{') {
        file.kind = "trace";
        json doc;
        try {
            doc = json::parse(text);
        } catch (const json::parse_error& e) {
            throw CaseFileError(path + " starts as JSON but does not parse (" + e.what() +
                                "): --case-file takes a whole ACCEL_TRACE file (one the program finished writing) "
                                "or a case file of lines 'OP DTYPE INPUTS -> OUTPUTS ...'");
        }
        read_trace(doc, file);
    } else {
        file.kind = "case file";
        read_case_lines(text, file);
    }
    if (file.cases.empty())
        throw CaseFileError(path + " holds no op call (" +
                            (file.kind == "trace" ? std::string("no event of category op or composed: was the "
                                                                "program traced while it ran ops?")
                                                  : std::string("only comments and blank lines")) +
                            "); nothing was run");
    return file;
}

void write_case_file(const CaseFile& file, const std::string& out) {
    tool_cli::AtomicFile f(out);
    auto& s = f.stream();
    s << "# accel-conformance case file: the " << file.cases.size() << " distinct call(s) of " << file.path << " ("
      << file.calls << " call(s))\n"
      << "# run them: accel-conformance --case-file " << out << " [--backends LIST]\n"
      << "# OP DTYPE INPUTS -> OUTPUTS [activation=NAME] [trans_a] [trans_b] [src_dtype=DTYPE]\n";
    for (const TraceCase& c : file.cases)
        s << c.text() << "  # " << c.calls << " call(s), first at " << c.origin << "\n";
    f.commit();
}

}  // namespace conformance
