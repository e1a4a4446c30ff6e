// The environment variables: each declared by its reader (accel/environment.hpp),
// the same names in docs/environment.md, and every value outside the accepted ones an error
// naming the variable, the value and the accepted values. The variables read
// once per process (ACCEL_HOST_THREADS, ACCEL_HOST_BLAS, ...) are tested in a
// process of their own each: tests/CMakeLists.txt, tests named env.*.
#include <accel/accel.hpp>

#include <doctest/doctest.h>

#include "support/check.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

using namespace accel;

namespace {
using accel_test::contains;

std::string read(const std::filesystem::path& p) {
    std::ifstream f(p);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

using accel_test::ScopedEnv;

// Every declaration in the tree: the names in `env::Declaration` initializers
// of core, ops, backends, mpi and tests (the ones of a program or plugin not
// in this process included).
std::set<std::string> declared_in_tree() {
    namespace fs = std::filesystem;
    const fs::path root(ACCEL_SOURCE_DIR);
    const std::regex declaration(R"re(Declaration\s+k\w+\s*\{\s*\{\s*"(ACCEL_[A-Z0-9_]+)")re");
    std::set<std::string> out;
    for (const char* dir : {"core", "ops", "backends", "mpi", "tests", "tools"})
        for (const auto& entry : fs::recursive_directory_iterator(root / dir)) {
            if (!entry.is_regular_file() || entry.path().extension() != ".cpp") continue;
            const std::string text = read(entry.path());
            for (std::sregex_iterator it(text.begin(), text.end(), declaration), end; it != end; ++it)
                out.insert((*it)[1]);
        }
    return out;
}

}  // namespace

TEST_CASE("docs/environment.md's table names every variable declared, here and in the tree") {
    const std::string readme = read(std::filesystem::path(ACCEL_SOURCE_DIR) / "docs" / "environment.md");
    const auto header = readme.find("| variable | meaning |");
    REQUIRE_MESSAGE(header != std::string::npos, "docs/environment.md has no '| variable | meaning |' table");
    // The table: the rows after the header, up to the first line not starting with '|'.
    std::set<std::string> documented;
    std::istringstream rows(readme.substr(header));
    std::string line;
    const std::regex name("`(ACCEL_[A-Z0-9_]+)`");
    while (std::getline(rows, line) && !line.empty() && line[0] == '|') {
        const std::string first_cell = line.substr(0, line.find('|', 1));
        for (std::sregex_iterator it(first_cell.begin(), first_cell.end(), name), end; it != end; ++it)
            documented.insert((*it)[1]);
    }
    (void)backend_statuses();  // every plugin loaded: their declarations made
    std::set<std::string> here;
    for (const auto& v : env::variables()) {
        if (v.owner == "the unit tests") continue;  // the declaration test's own, not accel's
        CAPTURE(v.name);
        CHECK(here.insert(v.name).second);  // each once
        CHECK_MESSAGE(documented.count(v.name), v.name << " is declared by " << v.owner
                                                       << " but missing from docs/environment.md's table");
    }
    // libaccel's, ops', the host backend's and this program's own (tests/support).
    for (const char* n : {"ACCEL_BACKEND", "ACCEL_PLUGIN_PATH", "ACCEL_OP_PATH", "ACCEL_TRACE", "ACCEL_CHECK",
                          "ACCEL_CACHE_DIR", "ACCEL_ENV_ALLOW", "ACCEL_HOST_THREADS", "ACCEL_TEST_SEED"})
        CHECK_MESSAGE(here.count(n), n << " is not declared in the unit tests' process");
    const std::set<std::string> in_tree = declared_in_tree();
    for (const auto& n : here) CHECK_MESSAGE(in_tree.count(n), n << ": the tree scan misses its declaration");
    for (const auto& d : documented)
        CHECK_MESSAGE(in_tree.count(d), d << " is in docs/environment.md's table but nothing declares it");
}

TEST_CASE("libaccel, its plugins and accel_mpi read ACCEL_ variables only through accel::env") {
    // A direct getenv of an ACCEL_ variable would bypass the table and its checks.
    // (backends/cuda/emulation stands in for the CUDA runtime and does not link
    // libaccel: its test-only ACCEL_CUDA_EMULATION_FAULTS is checked there.)
    namespace fs = std::filesystem;
    const fs::path root(ACCEL_SOURCE_DIR);
    const std::regex direct(R"(getenv\s*\(\s*"ACCEL_)");
    int files = 0;
    for (const char* dir : {"core", "ops", "backends", "mpi"}) {
        for (const auto& entry : fs::recursive_directory_iterator(root / dir)) {
            const auto ext = entry.path().extension().string();
            if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp" && ext != ".h" && ext != ".cu")) continue;
            if (contains(entry.path().string(), "/backends/cuda/emulation/")) continue;
            if (entry.path() == root / "core/src/environment.cpp") continue;  // accel::env itself
            ++files;
            const std::string text = read(entry.path());
            CHECK_MESSAGE(!std::regex_search(text, direct), entry.path().string() << " calls getenv(\"ACCEL_...\")");
        }
    }
    CHECK(files > 10);
}

TEST_CASE("env readers: whole numbers, words and flags, each error naming variable, value and accepted values") {
    SUBCASE("unset or blank is the default") {
        ScopedEnv e("ACCEL_TEST_MAX_WORK", "  ");
        CHECK_FALSE(env::read_uint("ACCEL_TEST_MAX_WORK", 1, 10).has_value());
        ScopedEnv f("ACCEL_DETERMINISTIC", nullptr);
        CHECK_FALSE(env::read_flag("ACCEL_DETERMINISTIC").has_value());
    }
    SUBCASE("whole numbers in a range") {
        ScopedEnv e("ACCEL_TEST_MAX_WORK", " 7 ");
        CHECK(env::read_uint("ACCEL_TEST_MAX_WORK", 1, 10) == 7u);
        for (const char* bad : {"abc", "0", "-3", "99999999", "7x", "1e3", "99999999999999999999999"}) {
            CAPTURE(bad);
            ScopedEnv b("ACCEL_TEST_MAX_WORK", bad);
            const std::string msg = accel_test::message_of<InvalidArgument>([] { env::read_uint("ACCEL_TEST_MAX_WORK", 1, 10); });
            CHECK(contains(msg, std::string("ACCEL_TEST_MAX_WORK='") + bad + "'"));
            CHECK(contains(msg, "1..10"));
            CHECK(contains(msg, env::variable("ACCEL_TEST_MAX_WORK").accepted));
        }
    }
    SUBCASE("words, without case") {
        ScopedEnv e("ACCEL_OP_PATH", "Vendor");
        CHECK(env::read_word("ACCEL_OP_PATH", {"native", "vendor", "auto"}) == std::string("vendor"));
        ScopedEnv b("ACCEL_OP_PATH", "sideways");
        const std::string msg = accel_test::message_of<InvalidArgument>([] { env::read_word("ACCEL_OP_PATH", {"native", "vendor"}); });
        CHECK(contains(msg, "ACCEL_OP_PATH='sideways'"));
        CHECK(contains(msg, "native, vendor or auto"));
    }
    SUBCASE("flags are 1 or 0") {
        ScopedEnv e("ACCEL_DETERMINISTIC", "1");
        CHECK(env::read_flag("ACCEL_DETERMINISTIC") == true);
        for (const char* bad : {"yes", "true", "2", "on"}) {
            CAPTURE(bad);
            ScopedEnv b("ACCEL_DETERMINISTIC", bad);
            const std::string msg = accel_test::message_of<InvalidArgument>([] { env::read_flag("ACCEL_DETERMINISTIC"); });
            CHECK(contains(msg, std::string("ACCEL_DETERMINISTIC='") + bad + "'"));
            CHECK(contains(msg, "1 (on) or 0 (off)"));
        }
    }
    SUBCASE("a value is echoed on one line, shortened") {
        const std::string huge(5000, '9');
        ScopedEnv b("ACCEL_TEST_MAX_WORK", (huge + "\nx").c_str());
        const std::string msg = accel_test::message_of<InvalidArgument>([] { env::read_uint("ACCEL_TEST_MAX_WORK", 1, 10); });
        CHECK(contains(msg, "(5002 characters)"));
        CHECK(msg.size() < 400);
        CHECK_FALSE(contains(msg, "\n"));
    }
    SUBCASE("reading an undeclared variable is its reader's bug, not the user's") {
        CHECK_THROWS_AS(env::value("ACCEL_NOT_A_VARIABLE"), std::logic_error);
    }
}

TEST_CASE("declarations: a program's own variable is read once declared; a bad declaration is refused") {
    static const env::Declaration mine{{"ACCEL_UNITTEST_LEVEL", "1..9", "a level (default 1)", "the unit tests"}};
    ScopedEnv level("ACCEL_UNITTEST_LEVEL", "4");
    CHECK(env::read_uint("ACCEL_UNITTEST_LEVEL", 1, 9) == 4u);
    CHECK_NOTHROW(env::check_unknown_variables());
    CHECK(env::variable("ACCEL_UNITTEST_LEVEL").owner == "the unit tests");
    CHECK_NOTHROW(env::declare({"ACCEL_UNITTEST_LEVEL", "1..9", "a level (default 1)", "the unit tests"}));  // again
    CHECK_THROWS_AS(env::declare({"ACCEL_UNITTEST_LEVEL", "1..5", "a level (default 1)", "someone else"}),
                    std::logic_error);
    for (const char* bad : {"UNITTEST_LEVEL", "ACCEL_", "ACCEL_lower", "ACCEL_A-B"}) {
        CAPTURE(bad);
        CHECK_THROWS_AS(env::declare({bad, "x", "y", "z"}), std::logic_error);
    }
    CHECK_THROWS_AS(env::declare({"ACCEL_UNITTEST_EMPTY", "", "y", "z"}), std::logic_error);
}

TEST_CASE("an ACCEL_ variable close to a declared one is an error naming it; a far one is left to its reader") {
    ScopedEnv allow("ACCEL_ENV_ALLOW", nullptr);
    CHECK_NOTHROW(env::check_unknown_variables());
    {
        ScopedEnv typo("ACCEL_BACKENDS", "opencl");  // the tools' flag is plural, the variable is not
        const std::string msg = accel_test::message_of<InvalidArgument>([] { env::check_unknown_variables(); });
        CHECK(contains(msg, "ACCEL_BACKENDS (set in the environment) is not an accel variable; did you mean ACCEL_BACKEND?"));
        // (open_device runs this check once the plugins are loaded: test conformance.env.unknown-variable.)
        CHECK(contains(accel_test::message_of<InvalidArgument>([] { open_device("host"); }), "did you mean"));
    }
    {
        ScopedEnv typo("ACCEL_CHEK", "oracle");
        CHECK(contains(accel_test::message_of<InvalidArgument>([] { env::check_unknown_variables(); }), "did you mean ACCEL_CHECK?"));
    }
    {
        // Close to nothing declared here: another program's variable, warned about on stderr (test
        // info.env.unread-variable), not an error.
        ScopedEnv far("ACCEL_QQQQQQQQQQQQQQQQQQQQ", "1");
        CHECK_NOTHROW(env::check_unknown_variables({"cuda"}));
    }
    {
        ScopedEnv mine("ACCEL_MYAPP_LEVEL", "3");
        ScopedEnv allowed("ACCEL_ENV_ALLOW", "ACCEL_OTHER_, ACCEL_MYAPP_");
        CHECK_NOTHROW(env::check_unknown_variables());
        ScopedEnv bad("ACCEL_ENV_ALLOW", "MYAPP_");
        CHECK(contains(accel_test::message_of<InvalidArgument>([] { env::check_unknown_variables(); }), "ACCEL_ENV_ALLOW='MYAPP_'"));
        ScopedEnv bare("ACCEL_ENV_ALLOW", "ACCEL_");
        CHECK(contains(accel_test::message_of<InvalidArgument>([] { env::check_unknown_variables(); }), "ACCEL_ENV_ALLOW='ACCEL_'"));
    }
}

TEST_CASE("ACCEL_OP_PATH: a bad value names the variable, the value and the accepted values") {
    ScopedEnv e("ACCEL_OP_PATH", "sideways");
    const std::string msg = accel_test::message_of<InvalidArgument>([] { ops::resolve_path(*open_device("host"), Op::matmul); });
    CHECK(contains(msg, "ACCEL_OP_PATH='sideways'"));
    CHECK(contains(msg, "native, vendor or auto"));
}

TEST_CASE("ACCEL_CACHE_DIR naming a file is an error when the auto path reads it") {
    auto d = open_device("host");
    if (!d->kernel_table().supports(Op::matmul, OpPath::vendor)) {
        MESSAGE("host has no vendor BLAS in this build: the auto path reads no cache");
        return;
    }
    const std::string file = std::string(ACCEL_SOURCE_DIR) + "/README.md";
    ScopedEnv e("ACCEL_CACHE_DIR", file.c_str());
    ScopedEnv p("ACCEL_OP_PATH", nullptr);
    CHECK_FALSE(ops::recorded_path_evidence(*d).has_value());  // never throws
    const std::string msg = accel_test::message_of<InvalidArgument>([&] { ops::path_evidence(*d); });
    CAPTURE(msg);
    CHECK(contains(msg, "ACCEL_CACHE_DIR='"));
    CHECK(contains(msg, "not a folder"));
    // The folder is checked once per value, and a refused value stays refused.
    CHECK_THROWS_AS(ops::path_evidence(*d), InvalidArgument);
}

TEST_CASE("a comma list in ACCEL_BACKEND outside MPI says that only MPI programs take one") {
    ScopedEnv e("ACCEL_BACKEND", "host,opencl");
    const std::string msg = accel_test::message_of<InvalidArgument>([] { default_device(); });
    CHECK(contains(msg, "ACCEL_BACKEND"));
    CHECK(contains(msg, "'host,opencl'"));
    CHECK(contains(msg, "comma list"));
    CHECK(contains(msg, "MPI"));
    CHECK_FALSE(contains(msg, "unknown backend"));
}

TEST_CASE("a moved-from tensor is reported as having no storage, moved-from named") {
    auto dev = open_device("host");
    auto a = Tensor::from_host(dev, {4}, std::vector<float>(4, 1.0f));
    auto c = Tensor::from_host(dev, {4}, std::vector<float>(4, 2.0f));
    Tensor moved = std::move(a);
    std::string msg;
    try {
        ops::add(a, moved, c);
    } catch (const Error& e) {
        msg = e.what();
    }
    CHECK(contains(msg, "'a'"));
    CHECK(contains(msg, "moved-from"));
}

TEST_CASE("env: a bad value of a variable read once per process fails opening the device") {
    // Run by CTest's env.* tests: ACCEL_TEST_ENV_VARIABLE names the variable
    // set to a bad value, ACCEL_TEST_ENV_EXPECT a part of the message.
    const char* variable = std::getenv("ACCEL_TEST_ENV_VARIABLE");
    if (!variable) return;
    const char* value = std::getenv(variable);
    REQUIRE(value != nullptr);
    const char* selector = std::getenv("ACCEL_TEST_ENV_OPEN");
    const std::string msg = accel_test::message_of<InvalidArgument>([&] { open_device(selector ? selector : "host"); });
    CHECK(contains(msg, std::string(variable) + "='"));
    CHECK(contains(msg, std::getenv("ACCEL_TEST_ENV_EXPECT")));
    CHECK(contains(msg, env::variable(variable).accepted));
    // The same error again: a failed open leaves nothing half-made behind.
    CHECK(accel_test::message_of<InvalidArgument>([&] { open_device(selector ? selector : "host"); }) == msg);
}
