// Vulkan backend: the queue's submissions, streams (batched command buffers) and events.
#include "vulkan_device.hpp"

#include <chrono>
#include <utility>

namespace accel {
namespace vulkan {

// ---- streams ----------------------------------------------------------------

DeviceCore::~DeviceCore() {
    if (!device) return;
    vkDeviceWaitIdle(device);
    vkDestroyDevice(device, nullptr);
}

void DeviceCore::submit(VkCommandBuffer cb, VkFence fence) {
    VkSubmitInfo si{};
    si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    std::lock_guard<std::mutex> lock(queue_mutex);
    check_vk(vkQueueSubmit(queue, 1, &si, fence), "vkQueueSubmit");
}

StreamState::StreamState(std::shared_ptr<DeviceCore> core) : core_(std::move(core)) {
    VkCommandPoolCreateInfo ci{};
    ci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    ci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    ci.queueFamilyIndex = core_->queue_family;
    check_vk(vkCreateCommandPool(core_->device, &ci, nullptr, &pool_), "creating a stream: vkCreateCommandPool");
}

StreamState::~StreamState() {
    std::lock_guard<std::mutex> lock(mutex_);
    try {
        flush();
    } catch (...) {  // its commands' done actions have run
    }
    for (auto& s : pending_) {
        vkWaitForFences(core_->device, 1, &s.fence, VK_TRUE, UINT64_MAX);
        for (auto& d : s.done) d();
        vkDestroyFence(core_->device, s.fence, nullptr);
    }
    for (VkFence f : free_fences_) vkDestroyFence(core_->device, f, nullptr);
    vkDestroyCommandPool(core_->device, pool_, nullptr);  // frees its command buffers
}

std::uint64_t StreamState::last_submitted() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return next_seq_ - 1;
}

void StreamState::retire(std::uint64_t seq, bool block) {
    while (!pending_.empty()) {
        Submission& s = pending_.front();
        VkResult r;
        if (block && s.first <= seq) r = vkWaitForFences(core_->device, 1, &s.fence, VK_TRUE, UINT64_MAX);
        else r = vkGetFenceStatus(core_->device, s.fence);
        if (r == VK_NOT_READY || r == VK_TIMEOUT) return;
        check_vk(r, block ? "waiting for a stream: vkWaitForFences" : "vkGetFenceStatus");
        for (auto& d : s.done) d();
        check_vk(vkResetFences(core_->device, 1, &s.fence), "vkResetFences");
        free_fences_.push_back(s.fence);
        free_cbs_.push_back(s.cb);
        pending_.pop_front();
    }
}

void StreamState::flush() {
    if (!open_.cb) return;
    Submission batch = std::move(open_);
    open_ = Submission{};
    try {
        // Device writes visible to the host once the fence is signalled.
        VkMemoryBarrier hb{};
        hb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
        hb.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
        hb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
        vkCmdPipelineBarrier(batch.cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &hb, 0,
                             nullptr, 0, nullptr);
        check_vk(vkEndCommandBuffer(batch.cb), "vkEndCommandBuffer");
        if (!free_fences_.empty()) {
            batch.fence = free_fences_.back();
            free_fences_.pop_back();
        } else {
            VkFenceCreateInfo fi{};
            fi.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
            check_vk(vkCreateFence(core_->device, &fi, nullptr, &batch.fence), "vkCreateFence");
        }
        core_->submit(batch.cb, batch.fence);
    } catch (...) {
        vkResetCommandBuffer(batch.cb, 0);
        free_cbs_.push_back(batch.cb);
        if (batch.fence) free_fences_.push_back(batch.fence);
        for (auto& d : batch.done) d();
        throw;
    }
    pending_.push_back(std::move(batch));
}

std::uint64_t StreamState::submit(const std::function<void(VkCommandBuffer)>& record, std::function<void()> done) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (recording_) {
        try {
            barrier(recording_);
            record(recording_);
        } catch (...) {
            if (done) done();
            throw;
        }
        if (done) recorded_done_.push_back(std::move(done));
        return next_seq_++;
    }
    try {
        retire(0, false);  // release what has finished
        if (!open_.cb) {
            VkCommandBuffer cb = VK_NULL_HANDLE;
            if (!free_cbs_.empty()) {
                cb = free_cbs_.back();
                free_cbs_.pop_back();
            } else {
                VkCommandBufferAllocateInfo ai{};
                ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
                ai.commandPool = pool_;
                ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
                ai.commandBufferCount = 1;
                check_vk(vkAllocateCommandBuffers(core_->device, &ai, &cb), "vkAllocateCommandBuffers");
            }
            VkCommandBufferBeginInfo bi{};
            bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
            bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
            const VkResult r = vkBeginCommandBuffer(cb, &bi);
            if (r != VK_SUCCESS) {
                free_cbs_.push_back(cb);
                check_vk(r, "vkBeginCommandBuffer");
            }
            open_.cb = cb;
            open_.first = next_seq_;
        }
        barrier(open_.cb);
        record(open_.cb);
    } catch (...) {
        if (done) done();
        throw;
    }
    const std::uint64_t seq = next_seq_++;
    if (done) open_.done.push_back(std::move(done));
    if (seq - open_.first + 1 >= static_cast<std::uint64_t>(kBatch)) flush();
    return seq;
}

void StreamState::barrier(VkCommandBuffer cb) {
    // Everything earlier on the queue finishes, and its writes are visible, first.
    VkMemoryBarrier mb{};
    mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    mb.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &mb, 0,
                         nullptr, 0, nullptr);
}

void StreamState::begin_recording() {
    std::lock_guard<std::mutex> lock(mutex_);
    VkCommandBufferAllocateInfo ai{};
    ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    ai.commandPool = pool_;
    ai.level = VK_COMMAND_BUFFER_LEVEL_SECONDARY;
    ai.commandBufferCount = 1;
    VkCommandBuffer cb = VK_NULL_HANDLE;
    check_vk(vkAllocateCommandBuffers(core_->device, &ai, &cb), "recording a graph: vkAllocateCommandBuffers");
    VkCommandBufferInheritanceInfo ii{};  // outside any render pass: nothing inherited
    ii.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO;
    VkCommandBufferBeginInfo bi{};
    bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    bi.flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;
    bi.pInheritanceInfo = &ii;
    check_vk(vkBeginCommandBuffer(cb, &bi), "recording a graph: vkBeginCommandBuffer");
    recording_ = cb;
}

std::pair<VkCommandBuffer, std::vector<std::function<void()>>> StreamState::end_recording() {
    std::lock_guard<std::mutex> lock(mutex_);
    const VkCommandBuffer cb = recording_;
    recording_ = VK_NULL_HANDLE;
    std::vector<std::function<void()>> done = std::move(recorded_done_);
    recorded_done_.clear();
    const VkResult r = vkEndCommandBuffer(cb);
    if (r != VK_SUCCESS) {
        for (auto& d : done) d();
        check_vk(r, "recording a graph: vkEndCommandBuffer");
    }
    return {cb, std::move(done)};
}

void StreamState::wait(std::uint64_t seq) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (open_.cb && open_.first <= seq) flush();
    retire(seq, true);
}

bool StreamState::completed(std::uint64_t seq) noexcept {
    try {
        std::lock_guard<std::mutex> lock(mutex_);
        if (open_.cb && open_.first <= seq) flush();  // polling must make progress
        retire(0, false);
        return pending_.empty() || pending_.front().first > seq;
    } catch (...) {
        return false;
    }
}

void StreamState::wait_all() {
    std::lock_guard<std::mutex> lock(mutex_);
    flush();
    retire(next_seq_ - 1, true);
}

VulkanStream::VulkanStream(VulkanDevice& d) : Stream(d), state_(std::make_shared<StreamState>(d.core())) {
    d.add_stream(state_);
}

VulkanStream::~VulkanStream() = default;  // the state waits for its work when the last owner goes

void VulkanStream::do_synchronize() { state_->wait_all(); }

// ---- graphs -----------------------------------------------------------------

namespace {

// A run of kernels recorded into a secondary command buffer. Each launch
// executes it inside the stream's open command buffer (one more command of
// the batch); the destructor waits for every launch before its done actions
// (the kernels' descriptor sets, freed) run and its stream's pool (holding
// the command buffer) goes.
class VulkanGraph final : public NativeGraph {
public:
    VulkanGraph(std::unique_ptr<Stream> recording, VkCommandBuffer cb, std::vector<std::function<void()>> done)
        : recording_(std::move(recording)), cb_(cb), done_(std::move(done)) {}
    ~VulkanGraph() override {
        for (auto& [state, seq] : launched_) {
            try {
                state->wait(seq);
            } catch (...) {  // a lost device: nothing runs any more
            }
        }
        for (auto& d : done_) d();
    }
    VulkanGraph(const VulkanGraph&) = delete;
    VulkanGraph& operator=(const VulkanGraph&) = delete;

    void launch(Stream& stream) override {
        const std::shared_ptr<StreamState>& state = static_cast<VulkanStream&>(stream).state();
        const VkCommandBuffer cb = cb_;
        std::lock_guard<std::mutex> lock(mutex_);
        const std::uint64_t seq = state->submit([cb](VkCommandBuffer primary) { vkCmdExecuteCommands(primary, 1, &cb); });
        for (auto& [known, last] : launched_)
            if (known == state) {
                last = seq;  // a stream runs in order: its latest launch is the one to wait for
                return;
            }
        launched_.emplace_back(state, seq);
    }

private:
    std::unique_ptr<Stream> recording_;  // its StreamState's pool holds cb_
    const VkCommandBuffer cb_;
    std::vector<std::function<void()>> done_;
    std::mutex mutex_;
    std::vector<std::pair<std::shared_ptr<StreamState>, std::uint64_t>> launched_;
};

}  // namespace

std::string VulkanDevice::graph_mechanism() const {
    return "Vulkan command buffer: each run of captured kernels recorded once into a secondary command buffer "
           "and replayed as one vkCmdExecuteCommands";
}

std::shared_ptr<NativeGraph> VulkanDevice::record_graph(const std::function<void(Stream&)>& enqueue) {
    auto recording = std::make_unique<VulkanStream>(*this);
    StreamState& state = *recording->state();
    state.begin_recording();
    try {
        enqueue(*recording);
    } catch (...) {
        try {
            for (auto& d : state.end_recording().second) d();
        } catch (...) {  // end_recording ran them
        }
        throw;
    }
    auto [cb, done] = state.end_recording();
    return std::make_shared<VulkanGraph>(std::move(recording), cb, std::move(done));
}

// ---- events -----------------------------------------------------------------

VulkanEvent::VulkanEvent(VulkanDevice& d) : Event(d), device_(d), core_(d.core()) {
    if (!d.has_timestamps()) return;
    VkQueryPoolCreateInfo ci{};
    ci.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
    ci.queryType = VK_QUERY_TYPE_TIMESTAMP;
    ci.queryCount = 1;
    check_vk(vkCreateQueryPool(d.device(), &ci, nullptr, &pool_), "creating an event: vkCreateQueryPool");
}

VulkanEvent::~VulkanEvent() {
    if (stream_) {
        try {
            stream_->wait(seq_);  // the query pool may still be written
        } catch (...) {
        }
    }
    if (pool_) vkDestroyQueryPool(core_->device, pool_, nullptr);
}

void VulkanEvent::do_record(Stream& stream) {
    StreamState& st = VulkanDevice::state_of(stream);
    if (stream_) stream_->wait(seq_);  // the previous mark is complete before its query is reset
    auto host = host_ns_;
    VkQueryPool pool = pool_;
    seq_ = st.submit(
        [pool](VkCommandBuffer cb) {
            if (!pool) return;
            vkCmdResetQueryPool(cb, pool, 0, 1);
            vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, 0);
        },
        [host] {
            host->store(std::chrono::duration<double, std::nano>(
                            std::chrono::steady_clock::now().time_since_epoch()).count());
        });
    stream_ = static_cast<VulkanStream&>(stream).state();
    order_ = device_.next_record_order();
}

void VulkanEvent::do_synchronize() {
    if (stream_) stream_->wait(seq_);
}

double VulkanEvent::time_ns() {
    do_synchronize();
    if (!pool_) return host_ns_->load();
    std::uint64_t ticks = 0;
    check_vk(vkGetQueryPoolResults(core_->device, pool_, 0, 1, sizeof ticks, &ticks, sizeof ticks,
                                   VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
             "elapsed_ms: vkGetQueryPoolResults");
    return static_cast<double>(ticks & device_.timestamp_mask()) * device_.timestamp_period();
}

}  // namespace vulkan
}  // namespace accel
