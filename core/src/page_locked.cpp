// PageLockedBuffer: the page-locked memory a device's capability hands out.

#include <accel/device.hpp>
#include <accel/error.hpp>
#include <accel/page_locked.hpp>

#include <string>
#include <utility>

namespace accel {

bool PageLockedBuffer::available(Device& device) noexcept { return device.capability<PageLockedMemory>() != nullptr; }

PageLockedBuffer::PageLockedBuffer(std::shared_ptr<Device> device, std::size_t bytes) {
    if (!device) throw InvalidArgument("PageLockedBuffer: no device given; pass an open device");
    if (bytes == 0)
        throw InvalidArgument("PageLockedBuffer: 0 bytes asked of " + device->selector() +
                              "; ask for at least one byte");
    memory_ = device->capability<PageLockedMemory>();
    if (!memory_)
        throw Unsupported("PageLockedBuffer: " + device->selector() + " (the " + device->info().backend +
                          " backend) has no page-locked host memory; its copies of any host memory take one path, "
                          "so pass ordinary memory");
    data_ = memory_->allocate_page_locked(bytes);
    bytes_ = bytes;
    device_ = std::move(device);
}

PageLockedBuffer::~PageLockedBuffer() { reset(); }

PageLockedBuffer::PageLockedBuffer(PageLockedBuffer&& other) noexcept
    : device_(std::move(other.device_)),
      memory_(std::exchange(other.memory_, nullptr)),
      data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)) {}

PageLockedBuffer& PageLockedBuffer::operator=(PageLockedBuffer&& other) noexcept {
    if (this != &other) {
        reset();
        device_ = std::move(other.device_);
        memory_ = std::exchange(other.memory_, nullptr);
        data_ = std::exchange(other.data_, nullptr);
        bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
}

void PageLockedBuffer::reset() noexcept {
    if (data_ && memory_) memory_->free_page_locked(data_);
    data_ = nullptr;
    memory_ = nullptr;
    bytes_ = 0;
    device_.reset();
}

}  // namespace accel
