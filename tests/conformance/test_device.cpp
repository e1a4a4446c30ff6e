// The device interface itself: info, memory, copies, streams, events.
#include "support/check.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>
#include <vector>

using namespace accel;
using namespace accel_test;

TEST_CASE("device info is filled in") {
    const DeviceInfo& i = device()->info();
    CHECK(!i.backend.empty());
    CHECK(!i.name.empty());
    CHECK(!i.timer.empty());
    CHECK(i.compute_units > 0);
    CHECK(i.global_memory_bytes > 0);
    CHECK(i.limits.max_block_size > 0);
    MESSAGE(i.backend << ": " << i.name << " (" << i.vendor << "), " << i.compute_units << " compute units, "
                      << i.global_memory_bytes / (1024 * 1024) << " MiB, timer " << i.timer);
}

TEST_CASE("blocking copies round-trip at offsets, device to device included") {
    auto g = rng(40);
    const std::size_t n = 10007;
    auto src = uniform(g, n);
    Buffer a(device(), n * 4), b(device(), n * 4);
    a.upload(src.data(), n * 4);
    device()->copy_device_to_device(b, 0, a, 0, n * 4);
    std::vector<float> back(n, 0.0f);
    b.download(back.data(), n * 4);
    CHECK(std::memcmp(back.data(), src.data(), n * 4) == 0);
    // Partial copies at odd byte offsets.
    std::vector<float> part(100, -1.0f);
    device()->copy_device_to_device(b, 4 * 3, a, 4 * 500, 4 * 100);
    b.download(part.data(), 4 * 100, 4 * 3);
    CHECK(std::memcmp(part.data(), src.data() + 500, 400) == 0);
    std::vector<char> bytes(7);
    a.download(bytes.data(), 7, 5);
    CHECK(std::memcmp(bytes.data(), reinterpret_cast<const char*>(src.data()) + 5, 7) == 0);
}

namespace {

std::vector<unsigned char> random_bytes(std::mt19937_64& g, std::size_t n) {
    std::vector<unsigned char> v(n);
    for (auto& b : v) b = static_cast<unsigned char>(g());
    return v;
}

// Copies each (src offset, dst offset, length) of `copies` from `src` to its
// own slot of a buffer of other random bytes (slot i at i * slot + its dst
// offset) on one stream, then compares the whole destination with the same
// copies done by memcpy on the host: a wrong byte in the range, or any byte
// written outside it, fails. `what` names the set.
struct Copy {
    std::size_t soff, doff, bytes;
};
void check_copies(std::mt19937_64& g, const std::vector<Copy>& copies, std::size_t slot, const std::string& what) {
    std::size_t src_bytes = 1;
    for (const Copy& c : copies) src_bytes = std::max(src_bytes, c.soff + c.bytes);
    const auto src = random_bytes(g, src_bytes);
    auto want = random_bytes(g, slot * copies.size());
    Buffer a(device(), src.size()), b(device(), want.size());
    a.upload(src.data(), src.size());
    b.upload(want.data(), want.size());
    auto stream = device()->create_stream();
    for (std::size_t i = 0; i < copies.size(); ++i) {
        const Copy& c = copies[i];
        device()->copy_device_to_device_async(b, i * slot + c.doff, a, c.soff, c.bytes, *stream);
        std::memcpy(want.data() + i * slot + c.doff, src.data() + c.soff, c.bytes);
    }
    stream->synchronize();
    std::vector<unsigned char> got(want.size());
    b.download(got.data(), got.size());
    std::size_t bad = 0;
    std::ostringstream first;
    for (std::size_t i = 0; i < copies.size(); ++i)
        for (std::size_t k = 0; k < slot; ++k)
            if (got[i * slot + k] != want[i * slot + k] && bad++ < 4)
                first << "\n  copy of " << copies[i].bytes << " bytes from " << copies[i].soff << " to "
                      << copies[i].doff << ": byte " << k << " of its slot is " << int(got[i * slot + k]) << ", not "
                      << int(want[i * slot + k]);
    INFO(what << ": " << bad << " wrong bytes after " << copies.size() << " copies" << first.str());
    CHECK(bad == 0);
}

}  // namespace

TEST_CASE("device-to-device copies of every length and byte offset match memcpy on fresh random bytes") {
    auto g = rng(45);
    // Lengths around 4- and 16-byte units (0 and odd counts included) at
    // every source and destination offset modulo 16, and one past it.
    const std::size_t lengths[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 20, 31, 32, 33, 47, 48, 63, 64, 65, 255, 1027};
    const std::size_t offsets[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 35};
    std::vector<Copy> small;
    for (std::size_t so : offsets)
        for (std::size_t d : offsets)
            for (std::size_t n : lengths) small.push_back({so, d, n});
    check_copies(g, small, 1027 + 64, "short copies");
    // Long ones: many units and the bytes either side, at a few offset pairs.
    std::vector<Copy> longer;
    for (std::size_t n : {std::size_t{1} << 20, (std::size_t{1} << 20) + 3, 3 * (std::size_t{1} << 20) + 13})
        for (std::size_t so : {0, 1, 4, 16, 6})
            for (std::size_t d : {0, 3, 4, 16, 9}) longer.push_back({so, d, n});
    const std::size_t longer_slot = 3 * (std::size_t{1} << 20) + 64;  // 75 slots: about 236 MB in all
    if (runs_at_size(longer.size() * longer_slot / 4, "copies of 1 to 3 MiB"))
        check_copies(g, longer, longer_slot, "copies of 1 to 3 MiB");
    // Past what one storage-buffer binding reaches on some devices (128 MiB
    // on lavapipe): the copy runs in segments.
    const std::size_t huge = (std::size_t{136} << 20) + 7;
    if (runs_at_size(huge / 4, "a copy of 136 MiB"))
        check_copies(g, {{5, 3, huge}, {16, 0, huge - 7}}, huge + 32, "copies of 136 MiB");
    // Within one buffer, disjoint ranges; and the blocking form.
    const auto bytes = random_bytes(g, 4096);
    Buffer one(device(), bytes.size());
    one.upload(bytes.data(), bytes.size());
    device()->copy_device_to_device(one, 2001, one, 3, 1500);
    auto want = bytes;
    std::memcpy(want.data() + 2001, bytes.data() + 3, 1500);
    std::vector<unsigned char> got(bytes.size());
    one.download(got.data(), got.size());
    CHECK(got == want);
}

TEST_CASE("many small buffers alive at once keep their own contents") {
    // Backends that place small buffers in shared memory blocks (Vulkan)
    // must never hand out overlapping ranges, also after frees leave holes.
    auto g = rng(45);
    std::uniform_int_distribution<std::size_t> size_of(1, 6000);
    struct Live {
        std::unique_ptr<Buffer> buffer;
        std::vector<unsigned char> bytes;
    };
    auto fresh = [&] {
        Live l;
        l.bytes.resize(size_of(g));
        for (auto& c : l.bytes) c = static_cast<unsigned char>(g());
        l.buffer = std::make_unique<Buffer>(device(), l.bytes.size());
        l.buffer->upload(l.bytes.data(), l.bytes.size());
        return l;
    };
    auto all_intact = [&](const std::vector<Live>& live) {
        std::size_t bad = 0;
        for (const auto& l : live) {
            std::vector<unsigned char> back(l.bytes.size());
            l.buffer->download(back.data(), back.size());
            bad += back != l.bytes;
        }
        return bad;
    };
    std::vector<Live> live;
    for (int i = 0; i < 1500; ++i) live.push_back(fresh());
    CHECK(all_intact(live) == 0);
    // Free every other one (holes of every size), then fill them again.
    for (std::size_t i = 0; i < live.size(); i += 2) live[i] = fresh();
    CHECK(all_intact(live) == 0);
    live.clear();
    const auto m = device()->memory_info();
    MESSAGE("after freeing all: " << m.in_use << " bytes in use, " << m.cached << " cached");
}

TEST_CASE("asynchronous copies and ops on a created stream, timed with events") {
    auto g = rng(41);
    const std::size_t n = size_within_cap(1 << 18, 4099, "copies and ops on a stream");
    auto a = uniform(g, n), b = uniform(g, n);
    auto stream = device()->create_stream();
    Tensor ta(device(), {n}), tb(device(), {n}), tc(device(), {n});
    auto start = device()->create_event(), stop = device()->create_event();
    start->record(*stream);
    device()->copy_host_to_device_async(ta.buffer(), 0, a.data(), n * 4, *stream);
    device()->copy_host_to_device_async(tb.buffer(), 0, b.data(), n * 4, *stream);
    ops::Options o;
    o.stream = stream.get();
    ops::add(ta, tb, tc, o);
    Tensor td(device(), {n});
    device()->copy_device_to_device_async(td.buffer(), 0, tc.buffer(), 0, n * 4, *stream);
    std::vector<float> out(n, std::numeric_limits<float>::quiet_NaN());
    device()->copy_device_to_host_async(out.data(), td.buffer(), 0, n * 4, *stream);
    stop->record(*stream);
    stop->synchronize();
    stream->synchronize();
    expect_close(out, reference::add(a, b), threshold(Op::add), "add on a stream");
    const double ms = device()->elapsed_ms(*start, *stop);
    CHECK(ms >= 0.0);
    CHECK(ms < 60000.0);
}

TEST_CASE("elapsed_ms with the events swapped is rejected, not a negative time") {
    const std::size_t n = size_within_cap(1 << 20, 4099, "swapped events");
    auto a = Tensor::from_host(device(), {n}, std::vector<float>(n, 1.0f));
    Tensor c(device(), {n});
    auto stream = device()->create_stream();
    ops::Options o;
    o.stream = stream.get();
    auto start = device()->create_event(), stop = device()->create_event();
    start->record(*stream);
    for (int i = 0; i < 20; ++i) ops::add(a, a, c, o);  // enough work for the timer to see
    stop->record(*stream);
    stream->synchronize();
    REQUIRE(device()->elapsed_ms(*start, *stop) > 0.0);
    try {
        device()->elapsed_ms(*stop, *start);
        FAIL("elapsed_ms(end, start) returned a time");
    } catch (const InvalidArgument& e) {
        CHECK(std::string(e.what()).find("recorded before the start event") != std::string::npos);
    }
}

TEST_CASE("copies past a buffer's end are rejected and write nothing") {
    Buffer a(device(), 64);
    std::vector<char> host(64, 7);
    a.upload(host.data(), 64);
    CHECK_THROWS_AS(a.upload(host.data(), 8, 60), InvalidArgument);
    CHECK_THROWS_AS(a.download(host.data(), 65, 0), InvalidArgument);
    Buffer b(device(), 32);
    CHECK_THROWS_AS(device()->copy_device_to_device(b, 0, a, 40, 32), InvalidArgument);
    std::vector<char> back(64, 0);
    a.download(back.data(), 64);
    CHECK(back == host);
}

TEST_CASE("an allocation larger than the device raises OutOfMemory naming the sizes") {
    const std::uint64_t total = device()->info().global_memory_bytes;
    try {
        Buffer huge(device(), static_cast<std::size_t>(total) + 4096);
        FAIL("allocation beyond global memory succeeded");
    } catch (const OutOfMemory& e) {
        const std::string msg = e.what();
        CHECK(msg.find(std::to_string(total + 4096)) != std::string::npos);
        CHECK(msg.find(std::to_string(total)) != std::string::npos);
    }
}

TEST_CASE("empty kernel launches are ordered with ops on a stream") {
    if (!device()->probes()) {
        MESSAGE("skipped: " << device()->selector() << " has no benchmark probes (Device::probes)");
        return;
    }
    auto g = rng(42);
    const std::size_t n = 4097;
    auto a = uniform(g, n);
    auto stream = device()->create_stream();
    auto ta = Tensor::from_host(device(), {n}, a);
    auto tc = poisoned(device(), {n});
    ops::Options o;
    o.stream = stream.get();
    for (int i = 0; i < 100; ++i) diagnostics::launch_empty(*device(), *stream);
    ops::add(ta, ta, tc, o);
    diagnostics::launch_empty(*device(), *stream);
    stream->synchronize();
    expect_close(tc.download(), reference::add(a, a), threshold(Op::add), "add after empty launches");
    auto other = get_backend("host").create_device(0);
    if (other.get() != device().get()) CHECK_THROWS_AS(diagnostics::launch_empty(*device(), other->default_stream()), InvalidArgument);
}

TEST_CASE("the device's stable selector opens the same device") {
    const auto& d = device();
    const std::string stable = d->info().stable_selector.empty() ? d->selector() : d->info().stable_selector;
    INFO("stable selector " << stable << " of " << d->selector());
    CHECK(open_device(stable).get() == d.get());
    CHECK(open_device(parse_selector(stable).to_string()).get() == d.get());
}

TEST_CASE("devices named by their backend's selector forms resolve, or say what there is") {
    const auto& d = device();
    const std::string backend = d->info().backend;
    std::string forms;  // the plugin's selector forms beyond BACKEND[:N]
    for (const BackendStatus& st : backend_statuses())
        if (st.name == backend) forms = st.selector_forms;
    if (forms.empty()) {
        // A backend that names its devices by index only: a name is the user's error.
        CHECK_THROWS_AS(open_device(backend + ":gpu"), InvalidArgument);
        return;
    }
    INFO(backend << " takes " << forms << "; stable selector " << d->info().stable_selector);
    if (d->info().stable_selector.empty()) {
        // Forms but no device names (cuda:gpu, hip:gpu): the form opens a GPU,
        // any other name is refused.
        if (forms.find(backend + ":gpu") != std::string::npos)
            CHECK(open_device(backend + ":gpu")->info().type == "gpu");
        CHECK_THROWS_AS(open_device(backend + ":no-such-device"), Error);
        return;
    }
    // BACKEND:PIECE[:I] (a platform or driver name piece) and BACKEND:gpu|cpu.
    const Selector stable = parse_selector(d->info().stable_selector);
    const std::string piece = stable.device.substr(0, stable.device.find(':'));
    const std::string first = backend + ":" + piece + ":0";
    CHECK(open_device(first)->info().stable_selector == first);
    if (d->info().type == "cpu") CHECK(open_device(backend + ":cpu")->info().type == "cpu");
    try {
        open_device(backend + ":no-such-device");
        FAIL("a device nobody has was opened");
    } catch (const BackendUnavailable& e) {
        CHECK(std::string(e.what()).find("no-such-device") != std::string::npos);
        CHECK(std::string(e.what()).find(d->info().stable_selector) != std::string::npos);  // lists what there is
    }
    CHECK_THROWS_AS(open_device(backend + ":" + piece + ":999"), BackendUnavailable);
}
