// accel/tensor.hpp — RAII device memory (Buffer) and float32 tensors (Tensor).
#pragma once

#include <accel/device.hpp>

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace accel {

/// Owns `size()` bytes of memory on one device; freed on destruction.
/// Movable, not copyable. An empty buffer (0 bytes) holds no handle.
class Buffer {
public:
    Buffer() = default;
    /// Allocates `bytes` on `device`. Throws OutOfMemory (see Device::allocate).
    Buffer(std::shared_ptr<Device> device, std::size_t bytes);
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

    /// Blocking copy of `bytes` from host memory into this buffer at byte
    /// `offset`. Throws InvalidArgument if offset + bytes > size().
    void upload(const void* src, std::size_t bytes, std::size_t offset = 0);
    /// Blocking copy of `bytes` at byte `offset` into host memory.
    /// Throws InvalidArgument if offset + bytes > size().
    void download(void* dst, std::size_t bytes, std::size_t offset = 0) const;

private:
    std::shared_ptr<Device> device_;
    DeviceHandle handle_ = nullptr;
    std::size_t bytes_ = 0;
};

/// Shape of a tensor: rank 1 {n} or rank 2 {rows, cols}, row-major
/// (element (r, c) at r*cols + c). Rank 0 or > 2 is rejected.
class Shape {
public:
    Shape() = default;
    /// Throws InvalidArgument for rank 0 or rank > 2, or when the element
    /// count or its byte count (×4) overflows size_t.
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

/// A float32 tensor of rank 1 or 2, row-major, living on one device.
/// Contents are uninitialized after construction. Movable, not copyable.
class Tensor {
public:
    Tensor() = default;
    /// Allocates shape.elements() floats on `device`. Throws OutOfMemory.
    Tensor(std::shared_ptr<Device> device, Shape shape);
    /// Allocates and uploads `data` (row-major). Throws InvalidArgument if
    /// data.size() != shape.elements().
    static Tensor from_host(std::shared_ptr<Device> device, Shape shape, const std::vector<float>& data);

    const Shape& shape() const noexcept { return shape_; }
    std::size_t elements() const noexcept { return shape_.elements(); }
    /// Size in bytes (elements × 4).
    std::size_t bytes() const noexcept { return buffer_.size(); }
    Device& device() const { return buffer_.device(); }
    const std::shared_ptr<Device>& device_ptr() const noexcept { return buffer_.device_ptr(); }
    Buffer& buffer() noexcept { return buffer_; }
    const Buffer& buffer() const noexcept { return buffer_; }
    DeviceHandle handle() const noexcept { return buffer_.handle(); }

    /// Blocking upload of all elements. Throws InvalidArgument if
    /// data.size() != elements().
    void upload(const std::vector<float>& data);
    /// Blocking upload of `count` floats from `data`; count must equal elements().
    void upload(const float* data, std::size_t count);
    /// Blocking download of all elements (row-major).
    std::vector<float> download() const;
    /// Blocking download into `out`, which must hold `count` == elements() floats.
    void download(float* out, std::size_t count) const;

private:
    Shape shape_;
    Buffer buffer_;
};

}  // namespace accel
