// The Vulkan backend: every physical device with a compute queue that the
// Vulkan loader lists (GPU drivers; Mesa's lavapipe on CPUs), through
// vkEnumeratePhysicalDevices. vulkan:N is the N-th device with a compute
// queue in the loader's order; vulkan:PIECE[:I] the I-th device whose driver
// or device name contains PIECE (e.g. vulkan:lavapipe, vulkan:llvmpipe,
// vulkan:nvidia:1), vulkan:gpu|cpu the first of that type. `auto` ranks
// Vulkan GPUs below CUDA and OpenCL (15) and never opens a CPU driver.
//
// The loader, libvulkan.so.1, is opened at run time (load_vulkan()): without
// it, or without a driver, probe() reports the backend unavailable with the
// reason. One VkInstance per process, made at the first probe and kept.
// Under VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation the instance also gets
// a debug-utils messenger that prints every validation message to stderr
// (the conformance.vulkan.validation and reliability.vulkan.validation
// tests fail on any).
//
// Kernels are GLSL compute shaders (shaders/*.comp) compiled to SPIR-V at
// build time, one module per shader and dtype, embedded in the plugin. A
// compute pipeline is created per (module, work-group size, specialization
// constants: e.g. each GEMM blocking) on first use and kept with the device
// (and in the pipeline cache file across processes). Operands are storage-buffer descriptors (a set per
// launch, from descriptor pools of the device), the element range and the
// op's numbers are push constants. A launch over n elements is recorded as
// one or more dispatches of the caller's geometry, each over at most
// 32768 elements per invocation (and fewer where each element has an inner
// loop, matmul's k or column_sum's rows): llvmpipe (lavapipe) ends a shader
// invocation after 65535 loop iterations, which a grid-stride loop over a
// small grid would otherwise pass silently. On llvmpipe an inner loop of
// 32768 iterations or more (k, rows, the FMA probe's iterations) is refused
// with Unsupported.
//
// Memory: buffers of up to 2 MiB are sub-allocated (first fit, coalescing
// free ranges) from 16 MiB VkDeviceMemory blocks, larger ones get their
// own VkDeviceMemory, of a DEVICE_LOCAL type where the buffer can live in
// one; one empty block per memory type is kept for reuse (the device's
// cached memory, given back on OutOfMemory). Copies from and to the host go
// through a HOST_VISIBLE | HOST_COHERENT staging buffer per copy, placed the
// same way in persistently mapped blocks (async host-to-device copies take
// the host data at the call). A DeviceHandle is a
// VulkanBuffer*. A buffer freed while work submitted before may still use
// it is destroyed once every stream has passed that work (checked, without
// blocking, on later allocations, frees and synchronizations).
//
// Streams, and how the thread-safety contract of accel/device.hpp is kept:
// the device has one VkQueue (of the first family with compute), which every
// stream submits to; vkQueueSubmit is serialized by the queue's mutex. A
// stream is a command pool and the list of its submissions in flight, both
// guarded by the stream's mutex (command pools are externally synchronized).
// Every operation (launch, copy, event) is recorded into the stream's open
// command buffer after a full memory barrier (all commands before it on the
// queue finish and their writes become visible), so every stream is in
// order. The command buffer is submitted, with one fence and a last barrier
// that makes device writes visible to the host, once it holds
// StreamState::kBatch commands or when the host waits for or asks about one
// of them (Stream::synchronize, an Event's wait or query, a blocking copy,
// Device::synchronize, a freed buffer's check). All streams share the
// queue, so streams of one device do not overlap. A command's resources
// (staging buffers, descriptor sets, the copy of a device-to-host result
// into the caller's memory) are released when its submission's fence is
// seen signalled.
// Descriptor pools, the memory blocks and the pipelines have a mutex each.
//
// Launch geometry: block = the work-group size (specialization constants 0,
// 1, 2 of every shader), grid = the vkCmdDispatch counts; limits from
// maxComputeWorkGroupSize / Count / Invocations. Every kernel is a
// grid-stride loop over the flattened grid, so any geometry within the
// limits is correct; the grid's invocations must stay below 2^32 and the
// elements of one operand within maxStorageBufferRange.
//
// Timing: timestamp queries (vkCmdWriteTimestamp at the bottom of the pipe),
// scaled by timestampPeriod; on a queue without timestamps, the host clock
// when the event's submission is seen complete (info().timer says which).
#pragma once

// The Vulkan loader is opened at run time (dlopen of libvulkan.so.1, see
// load_vulkan()), so that a machine without it finds this backend
// unavailable, with the reason, rather than failing to load the plugin:
// no prototypes; the functions are the pointers declared below.
#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES
#endif
#include <vulkan/vulkan.h>

#include <accel/device.hpp>
#include <accel/graph.hpp>
#include <accel/page_locked.hpp>
#include <accel/plugin.hpp>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace accel {
namespace vulkan {

/// Outputs of fewer columns than this go to gemm_narrow.comp (a subgroup per
/// element) or gemm.comp, never to the tiled kernel; nor do those of fewer rows.
constexpr std::size_t kGemmBlock = 16;

/// The blocking of the tiled matmul/dense kernel (shaders/gemm_tiled.comp,
/// its specialization constants): a work-group computes a bm × bn output
/// tile in k slices of bk, each invocation tm × tn outputs (so the
/// work-group is bn/tn × bm/tm invocations); global loads of vw elements
/// where the operand allows; with `local`, slices staged in shared memory,
/// double-buffered when stages = 2. Every set sums each output in the same
/// order (k ascending, one fma per step), so the choice changes speed only,
/// never a bit of the result.
struct GemmParams {
    std::uint32_t bm = 64, bn = 64, bk = 16;  ///< work-group tile (rows, columns, depth: unused unstaged)
    std::uint32_t tm = 4, tn = 4;             ///< outputs per invocation (rows, columns)
    std::uint32_t vw = 1;                     ///< elements per global load: 1, 2 or 4
    std::uint32_t local = 1;                  ///< 1: slices staged in shared memory; 0: read from the buffers
    std::uint32_t stages = 1;                 ///< shared slices: 1, or 2 (double buffering; local only)
    /// The work-group (the launch's block): bn/tn × bm/tm × 1.
    Dim3 block() const noexcept { return {bn / tn, bm / tm, 1}; }
    /// Specialization constants 3..8 of gemm_tiled.comp.
    std::vector<std::uint32_t> spec() const { return {tm, tn, bk, vw, local, stages}; }
    /// "bm=64 bn=64 bk=16 tm=4 tn=4 vw=1 local=1 stages=1".
    std::string to_string() const;
    /// The names of the fields in to_string()'s order, and pointers to them.
    static const std::vector<std::pair<const char*, std::uint32_t GemmParams::*>>& fields();
    bool operator==(const GemmParams& o) const noexcept { return spec() == o.spec() && bm == o.bm && bn == o.bn; }
};

// The Vulkan functions this backend calls, as pointers named like the
// functions: the loader's global ones (vkGetInstanceProcAddr(NULL, ...)) and
// the rest (through the instance).
#define ACCEL_VK_GLOBAL_FUNCTIONS(X) \
    X(vkEnumerateInstanceVersion) \
    X(vkEnumerateInstanceExtensionProperties) \
    X(vkEnumerateInstanceLayerProperties) \
    X(vkCreateInstance)
#define ACCEL_VK_INSTANCE_FUNCTIONS(X) \
    X(vkAllocateCommandBuffers) \
    X(vkAllocateDescriptorSets) \
    X(vkAllocateMemory) \
    X(vkBeginCommandBuffer) \
    X(vkBindBufferMemory) \
    X(vkCmdBindDescriptorSets) \
    X(vkCmdBindPipeline) \
    X(vkCmdCopyBuffer) \
    X(vkCmdDispatch) \
    X(vkCmdExecuteCommands) \
    X(vkCmdPipelineBarrier) \
    X(vkCmdPushConstants) \
    X(vkCmdResetQueryPool) \
    X(vkCmdWriteTimestamp) \
    X(vkCreateBuffer) \
    X(vkCreateCommandPool) \
    X(vkCreateComputePipelines) \
    X(vkCreateDescriptorPool) \
    X(vkCreateDescriptorSetLayout) \
    X(vkCreateDevice) \
    X(vkCreateFence) \
    X(vkCreatePipelineCache) \
    X(vkCreatePipelineLayout) \
    X(vkCreateQueryPool) \
    X(vkCreateShaderModule) \
    X(vkDestroyBuffer) \
    X(vkDestroyCommandPool) \
    X(vkDestroyDescriptorPool) \
    X(vkDestroyDescriptorSetLayout) \
    X(vkDestroyDevice) \
    X(vkDestroyFence) \
    X(vkDestroyPipeline) \
    X(vkDestroyPipelineCache) \
    X(vkDestroyPipelineLayout) \
    X(vkDestroyQueryPool) \
    X(vkDestroyShaderModule) \
    X(vkDeviceWaitIdle) \
    X(vkEndCommandBuffer) \
    X(vkEnumerateDeviceExtensionProperties) \
    X(vkEnumeratePhysicalDevices) \
    X(vkFreeDescriptorSets) \
    X(vkFreeMemory) \
    X(vkGetBufferMemoryRequirements) \
    X(vkGetDeviceQueue) \
    X(vkGetFenceStatus) \
    X(vkGetPipelineCacheData) \
    X(vkGetPhysicalDeviceFeatures2) \
    X(vkGetPhysicalDeviceMemoryProperties) \
    X(vkGetPhysicalDeviceProperties) \
    X(vkGetPhysicalDeviceProperties2) \
    X(vkGetPhysicalDeviceQueueFamilyProperties) \
    X(vkGetQueryPoolResults) \
    X(vkMapMemory) \
    X(vkQueueSubmit) \
    X(vkResetCommandBuffer) \
    X(vkResetFences) \
    X(vkUpdateDescriptorSets) \
    X(vkWaitForFences)
#define ACCEL_VK_DECLARE_FUNCTION(name) extern PFN_##name name;
ACCEL_VK_GLOBAL_FUNCTIONS(ACCEL_VK_DECLARE_FUNCTION)
ACCEL_VK_INSTANCE_FUNCTIONS(ACCEL_VK_DECLARE_FUNCTION)
extern PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr;

/// Opens the Vulkan loader (libvulkan.so.1) once and resolves
/// vkGetInstanceProcAddr and the global functions; returns "" or why not
/// (dlerror's text, or the function missing). Never throws; thread-safe.
std::string load_vulkan();
/// Resolves the ACCEL_VK_INSTANCE_FUNCTIONS through `instance` (once);
/// returns "" or the name of the first function the loader lacks. Never throws.
std::string load_instance_functions(VkInstance instance);

/// Symbolic name of a VkResult, e.g. "VK_ERROR_OUT_OF_DEVICE_MEMORY";
/// "unknown VkResult" otherwise. Never throws.
const char* vk_result_name(VkResult r) noexcept;

/// Throws DeviceError("Vulkan call failed in <where>: VK_NAME (code)", code,
/// name) when r is not VK_SUCCESS.
void check_vk(VkResult r, const std::string& where);

/// A VkDeviceMemory block that small buffers are sub-allocated from
/// (VulkanDevice::create_buffer), so that many small tensors and per-copy
/// staging buffers cost no vkAllocateMemory each (drivers cap the number of
/// allocations, maxMemoryAllocationCount, at 4096 on many GPUs).
struct MemoryBlock {
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkDeviceSize size = 0;                      ///< bytes
    std::uint32_t type = 0;                     ///< memory type index
    char* mapped = nullptr;                     ///< host-visible blocks: mapped once, whole
    std::map<VkDeviceSize, VkDeviceSize> free;  ///< offset -> bytes of each free range, coalesced
    VkDeviceSize used = 0;                      ///< bytes handed out
};

/// A device buffer: what a DeviceHandle of this backend points to. Created
/// by VulkanDevice::do_allocate, destroyed by do_deallocate; or a program's
/// VkBuffer adopted by VulkanDevice::adopt (its bytes from `start` on; accel
/// never destroys it), released by VulkanDevice::release. Every descriptor
/// and copy addresses the buffer's bytes from `start`.
struct VulkanBuffer {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceSize start = 0;                  ///< where its bytes begin in `buffer` (0 but for adopted ones)
    VkDeviceMemory memory = VK_NULL_HANDLE;  ///< its own memory; null when sub-allocated from `block`
    VkDeviceSize size = 0;                   ///< bytes
    MemoryBlock* block = nullptr;            ///< the block it lives in, or null
    VkDeviceSize offset = 0, reserved = 0;   ///< its range in `block` (bytes)
};

class VulkanDevice;

/// The VkDevice and its one queue, shared by the VulkanDevice and every
/// stream state, so that the VkDevice is destroyed after the last command
/// pool made on it (the default stream, owned by accel::Device, is destroyed
/// after VulkanDevice's destructor body). Thread-safe: submit() holds the
/// queue's mutex.
struct DeviceCore {
    VkDevice device = VK_NULL_HANDLE;
    VkQueue queue = VK_NULL_HANDLE;
    std::uint32_t queue_family = 0;
    std::mutex queue_mutex;
    /// Waits for the device to be idle and destroys it.
    ~DeviceCore();
    /// vkQueueSubmit of one command buffer signalling `fence`, under the
    /// queue's mutex. Throws DeviceError.
    void submit(VkCommandBuffer cb, VkFence fence);
};

/// The state of one stream, shared by the stream, the events recorded on it
/// and the device's list of streams (weakly), so that an event or
/// Device::synchronize can wait for it while another thread destroys the
/// stream. Every member function is thread-safe (the mutex guards the pool
/// and the submissions).
class StreamState {
public:
    /// Creates the command pool on `core`'s queue family; throws DeviceError.
    explicit StreamState(std::shared_ptr<DeviceCore> core);
    /// Waits for every submission (errors ignored) and destroys the pool.
    ~StreamState();
    StreamState(const StreamState&) = delete;
    StreamState& operator=(const StreamState&) = delete;

    /// Records `record` (after a barrier that makes everything earlier on the
    /// queue finish first) into the stream's open command buffer and returns
    /// its sequence number (1, 2, ...). The open command buffer is submitted
    /// with one fence once it holds kBatch commands, or when the host waits
    /// for (wait, wait_all) or asks about (completed) one of them: a batch of
    /// ops costs one vkQueueSubmit and one fence. `done` runs on the host once
    /// the command is seen complete (in order; it must not throw). Throws
    /// DeviceError when a Vulkan call fails; the `done` actions of the
    /// commands lost with it then run at once (releasing what they hold).
    std::uint64_t submit(const std::function<void(VkCommandBuffer)>& record, std::function<void()> done = {});
    /// Blocks until command `seq` and every earlier one of this stream have
    /// completed, and runs their `done` actions. Throws DeviceError (e.g.
    /// VK_ERROR_DEVICE_LOST).
    void wait(std::uint64_t seq);
    /// wait() for everything recorded so far.
    void wait_all();
    /// Whether command `seq` and every earlier one have completed (their
    /// `done` actions run); never blocks (but submits the open batch when it
    /// holds `seq`, so that polling makes progress). False when a fence
    /// cannot be read or the submission fails.
    bool completed(std::uint64_t seq) noexcept;
    /// The sequence number of the latest command recorded (0 before any).
    std::uint64_t last_submitted() const;
    /// Commands per submission at most.
    static constexpr int kBatch = 16;

    /// From now until end_recording, submit() records its commands (after
    /// the same barrier) into one secondary command buffer of this stream's
    /// pool, made for executing in several submissions at once
    /// (VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT), and submits nothing;
    /// their `done` actions are kept. For a stream of its own that no other
    /// thread uses. Throws DeviceError.
    void begin_recording();
    /// Ends the recording: the executable secondary command buffer (valid
    /// while this state lives) and the kept `done` actions, to run once no
    /// execution of it is pending. Throws DeviceError.
    std::pair<VkCommandBuffer, std::vector<std::function<void()>>> end_recording();

private:
    struct Submission {
        std::uint64_t first = 0;  ///< sequence number of its first command (the rest follow it)
        VkCommandBuffer cb = VK_NULL_HANDLE;
        VkFence fence = VK_NULL_HANDLE;
        std::vector<std::function<void()>> done;
    };
    /// Retires the finished submissions at the front; with `block`, waits
    /// for those holding commands up to `seq`. Caller holds mutex_.
    void retire(std::uint64_t seq, bool block);
    /// Ends and submits the open command buffer, if any. Caller holds mutex_.
    void flush();
    /// Records the barrier every command starts with into `cb`.
    static void barrier(VkCommandBuffer cb);

    std::shared_ptr<DeviceCore> core_;
    mutable std::mutex mutex_;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    std::deque<Submission> pending_;
    Submission open_;  ///< being recorded (cb null when none)
    std::vector<VkCommandBuffer> free_cbs_;
    std::vector<VkFence> free_fences_;
    std::uint64_t next_seq_ = 1;
    VkCommandBuffer recording_ = VK_NULL_HANDLE;  ///< begin_recording's secondary command buffer
    std::vector<std::function<void()>> recorded_done_;
};

/// A stream: a StreamState on the device's queue (see the file comment).
class VulkanStream final : public Stream {
public:
    /// Throws DeviceError when the command pool cannot be created.
    explicit VulkanStream(VulkanDevice& d);
    /// Waits for the stream's work, then releases it.
    ~VulkanStream() override;
    /// Waits for all submitted work; throws DeviceError on failure.
    void do_synchronize() override;
    /// The shared state (never null).
    const std::shared_ptr<StreamState>& state() const noexcept { return state_; }

private:
    std::shared_ptr<StreamState> state_;
};

/// An event: a timestamp query written after all earlier work of the stream
/// (or, without timestamps, the host time its submission was seen complete).
/// Recording again replaces the earlier mark.
class VulkanEvent final : public Event {
public:
    /// Creates the event's query pool where the queue has timestamps; throws DeviceError.
    explicit VulkanEvent(VulkanDevice& d);
    ~VulkanEvent() override;
    /// The event's time in ns (device clock scaled by timestampPeriod, or
    /// host steady_clock), after waiting for it. Throws DeviceError.
    double time_ns();
    /// When the latest record() happened among all records on the device (1, 2, ...; 0: never).
    std::uint64_t order() const noexcept { return order_; }

protected:
    void do_record(Stream& stream) override;
    void do_synchronize() override;

private:
    VulkanDevice& device_;
    std::shared_ptr<DeviceCore> core_;
    VkQueryPool pool_ = VK_NULL_HANDLE;
    std::shared_ptr<StreamState> stream_;  ///< of the latest record
    std::uint64_t seq_ = 0;
    std::uint64_t order_ = 0;
    std::shared_ptr<std::atomic<double>> host_ns_ = std::make_shared<std::atomic<double>>(0.0);
};

/// Whether the process asked for the Khronos validation layer (its name in
/// VK_INSTANCE_LAYERS): the backend then enables VK_EXT_debug_utils and
/// prints every validation warning and error to stderr, prefixed
/// "accel vulkan validation:". Thread-safe.
bool validation_requested() noexcept;
/// How many validation warnings and errors were reported so far. Thread-safe.
std::uint64_t validation_message_count() noexcept;

/// The vendor library: none (vulkan_vendor.cpp says why).
std::string vendor_blas_description();

/// Everything the backend knows of one physical device (filled by the backend).
struct PhysicalDevice {
    VkPhysicalDevice handle = VK_NULL_HANDLE;
    std::uint32_t queue_family = 0;  ///< first family with VK_QUEUE_COMPUTE_BIT
    std::uint32_t timestamp_bits = 0;  ///< of that family (0: no timestamps)
    VkPhysicalDeviceProperties props{};
    std::string driver_name, driver_info;  ///< VkPhysicalDeviceDriverProperties, or empty
    VkDriverId driver_id = static_cast<VkDriverId>(0);
    bool has_pci_bus_info = false;  ///< VK_EXT_pci_bus_info
    bool fp64 = false;              ///< shaderFloat64 and shaderInt64
    bool storage16 = false;         ///< storageBuffer16BitAccess
    bool storage8 = false;          ///< storageBuffer8BitAccess (Vulkan 1.2; false before)
    std::uint32_t subgroup_size = 0;   ///< VkPhysicalDeviceSubgroupProperties (0 before Vulkan 1.1)
    bool subgroup_arithmetic = false;  ///< subgroupAdd and the like in compute shaders
    /// VkPhysicalDeviceFloatControlsProperties (Vulkan 1.2; all false before):
    /// shaderDenormPreserveFloat32/64, shaderSignedZeroInfNanPreserveFloat32/64.
    bool denorm_preserve32 = false, denorm_preserve64 = false;
    bool nan_preserve32 = false, nan_preserve64 = false;
};

/// How copy_device_to_device copies on `pd`: "shader" (shaders/copy.comp)
/// or "transfer" (vkCmdCopyBuffer), by ACCEL_VULKAN_COPY (auto, shader,
/// transfer; vulkan_copy.cpp gives auto's rule). Throws InvalidArgument for
/// another value, Unsupported for shader on a device without
/// storageBuffer8BitAccess. Thread-safe.
std::string copy_method(const PhysicalDevice& pd);

/// The DeviceInfo of `d` opened as vulkan:`index`, `stable` its stable
/// selector (vulkan_backend.cpp, for the VulkanDevice constructor).
DeviceInfo make_info(int index, const PhysicalDevice& d, const std::string& stable);

/// One Vulkan device (VkDevice) with its queue, pipelines and kernels.
///
/// Kernels: every op of native_ops_of_every_backend(), in f32; matmul and
/// dense by a register-blocked kernel under the default geometry's
/// work-groups (gemm_tiled.comp; its blocking, GemmParams, chosen per device
/// class and output by gemm_params()), by a subgroup per output element
/// where the output has fewer than 16 columns and the device has subgroup
/// arithmetic (gemm_narrow.comp), and by a plain kernel, an output element per
/// invocation, otherwise. f64 where the device has shaderFloat64 and
/// shaderInt64; f16 and bf16 where it has storageBuffer16BitAccess (computed
/// in float, converted by integer code in the shaders). No vendor path.
///
/// Tuning (vulkan_gemm.cpp): matmul and dense in every dtype, shape classes
/// small and large (narrow outputs run gemm_narrow.comp or gemm.comp, which
/// have no blocking), are tunable (accel/device.hpp's Tuning); the
/// parameters are GemmParams' fields by name. A tuned key's blocking
/// replaces the device class's default for outputs of its class that span
/// its tile.
class VulkanDevice final : public Device,
                           public Probes,
                           public NativeInterop,
                           public Tuning,
                           public KernelBuilder,
                           public PageLockedMemory,
                           public GraphRecorder {
public:
    // Probes (contracts in accel/device.hpp; shaders/empty.comp and shaders/fma_throughput.comp).
    ACCEL_PROBES_OVERRIDES

    // PageLockedMemory (accel/page_locked.hpp; vulkan_device.cpp): a mapped
    // host-visible, coherent buffer, which copies to and from it read or
    // write directly (no staging buffer, no memcpy).
    ACCEL_PAGE_LOCKED_MEMORY_OVERRIDES

    // GraphRecorder (accel/graph.hpp; vulkan_streams.cpp): a run of kernels
    // recorded once into a secondary command buffer on a stream of its own;
    // a replay is one vkCmdExecuteCommands in the stream's batch.
    ACCEL_GRAPH_RECORDER_OVERRIDES

    // Tuning (contracts in accel/device.hpp; vulkan_gemm.cpp).
    std::vector<TuningKey> tunable() const override;
    TuningParams default_params(const TuningKey& key) const override;
    std::vector<TuningParams> candidates(const TuningKey& key, bool quick) const override;
    TuningParams params(const TuningKey& key) const override;
    void set_params(const TuningKey& key, const TuningParams& p) override;
    void reset_params() noexcept override;
    std::string describe(const TuningKey& key, const TuningParams& p) const override;

    // NativeInterop (vulkan_interop.cpp): VkInstance, VkPhysicalDevice,
    // VkDevice, the queue family; the VkQueue every stream submits to; a
    // buffer's VkBuffer and start; a program's VkBuffer range adopted as a
    // VulkanBuffer. No stream over a program's queue (see stream_over).
    ACCEL_NATIVE_INTEROP_OVERRIDES  // accel/plugin.hpp

    /// Opens `pd` as vulkan:`index` (`stable` its stable selector): creates
    /// the VkDevice with one compute queue and registers the kernels (their
    /// pipelines are created on first use). Throws DeviceError.
    VulkanDevice(int index, VkInstance instance, const PhysicalDevice& pd, const std::string& stable);
    /// Waits for the device to be idle and destroys everything it created.
    ~VulkanDevice() override;

    VkDevice device() const noexcept { return device_; }
    /// The VkDevice and queue, shared with the streams.
    const std::shared_ptr<DeviceCore>& core() const noexcept { return core_; }
    /// Whether the queue writes timestamps; their period in ns per tick and valid-bit mask.
    bool has_timestamps() const noexcept { return pd_.timestamp_bits > 0; }
    double timestamp_period() const noexcept { return pd_.props.limits.timestampPeriod; }
    std::uint64_t timestamp_mask() const noexcept {
        return pd_.timestamp_bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << pd_.timestamp_bits) - 1;
    }
    /// The StreamState of a stream of this device.
    static StreamState& state_of(Stream& s) { return *static_cast<VulkanStream&>(s).state(); }
    /// The next number of the device's record order (Event::record); thread-safe.
    std::uint64_t next_record_order() noexcept;
    /// Adds a stream's state to the list Device::synchronize waits on. Thread-safe.
    void add_stream(const std::shared_ptr<StreamState>& s);

    /// A buffer of `bytes`: device-local storage, or (host_visible) a
    /// host-visible, coherent staging buffer mapped at `*mapped`. Buffers of
    /// up to kSubAllocateMax bytes are placed in a shared MemoryBlock of
    /// kBlockBytes; larger ones get their own memory. Release with
    /// destroy_buffer. Throws OutOfMemory / DeviceError. Thread-safe.
    VulkanBuffer* create_buffer(std::size_t bytes, bool host_visible, void** mapped);
    /// Destroys a buffer of create_buffer, returning its range to its block
    /// (a block left empty is kept, one per memory type, as cached memory;
    /// others are freed). Never throws; thread-safe.
    void destroy_buffer(VulkanBuffer* b) noexcept;
    /// Bytes of the memory blocks (kBlockBytes each) and largest buffer
    /// placed in one (kSubAllocateMax): 1/8 of a block, as general-purpose
    /// Vulkan allocators do, so a block is not held by one large tensor.
    static constexpr VkDeviceSize kBlockBytes = VkDeviceSize{16} << 20;
    static constexpr VkDeviceSize kSubAllocateMax = kBlockBytes / 8;

    /// Runs elementwise op `op` (a table op with an elementwise_reference and
    /// a shader of its name) with the arguments `a`. Throws InvalidArgument
    /// (a grid of 2^32 invocations or more), Unsupported (n or an operand
    /// beyond the device's storage-buffer range), DeviceError. Thread-safe.
    void launch_elementwise(Op op, const KernelArgs& a);

    // The other kernels, for tensors of dtype `t`, with the arguments as
    // unpacked from KernelArgs (handles of this device, sizes in elements, a
    // checked geometry, the stream); semantics are the op table's. Each
    // throws Unsupported when an operand is beyond one storage-buffer binding
    // or (llvmpipe) an inner loop is too long, InvalidArgument for a grid of
    // 2^32 invocations or more, DeviceError on a Vulkan failure. Thread-safe.

    /// C[m,n] = act(op(A)·op(B) + bias[n]): matmul (bias null, act none) and
    /// dense (A = x, B = w given as [n,k], tb = true). A, B null when k = 0.
    /// `op`: matmul or dense (the tuning key's op).
    /// A block equal to gemm_params(op, m, n, t).block() (the default
    /// geometry's) runs the tiled kernel with that blocking
    /// (shaders/gemm_tiled.comp, output tiles taken grid-stride by
    /// work-group); any other geometry gemm_narrow.comp or the plain one
    /// (shaders/gemm.comp). All sum each output in the same order.
    void k_gemm(Op op, DType t, DeviceHandle a, DeviceHandle b, DeviceHandle bias, DeviceHandle c, const GemmArgs& p,
                Activation act, const LaunchGeometry& g, Stream& s);
    /// dot (KernelArgs' DotArgs): shaders/dot.comp over every element in one
    /// dispatch, then shaders/dot_total.comp in one work-group. Throws
    /// InvalidArgument for work-groups above 1024 invocations, Unsupported
    /// where the geometry's invocations would each loop over more elements
    /// than one invocation may (kElementsPerInvocation).
    void k_dot(const KernelArgs& a);
    /// y[cols] = column sums of x[rows, cols].
    void k_column_sum(DType t, DeviceHandle x, DeviceHandle y, std::size_t rows, std::size_t cols,
                      const LaunchGeometry& g, Stream& s);
    /// y[r,c] = act((read_y ? y[r,c] : 0) + bias[c]) (bias may be null).
    void k_bias_activation(DType t, DeviceHandle bias, DeviceHandle y, std::size_t rows, std::size_t cols,
                           bool read_y, Activation act, const LaunchGeometry& g, Stream& s);
    /// Runs shader `shader` (module "<shader>.<t>") over n elements with
    /// `operands` bound in order (null → the scratch buffer) and `scalars`
    /// pushed in t's compute type: bce_with_logits_backward {scale},
    /// adam_step {β1, β2, eps, step, bc2}, convert_<from> {}.
    void dispatch_scalars(const std::string& shader, DType t, const std::vector<DeviceHandle>& operands,
                          std::size_t n, const std::vector<double>& scalars, const LaunchGeometry& g, Stream& s);

    /// Whether `t` is one of the device's dtypes (see the class comment).
    bool has_dtype(DType t) const noexcept;

protected:
    ACCEL_DEVICE_RUNTIME_OVERRIDES  // the runtime every device has (accel/plugin.hpp)
    /// Its capabilities (accel/capability.hpp).
    void* do_capability(std::string_view name) noexcept override {
        return accel::offer_capability<Probes, NativeInterop, Tuning, KernelBuilder, PageLockedMemory, GraphRecorder>(
            this, name);
    }
    // KernelBuilder: a program's own kernels.
    std::shared_ptr<accel::BuiltKernel> build_program_kernel(const accel::KernelSource& source) override;
    std::string do_unsupported_reason(Op op, DType dtype, OpPath path) const override;
    /// matmul and dense: blocks of gemm_params(op, rows, cols).block(), one per
    /// output tile up to maxComputeWorkGroupCount[0] (the tiled kernel takes
    /// tiles grid-stride, so a tall output needs no grid beyond the limits),
    /// or 1-D blocks of 256 where the output has fewer than 16 rows or
    /// columns or no blocking fits the device; else the default.
    LaunchGeometry do_default_geometry(Op op, DType dtype, std::size_t rows, std::size_t cols) const override;

private:
    /// The page-locked buffer holding all of [data, data + bytes) and the
    /// offset of `data` in it, or {nullptr, 0}. Thread-safe.
    std::pair<VulkanBuffer*, VkDeviceSize> page_locked_range(const void* data, std::size_t bytes) const;
    /// Records vkCmdCopyBuffer of `bytes` from (`from`, `from_at`) to (`to`,
    /// `to_at`) on `s`, `done` run once it completed; with `blocking`, waits
    /// for it. Throws DeviceError.
    void copy_buffer(VkBuffer from, VkDeviceSize from_at, VkBuffer to, VkDeviceSize to_at, std::size_t bytes,
                     Stream& s, bool blocking, std::function<void()> done = {});
    mutable std::mutex page_locked_mutex_;
    std::map<const char*, VulkanBuffer*> page_locked_;  ///< by mapped address
    friend class UserPipeline;  // a program's kernel (vulkan_interop.cpp): the pools, limits and cache
    /// Claims and registers the kernels (vulkan_ops.cpp), from the constructor.
    void register_kernels();
    /// The SPIR-V modules op's kernel in dtype t uses.
    std::vector<std::string> modules_of(Op op, DType t) const;
    /// Elements one invocation may take per dispatch when each has an inner
    /// loop of `inner` iterations; throws Unsupported on llvmpipe when even one is too many.
    std::size_t per_invocation(std::size_t inner, const std::string& what) const;
    /// The buffer of a handle; the scratch buffer for null (an absent operand).
    VulkanBuffer* operand(DeviceHandle h) const noexcept;
    /// The pipeline of SPIR-V module `module` ("<shader>.<dtype>") with
    /// `bindings` storage buffers, work-group size `block` (specialization
    /// constants 0..2) and `spec` as specialization constants 3, 4, ...,
    /// created on first use. Throws DeviceError (also when no such module is
    /// embedded).
    VkPipeline pipeline(const std::string& module, std::uint32_t bindings, const Dim3& block,
                        const std::vector<std::uint32_t>& spec = {});
    /// A new compute pipeline of `module` (entry point main) with `layout`:
    /// specialization constants 0..2 the work-group size `block`, 3, 4, ...
    /// `spec`; in the device's pipeline cache. The caller keeps and destroys
    /// it. Throws DeviceError naming `what`.
    VkPipeline compute_pipeline(VkShaderModule module, VkPipelineLayout layout, const Dim3& block,
                                const std::vector<std::uint32_t>& spec, const std::string& what);
    /// Points binding i of `set` at storage buffer range infos[i].
    void write_storage_buffers(VkDescriptorSet set, const std::vector<VkDescriptorBufferInfo>& infos);
    /// The blocking gemm_tiled.comp runs with for op's m × n output of
    /// dtype t (vulkan_gemm.cpp): the tuned one of its key (op, t, shape
    /// class) where set and the output spans its tile, else the first of the
    /// device class's defaults (default_gemm_params) whose tile the output
    /// spans whole, that the device can run and (on a GPU) that gives at
    /// least 128 work-groups, else the largest that fits; none for an output of fewer than 16 rows or columns
    /// or where none fits the device. The default geometry's block and
    /// k_gemm's choice of kernel both follow it. Never throws.
    std::optional<GemmParams> gemm_params(Op op, std::size_t m, std::size_t n, DType t) const noexcept;
    /// gemm_params without the tuned blocking: the device class's choice.
    std::optional<GemmParams> default_gemm_params(std::size_t m, std::size_t n, DType t) const noexcept;
    /// The blocking named by `p` (every GemmParams field by name, nothing
    /// else); throws InvalidArgument naming the parameter, or
    /// gemm_params_problem's reason, prefixed by `where`.
    GemmParams gemm_params_from(const TuningParams& p, DType t, const std::string& where) const;
    /// Keys set by set_params (never the default's), guarded by tuning_mutex_.
    mutable std::mutex tuning_mutex_;
    std::map<TuningKey, GemmParams> tuned_;
    /// The device class's blockings in order of preference, largest tile
    /// first, the last (16 × 16 tile, one output per invocation) for any
    /// output of at least 16 × 16: GPUs of NVIDIA, AMD and Intel get
    /// 128-wide tiles, CPU drivers (lavapipe) what measured best there
    /// (docs/results/vulkan-gemm-tuning-2026-12-02.md), others 64 × 64.
    std::vector<GemmParams> default_gemm_params(DType t) const;
    /// Why the device cannot run gemm_tiled.comp with `p` in dtype t (a
    /// field out of range, a tile not divisible by the work per invocation
    /// or the vector width, a work-group or shared memory beyond the
    /// device's limits), or "" when it can. Never throws.
    std::string gemm_params_problem(const GemmParams& p, DType t) const;
    /// Whether a matmul/dense output of `cols` columns gets a subgroup per
    /// element (gemm_narrow.comp): fewer than kGemmBlock columns, on a device
    /// with subgroup arithmetic. The default geometry and the kernel choice
    /// both follow it.
    bool subgroup_per_output(std::size_t cols) const noexcept {
        return pd_.subgroup_arithmetic && cols < kGemmBlock;
    }
    /// Records the dispatches of `module` over n elements on `s` in one
    /// command buffer: binds `buffers` (in binding order), and dispatches
    /// g.grid work-groups of g.block once per range of at most
    /// invocations × `per_invocation` elements, with push constants {range
    /// start, range length, extra...} (at most 32 words in all). Returns the
    /// stream's sequence number of the command. Throws InvalidArgument (a
    /// grid of 2^32 invocations or more), DeviceError.
    /// `spec`: the pipeline's specialization constants after the block's.
    /// `byte_offset`: where every binding starts in its buffer (a multiple
    /// of minStorageBufferOffsetAlignment; 0 for the scratch buffer).
    std::uint64_t dispatch(const std::string& module, const std::vector<const VulkanBuffer*>& buffers, std::size_t n,
                           std::size_t per_invocation, const std::vector<std::uint32_t>& extra,
                           const LaunchGeometry& g, Stream& s, const std::vector<std::uint32_t>& spec = {},
                           VkDeviceSize byte_offset = 0);
    /// dispatch() with binding i at the range infos[i] (1..4 bindings; each
    /// offset a multiple of minStorageBufferOffsetAlignment, each range
    /// within maxStorageBufferRange).
    std::uint64_t dispatch_ranges(const std::string& module, const std::vector<VkDescriptorBufferInfo>& infos,
                                  std::size_t n, std::size_t per_invocation, const std::vector<std::uint32_t>& extra,
                                  const LaunchGeometry& g, Stream& s, const std::vector<std::uint32_t>& spec = {});
    /// Copies `bytes` from byte `soff` of `src` to byte `doff` of `dst`
    /// (offsets from each buffer's start, ranges not overlapping) by
    /// shaders/copy.comp, in segments one binding reaches; returns the
    /// sequence number of the last dispatch (0 for no bytes). Needs
    /// storageBuffer8BitAccess (pd_.storage8). Throws DeviceError.
    /// vulkan_copy.cpp.
    std::uint64_t copy_by_shader(const VulkanBuffer& dst, VkDeviceSize doff, const VulkanBuffer& src,
                                 VkDeviceSize soff, VkDeviceSize bytes, Stream& s);
    /// Whether copy_device_to_device runs copy_by_shader (else
    /// vkCmdCopyBuffer): copy_method() when the device opens.
    bool copy_by_shader_ = false;
    /// The most elements of dtype t one binding reaches from an aligned
    /// offset: maxStorageBufferRange rounded down to whole elements and to
    /// minStorageBufferOffsetAlignment, so that the next segment starts
    /// aligned (lavapipe: 128 MiB, 33554432 f32).
    std::size_t segment_elements(DType t) const noexcept;
    /// A descriptor set of `bindings` storage buffers (1..4) from the
    /// device's pools, and the pool it came from. Thread-safe.
    std::pair<VkDescriptorSet, VkDescriptorPool> allocate_set(std::uint32_t bindings);
    /// The same for a set of `layout` (of storage buffers only, at most 4096).
    std::pair<VkDescriptorSet, VkDescriptorPool> allocate_set(VkDescriptorSetLayout layout);
    void free_set(VkDescriptorSet set, VkDescriptorPool pool) noexcept;
    /// Throws Unsupported unless `elements` of `t` fit one storage-buffer
    /// binding (maxStorageBufferRange) and 32-bit indices; `what` names the op.
    void check_elements(std::size_t elements, DType t, const char* what) const;

    VkInstance instance_;
    PhysicalDevice pd_;
    std::shared_ptr<DeviceCore> core_;
    VkDevice device_ = VK_NULL_HANDLE;  ///< core_->device
    std::uint32_t device_local_types_ = 0;  ///< memory type bits with DEVICE_LOCAL
    std::uint32_t host_types_ = 0;          ///< memory type bits with HOST_VISIBLE | HOST_COHERENT
    VkDeviceSize max_allocation_ = 0;       ///< maxMemoryAllocationSize (or the largest heap)

    std::uint64_t do_cached_bytes() const noexcept override;
    std::uint64_t do_release_cached() noexcept override;
    // Sub-allocation (see MemoryBlock): places `b` (its VkBuffer made, with
    // requirements `req`) in a block of memory type `type`, making a block
    // when none has room; false when a new block cannot be allocated.
    bool place_in_block(VulkanBuffer& b, const VkMemoryRequirements& req, std::uint32_t type, bool host_visible);
    mutable std::mutex blocks_mutex_;
    std::vector<std::unique_ptr<MemoryBlock>> blocks_;

    /// Destroys the buffers of the graveyard whose streams have passed the
    /// submissions they waited for. Never throws; thread-safe.
    void reap_graveyard() noexcept;

    std::atomic<std::uint64_t> record_order_{0};
    /// Buffers freed while work submitted before might still use them, each
    /// with the latest submission of every stream then alive.
    struct Deferred {
        VulkanBuffer* buffer;
        std::vector<std::pair<std::weak_ptr<StreamState>, std::uint64_t>> waits;
    };
    std::mutex graveyard_mutex_;
    std::vector<Deferred> graveyard_;
    std::mutex streams_mutex_;
    std::vector<std::weak_ptr<StreamState>> streams_;

    // Descriptor set layouts and pipeline layouts of 1..4 storage buffers (index bindings - 1).
    std::array<VkDescriptorSetLayout, 4> set_layouts_{};
    std::array<VkPipelineLayout, 4> pipeline_layouts_{};
    std::mutex pools_mutex_;
    std::vector<VkDescriptorPool> pools_;

    VulkanBuffer* scratch_ = nullptr;  ///< 4 bytes bound by the empty kernel

    // The driver's compiled pipelines kept across processes: loaded from
    // pipeline_cache_file_ at construction when that file is intact and made
    // by this driver and device, written back (whole, by rename) at
    // destruction when the driver added to it.
    VkPipelineCache pipeline_cache_ = VK_NULL_HANDLE;
    std::string pipeline_cache_file_;      ///< "" when no cache folder is known
    std::uint64_t pipeline_cache_loaded_ = 0;  ///< checksum of the data loaded (0: none)
    void open_pipeline_cache();
    void save_pipeline_cache() noexcept;

    std::mutex pipelines_mutex_;
    std::map<std::string, VkShaderModule> modules_;
    std::map<std::tuple<std::string, std::size_t, std::size_t, std::size_t, std::vector<std::uint32_t>>, VkPipeline>
        pipelines_;
};

}  // namespace vulkan
}  // namespace accel
