#include <accel/device.hpp>
#include <accel/error.hpp>
#include <accel/tensor.hpp>

#include <accel_internal/graph_capture.hpp>
#include <accel_internal/instrument.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <tuple>

namespace accel {

namespace {
// Why a capture refuses a wait (accel/graph.hpp).
constexpr const char* kNothingToWaitFor =
    "a capture runs nothing, so there is nothing to wait for; synchronize after a replay";
}  // namespace

const char* path_name(OpPath p) noexcept { return p == OpPath::native ? "native" : "vendor"; }

const char* activation_name(Activation a) noexcept {
    switch (a) {
        case Activation::none: return "none";
        case Activation::sigmoid: return "sigmoid";
        case Activation::relu: return "relu";
        case Activation::gelu: return "gelu";
        case Activation::gelu_tanh: return "gelu_tanh";
    }
    return "?";
}

void Event::record(Stream& stream) {
    detail::refuse_while_capturing("Event::record", kNothingToWaitFor);
    if (&stream.device() != device_)
        throw InvalidArgument("Event::record: the stream belongs to " + stream.device().selector() +
                              " but the event to " + device_->selector());
    do_record(stream);
    recorded_ = true;
}

void Event::record(const std::unique_ptr<Stream>& stream) {
    if (!stream) throw InvalidArgument("Event::record: the stream is null; pass one from Device::create_stream()");
    record(*stream);
}

void Event::synchronize() {
    detail::refuse_while_capturing("Event::synchronize", kNothingToWaitFor);
    if (!recorded_) throw InvalidArgument("Event::synchronize: the event was never recorded; call record() first");
    if (!instrument::active()) return do_synchronize();
    instrument::Span span(*device_, "synchronize", "sync");
    if (span.live()) span.arg("what", "event");
    do_synchronize();
}

Stream::~Stream() { instrument::stream_destroyed(this); }

void Stream::synchronize() {
    detail::refuse_while_capturing("Stream::synchronize", kNothingToWaitFor);
    if (!instrument::active()) return do_synchronize();
    {
        instrument::Span span(*device_, "synchronize", "sync");
        if (span.live()) span.arg("what", instrument::stream_name(*device_, *this));
        do_synchronize();
    }
    instrument::synchronized(*device_, this);
}

std::string host_name() {
    char buf[256] = {};
    if (gethostname(buf, sizeof buf - 1) != 0 || !buf[0]) return "unknown";
    return buf;
}

std::string format_uuid(const unsigned char (&bytes)[16]) {
    bool any = false;
    for (unsigned char b : bytes) any |= b != 0;
    if (!any) return "";
    static const char* hex = "0123456789abcdef";
    std::string s;
    for (int i = 0; i < 16; ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
        s += hex[bytes[i] >> 4];
        s += hex[bytes[i] & 15];
    }
    return s;
}

std::string format_pci_bus_id(unsigned domain, unsigned bus, unsigned device, unsigned function) {
    if (!domain && !bus && !device && !function) return "";
    char buf[48];
    std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", domain, bus, device, function);
    return buf;
}

bool same_physical_device(const DeviceInfo& a, const DeviceInfo& b) noexcept {
    if (a.host != b.host) return false;
    if (a.backend == b.backend && a.index == b.index) return true;
    return (!a.uuid.empty() && a.uuid == b.uuid) || (!a.pci_bus_id.empty() && a.pci_bus_id == b.pci_bus_id);
}

Device::Device(DeviceInfo info)
    : info_(std::move(info)),
      kernel_table_(selector(), info_.backend,
                    [this](Op op, DType dtype, OpPath path) { return do_unsupported_reason(op, dtype, path); }) {
    if (info_.host.empty()) info_.host = host_name();
}

Device::~Device() { instrument::device_destroyed(this); }

void Probes::matrix_throughput(DeviceHandle, DType dtype, std::size_t, std::size_t, Stream&) {
    throw Unsupported(std::string("the backend has no matrix-engine probe (for ") + dtype_name(dtype) + " operands)");
}

GemmCompute Probes::gemm_compute(DType dtype, OpPath) const noexcept { return gemm_compute_default(dtype); }

GemmCompute Probes::gemm_compute_default(DType dtype) noexcept {
    return {GemmCompute::Unit::fma, dtype == DType::f64 ? DType::f64 : DType::f32};
}

std::string Device::selector() const {
    return info_.stable_selector.empty() ? info_.backend + ":" + std::to_string(info_.index) : info_.stable_selector;
}

namespace {
std::string memory_text(const MemoryInfo& m) {
    std::string t = std::to_string(m.in_use) + " bytes in use and " + std::to_string(m.cached) + " cached by accel";
    if (m.limit) t += " under a cap of " + std::to_string(m.limit) + " (Device::set_memory_limit)";
    return t;
}
}  // namespace

DeviceHandle Device::allocate(std::size_t bytes) {
    if (bytes == 0) return nullptr;
    detail::refuse_allocation_while_capturing(bytes);
    // Built only for an error: allocations are frequent.
    const auto asked = [&] {
        return "allocate: " + std::to_string(bytes) + " bytes asked on " + selector() + " (" + info_.name + "), ";
    };
    if (info_.global_memory_bytes != 0 && bytes > info_.global_memory_bytes)
        throw OutOfMemory(asked() + "which has " + std::to_string(info_.global_memory_bytes) +
                          " bytes of global memory in total");
    {
        // Reserve the bytes under the cap first, so that threads allocating
        // at once cannot pass it together.
        std::unique_lock<std::mutex> lock(memory_mutex_);
        if (limit_ && in_use_ + do_cached_bytes() + bytes > limit_) {
            lock.unlock();
            do_release_cached();  // the cache is what a caching allocator gives back first
            lock.lock();
        }
        if (limit_ && in_use_ + do_cached_bytes() + bytes > limit_)
            throw OutOfMemory(asked() + "which would pass the cap: " + memory_text(memory_info_locked()) +
                              "; free tensors or raise the cap");
        in_use_ += bytes;
    }
    DeviceHandle h = nullptr;
    try {
        if (!instrument::active()) {
            h = do_allocate(bytes);
        } else {
            instrument::Span span(*this, "allocate", "memory");
            if (span.live()) span.arg("bytes", std::uint64_t{bytes});
            h = do_allocate(bytes);
        }
    } catch (const OutOfMemory& e) {
        std::lock_guard<std::mutex> lock(memory_mutex_);
        in_use_ -= bytes;
        throw OutOfMemory(std::string(e.what()) + "; " + memory_text(memory_info_locked()) + " on this device");
    } catch (...) {
        std::lock_guard<std::mutex> lock(memory_mutex_);
        in_use_ -= bytes;
        throw;
    }
    {
        std::lock_guard<std::mutex> lock(memory_mutex_);
        allocations_[h] = bytes;
        peak_in_use_ = std::max(peak_in_use_, in_use_);
    }
    if (instrument::active()) instrument::memory_changed(*this);
    return h;
}

void Device::deallocate(DeviceHandle h) noexcept {
    if (!h) return;
    if (detail::g_pins.load(std::memory_order_relaxed) && detail::hold_free(*this, h)) return;  // a graph uses it
    {
        std::lock_guard<std::mutex> lock(memory_mutex_);
        const auto it = allocations_.find(h);
        if (it != allocations_.end()) {
            in_use_ -= it->second;
            allocations_.erase(it);
        }
    }
    if (!instrument::active()) return do_deallocate(h);
    {
        instrument::Span span(*this, "free", "memory");
        do_deallocate(h);
    }
    instrument::memory_changed(*this);
}

DeviceHandle Device::map_host_memory(void* data, std::size_t bytes) {
    if (bytes == 0) return nullptr;
    if (!data)
        throw InvalidArgument("map_host_memory: null host pointer for " + std::to_string(bytes) + " bytes on " +
                              selector() + "; pass the address of the memory to map");
    const DeviceHandle h = do_map_host_memory(data, bytes);
    if (h) {
        std::lock_guard<std::mutex> lock(memory_mutex_);
        mapped_.emplace(h, bytes);
    }
    return h;
}

void Device::forget_mapped(DeviceHandle h) noexcept {
    std::lock_guard<std::mutex> lock(memory_mutex_);
    const auto it = mapped_.find(h);
    if (it != mapped_.end()) mapped_.erase(it);
}

void Device::unmap_host_memory(DeviceHandle h) noexcept {
    if (!h) return;
    forget_mapped(h);
    do_unmap_host_memory(h);
}

DeviceHandle Device::do_map_host_memory(void*, std::size_t) { return nullptr; }

void Device::do_unmap_host_memory(DeviceHandle) noexcept {}

MemoryInfo Device::memory_info() const noexcept {
    std::lock_guard<std::mutex> lock(memory_mutex_);
    return memory_info_locked();
}

MemoryInfo Device::memory_info_locked() const noexcept {
    return {in_use_, peak_in_use_, do_cached_bytes(), limit_, info_.global_memory_bytes};
}

void Device::set_memory_limit(std::uint64_t bytes) noexcept {
    std::lock_guard<std::mutex> lock(memory_mutex_);
    limit_ = bytes;
}

namespace {
// Throws unless [offset, offset + bytes) lies within `size` bytes of `kind` (buffer, allocation).
void check_within(const char* what, std::size_t offset, std::size_t bytes, std::size_t size, const char* kind) {
    if (offset > size || bytes > size - offset)
        throw InvalidArgument(std::string(what) + ": range [" + std::to_string(offset) + ", " +
                              std::to_string(offset) + " + " + std::to_string(bytes) +
                              ") bytes lies past the end of a " + std::to_string(size) + "-byte " + kind);
}
void check_range(const char* what, const Buffer& b, const Device& d, std::size_t offset, std::size_t bytes) {
    if (b.device_ptr().get() != &d)
        throw InvalidArgument(std::string(what) + ": the buffer belongs to " +
                              (b.device_ptr() ? b.device_ptr()->selector() : std::string("no device")) +
                              ", not to " + d.selector());
    check_within(what, offset, bytes, b.size(), "buffer");
}
void check_stream(const char* what, const Stream& s, const Device& d) {
    if (&s.device() != &d)
        throw InvalidArgument(std::string(what) + ": the stream belongs to " + s.device().selector() + ", not to " +
                              d.selector());
}
void check_host_ptr(const char* what, const void* p, std::size_t bytes) {
    if (!p && bytes) throw InvalidArgument(std::string(what) + ": host pointer is null for a non-empty copy");
}
}  // namespace

// One copy, traced: `blocking` copies run on the default stream and return
// when done, so that stream's earlier work has finished too.
template <class Copy>
void Device::traced_copy(const char* name, std::size_t bytes, Stream& s, bool blocking, Copy copy) {
    detail::refuse_while_capturing(name, "a copy's data would move once, at capture, not at every replay; copy "
                                         "before or after a replay");
    if (!bytes) return;
    if (!instrument::active()) return copy();
    {
        instrument::Span span(*this, name, "copy", &s);
        if (span.live()) {
            span.arg("bytes", std::uint64_t{bytes});
            span.arg("blocking", blocking);
        }
        copy();
    }
    if (blocking) instrument::synchronized(*this, &s);
}

void Device::copy_host_to_device(Buffer& dst, std::size_t off, const void* src, std::size_t bytes) {
    check_range("copy_host_to_device", dst, *this, off, bytes);
    check_host_ptr("copy_host_to_device", src, bytes);
    Stream& s = default_stream();
    traced_copy("copy_host_to_device", bytes, s, true, [&] { do_copy_h2d(dst.handle(), off, src, bytes, s, true); });
}
void Device::copy_device_to_host(void* dst, const Buffer& src, std::size_t off, std::size_t bytes) {
    check_range("copy_device_to_host", src, *this, off, bytes);
    check_host_ptr("copy_device_to_host", dst, bytes);
    Stream& s = default_stream();
    traced_copy("copy_device_to_host", bytes, s, true, [&] { do_copy_d2h(dst, src.handle(), off, bytes, s, true); });
}
void Device::read_handle(void* dst, DeviceHandle src, std::size_t off, std::size_t bytes, Stream& s) {
    check_stream("read_handle", s, *this);
    check_host_ptr("read_handle", dst, bytes);
    std::size_t size = 0;
    {
        std::lock_guard<std::mutex> lock(memory_mutex_);
        const auto allocated = allocations_.find(src);
        const auto mapped = mapped_.equal_range(src);
        if (!src || (allocated == allocations_.end() && mapped.first == mapped.second))
            throw InvalidArgument("read_handle: the handle is not memory " + selector() +
                                  " handed out (allocate, map_host_memory) and still holds; pass a Buffer's or a "
                                  "Tensor's handle() of this device");
        if (allocated != allocations_.end()) size = allocated->second;
        for (auto it = mapped.first; it != mapped.second; ++it) size = std::max(size, it->second);
    }
    check_within("read_handle", off, bytes, size, "allocation");
    traced_copy("copy_device_to_host", bytes, s, true, [&] { do_copy_d2h(dst, src, off, bytes, s, true); });
}
void Device::copy_device_to_device(Buffer& dst, std::size_t doff, const Buffer& src, std::size_t soff,
                                   std::size_t bytes) {
    check_range("copy_device_to_device (destination)", dst, *this, doff, bytes);
    check_range("copy_device_to_device (source)", src, *this, soff, bytes);
    Stream& s = default_stream();
    traced_copy("copy_device_to_device", bytes, s, true,
                [&] { do_copy_d2d(dst.handle(), doff, src.handle(), soff, bytes, s, true); });
}
void Device::copy_host_to_device_async(Buffer& dst, std::size_t off, const void* src, std::size_t bytes,
                                       Stream& s) {
    check_range("copy_host_to_device_async", dst, *this, off, bytes);
    check_host_ptr("copy_host_to_device_async", src, bytes);
    check_stream("copy_host_to_device_async", s, *this);
    traced_copy("copy_host_to_device", bytes, s, false, [&] { do_copy_h2d(dst.handle(), off, src, bytes, s, false); });
}
void Device::copy_device_to_host_async(void* dst, const Buffer& src, std::size_t off, std::size_t bytes,
                                       Stream& s) {
    check_range("copy_device_to_host_async", src, *this, off, bytes);
    check_host_ptr("copy_device_to_host_async", dst, bytes);
    check_stream("copy_device_to_host_async", s, *this);
    traced_copy("copy_device_to_host", bytes, s, false, [&] { do_copy_d2h(dst, src.handle(), off, bytes, s, false); });
}
void Device::copy_device_to_device_async(Buffer& dst, std::size_t doff, const Buffer& src, std::size_t soff,
                                         std::size_t bytes, Stream& s) {
    check_range("copy_device_to_device_async (destination)", dst, *this, doff, bytes);
    check_range("copy_device_to_device_async (source)", src, *this, soff, bytes);
    check_stream("copy_device_to_device_async", s, *this);
    traced_copy("copy_device_to_device", bytes, s, false,
                [&] { do_copy_d2d(dst.handle(), doff, src.handle(), soff, bytes, s, false); });
}

Stream& Device::default_stream() {
    // call_once: a failed creation throws and leaves the flag unset, so the
    // next call tries again.
    std::call_once(default_stream_once_, [this] { default_stream_ = do_create_stream(); });
    return *default_stream_;
}
std::unique_ptr<Stream> Device::create_stream() { return do_create_stream(); }
std::unique_ptr<Event> Device::create_event() { return do_create_event(); }

double Device::elapsed_ms(Event& start, Event& end) {
    if (&start.device() != this || &end.device() != this)
        throw InvalidArgument("elapsed_ms: both events must belong to " + selector());
    if (!start.recorded() || !end.recorded())
        throw InvalidArgument("elapsed_ms: both events must be recorded before timing them");
    const double ms = do_elapsed_ms(start, end);
    if (ms < 0)
        throw InvalidArgument("elapsed_ms: the end event was recorded before the start event (" + std::to_string(-ms) +
                              " ms earlier); pass the events as (start, end)");
    return ms;
}

double Device::elapsed_ms(const std::unique_ptr<Event>& start, const std::unique_ptr<Event>& end) {
    if (!start || !end)
        throw InvalidArgument(std::string("elapsed_ms: the ") + (start ? "end" : "start") +
                              " event is null; pass events from Device::create_event()");
    return elapsed_ms(*start, *end);
}

void Device::synchronize() {
    detail::refuse_while_capturing("Device::synchronize", kNothingToWaitFor);
    if (!instrument::active()) return do_synchronize();
    {
        instrument::Span span(*this, "synchronize", "sync");
        if (span.live()) span.arg("what", "device");
        do_synchronize();
    }
    instrument::synchronized(*this, nullptr);
}

LaunchGeometry Device::default_geometry(Op op, DType dtype, std::size_t rows, std::size_t cols) const {
    if (const auto layout = tile_layout(op, dtype, rows, cols))
        return tiled_geometry(*layout, rows, cols, info_.limits, std::string("default geometry of ") + op_name(op));
    return do_default_geometry(op, dtype, rows, cols);
}

std::optional<TileLayout> Device::tile_layout(Op op, DType dtype, std::size_t rows, std::size_t cols) const {
    if (!op_info(op).tiled) return std::nullopt;
    return do_tile_layout(op, dtype, rows, cols);
}

std::optional<TileLayout> Device::do_tile_layout(Op, DType, std::size_t, std::size_t) const { return std::nullopt; }

LaunchGeometry Device::do_default_geometry(Op op, DType, std::size_t rows, std::size_t cols) const {
    if (op_info(op).tiled)
        return geometry_2d(rows, cols, Dim3{16, 16, 1}, 16, 16, info_.limits);
    return geometry_1d_fit(rows * cols, std::min<std::size_t>(256, info_.limits.max_block_size), info_.limits);
}

std::vector<std::vector<std::size_t>> operand_shapes(Op op, const KernelArgs& a) {
    const OpInfo& info = op_info(op);
    using S = std::vector<std::size_t>;
    switch (op) {
        case Op::matmul:
        case Op::gemm: {
            const GemmArgs g = GemmArgs::of(a);
            return {g.trans_a ? S{g.k, g.m} : S{g.m, g.k}, g.trans_b ? S{g.n, g.k} : S{g.k, g.n}, S{g.m, g.n}};
        }
        case Op::dense: {
            const DenseArgs d = DenseArgs::of(a);
            return {S{d.batch, d.in}, S{d.out, d.in}, S{d.out}, S{d.batch, d.out}};
        }
        case Op::column_sum: return {S{MatrixArgs::of(a).rows, MatrixArgs::of(a).cols}, S{MatrixArgs::of(a).cols}};
        case Op::bias_activation: return {S{MatrixArgs::of(a).cols}, S{MatrixArgs::of(a).rows, MatrixArgs::of(a).cols}};
        case Op::dot: return {S{a.n}, S{a.n}, S{1}};  // out[1], the per-block partials, is the kernel's scratch
        default: break;  // elementwise, convert, adam_step and ops a program defined
    }
    return std::vector<S>(info.inputs.size() + info.outputs.size(), S{a.n});
}

int Backend::find_device(const std::string& spec) {
    throw InvalidArgument("backend '" + name() + "' names its devices by index only (" + name() + ":N), not by '" +
                          spec.substr(0, 64) + "'");
}

}  // namespace accel
