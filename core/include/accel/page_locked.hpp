#pragma once

// Page-locked (pinned) host memory: host memory a device's copies reach by
// DMA, without the pageable path's extra copy through a staging buffer.
// What CUDA's cudaMallocHost, HIP's hipHostMalloc and OpenCL's
// CL_MEM_ALLOC_HOST_PTR buffers give; a backend whose device memory is host
// memory (host, Kokkos' host spaces) has none, since there is no transfer
// to speed up.

#include <accel/capability.hpp>

#include <cstddef>
#include <memory>
#include <string_view>

namespace accel {

class Device;

/// The capability (accel/capability.hpp) of handing out page-locked host
/// memory. Implemented by backends whose copies take a faster path from it.
/// Thread-safe.
class PageLockedMemory {
public:
    static constexpr std::string_view capability_name = "accel.page_locked_memory/1";
    virtual ~PageLockedMemory() = default;
    /// `bytes` (> 0, checked by the caller) of page-locked host memory,
    /// aligned to at least 64 bytes, readable and writable by the host at
    /// once. Throws OutOfMemory when the runtime refuses that much,
    /// DeviceError on another failure.
    virtual void* allocate_page_locked(std::size_t bytes) = 0;
    /// Frees memory from allocate_page_locked (every copy using it is
    /// complete: checked by the caller's synchronization). Never throws.
    virtual void free_page_locked(void* data) noexcept = 0;
};

/// `bytes` of page-locked host memory of one device, freed when the object
/// goes (it keeps the device open). Pass data() to the device's copies as
/// any host pointer; they take the DMA path. Not copyable; movable.
/// Thread-safety: as a plain allocation (the memory is the caller's).
class PageLockedBuffer {
public:
    /// Throws InvalidArgument for a null device or 0 bytes, Unsupported when
    /// the device's backend has no page-locked memory (naming the device and
    /// why a transfer there needs none), OutOfMemory or DeviceError from the
    /// runtime.
    PageLockedBuffer(std::shared_ptr<Device> device, std::size_t bytes);
    ~PageLockedBuffer();
    PageLockedBuffer(PageLockedBuffer&& other) noexcept;
    PageLockedBuffer& operator=(PageLockedBuffer&& other) noexcept;
    PageLockedBuffer(const PageLockedBuffer&) = delete;
    PageLockedBuffer& operator=(const PageLockedBuffer&) = delete;

    void* data() noexcept { return data_; }
    const void* data() const noexcept { return data_; }
    /// In bytes.
    std::size_t size() const noexcept { return bytes_; }

    /// Whether `device` hands out page-locked memory. Never throws.
    static bool available(Device& device) noexcept;

private:
    void reset() noexcept;
    std::shared_ptr<Device> device_;
    PageLockedMemory* memory_ = nullptr;
    void* data_ = nullptr;
    std::size_t bytes_ = 0;
};

}  // namespace accel
