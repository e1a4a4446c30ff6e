// accel-conformance's command line and its runs: on ACCEL_BACKEND's device in
// this process, or on several devices (--backends), each in a child process
// of this program with ACCEL_BACKEND set, so that a device whose driver
// crashes the process costs its own verdict only. See driver.hpp.
#include "driver.hpp"
#include <case_file.hpp>
#include "case_run.hpp"

#include "support/check.hpp"
#include "support/checked_nothing.hpp"
#include "support/silent_reporter.hpp"

#include <accel/version.hpp>
#include <backend_list.hpp>
#include <machine.hpp>
#include <tool_cli.hpp>

#include <nlohmann/json.hpp>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

extern char** environ;

namespace conformance {
namespace {

const char* const kName = "accel-conformance";

const char* kDescription =
    "accel-conformance: certifies devices: every op in every dtype and path against the float64 oracle\n"
    "(fresh random data, NaN-poisoned outputs, the op table's NMSE thresholds).\n"
    "  accel-conformance [OPTIONS] [-- DOCTEST_OPTIONS]\n"
    "Without --backends the suite runs here, on ACCEL_BACKEND's device (default auto).";

const char* kFooter =
    "environment: ACCEL_BACKEND the device without --backends (host, opencl:pocl, kokkos, cuda:1, ...);\n"
    "  ACCEL_PLUGIN_PATH folders searched first for backend plugins; ACCEL_TEST_SEED the seed when\n"
    "  --seed is not given; ACCEL_TEST_MAX_WORK leaves out cases larger than this.\n"
    "doctest's own options go after --, e.g.\n"
    "  accel-conformance --backends host -- --test-case='*add*' --success\n"
    "  (-- --help lists them; -- --list-test-cases lists the test cases).\n"
    "under mpirun/srun (built with MPI): every rank runs the suite on its own device (ACCEL_BACKEND: a\n"
    "  selector, a comma list dealt to ranks, or BACKEND:local) and rank 0 prints the table; --backends\n"
    "  and --json do not apply there.\n"
    "exit status: 0 every device passed; 1 a device failed, or one named could not be opened while\n"
    "  others could; 77 no device could be opened (CTest: skipped); 2 a usage error (an unknown option,\n"
    "  backend, op or dtype).";

// The name of a doctest option ("test-case" of "--test-case=x", "-tc=x" or
// "--dt-test-case=x"); "" for an argument that does not start with '-'.
std::string doctest_option_name(const std::string& arg) {
    if (arg.size() < 2 || arg[0] != '-') return "";
    std::string name = arg.substr(arg[1] == '-' ? 2 : 1);
    if (name.rfind("dt-", 0) == 0) name = name.substr(3);
    return name.substr(0, name.find('='));
}

// Whether `arg` is one of doctest's options (doctest 2.4's names, long and
// short). Given before `--` they still go to doctest, as command lines written
// before accel-conformance had options of its own do (--test-case=...).
bool is_doctest_option(const std::string& arg) {
    static const std::set<std::string> names{
        "source-file", "sf", "source-file-exclude", "sfe", "test-suite", "ts", "test-suite-exclude", "tse",
        "test-case", "tc", "test-case-exclude", "tce", "subcase", "sc", "subcase-exclude", "sce", "reporters", "r",
        "out", "o", "order-by", "ob", "rand-seed", "rs", "first", "f", "last", "l", "abort-after", "aa",
        "subcase-filter-levels", "scfl", "success", "s", "case-sensitive", "cs", "exit", "e", "duration", "d",
        "minimal", "m", "quiet", "q", "no-throw", "nt", "no-exitcode", "ne", "no-run", "nr", "no-intro", "ni",
        "no-version", "nv", "no-colors", "nc", "force-colors", "fc", "no-breaks", "nb", "no-skip", "ns",
        "gnu-file-line", "gfl", "no-path-filenames", "npf", "no-line-numbers", "nln", "no-debug-output", "ndo",
        "no-skipped-summary", "nss", "no-time-in-output", "ntio", "version", "v", "count", "c",
        "list-test-cases", "ltc", "list-test-suites", "lts", "list-reporters", "lr"};
    return names.count(doctest_option_name(arg)) > 0;
}

// The ops of the op table that `name` stands for in --ops: the op of that
// name the suite checks (not a kernel-only building block), or the ops a
// composed call runs (dense_backward, bce_with_logits_loss); the plugins are
// loaded first when no op has that name (a backend may define ops). Throws
// accel::InvalidArgument naming the valid ops otherwise.
std::vector<accel::Op> lookup_op(const std::string& name) {
    if (const conformance::ComposedCall* call = conformance::find_composed_call(name)) return call->ops;
    auto find = [&name]() -> const accel::OpInfo* {
        const accel::OpInfo* info = accel::find_op(name);
        return info && !info->kernel_only ? info : nullptr;
    };
    if (!find()) (void)accel::backend_statuses();
    if (const accel::OpInfo* info = find()) return {info->op};
    std::string valid;
    for (const accel::OpInfo* info : accel::op_table())
        if (!info->kernel_only) valid += (valid.empty() ? "" : ", ") + info->name;
    for (const conformance::ComposedCall& call : conformance::composed_calls()) valid += std::string(", ") + call.name;
    throw accel::InvalidArgument("unknown op '" + name + "'; valid ops: " + valid);
}

// A doctest query's answer: the names of the test cases (--list-test-cases)
// and how many pass the filters (--count); no test case runs.
struct CaseQuery : accel_test::SilentReporter {
    static inline bool answered = false;
    static inline unsigned passing = 0;
    static inline std::vector<std::string> names;
    using SilentReporter::SilentReporter;
    void report_query(const doctest::QueryData& in) override {
        if (!in.run_stats) return;  // --help, --version: no test cases asked about
        answered = true;
        passing = in.run_stats->numTestCasesPassingFilters;
        names.clear();
        for (unsigned i = 0; i < in.num_data; ++i) names.emplace_back(in.data[i]->m_name);
    }
};
REGISTER_REPORTER("accel-case-query", 0, CaseQuery);

// The test cases run, by outcome: failed, passed, or skipped (it checked
// nothing on this device: e.g. its op is unsupported there, and it said so).
struct CaseCounts : accel_test::SilentReporter {
    static inline int passed = 0, failed = 0, skipped = 0;
    static inline std::vector<std::string> failed_names;
    using SilentReporter::SilentReporter;
    void test_case_start(const doctest::TestCaseData& tc) override { name_ = tc.m_name; }
    void test_case_end(const doctest::CurrentTestCaseStats& s) override {
        if (!s.testCaseSuccess) {
            ++failed;
            failed_names.push_back(name_);
        } else if (accel_test::checked_nothing(s)) {
            ++skipped;
        } else {
            ++passed;
        }
    }

private:
    std::string name_;
};
REGISTER_LISTENER("accel-case-counts", 1, CaseCounts);

// argv of `args`, null-terminated, for doctest and posix_spawn (which do not
// write to them).
std::vector<char*> c_strings(const std::vector<std::string>& args) {
    std::vector<char*> out;
    for (const auto& a : args) out.push_back(const_cast<char*>(a.c_str()));
    out.push_back(nullptr);
    return out;
}

// Runs a doctest query with `args` (program name first) and `query` added.
void run_query(std::vector<std::string> args, const char* query) {
    args.push_back(query);
    args.push_back("--reporters=accel-case-query");  // the last --reporters counts: nothing printed
    CaseQuery::answered = false;
    doctest::Context ctx(static_cast<int>(args.size()), c_strings(args).data());
    ctx.run();
}

// The words of a test case's name: its runs of letters, digits and '_'
// ("relu_backward", "sigmoid" of "sigmoid's", "f32").
std::set<std::string> words_of(const std::string& name) {
    std::set<std::string> words;
    std::string w;
    for (char c : name + " ") {
        if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
            w += c;
        } else if (!w.empty()) {
            words.insert(w);
            w.clear();
        }
    }
    return words;
}

// Whether --ops and --dtypes keep the test case named `name`, by what its
// name says it covers: an op it names (a whole word: relu is not
// relu_backward) or "every op"; a dtype it names or "every dtype", and a name
// that names no dtype works in f32. Those that loop over ops or dtypes check
// only the selected ones inside (accel_test::selected, accel_test::dtypes).
bool case_selected(const std::string& name, const std::vector<std::string>& ops,
                   const std::vector<std::string>& dtypes) {
    const auto words = words_of(name);
    auto names_any = [&words](const std::vector<std::string>& list) {
        return std::any_of(list.begin(), list.end(), [&words](const std::string& x) { return words.count(x) > 0; });
    };
    if (!ops.empty() && name.find("every op") == std::string::npos && !names_any(ops)) return false;
    if (!dtypes.empty() && name.find("every dtype") == std::string::npos && !names_any(dtypes)) {
        const bool in_f32 = !names_any({"f32", "f64", "f16", "bf16"});
        if (!in_f32 || std::find(dtypes.begin(), dtypes.end(), "f32") == dtypes.end()) return false;
    }
    return true;
}

// A doctest name filter that matches `name` alone: ',' and '\' escaped,
// doctest's wildcard '*' (which cannot be escaped) matched as '?'.
std::string exact_pattern(const std::string& name) {
    std::string p;
    for (char c : name) {
        if (c == ',' || c == '\\') p += '\\';
        p += c == '*' ? '?' : c;
    }
    return p;
}

std::string join(const std::vector<std::string>& items, const char* separator) {
    std::string out;
    for (const auto& x : items) out += (out.empty() ? "" : separator) + x;
    return out;
}

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// One device's verdict, as the JSON record holds it.
nlohmann::json device_record(const std::string& requested, const accel_test::SuiteOutcome& o, double seconds,
                             const nlohmann::json& seed) {
    const bool ran = o.status == "pass" || o.status == "FAIL";  // else no test case ran: no counts
    auto count = [ran](int n) { return ran ? nlohmann::json(n) : nlohmann::json(nullptr); };
    return {{"requested", requested},
            {"selector", o.selector.empty() ? requested : o.selector},
            {"device", o.device},
            {"uuid", o.uuid},
            {"pci_bus_id", o.pci_bus_id},
            {"runtime_version", o.runtime_version},
            {"driver_version", o.driver_version},
            {"status", o.status},
            {"passed", count(CaseCounts::passed)},
            {"failed", count(CaseCounts::failed)},
            {"skipped", count(CaseCounts::skipped)},
            {"reason", o.reason},
            {"seed", seed},
            {"duration_s", seconds}};
}

// 0 when every device passed, 77 when none could be opened, else 1.
int verdict_of(const nlohmann::json& devices) {
    std::size_t passed = 0, unavailable = 0;
    for (const auto& d : devices) {
        passed += d["status"] == "pass";
        unavailable += d["status"] == "unavailable";
    }
    return passed == devices.size() ? 0 : unavailable == devices.size() ? 77 : 1;
}

// The commit of ACCEL_VERSION ("0.1.0+0f40e4e-dirty": "0f40e4e-dirty"), or
// null for a build outside a git checkout ("0.1.0").
nlohmann::json commit_of(const std::string& version) {
    const auto plus = version.find('+');
    return plus == std::string::npos ? nlohmann::json(nullptr) : nlohmann::json(version.substr(plus + 1));
}

// The whole record: what certified (accel's version and commit, the date, the
// machine), the run's settings, every device's verdict, the exit status.
nlohmann::json report(const Command& cmd, const nlohmann::json& seed, const nlohmann::json& devices) {
    const int verdict = devices.empty() ? 77 : verdict_of(devices);
    const tool_machine::Machine m = tool_machine::this_machine();
    return {{"program", kName},
            {"accel_version", ACCEL_VERSION},
            {"commit", commit_of(ACCEL_VERSION)},
            {"date", tool_machine::utc_now()},
            {"machine", {{"hostname", m.hostname}, {"cpu", m.cpu}, {"os", m.os}}},
            {"seed", seed},
            {"cases", cmd.cases},
            {"ops", cmd.ops},
            {"dtypes", cmd.dtypes},
            {"case_file", cmd.case_file.empty() ? nlohmann::json(nullptr) : nlohmann::json(cmd.case_file)},
            {"verdict", verdict == 0 ? "pass" : verdict == 77 ? "unavailable" : "FAIL"},
            {"exit_status", verdict},
            {"devices", devices}};
}

// The verdict table (each device by its stable selector once opened, else as
// requested), each device that did not pass with its reason, and the verdict
// line.
void print_table(const nlohmann::json& devices, std::uint64_t seed) {
    std::printf("\nconformance on %zu device(s), seed %llu (rerun a failure with --seed %llu):\n", devices.size(),
                static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed));
    std::printf("%-18s %-38s %6s %6s %7s %8s  %s\n", "selector", "device", "passed", "failed", "skipped", "time",
                "result");
    auto count = [](const nlohmann::json& d, const char* key) {
        return d[key].is_number() ? std::to_string(d[key].get<int>()) : std::string("-");
    };
    for (const auto& d : devices) {
        const std::string device = d["device"];
        std::printf("%-18.18s %-38.38s %6s %6s %7s %6.1f s  %s\n", d["selector"].get<std::string>().c_str(),
                    device.empty() ? "-" : device.c_str(), count(d, "passed").c_str(), count(d, "failed").c_str(),
                    count(d, "skipped").c_str(), d["duration_s"].get<double>(), d["status"].get<std::string>().c_str());
    }
    for (const auto& d : devices) {
        const std::string status = d["status"], device = d["device"];
        if (status == "pass") continue;
        const char* label = status == "unavailable" ? "UNAVAILABLE" : status == "FAIL" ? "FAILED" : "ERROR";
        const std::string reason = d["reason"];  // its first line: the rest (backend statuses) is in the output above
        std::printf("%s: %s%s: %s\n", label, d["selector"].get<std::string>().c_str(),
                    device.empty() ? "" : (" (" + device + ")").c_str(), reason.substr(0, reason.find('\n')).c_str());
    }
    const int verdict = verdict_of(devices);
    std::printf("conformance verdict: %s\n", verdict == 0    ? "every device passed"
                                             : verdict == 77 ? "no device could be opened (skipped)"
                                                             : "FAILED (see above)");
    std::fflush(stdout);
}

// Writes `record` to `file` whole (or not at all); false, with the reason on
// stderr, when it could not be written.
bool write_json(tool_cli::AtomicFile& file, const nlohmann::json& record) {
    try {
        file.stream() << record.dump(2) << "\n";
        file.commit();
        return true;
    } catch (const std::exception& e) {
        std::cerr << kName << ": " << e.what() << "\n";
        return false;
    }
}

// A folder of its own under TMPDIR (default /tmp) for the children's records,
// removed with what is in it (a crashed child's temporary file included).
class TempDir {
public:
    TempDir() {
        const char* tmp = std::getenv("TMPDIR");
        path_ = std::string(tmp && *tmp ? tmp : "/tmp") + "/accel-conformance-XXXXXX";
        if (!mkdtemp(path_.data()))
            throw std::runtime_error("cannot create a folder in " + path_ + ": " + std::strerror(errno));
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    ~TempDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    /// The path of `name` in the folder.
    std::string file(const std::string& name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

// Runs this program (/proc/self/exe, with args[0] as its argv[0]) with
// `args` and ACCEL_BACKEND=selector; returns its wait status. Throws
// std::runtime_error when it cannot be started.
int run_child(const std::vector<std::string>& args, const std::string& selector) {
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e)
        if (std::strncmp(*e, "ACCEL_BACKEND=", 14) != 0) env.emplace_back(*e);
    env.push_back("ACCEL_BACKEND=" + selector);
    std::cout.flush();
    std::fflush(stdout);
    pid_t pid = 0;
    if (const int err =
            posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, c_strings(args).data(), c_strings(env).data()))
        throw std::runtime_error(std::string("cannot start /proc/self/exe: ") + std::strerror(err));
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
}

// The verdict of the child that ran `selector`: its record in `file`, or,
// when it wrote none (it crashed), what its wait status says.
nlohmann::json child_verdict(const std::string& selector, const std::string& file, int wait_status, double seconds,
                             std::uint64_t seed) {
    nlohmann::json d;
    try {
        std::ifstream in(file);
        d = nlohmann::json::parse(in).at("devices").at(0);
    } catch (const std::exception&) {
        const std::string why =
            WIFSIGNALED(wait_status)
                ? "the suite's process was killed by signal " + std::to_string(WTERMSIG(wait_status)) + " (" +
                      strsignal(WTERMSIG(wait_status)) + "); its output above shows where"
                : "the suite's process exited with status " + std::to_string(WEXITSTATUS(wait_status)) +
                      " without a verdict; its output above shows why";
        d = {{"selector", selector},  {"device", ""},         {"uuid", ""},        {"pci_bus_id", ""},
             {"runtime_version", ""}, {"driver_version", ""}, {"status", "error"}, {"passed", nullptr},
             {"failed", nullptr},     {"skipped", nullptr},   {"reason", why},     {"seed", seed}};
    }
    d["requested"] = selector;
    d["duration_s"] = seconds;  // the process's whole time, its start and the device's opening included
    return d;
}

}  // namespace

std::optional<int> parse_command_line(int argc, char** argv, Command& cmd) {
    std::vector<std::string> ours;
    bool after_dashes = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (after_dashes || (a != "--" && is_doctest_option(a))) cmd.doctest_args.push_back(a);
        else if (a == "--") after_dashes = true;
        else ours.push_back(a);
    }
    CLI::App app(kDescription, kName);
    app.footer(kFooter);
    app.add_option("--backends", cmd.backends,
                   "run the suite on each of these devices, one process each, and print a verdict per device: "
                   "all (every device of every available backend) or a comma list of selectors (host, "
                   "opencl:pocl, kokkos, cuda:1, ...)")
        ->type_name("all|LIST");
    app.add_option("--cases", cmd.cases,
                   "only the test cases whose names match these doctest patterns (comma-separated; * and ? "
                   "wildcards, e.g. '*add*,device info*')")
        ->type_name("PATTERNS");
    app.add_option("--ops", cmd.ops,
                   "only these ops: the test cases that name one of them, and the every-op case for these alone "
                   "(add, matmul, dense, sigmoid, relu_backward, ...; a composed call such as dense_backward: "
                   "the cases that name it and the ops it runs)")
        ->delimiter(',')
        ->allow_extra_args(false)
        ->check(tool_cli::throws_if_bad(lookup_op, ""))
        ->type_name("LIST");
    app.add_option("--dtypes", cmd.dtypes,
                   "only these dtypes (f32,f64,f16,bf16): the test cases that loop over dtypes check these alone; "
                   "those in f32 alone run when f32 is among them")
        ->delimiter(',')
        ->allow_extra_args(false)
        ->transform(CLI::Validator(
            [](std::string& v) -> std::string {
                try {
                    v = accel::dtype_name(accel::parse_dtype(v));
                    return "";
                } catch (const std::exception& e) {
                    return e.what();
                }
            },
            ""))
        ->type_name("LIST");
    std::uint64_t seed = 0;
    app.add_option("--seed", seed,
                   "seed of the random data (default: ACCEL_TEST_SEED, else drawn); printed by every run, so a "
                   "failure can be rerun with it")
        ->check(CLI::Validator(
            [](std::string& v) -> std::string {
                char* end = nullptr;
                errno = 0;
                (void)std::strtoull(v.c_str(), &end, 10);
                const bool whole = !v.empty() && std::isdigit(static_cast<unsigned char>(v[0])) && *end == '\0';
                return whole && errno == 0 ? "" : "'" + v + "' is not a whole number in 0..2^64-1";
            },
            ""))
        ->type_name("N");
    // Not --cases, which is the test-case filter above: a program's calls
    // (a trace, or the case file written from one) are the test cases here.
    app.add_option("--case-file", cmd.case_file,
                   "run only the distinct op calls of FILE, a trace ACCEL_TRACE wrote or a case file (lines 'OP "
                   "DTYPE INPUTS -> OUTPUTS [activation=NAME] [trans_a] [trans_b]'), each as a test case: fresh "
                   "random data, every path, the float64 oracle; a bad file is an error naming its line, before "
                   "any run")
        ->type_name("FILE");
    app.add_option("--write-case-file", cmd.write_case_file,
                   "write the distinct calls of --case-file to OUT as a case file (one line each) and stop")
        ->type_name("OUT");
    app.add_option("--json", cmd.json,
                   "write the verdicts to FILE: accel's version and commit, the date (UTC) and machine, and per device "
                   "selector, device, uuid, pci_bus_id, runtime and driver versions, status, test cases "
                   "passed/failed/skipped, reason, seed, duration_s")
        ->type_name("FILE");
    if (const auto rc = tool_cli::parse(app, ours)) return rc;
    for (const char* option : {"--backends", "--cases", "--json", "--case-file", "--write-case-file"})
        if (app.count(option) && app[option]->as<std::string>().empty())
            return tool_cli::usage_error(kName, std::string(option) + " got an empty value");
    if (app.count("--seed")) cmd.seed = seed;
    return std::nullopt;
}

int usage_error(const std::string& message) { return tool_cli::usage_error(kName, message); }

std::vector<std::string> prepare_suite(const Command& cmd, const char* program) {
    if (cmd.seed) setenv("ACCEL_TEST_SEED", std::to_string(*cmd.seed).c_str(), 1);
    std::vector<accel::Op> ops;
    for (const auto& name : cmd.ops)
        for (accel::Op op : lookup_op(name)) ops.push_back(op);
    std::vector<accel::DType> dtypes;
    for (const auto& name : cmd.dtypes) dtypes.push_back(accel::parse_dtype(name));
    accel_test::select(ops, dtypes);

    // doctest reads one --test-case (and one --test-case-exclude) per command
    // line: the patterns of --cases, --ops, --dtypes and doctest's own are
    // merged into one of each.
    // The console output counts test cases as the verdict does (a user's own --reporters, later, wins).
    std::vector<std::string> args{program, "--reporters=accel-console"}, include, exclude;
    if (!cmd.cases.empty()) include.push_back(cmd.cases);
    for (const auto& a : cmd.doctest_args) {
        const std::string name = doctest_option_name(a);
        const auto eq = a.find('=');
        const std::string value = eq == std::string::npos ? "" : a.substr(eq + 1);
        if (name == "test-case" || name == "tc") include.push_back(value);
        else if (name == "test-case-exclude" || name == "tce") exclude.push_back(value);
        else args.push_back(a);
    }
    if (!cmd.ops.empty() || !cmd.dtypes.empty()) {
        run_query({program}, "--list-test-cases");
        for (const auto& name : CaseQuery::names)
            if (!case_selected(name, cmd.ops, cmd.dtypes)) exclude.push_back(exact_pattern(name));
    }
    if (!cmd.case_file.empty()) args.push_back(std::string("--test-suite=") + kCaseSuite);  // the file's cases alone
    if (!include.empty()) args.push_back("--test-case=" + join(include, ","));
    if (!exclude.empty()) args.push_back("--test-case-exclude=" + join(exclude, ","));
    if (!cmd.cases.empty() || !cmd.ops.empty() || !cmd.dtypes.empty() || !cmd.case_file.empty()) {
        run_query(args, "--count");
        if (CaseQuery::answered && CaseQuery::passing == 0)
            throw tool_cli::UsageError(
                std::string(cmd.cases.empty() && cmd.ops.empty() && cmd.dtypes.empty()
                                ? "no case of --case-file was registered to run"
                                : "--cases, --ops and --dtypes select no test case together") +
                (cmd.case_file.empty() ? "" : " among the cases of --case-file") + " (" + kName +
                " -- --list-test-cases lists them)");
    }
    return args;
}

int run_here(const Command& cmd, const char* program) {
    std::vector<std::string> args;
    std::optional<tool_cli::AtomicFile> json;
    try {
        args = prepare_suite(cmd, program);
        if (!cmd.json.empty()) json.emplace(cmd.json);  // a bad path fails before the run
    } catch (const std::exception& e) {
        return tool_cli::usage_error(kName, e.what());
    }
    accel_test::SuiteOutcome outcome;
    const auto start = Clock::now();
    int rc = 1;
    try {
        rc = accel_test::run_suite(static_cast<int>(args.size()), c_strings(args).data(), "conformance", true,
                                   &outcome);
    } catch (const std::exception& e) {  // opening the device failed (DeviceError, OutOfMemory, ...)
        outcome.status = "error";
        outcome.reason = std::string("opening the device failed: ") + e.what();
        std::cout << "ERROR: " << outcome.reason << "\n";
    }
    if (!json) return rc;
    if (outcome.status == "FAIL" && !CaseCounts::failed_names.empty())
        outcome.reason = std::to_string(CaseCounts::failed) + " test case(s) failed: " +
                         join(CaseCounts::failed_names, "; ");
    nlohmann::json seed = nullptr;
    try {
        seed = accel_test::seed();
    } catch (const accel::Error&) {  // a bad ACCEL_TEST_SEED: the reason says so
    }
    const std::string requested = accel::env::value("ACCEL_BACKEND").value_or("auto");
    const auto devices = nlohmann::json::array({device_record(requested, outcome, seconds_since(start), seed)});
    return write_json(*json, report(cmd, seed, devices)) ? rc : 1;
}

int run_devices(const Command& cmd, const char* program) {
    std::vector<std::string> selectors;
    std::optional<tool_cli::AtomicFile> json;
    std::uint64_t seed = 0;
    try {
        selectors = tool_cli::resolve_backends(cmd.backends);  // an unknown backend name: accel's message
        (void)prepare_suite(cmd, program);  // the filters checked once here; each child applies them
        seed = accel_test::seed();          // one seed for every device: the same data everywhere
        if (!cmd.json.empty()) json.emplace(cmd.json);
    } catch (const std::exception& e) {
        return tool_cli::usage_error(kName, e.what());
    }
    if (selectors.empty()) {  // --backends all, and nothing available
        std::cout << "SKIPPED: no backend is available here:\n";
        for (const auto& st : accel::backend_statuses()) std::cout << "  " << st.summary() << "\n";
        if (json && !write_json(*json, report(cmd, seed, nlohmann::json::array()))) return 1;
        return 77;
    }
    // Each child: the same options, the seed fixed, its record in a file of its own.
    std::vector<std::string> child{program, "--seed", std::to_string(seed)};
    if (!cmd.cases.empty()) child.insert(child.end(), {"--cases", cmd.cases});
    if (!cmd.ops.empty()) child.insert(child.end(), {"--ops", join(cmd.ops, ",")});
    if (!cmd.dtypes.empty()) child.insert(child.end(), {"--dtypes", join(cmd.dtypes, ",")});
    if (!cmd.case_file.empty()) child.insert(child.end(), {"--case-file", cmd.case_file});
    nlohmann::json devices = nlohmann::json::array();
    try {
        TempDir dir;
        for (std::size_t i = 0; i < selectors.size(); ++i) {
            const std::string record = dir.file("device-" + std::to_string(i) + ".json");
            std::vector<std::string> args = child;
            args.insert(args.end(), {"--json", record, "--"});
            args.insert(args.end(), cmd.doctest_args.begin(), cmd.doctest_args.end());
            std::printf("\n=== %s on %s (device %zu of %zu) ===\n", kName, selectors[i].c_str(), i + 1,
                        selectors.size());
            const auto start = Clock::now();
            const int status = run_child(args, selectors[i]);
            devices.push_back(child_verdict(selectors[i], record, status, seconds_since(start), seed));
        }
    } catch (const std::exception& e) {
        std::cerr << kName << ": " << e.what() << "\n";
        return 1;
    }
    print_table(devices, seed);
    if (json) {
        if (!write_json(*json, report(cmd, seed, devices))) return 1;
        std::cout << "wrote the verdicts of " << devices.size() << " device(s) to " << cmd.json << "\n";
    }
    return verdict_of(devices);
}

}  // namespace conformance
