// Host backend: Backend, device memory (system memory), copies, streams, events.
#include "host_device.hpp"

#include <accel/environment.hpp>
#include <accel/error.hpp>
#include <accel/plugin.hpp>
#include <accel/version.hpp>

#include "kernels/parallel.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <thread>
#include <fstream>
#include <new>

namespace accel {
namespace host {

unsigned thread_count() {
    // Read once; a bad value throws from every call (a throwing initializer
    // leaves the static to be initialized again), first when the device opens.
    static const unsigned n = [] {
        if (const auto v = env::read_uint("ACCEL_HOST_THREADS", 1, kMaxThreads)) return static_cast<unsigned>(*v);
        const unsigned hc = std::thread::hardware_concurrency();
        return hc ? hc : 1u;
    }();
    return n;
}

namespace {

const env::Declaration kThreadsVariable{{"ACCEL_HOST_THREADS", "the number of worker threads",
                                         "worker threads of the host backend (default: all hardware threads)",
                                         "the host backend"}};

std::string cpu_model() {
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("model name", 0) == 0) {
            auto c = line.find(':');
            if (c != std::string::npos) return line.substr(line.find_first_not_of(' ', c + 1));
        }
    return "CPU";
}

std::uint64_t system_memory_bytes() {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
}

DeviceInfo host_info() {
    DeviceInfo i;
    i.backend = "host";
    i.index = 0;
    i.name = cpu_model();
    i.vendor = "host CPU";
    i.type = "cpu";
    i.driver_version = "-";
    i.runtime_version = std::string("accel ") + ACCEL_VERSION + " host (C++17, OpenMP threads)";
    i.compute_units = static_cast<int>(thread_count());
    i.global_memory_bytes = system_memory_bytes();
    // Host kernels take block.x as the elements per task; the rest is free.
    i.limits.max_block_size = std::size_t{1} << 30;
    i.limits.max_block_dims = {std::size_t{1} << 30, std::size_t{1} << 30, std::size_t{1} << 30};
    i.limits.max_grid_dims = {std::size_t{1} << 62, std::size_t{1} << 62, std::size_t{1} << 62};
    i.timer = "steady_clock (host ops run synchronously)";
    i.kernel_languages = {"host"};
    i.determinism = {true, true,
                     "a product's element is summed over k in one order fixed by K alone (passes of equal "
                     "depth); threads split outputs (rectangles of C, columns of column_sum), never a sum"};
    i.extra.push_back({"threads", std::to_string(thread_count())});
    i.extra.push_back({"vendor BLAS", cblas().description});
    return i;
}

class HostBackend final : public Backend {
public:
    std::string name() const override { return "host"; }
    Availability probe() override { return Availability{true, "", 1, false, 0, {}}; }
    std::shared_ptr<Device> create_device(int) override { return std::make_shared<HostDevice>(); }
};

}  // namespace

HostDevice::HostDevice() : Device(host_info()) { register_kernels(); }

DeviceHandle HostDevice::do_allocate(std::size_t bytes) {
    // 64-byte alignment: a cache line, and what AVX-512 loads like.
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p)
        throw OutOfMemory("allocate: the system refused " + std::to_string(bytes) + " bytes on host:0 (" +
                          std::to_string(info().global_memory_bytes) + " bytes of memory in total)");
    return p;
}

void HostDevice::do_deallocate(DeviceHandle h) noexcept { std::free(h); }

void HostDevice::do_copy_h2d(DeviceHandle dst, std::size_t off, const void* src, std::size_t bytes, Stream&, bool) {
    std::memcpy(static_cast<char*>(dst) + off, src, bytes);
}

void HostDevice::do_copy_d2h(void* dst, DeviceHandle src, std::size_t off, std::size_t bytes, Stream&, bool) {
    std::memcpy(dst, static_cast<const char*>(src) + off, bytes);
}

void HostDevice::do_copy_d2d(DeviceHandle dst, std::size_t doff, DeviceHandle src, std::size_t soff,
                             std::size_t bytes, Stream&, bool) {
    char* d = static_cast<char*>(dst) + doff;
    const char* s = static_cast<const char*>(src) + soff;
    parallel_for(bytes, std::size_t{1} << 20, [&](std::size_t b, std::size_t e) { std::memmove(d + b, s + b, e - b); });
}

std::unique_ptr<Stream> HostDevice::do_create_stream() { return std::make_unique<HostStream>(*this); }
std::unique_ptr<Event> HostDevice::do_create_event() { return std::make_unique<HostEvent>(*this); }
void HostDevice::do_synchronize() {}    // host ops have finished when they return
// The host's launch: one empty task for each thread of the OpenMP team, the
// fixed cost every parallel host op pays (there is no kernel to launch).
void HostDevice::launch_empty(Stream&) {
    parallel_for(thread_count(), 1, [](std::size_t, std::size_t) {});
}

double HostDevice::do_elapsed_ms(Event& start, Event& end) {
    auto& a = static_cast<HostEvent&>(start);
    auto& b = static_cast<HostEvent&>(end);
    return std::chrono::duration<double, std::milli>(b.time - a.time).count();
}

LaunchGeometry HostDevice::do_default_geometry(Op op, DType, std::size_t rows, std::size_t cols) const {
    LaunchGeometry g;
    // Elements per task: enough that waking a worker thread is amortized
    // (rows for matmul/dense).
    const std::size_t per_task = op_info(op).tiled ? 16 : std::size_t{1} << 15;
    g.block = {per_task, 1, 1};
    g.grid = {std::max<std::size_t>(1, (rows * cols + g.block.x - 1) / g.block.x), 1, 1};
    return g;
}

}  // namespace host
}  // namespace accel

// auto: the host when no backend has a GPU.
ACCEL_DEFINE_PLUGIN("host", accel::host::HostBackend, "", 0, 1)
