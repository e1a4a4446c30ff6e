// Memory pressure on the device of ACCEL_BACKEND: with a cap on what accel
// may hold there (Device::set_memory_limit, so that CPU devices run out
// too), allocate 1 MiB tensors until OutOfMemory; the error names the bytes
// asked, in use and cached; free half and go on with correct results; then
// allocate 2 MiB tensors (another size class: a caching allocator's 1 MiB
// blocks cannot serve them, so it must release them first) into the freed room.
#include "support/check.hpp"

using namespace accel;
using namespace accel_test;

TEST_CASE("memory pressure: out of memory under a cap, free half, go on") {
    std::shared_ptr<Device> d = default_device();
    constexpr std::uint64_t kMiB = 1 << 20;
    constexpr std::size_t kFloatsPerMiB = kMiB / sizeof(float);
    const MemoryInfo before = d->memory_info();
    const std::uint64_t cap = before.in_use + before.cached + 48 * kMiB + kMiB / 2;
    struct Uncap {
        Device& d;
        ~Uncap() { d.set_memory_limit(0); }
    } uncap{*d};
    d->set_memory_limit(cap);
    CHECK(d->memory_info().limit == cap);

    std::vector<Tensor> held;
    std::string error;
    for (int i = 0; i < 100 && error.empty(); ++i) {
        try {
            held.emplace_back(d, Shape{kFloatsPerMiB});
        } catch (const OutOfMemory& e) {
            error = e.what();
        }
    }
    REQUIRE_MESSAGE(!error.empty(), "no OutOfMemory under a cap of " << cap << " bytes");
    MESSAGE(error);
    CHECK(held.size() >= 44);
    CHECK(held.size() <= 48);
    CHECK(error.find(std::to_string(kMiB) + " bytes asked") != std::string::npos);
    CHECK(error.find("in use") != std::string::npos);
    CHECK(error.find("cached") != std::string::npos);
    CHECK(error.find(std::to_string(cap)) != std::string::npos);
    const MemoryInfo full = d->memory_info();
    CHECK(full.in_use >= before.in_use + held.size() * kMiB);
    CHECK(full.peak_in_use >= full.in_use);

    // Free half; what is left still holds its data, and new work is correct.
    auto g = rng(101);
    const auto a = uniform(g, kFloatsPerMiB);
    held[0].upload(a);
    const std::size_t freed = held.size() / 2;
    held.erase(held.end() - static_cast<std::ptrdiff_t>(freed), held.end());
    CHECK(d->memory_info().in_use <= full.in_use - freed * kMiB);
    Tensor b = Tensor::from_host(d, Shape{kFloatsPerMiB}, uniform(g, kFloatsPerMiB)), c(d, Shape{kFloatsPerMiB});
    const auto bh = b.download();
    ops::add(held[0], b, c);
    expect_close(c.download(), reference::add(a, bh), threshold(Op::add), "add after freeing half");

    // Another size class into the freed room: a cache of 1 MiB blocks must be
    // released to make it.
    std::size_t big = 0;
    std::vector<Tensor> more;
    for (int i = 0; i < 100; ++i) {
        try {
            more.emplace_back(d, Shape{2 * kFloatsPerMiB});
            ++big;
        } catch (const OutOfMemory&) {
            break;
        }
    }
    CHECK(big + 3 >= (freed - 2) / 2);  // the freed half, less b and c, in 2 MiB pieces
    more.clear();
    held.clear();
    d->set_memory_limit(0);
    Tensor after(d, Shape{4 * kFloatsPerMiB});  // uncapped again
    CHECK(after.elements() == 4 * kFloatsPerMiB);
}
