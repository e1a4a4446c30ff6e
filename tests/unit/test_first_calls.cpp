// The calls a new user writes first, in the forms they write them: each
// compiles as C++17 and does what it says (on the host backend).
#include <accel/accel.hpp>

#include <doctest/doctest.h>

#include <optional>

using namespace accel;

TEST_CASE("from_host takes brace lists: float literals give f32, double literals f64") {
    auto dev = open_device("host");
    auto a = Tensor::from_host(dev, {4}, {1.f, 2.f, 3.f, 4.f});
    CHECK(a.dtype() == DType::f32);
    CHECK(a.download() == std::vector<float>{1, 2, 3, 4});
    auto b = Tensor::from_host(dev, {2, 2}, {1.0, 2.0, 3.0, 4.0});
    CHECK(b.dtype() == DType::f64);
    CHECK(b.download_as<double>() == std::vector<double>{1, 2, 3, 4});
    auto h = Tensor::from_host(dev, {2}, {1.f, 2.f}, DType::f16);  // rounded to a dtype
    CHECK(h.dtype() == DType::f16);
    CHECK_THROWS_AS(Tensor::from_host(dev, {3}, {1.f, 2.f}), InvalidArgument);
}

TEST_CASE("streams and events as create_stream / create_event return them; an op on a stream in one expression") {
    auto dev = open_device("host");
    CHECK(dev->name() == dev->info().name);
    CHECK(!dev->name().empty());
    auto stream = dev->create_stream();
    auto start = dev->create_event(), stop = dev->create_event();
    auto a = Tensor::from_host(dev, {3}, {1.f, 2.f, 3.f}), b = Tensor::from_host(dev, {3}, {10.f, 20.f, 30.f});
    Tensor c(dev, {3});
    start->record(stream);
    ops::add(a, b, c, stream);   // the handle
    ops::add(c, b, c, *stream);  // or the stream itself
    stop->record(stream);
    stream->synchronize();
    CHECK(dev->elapsed_ms(start, stop) >= 0.0);
    CHECK(c.download() == std::vector<float>{21, 42, 63});
    std::unique_ptr<Stream> none;
    CHECK_THROWS_AS(start->record(none), InvalidArgument);
    std::unique_ptr<Event> no_event;
    CHECK_THROWS_AS(dev->elapsed_ms(start, no_event), InvalidArgument);
}

TEST_CASE("asynchronous copies take tensors") {
    auto dev = open_device("host");
    auto stream = dev->create_stream();
    Tensor t(dev, {4});
    const std::vector<float> in{1, 2, 3, 4};
    std::vector<float> out(4);
    dev->copy_host_to_device_async(t, 0, in.data(), t.bytes(), *stream);
    dev->copy_device_to_host_async(out.data(), t, 0, t.bytes(), *stream);
    stream->synchronize();
    CHECK(out == in);
}

TEST_CASE("dense takes its bias as a tensor or std::nullopt") {
    auto dev = open_device("host");
    auto x = Tensor::from_host(dev, {1, 2}, {1.f, 2.f});
    auto w = Tensor::from_host(dev, {1, 2}, {3.f, 4.f});
    auto bias = Tensor::from_host(dev, {1}, {0.5f});
    Tensor y(dev, {1, 1});
    ops::dense(x, w, bias, y);
    CHECK(y.download() == std::vector<float>{11.5f});
    ops::dense(x, w, std::nullopt, y, Activation::relu, ops::PathChoice::native);
    CHECK(y.download() == std::vector<float>{11.0f});
}
