// Interop with Kokkos both ways (accel/interop/kokkos.hpp), on kokkos:0: a
// View the program made, wrapped as a tensor that ops::add writes in place;
// a tensor's memory read through an unmanaged View; a stream over the
// program's own execution space instance.
#include "support/check.hpp"

#include <accel/interop/kokkos.hpp>

using namespace accel;
using namespace accel_test;
namespace kk = accel::interop::kokkos;

TEST_CASE("a Kokkos View the program made is a tensor accel's ops use in place, and back") {
    if (device()->info().backend != "kokkos") {
        MESSAGE("skipped: " << device()->selector() << " is not a Kokkos device");
        return;
    }
    auto g = rng(4301);
    const std::size_t n = 1000 + g() % 3000;
    const auto a = uniform(g, n), b = uniform(g, n);
    Kokkos::View<float*> out("program's output", n);
    {
        auto stream = kk::stream_over(*device(), kk::ExecSpace());
        Tensor A = Tensor::from_host(device(), {n}, a), B = Tensor::from_host(device(), {n}, b);
        Tensor Out = kk::tensor_over(device(), out.data(), {n}, DType::f32,
                                     std::make_shared<Kokkos::View<float*>>(out));
        ops::Options o;
        o.stream = stream.get();
        ops::add(A, B, Out, o);
        stream->synchronize();
        // The tensor's own memory through an unmanaged View, on the stream's instance.
        Kokkos::View<const float*, Kokkos::MemoryUnmanaged> av(kk::data<const float>(A), n);
        CHECK(av.data() == kk::data<const float>(A));
        CHECK(&kk::execution_space(*stream) != nullptr);
    }
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += host(i) != a[i] + b[i];
    CHECK_MESSAGE(wrong == 0, wrong << " of " << n << " elements of the program's View not a + b");
}

TEST_CASE("a Kokkos device of another execution space refuses the default space's instance, naming its own") {
    if (device()->info().backend != "kokkos") {
        MESSAGE("skipped: " << device()->selector() << " is not a Kokkos device");
        return;
    }
    int checked = 0;
    for (int i = 1;; ++i) {
        std::shared_ptr<Device> d;
        try {
            d = open_device("kokkos:" + std::to_string(i));
        } catch (const BackendUnavailable&) {
            break;  // past the last space
        }
        std::string space;
        for (const auto& fact : d->info().extra)
            if (fact.first == "execution space") space = fact.second;
        if (space == kk::ExecSpace::name()) continue;
        INFO(d->selector() << " runs on " << space);
        try {
            kk::execution_space(d->default_stream());
            FAIL("the default space's instance was handed out for another space's stream");
        } catch (const InvalidArgument& e) {
            CHECK(std::string(e.what()).find(space) != std::string::npos);
        }
        CHECK_THROWS_AS(kk::stream_over(*d, kk::ExecSpace()), InvalidArgument);
        ++checked;
    }
    if (checked == 0) MESSAGE("skipped: this Kokkos has one execution space, " << kk::ExecSpace::name());
}
