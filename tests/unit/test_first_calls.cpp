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

TEST_CASE("tensors copy asynchronously on a stream, checked as the blocking copies") {
    auto dev = open_device("host");
    auto stream = dev->create_stream();
    Tensor t(dev, {4});
    const std::vector<float> in{1.5f, -2.25f, 3e-3f, -0.0f};
    std::vector<float> out(4);
    t.upload_async(in.data(), in.size(), *stream);
    t.download_async(out.data(), out.size(), *stream);
    stream->synchronize();
    CHECK(out == in);
    const std::vector<double> wrong_type(4);
    CHECK_THROWS_AS(t.upload_async(wrong_type.data(), wrong_type.size(), *stream), InvalidArgument);
    CHECK_THROWS_AS(t.upload_async(in.data(), 3, *stream), InvalidArgument);
    std::shared_ptr<Device> other = get_backend("host").create_device(0);  // a second host device
    auto foreign = other->create_stream();
    CHECK_THROWS_AS(t.download_async(out.data(), out.size(), *foreign), InvalidArgument);
}

TEST_CASE("read_handle reads a live handle of the device and nothing else") {
    auto dev = open_device("host");
    const std::vector<float> in{1, -2, 3.5f, 4, -5.25f, 6, 7e-5f, 8};
    Tensor t = Tensor::from_host(dev, {8}, in);
    std::vector<float> out(3);
    dev->read_handle(out.data(), t.handle(), 2 * sizeof(float), 3 * sizeof(float), dev->default_stream());
    CHECK(out == std::vector<float>(in.begin() + 2, in.begin() + 5));
    CHECK_THROWS_AS(dev->read_handle(out.data(), t.handle(), 6 * sizeof(float), 3 * sizeof(float),
                                     dev->default_stream()),
                    InvalidArgument);  // past the end
    float local = 0;
    CHECK_THROWS_AS(dev->read_handle(out.data(), &local, 0, sizeof(float), dev->default_stream()),
                    InvalidArgument);  // not handed out by the device
    std::shared_ptr<Device> other = get_backend("host").create_device(0);  // a second host device
    Tensor elsewhere = Tensor::from_host(other, {8}, in);
    CHECK_THROWS_AS(dev->read_handle(out.data(), elsewhere.handle(), 0, sizeof(float), dev->default_stream()),
                    InvalidArgument);  // another device's memory
    std::vector<float> shared = in;
    Tensor mapped = Tensor::over_host_memory(dev, shared.data(), {8}, DType::f32);
    dev->read_handle(out.data(), mapped.handle(), 0, 3 * sizeof(float), dev->default_stream());
    CHECK(out == std::vector<float>(in.begin(), in.begin() + 3));
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
