// Unit tests of core/: selectors, errors, geometry, shapes, buffers, registry.
#include <accel/accel.hpp>
#include <accel/closest_name.hpp>
#include <accel/plugin.hpp>

#include <doctest/doctest.h>

#include "support/check.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>

#include "other_devices.hpp"

using namespace accel;

namespace {
using accel_test::contains;

using accel_test::ScopedEnv;
}  // namespace

TEST_CASE("selectors parse case-insensitively with optional device index") {
    CHECK(parse_selector("auto").backend == "auto");
    CHECK(parse_selector("host").index == -1);
    auto s = parse_selector("  HOST:2 ");
    CHECK(s.backend == "host");
    CHECK(s.index == 2);
    CHECK(s.to_string() == "host:2");
    CHECK(parse_selector("host:13").index == 13);
    for (const auto& name : known_backends()) {  // every backend found, whatever this build has
        CAPTURE(name);
        std::string upper = name;
        for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        CHECK(parse_selector(upper + ":0").backend == name);
    }
}

TEST_CASE("malformed selectors are rejected with the accepted forms") {
    // Of a backend every build has (host): a backend without its plugin here is named as
    // unknown before the grammar is checked (a build without CUDA has no 'cuda').
    for (const char* bad : {"", "host:", "host:-1", "host:x:y", "host:1:2", "auto:0", "host 1", ":0",
                            "host:99999999999"}) {
        CAPTURE(bad);
        try {
            parse_selector(bad);
            FAIL("accepted");
        } catch (const InvalidArgument& e) {
            // The grammar is built from the plugins found: every backend's NAME[:N].
            CHECK(contains(e.what(), "expected auto | "));
            for (const auto& name : known_backends()) CHECK(contains(e.what(), name + "[:N]"));
            CHECK(contains(e.what(), "BACKEND:local"));
        }
    }
}

TEST_CASE("a long selector is echoed once, truncated") {
    const std::string sel(5000, '#');
    auto hashes = [](const std::string& s) { return std::count(s.begin(), s.end(), '#'); };
    try {
        parse_selector(sel);
        FAIL("accepted");
    } catch (const InvalidArgument& e) {
        CHECK(contains(e.what(), "(5000 characters)"));
        CHECK(hashes(e.what()) <= 64);
        CHECK(hashes(e.what()) > 0);
    }
    ScopedEnv env("ACCEL_BACKEND", sel.c_str());  // through default_device(), with the backend table
    try {
        default_device();
        FAIL("accepted");
    } catch (const InvalidArgument& e) {
        CHECK(hashes(e.what()) <= 64);
        CHECK(std::string(e.what()).size() < 4096);
    }
    const std::string padded = std::string(5000, ' ') + "host:7";  // valid, but no such device
    try {
        open_device(padded);
        FAIL("host:7 opened");
    } catch (const BackendUnavailable& e) {
        CHECK(contains(e.what(), "(5006 characters)"));
        CHECK(std::string(e.what()).size() < 4096);
    }
}

TEST_CASE("an unknown backend in ACCEL_BACKEND is an InvalidArgument naming it and listing the backends") {
    ScopedEnv env("ACCEL_BACKEND", "bogus");
    try {
        default_device();
        FAIL("bogus backend accepted");
    } catch (const InvalidArgument& e) {
        CHECK(contains(e.what(), "bogus"));
        CHECK(contains(e.what(), "Backends on this machine"));
        CHECK(contains(e.what(), "host: available"));
    }
}

TEST_CASE("an unknown backend name in a selector is rejected with the backends found") {
    try {
        parse_selector("bogus");
        FAIL("accepted");
    } catch (const InvalidArgument& e) {
        CHECK(contains(e.what(), "unknown backend 'bogus'"));
        CHECK(contains(e.what(), "backends found: "));
        for (const auto& name : known_backends()) CHECK(contains(e.what(), name));
    }
}

TEST_CASE("closest_name: a swap is one edit, a far name gets no guess, letter case is ignored") {
    CHECK(accel::edit_distance("hots", "host") == 1);
    CHECK(accel::edit_distance("hepl", "help") == 1);
    CHECK(accel::edit_distance("", "abc") == 3);
    CHECK(accel::edit_distance("kitten", "sitting") == 3);
    const std::vector<std::string> formats{"md", "csv"}, options{"--json", "--op", "--lr", "--help"};
    CHECK(accel::closest_name("json", formats).empty());
    CHECK(accel::closest_name("--frob", options).empty());
    CHECK(accel::closest_name("--hepl", options) == "--help");
    CHECK(accel::closest_name("CUDA", std::vector<std::string>{"host", "cuda"}) == "cuda");
}

TEST_CASE("a mistyped backend is answered with the closest backend found, in two lines") {
    for (const char* typo : {"hots", "hsot", "hostt"}) {
        ScopedEnv env("ACCEL_BACKEND", typo);
        const std::string msg = accel_test::message_of([] { (void)default_device(); });
        CAPTURE(msg);
        CHECK(contains(msg, std::string("unknown backend '") + typo + "'; did you mean host?"));
    }
    ScopedEnv env("ACCEL_BACKEND", "zzzzzzzzzz");  // nothing near: no guess
    const std::string msg = accel_test::message_of([] { (void)default_device(); });
    CAPTURE(msg);
    CHECK(contains(msg, "unknown backend 'zzzzzzzzzz'"));
    CHECK_FALSE(contains(msg, "did you mean"));
    // The selector's error: its first line names the typo and the guess, its second the backends found.
    const std::string first = msg.substr(0, msg.find("\nBackends on this machine"));
    CHECK(std::count(first.begin(), first.end(), '\n') <= 1);
    CHECK(contains(first, "backends found: "));
}

TEST_CASE("every backend has a status line; host is always available") {
    auto all = backend_statuses();
    CHECK(all.size() == known_backends().size());
    bool host = false;
    for (const auto& s : all) {
        CHECK(!s.summary().empty());
        if (!s.availability.available) CHECK(!s.availability.reason.empty());
        if (s.name == "host") host = s.availability.available;
    }
    CHECK(host);
}

TEST_CASE("OPENBLAS_CORETYPE is settled before any plugin loads, and a user's own value is kept") {
    // The variable as the process started (before any plugin was loaded by this test program).
    static const char* at_start = std::getenv("OPENBLAS_CORETYPE");
    static const std::string start_value = at_start ? at_start : "";
    (void)backend_statuses();  // loads every plugin
    const std::string note = openblas_coretype_note();
    const char* now = std::getenv("OPENBLAS_CORETYPE");
    if (!start_value.empty() && contains(note, "from the environment")) {
        CHECK(std::string(now) == start_value);
        CHECK(note.rfind("OPENBLAS_CORETYPE=" + start_value + " from the environment", 0) == 0);
    } else if (contains(note, "set by accel")) {
        REQUIRE(now != nullptr);
        CHECK(note.rfind("OPENBLAS_CORETYPE=" + std::string(now) + " set by accel from the CPU's features", 0) == 0);
        CHECK((std::string(now) == "SkylakeX" || std::string(now) == "Haswell"));
    } else {
        // A CPU without AVX2+FMA, or not x86: nothing was set.
        CHECK_FALSE(contains(note, "OPENBLAS_CORETYPE"));
    }
    // The OpenMP OpenBLAS, where the system has it, was loaded before the
    // plugins, so that a plugin linking libopenblas.so.0 shares it.
    const std::string dir = preferred_openblas_dir();
    const char* host_blas = std::getenv("ACCEL_HOST_BLAS");
    if (!dir.empty() && !host_blas) {
        CHECK(contains(note, "OpenMP OpenBLAS of " + dir + " loaded first"));
        CHECK(dlopen((dir + "/libopenblas.so.0").c_str(), RTLD_NOW | RTLD_NOLOAD) != nullptr);
    }
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (start_value.empty() && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        CHECK_MESSAGE(contains(note, "set by accel"), "OPENBLAS_CORETYPE was not set on a CPU with AVX2+FMA");
#endif
}

TEST_CASE("device index out of range names the count and lists the backends") {
    try {
        open_device("host:5");
        FAIL("host:5 opened");
    } catch (const BackendUnavailable& e) {
        CHECK(contains(e.what(), "out of range"));
        CHECK(contains(e.what(), "1 device(s)"));
        CHECK(contains(e.what(), "Backends on this machine"));
    }
}

TEST_CASE("a missing plugin file is reported with the paths tried") {
    // CTest's `missing-plugins` runs this case against a copy of libaccel in a
    // folder without plugins (ACCEL_TEST_NO_PLUGINS=1): no backend is found,
    // and opening one names the file looked for, the folders and
    // ACCEL_PLUGIN_PATH.
    if (!std::getenv("ACCEL_TEST_NO_PLUGINS")) return;
    CHECK(backend_statuses().empty());
    CHECK(known_backends().empty());
    try {
        open_device("opencl");
        FAIL("opened a backend without its plugin");
    } catch (const InvalidArgument& e) {
        CHECK(contains(e.what(), "libaccel-backend-opencl.so"));
        CHECK(contains(e.what(), plugin_folders().back()));
        CHECK(contains(e.what(), "ACCEL_PLUGIN_PATH"));
        CHECK(contains(e.what(), "Backends on this machine: none"));
    }
    CHECK_THROWS_AS(open_device("auto"), BackendUnavailable);
}

TEST_CASE("a backend in two plugin folders is refused naming both files; file names that are no backend name too") {
    // CTest's `plugin-clash` puts two folders holding a libaccel-backend-host.so
    // each in ACCEL_PLUGIN_PATH, and a third holding libaccel-backend-auto.so
    // and libaccel-backend-Bad.so.
    if (!std::getenv("ACCEL_TEST_PLUGIN_CLASH")) return;
    const auto all = backend_statuses();
    auto find = [&](const std::string& name) {
        auto it = std::find_if(all.begin(), all.end(), [&](const BackendStatus& s) { return s.name == name; });
        return it == all.end() ? std::string("(not listed)") : it->availability.available ? std::string("available")
                                                                                         : it->availability.reason;
    };
    const std::string host = find("host");
    CHECK(contains(host, "two plugins for backend 'host' in ACCEL_PLUGIN_PATH"));
    CHECK(contains(host, "probe_throws/libaccel-backend-host.so"));
    CHECK(contains(host, "backend_null/libaccel-backend-host.so"));
    CHECK(contains(find("auto"), "is reserved"));
    CHECK(contains(find("Bad"), "is not a backend name"));
    CHECK(parse_selector("auto").backend == "auto");  // still the automatic choice
    CHECK_THROWS_AS(open_device("host"), BackendUnavailable);
}

TEST_CASE("plugins are searched in ACCEL_PLUGIN_PATH first, and a wrong ABI is refused") {
    // CTest's `plugin-path` points ACCEL_PLUGIN_PATH at a folder holding a
    // libaccel-backend-cuda.so built for another plugin ABI.
    if (!std::getenv("ACCEL_TEST_BAD_ABI_PLUGIN")) return;
    const std::string dir = std::getenv("ACCEL_PLUGIN_PATH");
    for (const auto& s : backend_statuses()) {
        CAPTURE(s.name);
        if (s.name == "cuda") {
            CHECK_FALSE(s.availability.available);
            CHECK(contains(s.plugin_path, dir));
            // The one beside libaccel, where the build has it, is named as replaced.
            const std::string own = plugin_folders().back() + "/libaccel-backend-cuda.so";
            if (std::FILE* f = std::fopen(own.c_str(), "rb")) {
                std::fclose(f);
                CHECK(s.shadowed == std::vector<std::string>{own});
            }
            CHECK(contains(s.availability.reason, "plugin ABI " + std::to_string(ACCEL_PLUGIN_ABI + 1000)));
            CHECK(contains(s.availability.reason, "needs ABI " + std::to_string(ACCEL_PLUGIN_ABI)));
        } else if (s.name == "host") {
            CHECK(s.availability.available);  // not in that folder: found beside libaccel
            CHECK_FALSE(contains(s.plugin_path, dir));
        }
    }
}

TEST_CASE("a malformed plugin makes only its backend unavailable, with a one-line reason") {
    // CTest's plugin.<defect> tests point ACCEL_PLUGIN_PATH at a folder holding
    // one plugin broken in one way (tests/plugins/malformed.cpp) and name the
    // backend it shadows and a part of the reason expected.
    const char* bad_env = std::getenv("ACCEL_TEST_MALFORMED");
    if (!bad_env) return;
    const std::string bad = bad_env, reason = std::getenv("ACCEL_TEST_MALFORMED_REASON");
    const std::string file = std::string(std::getenv("ACCEL_PLUGIN_PATH")) + "/libaccel-backend-" + bad + ".so";
    // Opened first: a defect found only when a device is created must show in
    // the statuses read after.
    try {
        open_device(bad);
        FAIL("a device of a malformed plugin was opened");
    } catch (const BackendUnavailable& e) {
        CHECK(contains(e.what(), file));
        CHECK(contains(e.what(), reason));
    }
    const auto all = backend_statuses();
    CHECK(all.size() == known_backends().size());
    for (const auto& s : all) {
        CAPTURE(s.summary());
        if (s.name == bad) {
            CHECK_FALSE(s.availability.available);
            CHECK(contains(s.availability.reason, file));
            CHECK(contains(s.availability.reason, reason));
            CHECK(s.summary().find('\n') == std::string::npos);
            continue;
        }
        if (s.name == "host") CHECK(s.availability.available);
        if (!s.availability.available) continue;
        auto d = open_device(s.name);  // every other backend stays usable
        auto a = Tensor::from_host(d, {3}, std::vector<float>{1, 2, 3});
        Tensor c(d, {3});
        ops::add(a, a, c);
        CHECK(c.download() == std::vector<float>{2, 4, 6});
    }
    std::shared_ptr<Device> chosen;
    try {
        chosen = default_device();  // auto: CTest sets ACCEL_BACKEND=auto
    } catch (const BackendUnavailable& e) {
        CHECK(bad == "host");  // auto falls back to host, which is the broken one
        CHECK(contains(e.what(), reason));
    }
    if (chosen) CHECK(chosen->info().backend != bad);
}

TEST_CASE("auto prefers a GPU backend and falls back to host only when none has a GPU") {
    auto all = backend_statuses();
    std::string expected = "host";
    for (const auto& s : all)
        if (s.availability.available && s.availability.has_gpu) {
            expected = s.name;
            break;
        }
    CHECK(open_device("auto")->info().backend == expected);
}

TEST_CASE("open_device caches devices per selector") {
    auto a = open_device("host"), b = open_device("HOST:0");
    CHECK(a.get() == b.get());
    CHECK(a->selector() == "host:0");
}

TEST_CASE("ceil_div and geometry helpers") {
    CHECK(ceil_div(0, 4) == 0);
    CHECK(ceil_div(1, 4) == 1);
    CHECK(ceil_div(8, 4) == 2);
    CHECK(ceil_div(9, 4) == 3);
    CHECK_THROWS_AS(ceil_div(1, 0), InvalidArgument);
    LaunchLimits l;
    l.max_block_size = 1024;
    l.max_grid_dims = {100, 100, 100};
    auto g = geometry_1d(1000, 256, l);
    CHECK(g.block.x == 256);
    CHECK(g.grid.x == 4);
    CHECK(geometry_1d(1000000, 256, l).grid.x == 100);  // clamped: kernels are grid-stride
    CHECK(geometry_1d(0, 256, l).grid.x == 1);
    CHECK_THROWS_AS(geometry_1d(10, 2048, l), InvalidArgument);
    CHECK_THROWS_AS(geometry_1d(10, 0, l), InvalidArgument);
    // geometry_1d_fit: blocks of kSmallBlock (16) up to 16 elements, else the block given.
    for (const auto& expect : std::vector<std::pair<std::size_t, std::size_t>>{
             {0, 16}, {1, 16}, {15, 16}, {16, 16}, {17, 256}, {256, 256}, {257, 256}, {100000, 256}}) {
        const std::size_t n = expect.first, block = expect.second;
        CAPTURE(n);
        const LaunchGeometry f = geometry_1d_fit(n, 256, l);
        CHECK(f.block.x == block);
        CHECK(f.grid.x == std::min<std::size_t>(100, std::max<std::size_t>(1, ceil_div(n, block))));
    }
    CHECK(geometry_1d_fit(1, 8, l).block.x == 8);  // never wider than asked
    CHECK_THROWS_AS(geometry_1d_fit(10, 2048, l), InvalidArgument);
    auto g2 = geometry_2d(33, 65, {16, 16, 1}, 16, 16, l);
    CHECK(g2.grid.x == 5);
    CHECK(g2.grid.y == 3);
    try {
        check_geometry({{1, 1, 1}, {64, 32, 1}}, l, "matmul");
        FAIL("2048-thread block accepted");
    } catch (const InvalidArgument& e) {
        CHECK(contains(e.what(), "2048 threads"));
        CHECK(contains(e.what(), "1024"));
    }
    CHECK_THROWS_AS(check_geometry({{0, 1, 1}, {1, 1, 1}}, l, "add"), InvalidArgument);
    CHECK_THROWS_AS(check_geometry({{101, 1, 1}, {1, 1, 1}}, l, "add"), InvalidArgument);
}

TEST_CASE("tiled geometry: the default covers the output in both layouts, and the check names what fits") {
    LaunchLimits l;
    std::mt19937_64 g(std::random_device{}());
    std::uniform_int_distribution<std::size_t> extent(1, 5000), tile(1, 200);
    for (int trial = 0; trial < 200; ++trial) {
        const std::size_t rows = extent(g), cols = extent(g);
        TileLayout t;
        t.block = {16, 8, 1};
        t.tile_rows = tile(g);
        t.tile_cols = tile(g);
        t.rows_along_x = trial % 2 == 0;
        CAPTURE(rows);
        CAPTURE(cols);
        CAPTURE(t.tile_rows);
        CAPTURE(t.tile_cols);
        CAPTURE(t.rows_along_x);
        const LaunchGeometry d = tiled_geometry(t, rows, cols, l, "matmul");
        const std::size_t along_x = t.rows_along_x ? t.tile_rows : t.tile_cols;
        const std::size_t along_y = t.rows_along_x ? t.tile_cols : t.tile_rows;
        const std::size_t extent_x = t.rows_along_x ? rows : cols, extent_y = t.rows_along_x ? cols : rows;
        // Covers the output, with no block row or column wholly outside it.
        CHECK(d.grid.x * along_x >= extent_x);
        CHECK((d.grid.x - 1) * along_x < extent_x);
        CHECK(d.grid.y * along_y >= extent_y);
        CHECK((d.grid.y - 1) * along_y < extent_y);
        CHECK(d.grid.z == 1);
        CHECK(d.block == t.block);
        CHECK_NOTHROW(check_tiled_geometry(d, t, rows, cols, "matmul"));
        LaunchGeometry bigger = d;
        bigger.grid.x += 3;  // extra blocks exit at the bounds check
        CHECK_NOTHROW(check_tiled_geometry(bigger, t, rows, cols, "matmul"));
        LaunchGeometry short_x = d, short_y = d, wrong_block = d, deep = d;
        short_x.grid.x -= 1;
        short_y.grid.y -= 1;
        wrong_block.block.x = 32;
        deep.grid.z = 2;
        for (const LaunchGeometry& bad : {short_x, short_y, wrong_block, deep}) {
            if (bad.grid.x == 0 || bad.grid.y == 0) continue;
            try {
                check_tiled_geometry(bad, t, rows, cols, "matmul");
                FAIL("geometry " << bad.to_string() << " accepted");
            } catch (const InvalidArgument& e) {
                CHECK(contains(e.what(), "block(16,8,1)"));
                CHECK(contains(e.what(), "(" + std::to_string(d.grid.x) + "," + std::to_string(d.grid.y) + ",1)"));
            }
        }
    }
    TileLayout zero;
    zero.tile_rows = 0;
    CHECK_THROWS_AS(tiled_geometry(zero, 4, 4, l, "matmul"), InvalidArgument);
}

TEST_CASE("a block whose thread count overflows size_t is too large, not empty") {
    const std::size_t big = std::size_t{1} << 32;  // 2^32 · 2^32 wraps to 0
    const std::size_t most = std::numeric_limits<std::size_t>::max();
    CHECK(Dim3{big, big, 1}.volume() == most);
    LaunchLimits l;  // at most 1024 threads per block
    for (Dim3 max_dims : {l.max_block_dims, Dim3{most, most, most}}) {
        l.max_block_dims = max_dims;
        try {
            check_geometry({{1, 1, 1}, {big, big, 1}}, l, "add");
            FAIL("block of 2^64 threads accepted");
        } catch (const InvalidArgument& e) {
            CHECK_FALSE(contains(e.what(), "at least 1"));
            CHECK(contains(e.what(), "at most 1024 per block"));
        }
    }
    l.max_block_size = most;  // no limit on threads per block: 2^65 threads still do not fit
    try {
        check_geometry({{1, 1, 1}, {big, big, 2}}, l, "add");
        FAIL("block of 2^65 threads accepted");
    } catch (const InvalidArgument& e) {
        CHECK(contains(e.what(), "more threads than a size_t counts"));
    }
}

TEST_CASE("shapes: rank 1 or 2, overflow rejected") {
    CHECK(Shape{3, 4}.elements() == 12);
    CHECK(Shape{7}.rows() == 1);
    CHECK(Shape{3, 4}.to_string() == "[3, 4]");
    CHECK_THROWS_AS(Shape({1, 2, 3}), InvalidArgument);
    CHECK_THROWS_AS(Shape(std::vector<std::size_t>{}), InvalidArgument);
    const std::size_t big = std::numeric_limits<std::size_t>::max() / 2;
    try {
        Shape s{big, 3};
        FAIL("overflowing shape accepted");
    } catch (const InvalidArgument& e) {
        CHECK(contains(e.what(), "size_t"));
    }
    CHECK_THROWS_AS(Shape{3}[1], InvalidArgument);
    // An empty shape holds no bytes, however large its other extent.
    CHECK(Shape{big, 0}.elements() == 0);
    CHECK(Shape{0, std::numeric_limits<std::size_t>::max()}.elements() == 0);
    CHECK_THROWS_AS(Shape({big, 2}), InvalidArgument);
    CHECK(Shape{big / 4}.elements() == big / 4);  // (2^61 − 1) · 8 bytes (f64, the widest dtype) fit
    CHECK_THROWS_AS(Shape{big / 4 + 1}, InvalidArgument);
}

TEST_CASE("buffers round-trip and reject out-of-range copies") {
    auto d = open_device("host");
    Buffer b(d, 16);
    float in[4] = {1, 2, 3, 4}, out[4] = {};
    b.upload(in, 16);
    b.download(out, 16);
    CHECK(out[3] == 4);
    CHECK_THROWS_AS(b.upload(in, 16, 4), InvalidArgument);
    CHECK_THROWS_AS(b.download(out, 4, 16), InvalidArgument);
    CHECK_THROWS_AS(b.upload(in, 8, std::numeric_limits<std::size_t>::max()), InvalidArgument);
    Buffer empty;
    CHECK_THROWS_AS(empty.device(), InvalidArgument);
    Buffer moved = std::move(b);
    moved.download(out, 16);
    CHECK(out[0] == 1);
    CHECK(b.size() == 0);
}

TEST_CASE("tensor upload/download validate element counts") {
    auto d = open_device("host");
    Tensor t(d, {2, 3});
    CHECK_THROWS_AS(t.upload(std::vector<float>(5)), InvalidArgument);
    CHECK_THROWS_AS(Tensor::from_host(d, {2, 2}, std::vector<float>(3)), InvalidArgument);
    t.upload(std::vector<float>{1, 2, 3, 4, 5, 6});
    CHECK(t.download()[5] == 6);
}

TEST_CASE("a tensor over host memory shares it with the host backend's kernels, both ways") {
    auto d = open_device("host");
    std::mt19937 rng(std::random_device{}());
    std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
    const std::size_t rows = 5, cols = 7, n = rows * cols;
    std::vector<float> a(n), b(n), c(n, 0.0f);
    for (std::size_t i = 0; i < n; ++i) a[i] = dist(rng), b[i] = dist(rng);
    auto owner = std::make_shared<int>(0);
    {
        Tensor ta = Tensor::over_host_memory(d, a.data(), {rows, cols}, DType::f32, owner);
        Tensor tb = Tensor::over_host_memory(d, b.data(), {rows, cols}, DType::f32);
        Tensor tc = Tensor::over_host_memory(d, c.data(), {rows, cols}, DType::f32);
        CHECK(owner.use_count() == 2);  // held for the tensor's life
        CHECK(ta.handle() == a.data());
        CHECK(ta.buffer().host_memory() == a.data());
        CHECK(d->memory_info().in_use == 0);  // wrapped, not allocated
        ops::add(ta, tb, tc);
        d->synchronize();
        for (std::size_t i = 0; i < n; ++i) CHECK(c[i] == static_cast<float>(double(a[i]) + double(b[i])));
        a[3] = 100.0f;  // a host write is what the next op reads
        ops::relu(ta, tc);
        d->synchronize();
        CHECK(c[3] == 100.0f);
        CHECK(c[0] == std::max(a[0], 0.0f));
        tc.upload(std::vector<float>(n, -2.0f));  // and a copy into the tensor lands in c
        CHECK(c[n - 1] == -2.0f);
        Tensor moved = std::move(ta);
        CHECK(moved.handle() == a.data());
        CHECK(owner.use_count() == 2);
    }
    CHECK(owner.use_count() == 1);  // released with the last tensor
}

TEST_CASE("tensors over overlapping host memory are aliases; misaligned or null memory is refused") {
    auto d = open_device("host");
    std::vector<float> mem(64, 1.0f);
    Tensor head = Tensor::over_host_memory(d, mem.data(), {32}, DType::f32);
    Tensor shifted = Tensor::over_host_memory(d, mem.data() + 16, {32}, DType::f32);
    Tensor tail = Tensor::over_host_memory(d, mem.data() + 32, {32}, DType::f32);
    Tensor own(d, {32});
    CHECK(head.buffer().overlaps(shifted.buffer()));
    CHECK(!head.buffer().overlaps(tail.buffer()));
    CHECK(!head.buffer().overlaps(own.buffer()));
    CHECK_THROWS_AS(ops::add(head, own, shifted), InvalidArgument);  // shifted's output overlaps head
    CHECK_THROWS_AS(ops::run(Op::add, {&head, &own}, {&shifted}), InvalidArgument);  // by the table alike
    ops::run(Op::add, {&head, &own}, {&head});  // in place: accepted
    ops::add(head, own, tail);  // disjoint: accepted
    CHECK_THROWS_AS(Tensor::over_host_memory(d, reinterpret_cast<char*>(mem.data()) + 2, {4}, DType::f32),
                    InvalidArgument);
    CHECK_THROWS_AS(Tensor::over_host_memory(d, nullptr, {4}, DType::f32), InvalidArgument);
    // Every other backend's devices refuse, naming why (skipped where none opens).
    for (const auto& other : other_backend_devices()) {
        try {
            Tensor::over_host_memory(other, mem.data(), {4}, DType::f32);
            FAIL_CHECK(other->selector() << " wrapped host memory; only the host backend addresses it in place");
        } catch (const Unsupported& e) {
            CHECK(contains(e.what(), "cannot address host memory in place"));
        }
    }
}

TEST_CASE("allocation beyond the device's memory raises OutOfMemory with both sizes") {
    auto d = open_device("host");
    const auto total = d->info().global_memory_bytes;
    try {
        Buffer b(d, total * 2);
        FAIL("allocation succeeded");
    } catch (const OutOfMemory& e) {
        CHECK(contains(e.what(), std::to_string(total * 2)));
        CHECK(contains(e.what(), std::to_string(total)));
    }
}

TEST_CASE("events of another device and unrecorded events are rejected") {
    auto d = open_device("host");
    auto other = get_backend("host").create_device(0);
    auto e1 = d->create_event(), e2 = d->create_event(), e3 = other->create_event();
    CHECK_THROWS_AS(d->elapsed_ms(*e1, *e2), InvalidArgument);
    CHECK_THROWS_AS(e1->synchronize(), InvalidArgument);
    e1->record(d->default_stream());
    e2->record(d->default_stream());
    CHECK(d->elapsed_ms(*e1, *e2) >= 0.0);
    CHECK_THROWS_AS(e3->record(d->default_stream()), InvalidArgument);
}

TEST_CASE("selectors name devices by index, or by platform and type, and round-trip") {
    const Selector a = parse_selector(" Host:PoCL:1 ");
    CHECK(a.backend == "host");  // the syntax is every backend's; find_device resolves it
    CHECK(a.index == -1);
    CHECK(a.device == "pocl:1");
    CHECK(a.to_string() == "host:pocl:1");
    CHECK(parse_selector("host:gpu").device == "gpu");
    CHECK(parse_selector("host:intel").to_string() == "host:intel");
    CHECK(parse_selector("host:3").index == 3);
    CHECK(parse_selector("host:3").device.empty());
    for (const char* bad : {"host:", "host:pocl:", "host:pocl:x", "host:a:1:2", "host:-1", "host:a b",
                            "auto:gpu", "host:1234567", "host:1abc", "host:_x"})
        CHECK_THROWS_AS(parse_selector(bad), InvalidArgument);
    CHECK_THROWS_AS(parse_selector("host:" + std::string(65, 'x')), InvalidArgument);
}

TEST_CASE("BACKEND:local parses but a single process refuses it, pointing at the MPI tools") {
    for (const char* text : {"host:local", "HOST:Local", "auto:local"}) {
        CAPTURE(text);
        const Selector s = parse_selector(text);
        CHECK(s.device == "local");
        CHECK(parse_selector(s.to_string()).device == "local");
        try {
            open_device(text);
            FAIL("a :local selector opened a device outside MPI");
        } catch (const InvalidArgument& e) {
            CHECK(contains(e.what(), "MPI rank"));
            CHECK(contains(e.what(), "accel_mpi"));
        }
    }
    CHECK_THROWS_AS(parse_selector("auto:local:1"), InvalidArgument);
}

TEST_CASE("device identity: UUID and PCI text, host name, one physical device through two backends") {
    const unsigned char zero[16] = {};
    CHECK(format_uuid(zero).empty());
    const unsigned char bytes[16] = {0x5e, 0x3a, 0x0c, 0x0e, 0x12, 0x34, 0xab, 0xcd,
                                     0x00, 0x01, 0xfe, 0xff, 0x10, 0x20, 0x30, 0x40};
    CHECK(format_uuid(bytes) == "5e3a0c0e-1234-abcd-0001-feff10203040");
    CHECK(format_pci_bus_id(0, 0, 0, 0).empty());
    CHECK(format_pci_bus_id(0, 0x65, 0, 0) == "0000:65:00.0");
    CHECK(format_pci_bus_id(0x10, 0xa3, 0x1f, 7) == "0010:a3:1f.7");

    // The host backend's device carries this machine's name, filled by libaccel.
    const auto host = open_device("host");
    CHECK(host->info().host == host_name());
    CHECK(!host->info().host.empty());

    DeviceInfo cuda, ocl, other, elsewhere;
    cuda.backend = "cuda", cuda.index = 0, cuda.host = "n1", cuda.uuid = "5e3a0c0e-1234-abcd-0001-feff10203040";
    cuda.pci_bus_id = "0000:65:00.0";
    ocl.backend = "opencl", ocl.index = 2, ocl.host = "n1", ocl.pci_bus_id = "0000:65:00.0";  // no UUID extension
    other = cuda, other.index = 1, other.uuid = "00000000-0000-0000-0000-000000000001", other.pci_bus_id = "0000:66:00.0";
    elsewhere = cuda, elsewhere.host = "n2";
    CHECK(same_physical_device(cuda, ocl));        // one PCI address
    CHECK(!same_physical_device(cuda, other));     // two GPUs
    CHECK(!same_physical_device(cuda, elsewhere)); // same UUID text on another machine: not the same device
    ocl.pci_bus_id.clear(), ocl.uuid = cuda.uuid;
    CHECK(same_physical_device(cuda, ocl));        // one UUID
    DeviceInfo cpu1, cpu2;                          // nothing known: never "the same"
    cpu1.backend = "host", cpu2.backend = "kokkos";
    CHECK(!same_physical_device(cpu1, cpu2));
}

TEST_CASE("OpenCL simulators are opened only by name: no index, auto or `all` reaches one") {
    // With Oclgrind registered (OCL_ICD_VENDORS holding oclgrind.icd, as the
    // test opencl.simulators-by-name-only runs it), a bare `opencl`, `opencl:N`
    // and every device the tools' `all` lists must be real devices.
    BackendStatus opencl;
    for (const auto& st : backend_statuses())
        if (st.name == "opencl") opencl = st;
    if (!opencl.availability.available) return;  // no OpenCL here: nothing to check
    const auto is_oclgrind = [](const Device& d) {
        const std::string text = d.info().name + " " + d.info().vendor + " " + d.info().stable_selector;
        return text.find("Oclgrind") != std::string::npos || text.find("oclgrind") != std::string::npos;
    };
    for (int i = 0; i < opencl.availability.device_count; ++i)
        CHECK_MESSAGE(!is_oclgrind(*open_device("opencl:" + std::to_string(i))), "opencl:" << i << " is Oclgrind");
    if (opencl.availability.device_count > 0) {
        CHECK_FALSE(is_oclgrind(*open_device("opencl")));
    }
    const char* vendors = std::getenv("OCL_ICD_VENDORS");
    std::FILE* icd = vendors ? std::fopen((std::string(vendors) + "/oclgrind.icd").c_str(), "r") : nullptr;
    if (!icd) return;  // Oclgrind not registered: the rest needs it
    std::fclose(icd);
    const auto& named = opencl.availability.named_only;
    REQUIRE(named == std::vector<std::string>{"opencl:oclgrind:0"});
    CHECK(is_oclgrind(*open_device("opencl:oclgrind")));
    CHECK(contains(opencl.summary(), "opened only by name, opencl:oclgrind:0"));
    // The index past the real devices is out of range, and the error says how to open the simulator.
    try {
        open_device("opencl:" + std::to_string(opencl.availability.device_count));
        FAIL("an index past the real devices opened something");
    } catch (const BackendUnavailable& e) {
        CHECK(contains(e.what(), "is out of range"));
        CHECK(contains(e.what(), "opened only by name, opencl:oclgrind:0"));
    }
}
