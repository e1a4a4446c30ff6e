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
