// The functions ops registers for core to call (accel_internal/ops_layer.hpp),
// and the one core API that needs them: Tensor::to(DType).
#include <accel/error.hpp>
#include <accel/tensor.hpp>

#include <accel_internal/ops_layer.hpp>

#include <atomic>

namespace accel {
namespace ops_layer {

namespace {
std::atomic<CheckStarter> g_check_starter{nullptr};
std::atomic<Converter> g_converter{nullptr};
}  // namespace

void register_check_starter(CheckStarter fn) noexcept { g_check_starter.store(fn); }
void register_converter(Converter fn) noexcept { g_converter.store(fn); }
CheckStarter check_starter() noexcept { return g_check_starter.load(); }
Converter converter() noexcept { return g_converter.load(); }

}  // namespace ops_layer

Tensor Tensor::to(DType dtype) const {
    if (!device_ptr())
        throw InvalidArgument("Tensor::to: the tensor has no storage (default-constructed or moved-from)");
    const ops_layer::Converter convert = ops_layer::converter();
    if (!convert)
        throw Unsupported("Tensor::to(DType) converts with ops::convert, and this program has no op layer (it links "
                          "accel's core alone); link libaccel");
    Tensor out(device_ptr(), shape_, dtype);
    convert(*this, out);
    return out;
}

}  // namespace accel
