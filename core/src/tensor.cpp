#include <accel/error.hpp>
#include <accel/tensor.hpp>

#include <algorithm>
#include <cstdint>
#include <sstream>

namespace accel {

Buffer::Buffer(std::shared_ptr<Device> device, std::size_t bytes) : device_(std::move(device)), bytes_(bytes) {
    if (!device_) throw InvalidArgument("Buffer: no device given (null shared_ptr)");
    handle_ = device_->allocate(bytes);
}

Buffer::Buffer(std::shared_ptr<Device> device, void* data, std::size_t bytes, std::shared_ptr<const void> keep_alive)
    : device_(std::move(device)), bytes_(bytes), host_(data), keep_alive_(std::move(keep_alive)) {
    if (!device_) throw InvalidArgument("Buffer: no device given (null shared_ptr)");
    handle_ = device_->map_host_memory(data, bytes);
    if (!handle_ && bytes > 0)
        throw Unsupported(device_->selector() + " (" + device_->name() +
                          ") cannot address host memory in place, so it cannot wrap " + std::to_string(bytes) +
                          " bytes without a copy; upload them into a tensor of the device instead");
}

Buffer::Buffer(std::shared_ptr<Device> device, const std::string& backend, const NativeMemory& memory,
               std::shared_ptr<const void> keep_alive)
    : device_(std::move(device)), bytes_(memory.bytes), native_(memory), keep_alive_(std::move(keep_alive)) {
    if (!device_) throw InvalidArgument("Buffer: no device given (null shared_ptr)");
    handle_ = device_->adopt_native_memory(backend, memory);
}

void Buffer::release() noexcept {
    if (!device_) return;
    if (host_)
        device_->unmap_host_memory(handle_);
    else if (native_.handle)
        device_->release_native_memory(handle_);
    else
        device_->deallocate(handle_);
}

Buffer::~Buffer() { release(); }

Buffer::Buffer(Buffer&& o) noexcept
    : device_(std::move(o.device_)), handle_(o.handle_), bytes_(o.bytes_), host_(o.host_), native_(o.native_),
      keep_alive_(std::move(o.keep_alive_)) {
    o.handle_ = nullptr;
    o.bytes_ = 0;
    o.host_ = nullptr;
    o.native_ = {};
}

Buffer& Buffer::operator=(Buffer&& o) noexcept {
    if (this != &o) {
        release();
        device_ = std::move(o.device_);
        handle_ = o.handle_;
        bytes_ = o.bytes_;
        host_ = o.host_;
        native_ = o.native_;
        keep_alive_ = std::move(o.keep_alive_);
        o.handle_ = nullptr;
        o.bytes_ = 0;
        o.host_ = nullptr;
        o.native_ = {};
    }
    return *this;
}

bool Buffer::overlaps(const Buffer& o) const noexcept {
    if (!handle_ || !o.handle_) return false;
    if (handle_ == o.handle_) return true;
    if (native_.handle && native_.handle == o.native_.handle && device_ == o.device_)
        return native_.offset < o.native_.offset + o.native_.bytes && o.native_.offset < native_.offset + native_.bytes;
    // Handles are opaque (cl_mem, ...) except where a wrapped buffer's handle
    // is its host address: the device's handles are then host addresses.
    const bool addresses = (host_ && handle_ == host_) || (o.host_ && o.handle_ == o.host_);
    if (!addresses || device_ != o.device_) return false;
    const auto a = reinterpret_cast<std::uintptr_t>(handle_), b = reinterpret_cast<std::uintptr_t>(o.handle_);
    return a < b + o.bytes_ && b < a + bytes_;
}

Device& Buffer::device() const {
    if (!device_) throw InvalidArgument("Buffer::device: this buffer has no storage (default-constructed or moved-from), so no device");
    return *device_;
}

void Buffer::upload(const void* src, std::size_t bytes, std::size_t offset) {
    device().copy_host_to_device(*this, offset, src, bytes);
}

void Buffer::download(void* dst, std::size_t bytes, std::size_t offset) const {
    device().copy_device_to_host(dst, *this, offset, bytes);
}

Shape::Shape(std::initializer_list<std::size_t> dims) : Shape(std::vector<std::size_t>(dims)) {}

Shape::Shape(const std::vector<std::size_t>& dims) : dims_(dims) {
    if (dims_.empty() || dims_.size() > 2) {
        std::ostringstream s;
        s << "Shape: rank " << dims_.size() << " requested with dims [";
        for (std::size_t i = 0; i < dims_.size(); ++i) s << (i ? ", " : "") << dims_[i];
        s << "]; accel tensors have rank 1 ([n]) or rank 2 ([rows, cols])";
        throw InvalidArgument(s.str());
    }
    // The byte count must fit a size_t; a shape with a 0 extent has none
    // (a partial product past size_t, as in [2^63, 0], does not count).
    if (std::find(dims_.begin(), dims_.end(), 0) != dims_.end()) return;
    std::size_t bytes = sizeof(double);  // the widest dtype
    for (std::size_t d : dims_)
        if (__builtin_mul_overflow(bytes, d, &bytes))
            throw InvalidArgument("Shape: " + to_string() + " holds more elements than a size_t can count in bytes");
}

std::size_t Shape::operator[](std::size_t i) const {
    if (i >= dims_.size())
        throw InvalidArgument("Shape: dimension " + std::to_string(i) + " asked of a rank-" +
                              std::to_string(dims_.size()) + " shape " + to_string());
    return dims_[i];
}

std::size_t Shape::elements() const noexcept {
    if (dims_.empty()) return 0;
    std::size_t n = 1;
    for (std::size_t d : dims_) n *= d;
    return n;
}

std::string Shape::to_string() const {
    std::ostringstream s;
    s << "[";
    for (std::size_t i = 0; i < dims_.size(); ++i) s << (i ? ", " : "") << dims_[i];
    s << "]";
    return s.str();
}

Tensor::Tensor(std::shared_ptr<Device> device, Shape shape, DType dtype)
    : shape_(std::move(shape)), dtype_(dtype), buffer_(std::move(device), shape_.elements() * dtype_size(dtype)) {
    if (shape_.rank() == 0) throw InvalidArgument("Tensor: shape has rank 0; give [n] or [rows, cols]");
}

Tensor Tensor::over_host_memory(std::shared_ptr<Device> device, void* data, Shape shape, DType dtype,
                                std::shared_ptr<const void> keep_alive) {
    if (shape.rank() == 0) throw InvalidArgument("Tensor::over_host_memory: shape has rank 0; give [n] or [rows, cols]");
    if (!data)
        throw InvalidArgument("Tensor::over_host_memory: null data for shape " + shape.to_string() +
                              "; pass the address of its first element");
    if (reinterpret_cast<std::uintptr_t>(data) % dtype_size(dtype) != 0)
        throw InvalidArgument("Tensor::over_host_memory: data at an address not a multiple of " +
                              std::to_string(dtype_size(dtype)) + " bytes, the size of a " + dtype_name(dtype) +
                              " element; align it (or copy it in with from_host)");
    Tensor t;
    t.buffer_ = Buffer(std::move(device), data, shape.elements() * dtype_size(dtype), std::move(keep_alive));
    t.shape_ = std::move(shape);
    t.dtype_ = dtype;
    return t;
}

Tensor Tensor::over_native_memory(std::shared_ptr<Device> device, const std::string& backend,
                                  const NativeMemory& memory, Shape shape, DType dtype,
                                  std::shared_ptr<const void> keep_alive) {
    if (shape.rank() == 0)
        throw InvalidArgument("Tensor::over_native_memory: shape has rank 0; give [n] or [rows, cols]");
    const std::size_t bytes = shape.elements() * dtype_size(dtype);
    if (memory.bytes != bytes)
        throw InvalidArgument("Tensor::over_native_memory: " + std::to_string(memory.bytes) +
                              " bytes of memory given for a " + dtype_name(dtype) + " tensor of shape " +
                              shape.to_string() + ", which takes " + std::to_string(bytes));
    Tensor t;
    t.buffer_ = Buffer(std::move(device), backend, memory, std::move(keep_alive));
    t.shape_ = std::move(shape);
    t.dtype_ = dtype;
    return t;
}

Tensor Tensor::from_host(std::shared_ptr<Device> device, Shape shape, const std::vector<float>& data, DType dtype) {
    if (data.size() != shape.elements())
        throw InvalidArgument("Tensor::from_host: " + std::to_string(data.size()) + " values given for shape " +
                              shape.to_string() + ", which holds " + std::to_string(shape.elements()));
    Tensor t(std::move(device), std::move(shape), dtype);
    std::vector<unsigned char> raw(t.bytes());
    convert_elements(data.data(), DType::f32, raw.data(), dtype, data.size());
    t.buffer_.upload(raw.data(), raw.size());
    return t;
}

void Tensor::upload_bytes(const void* data, std::size_t count, DType given, const char* what, Stream* stream) {
    if (given != dtype_)
        throw InvalidArgument(std::string(what) + ": " + dtype_name(given) + " values given for a " +
                              dtype_name(dtype_) + " tensor; give " + dtype_name(dtype_) +
                              " values, or convert (Tensor::from_host with a DType)");
    if (count != elements())
        throw InvalidArgument(std::string(what) + ": " + std::to_string(count) + " values given for a tensor of shape " +
                              shape_.to_string() + " (" + std::to_string(elements()) + " elements)");
    if (stream)
        device().copy_host_to_device_async(buffer_, 0, data, count * dtype_size(dtype_), *stream);
    else
        buffer_.upload(data, count * dtype_size(dtype_));
}

void Tensor::download_bytes(void* out, std::size_t count, DType wanted, const char* what, Stream* stream) const {
    if (wanted != dtype_)
        throw InvalidArgument(std::string(what) + ": the tensor holds " + dtype_name(dtype_) + " but " +
                              dtype_name(wanted) + " values were asked for; use download_as<T>() to convert");
    if (count != elements())
        throw InvalidArgument(std::string(what) + ": room for " + std::to_string(count) +
                              " values given for a tensor of shape " + shape_.to_string() + " (" +
                              std::to_string(elements()) + " elements)");
    if (stream)
        device().copy_device_to_host_async(out, buffer_, 0, count * dtype_size(dtype_), *stream);
    else
        buffer_.download(out, count * dtype_size(dtype_));
}

std::vector<float> Tensor::download() const {
    std::vector<float> out(elements());
    download_bytes(out.data(), out.size(), DType::f32, "Tensor::download");
    return out;
}

Tensor Tensor::to(const std::shared_ptr<Device>& device) const {
    if (!device) throw InvalidArgument("Tensor::to: no device given (null shared_ptr)");
    if (!device_ptr())
        throw InvalidArgument("Tensor::to: the tensor has no storage (default-constructed or moved-from)");
    Tensor out(device, shape_, dtype_);
    if (bytes() == 0) return out;
    // Blocking copies run on the default streams, after the ops enqueued there.
    if (device.get() == device_ptr().get()) {
        device->copy_device_to_device(out.buffer_, 0, buffer_, 0, bytes());
    } else {
        std::vector<unsigned char> staging(bytes());
        buffer_.download(staging.data(), staging.size());
        out.buffer_.upload(staging.data(), staging.size());
    }
    return out;
}

}  // namespace accel
