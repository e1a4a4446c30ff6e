// accel/tensor.hpp — RAII device memory (Buffer) and typed tensors (Tensor).
#pragma once

#include <accel/device.hpp>
#include <accel/dtype.hpp>

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace accel {

/// Owns `size()` bytes of memory on one device; freed on destruction.
/// Movable, not copyable. An empty buffer (0 bytes) holds no handle.
class Buffer {
public:
    Buffer() = default;
    /// Allocates `bytes` on `device`. Throws OutOfMemory (see Device::allocate).
    Buffer(std::shared_ptr<Device> device, std::size_t bytes);
    /// Wraps `bytes` of existing host memory at `data` without a copy, on a
    /// device whose kernels address host memory in place
    /// (Device::map_host_memory: the host backend). Writes through the
    /// buffer are writes to `data`. `keep_alive` (may be null) is held until
    /// the buffer is destroyed, e.g. whatever owns the memory. Throws
    /// Unsupported where the device cannot address host memory (naming it;
    /// copy the data in instead), InvalidArgument for a null device or null
    /// data with bytes > 0.
    Buffer(std::shared_ptr<Device> device, void* data, std::size_t bytes, std::shared_ptr<const void> keep_alive);
    /// Wraps memory another library allocated and owns (`memory`: a cl_mem,
    /// a cudaMalloc'd pointer, a VkBuffer, as accel/interop/<backend>.hpp
    /// write it) without a copy, through Device::adopt_native_memory (its
    /// errors). accel never frees it; `keep_alive` (may be null) is held
    /// until the buffer is destroyed, e.g. whatever owns the memory.
    /// Buffers over the same native handle count as overlapping where their
    /// byte ranges meet.
    Buffer(std::shared_ptr<Device> device, const std::string& backend, const NativeMemory& memory,
           std::shared_ptr<const void> keep_alive);
    ~Buffer();
    Buffer(Buffer&& o) noexcept;
    Buffer& operator=(Buffer&& o) noexcept;
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;

    /// Size in bytes.
    std::size_t size() const noexcept { return bytes_; }
    /// The backend's handle (device pointer or cl_mem); nullptr when empty.
    DeviceHandle handle() const noexcept { return handle_; }
    /// The owning device; throws InvalidArgument on a default-constructed buffer.
    Device& device() const;
    /// Shared ownership of the owning device (null for a default-constructed buffer).
    const std::shared_ptr<Device>& device_ptr() const noexcept { return device_; }
    /// The host memory this buffer wraps (the host-memory constructor), else nullptr.
    void* host_memory() const noexcept { return host_; }
    /// Whether the two buffers may share bytes: the same handle, or, where
    /// either wraps host memory on a device whose handle for it is the host
    /// address (the host backend), overlapping address ranges. Empty buffers
    /// share nothing. Never throws.
    bool overlaps(const Buffer& o) const noexcept;

    /// Blocking copy of `bytes` from host memory into this buffer at byte
    /// `offset`. Throws InvalidArgument if offset + bytes > size().
    void upload(const void* src, std::size_t bytes, std::size_t offset = 0);
    /// Blocking copy of `bytes` at byte `offset` into host memory.
    /// Throws InvalidArgument if offset + bytes > size().
    void download(void* dst, std::size_t bytes, std::size_t offset = 0) const;

private:
    void release() noexcept;
    std::shared_ptr<Device> device_;
    DeviceHandle handle_ = nullptr;
    std::size_t bytes_ = 0;
    void* host_ = nullptr;                     ///< wrapped host memory, or null when allocated
    NativeMemory native_;                      ///< adopted native memory (handle 0 when not)
    std::shared_ptr<const void> keep_alive_;  ///< what owns host_'s memory
};

/// Shape of a tensor: rank 1 {n} or rank 2 {rows, cols}, row-major
/// (element (r, c) at r*cols + c). Rank 0 or > 2 is rejected.
class Shape {
public:
    Shape() = default;
    /// Throws InvalidArgument for rank 0 or rank > 2, or when the element
    /// count or its byte count (×8, the widest dtype) overflows size_t.
    Shape(std::initializer_list<std::size_t> dims);
    /// As above, from a vector.
    explicit Shape(const std::vector<std::size_t>& dims);
    std::size_t rank() const noexcept { return dims_.size(); }
    /// Extent of dimension i (0-based); throws InvalidArgument if i >= rank.
    std::size_t operator[](std::size_t i) const;
    /// Number of elements (1 for... never: rank ≥ 1, so the product of dims).
    std::size_t elements() const noexcept;
    /// Rows: dims[0] for rank 2, 1 for rank 1.
    std::size_t rows() const noexcept { return dims_.size() == 2 ? dims_[0] : 1; }
    /// Columns: the last dimension.
    std::size_t cols() const noexcept { return dims_.empty() ? 0 : dims_.back(); }
    const std::vector<std::size_t>& dims() const noexcept { return dims_; }
    /// "[3, 4]" or "[7]".
    std::string to_string() const;
    bool operator==(const Shape& o) const noexcept { return dims_ == o.dims_; }
    bool operator!=(const Shape& o) const noexcept { return !(*this == o); }

private:
    std::vector<std::size_t> dims_;
};

/// A tensor of rank 1 or 2, row-major, of one dtype (accel/dtype.hpp),
/// living on one device. Contents are uninitialized after construction.
/// Movable, not copyable. Host data goes in and out typed: a float vector is
/// f32, a double vector f64, Half f16, BFloat16 bf16; the converting forms
/// (from_host with a DType, download_as) round or widen on the host.
/// Thread-safety: as Buffer (uploads and downloads are blocking copies on
/// the device's default stream).
class Tensor {
public:
    Tensor() = default;
    /// Allocates shape.elements() elements of `dtype` on `device`. Throws
    /// OutOfMemory, or InvalidArgument for a rank-0 shape.
    Tensor(std::shared_ptr<Device> device, Shape shape, DType dtype = DType::f32);
    /// Allocates a tensor of the dtype of T (float f32, double f64, Half f16,
    /// BFloat16 bf16) and uploads `data` (row-major) as it is. Throws
    /// InvalidArgument if data.size() != shape.elements().
    template <class T>
    static Tensor from_host(std::shared_ptr<Device> device, Shape shape, const std::vector<T>& data);
    /// The same from a brace list: `from_host(dev, {4}, {1.f, 2.f, 3.f, 4.f})`
    /// is f32, `{1.0, 2.0}` f64 (the literals' type picks the dtype).
    template <class T>
    static Tensor from_host(std::shared_ptr<Device> device, Shape shape, std::initializer_list<T> data) {
        return from_host(std::move(device), std::move(shape), std::vector<T>(data));
    }
    /// Allocates a tensor of `dtype` and uploads `data` rounded to it (to
    /// nearest, ties to even; see convert_elements). Throws InvalidArgument
    /// if data.size() != shape.elements().
    static Tensor from_host(std::shared_ptr<Device> device, Shape shape, const std::vector<float>& data, DType dtype);
    /// A tensor over existing host memory without a copy (torch.from_numpy's
    /// sharing): `data` holds shape.elements() elements of `dtype`, row-major,
    /// and ops read and write it in place. `keep_alive` (may be null) is held
    /// for the tensor's life, e.g. the array owning the memory; otherwise
    /// `data` must outlive the tensor. Ops see writes made to `data` between
    /// calls; do not write it while an op on the tensor may be running.
    /// Tensors over overlapping memory count as aliases (ops reject them as
    /// an output and an input). Throws Unsupported where the device cannot
    /// address host memory in place (only the host backend can: elsewhere
    /// use from_host, a copy), InvalidArgument for null data or data not
    /// aligned to the dtype's size. Thread-safety: as Buffer.
    static Tensor over_host_memory(std::shared_ptr<Device> device, void* data, Shape shape, DType dtype,
                                   std::shared_ptr<const void> keep_alive = nullptr);
    /// A tensor over device memory another library owns, without a copy
    /// (Buffer's native-memory constructor): `memory.bytes` must be exactly
    /// shape.elements() × dtype_size(dtype). The typed forms are in
    /// accel/interop/<backend>.hpp. Throws InvalidArgument for a size that
    /// does not match (naming both), and as Device::adopt_native_memory.
    static Tensor over_native_memory(std::shared_ptr<Device> device, const std::string& backend,
                                     const NativeMemory& memory, Shape shape, DType dtype,
                                     std::shared_ptr<const void> keep_alive = nullptr);
    const Shape& shape() const noexcept { return shape_; }
    DType dtype() const noexcept { return dtype_; }
    std::size_t elements() const noexcept { return shape_.elements(); }
    /// Size in bytes (elements × dtype_size(dtype())).
    std::size_t bytes() const noexcept { return buffer_.size(); }
    Device& device() const { return buffer_.device(); }
    const std::shared_ptr<Device>& device_ptr() const noexcept { return buffer_.device_ptr(); }
    Buffer& buffer() noexcept { return buffer_; }
    const Buffer& buffer() const noexcept { return buffer_; }
    DeviceHandle handle() const noexcept { return buffer_.handle(); }
    /// Blocking upload of all elements; T must be the tensor's element type
    /// (float for f32, ...). Throws InvalidArgument if data.size() !=
    /// elements() or T is not the tensor's dtype.
    template <class T>
    void upload(const std::vector<T>& data) {
        upload(data.data(), data.size());
    }
    /// Blocking upload of `count` elements from `data`; as above.
    template <class T>
    void upload(const T* data, std::size_t count);
    /// Blocking download of all elements (row-major) of an f32 tensor.
    /// Throws InvalidArgument for another dtype (use download_as).
    std::vector<float> download() const;
    /// Blocking download into `out`, which must hold `count` == elements()
    /// elements of the tensor's type T. Throws InvalidArgument otherwise.
    template <class T>
    void download(T* out, std::size_t count) const;
    /// Enqueues an upload of `count` == elements() elements of the tensor's
    /// type T from `data` on `stream` (a stream of the tensor's device) and
    /// may return before it ran: `data` must stay valid and unchanged until
    /// the stream is synchronized. Throws InvalidArgument as upload(), or for
    /// a stream of another device.
    template <class T>
    void upload_async(const T* data, std::size_t count, Stream& stream);
    /// Enqueues a download of all elements into `out` (room for `count` ==
    /// elements() elements of the tensor's type T) on `stream`; `out` holds
    /// them once the stream is synchronized. Throws as download(), or for a
    /// stream of another device.
    template <class T>
    void download_async(T* out, std::size_t count, Stream& stream) const;
    /// Blocking download of all elements converted to T (float, double,
    /// Half, BFloat16); widening is exact, narrowing rounds to nearest even.
    template <class T>
    std::vector<T> download_as() const;

    /// A copy of this tensor on `device` (PyTorch's `.to(device)`): same
    /// shape, dtype and values, bit for bit. On the same device: one
    /// device-to-device copy. Between devices: through host memory (one
    /// download, one upload), or one copy where either device is the host
    /// backend (its memory is host memory). Blocking: returns when the copy
    /// is complete (the source's default stream is synchronized first, so
    /// ops enqueued on it before are included). Throws InvalidArgument for a
    /// null device or a tensor without storage, OutOfMemory, DeviceError.
    /// Thread-safety: as download() and upload().
    Tensor to(const std::shared_ptr<Device>& device) const;
    /// This tensor converted to `dtype` on its device (PyTorch's
    /// `.to(dtype)`; ops::convert: widening exact, narrowing to nearest even,
    /// NaN and ±Inf kept). A new tensor also when the dtype is the same.
    /// Enqueued on the device's default stream. Throws as ops::convert
    /// (Unsupported where the device has no convert kernel for `dtype`).
    Tensor to(DType dtype) const;

private:
    /// Checked copies; blocking when `stream` is null, else enqueued on it.
    void upload_bytes(const void* data, std::size_t count, DType given, const char* what, Stream* stream = nullptr);
    void download_bytes(void* out, std::size_t count, DType wanted, const char* what,
                        Stream* stream = nullptr) const;
    Shape shape_;
    DType dtype_ = DType::f32;
    Buffer buffer_;
};

/// An operand that may be absent, e.g. dense's bias: a tensor, or
/// std::nullopt.
using OptionalTensor = std::optional<std::reference_wrapper<const Tensor>>;

template <class T>
struct unsupported_element_type : std::false_type {};

/// The DType of a host element type: float f32, double f64, Half f16,
/// BFloat16 bf16; any other type is a compile-time error naming these.
template <class T>
constexpr DType dtype_of() {
    static_assert(unsupported_element_type<T>::value,
                  "accel: tensor elements are float (f32), double (f64), accel::Half (f16) or accel::BFloat16 "
                  "(bf16); convert other types (e.g. int) to one of these first");
    return DType::f32;
}
template <>
constexpr DType dtype_of<float>() { return DType::f32; }
template <>
constexpr DType dtype_of<double>() { return DType::f64; }
template <>
constexpr DType dtype_of<Half>() { return DType::f16; }
template <>
constexpr DType dtype_of<BFloat16>() { return DType::bf16; }

template <class T>
Tensor Tensor::from_host(std::shared_ptr<Device> device, Shape shape, const std::vector<T>& data) {
    Tensor t(std::move(device), std::move(shape), dtype_of<T>());
    t.upload(data);
    return t;
}

template <class T>
void Tensor::upload(const T* data, std::size_t count) {
    upload_bytes(data, count, dtype_of<T>(), "Tensor::upload");
}

template <class T>
void Tensor::upload_async(const T* data, std::size_t count, Stream& stream) {
    upload_bytes(data, count, dtype_of<T>(), "Tensor::upload_async", &stream);
}

template <class T>
void Tensor::download_async(T* out, std::size_t count, Stream& stream) const {
    download_bytes(out, count, dtype_of<T>(), "Tensor::download_async", &stream);
}

template <class T>
void Tensor::download(T* out, std::size_t count) const {
    download_bytes(out, count, dtype_of<T>(), "Tensor::download");
}

template <class T>
std::vector<T> Tensor::download_as() const {
    std::vector<T> out(elements());
    if (dtype_ == dtype_of<T>()) {
        download(out.data(), out.size());
    } else {
        std::vector<unsigned char> raw(bytes());
        buffer_.download(raw.data(), raw.size());
        convert_elements(raw.data(), dtype_, out.data(), dtype_of<T>(), out.size());
    }
    return out;
}

}  // namespace accel
