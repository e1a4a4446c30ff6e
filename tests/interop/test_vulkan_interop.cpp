// Interop with Vulkan both ways (accel/interop/vulkan.hpp) and the Vulkan
// side of a program's own kernels, on a Vulkan device under test: a VkBuffer
// the program made on accel's VkDevice, wrapped as tensors at non-zero
// aligned offsets and used by ops::matmul and copies; accel's result read
// through its VkBuffer and offset by a copy the program submits; the errors
// of a misaligned or oversized range, of objects Vulkan lacks, of a stream
// over a program's queue; a GLSL kernel's compile log and signature checks;
// SPIR-V words (built by glslc with the tests) with and without shaderc; the
// on-disk cache of compiled GLSL.
#include "support/check.hpp"

#include <accel/interop/vulkan.hpp>
#include <accel/user_kernel.hpp>

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

using namespace accel;
using namespace accel_test;
namespace vk = accel::interop::vulkan;

namespace {

bool on_vulkan() {
    if (device()->info().backend == "vulkan") return true;
    MESSAGE("skipped: " << device()->selector() << " is not a Vulkan device");
    return false;
}

// Run by interop.vulkan.no-shaderc, where libshaderc.so.1 is not a library.
bool without_shaderc() { return std::getenv("TEST_EXPECT_NO_SHADERC") != nullptr; }

VkPhysicalDeviceLimits limits() {
    VkPhysicalDeviceProperties p{};
    vkGetPhysicalDeviceProperties(vk::physical_device(*device()), &p);
    return p.limits;
}

std::size_t align_up(std::size_t x, std::size_t a) { return (x + a - 1) / a * a; }

// A VkBuffer on accel's VkDevice with memory of its own, host-visible and
// coherent (mapped at `data`), owned by the test.
struct ProgramBuffer {
    VkDevice dev = vk::device(*device());
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    float* data = nullptr;
    explicit ProgramBuffer(std::size_t bytes) {
        VkBufferCreateInfo bi{};
        bi.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
        bi.size = bytes;
        bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                   VK_BUFFER_USAGE_TRANSFER_DST_BIT;
        REQUIRE(vkCreateBuffer(dev, &bi, nullptr, &buffer) == VK_SUCCESS);
        VkMemoryRequirements req{};
        vkGetBufferMemoryRequirements(dev, buffer, &req);
        VkPhysicalDeviceMemoryProperties mp{};
        vkGetPhysicalDeviceMemoryProperties(vk::physical_device(*device()), &mp);
        const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        std::uint32_t type = 0;
        while (type < mp.memoryTypeCount &&
               !((req.memoryTypeBits & (1u << type)) && (mp.memoryTypes[type].propertyFlags & want) == want))
            ++type;
        REQUIRE(type < mp.memoryTypeCount);
        VkMemoryAllocateInfo ai{};
        ai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
        ai.allocationSize = req.size;
        ai.memoryTypeIndex = type;
        REQUIRE(vkAllocateMemory(dev, &ai, nullptr, &memory) == VK_SUCCESS);
        REQUIRE(vkBindBufferMemory(dev, buffer, memory, 0) == VK_SUCCESS);
        void* p = nullptr;
        REQUIRE(vkMapMemory(dev, memory, 0, VK_WHOLE_SIZE, 0, &p) == VK_SUCCESS);
        data = static_cast<float*>(p);
    }
    ~ProgramBuffer() {
        vkDestroyBuffer(dev, buffer, nullptr);
        vkFreeMemory(dev, memory, nullptr);  // unmaps
    }
    ProgramBuffer(const ProgramBuffer&) = delete;
    ProgramBuffer& operator=(const ProgramBuffer&) = delete;
};

// Copies `bytes` from (src, src_off) to (dst, dst_off) with a command buffer
// the program submits to accel's queue, after synchronizing accel's stream,
// and waits for it (no other thread uses the device meanwhile).
void program_copy(VkBuffer src, std::size_t src_off, VkBuffer dst, std::size_t dst_off, std::size_t bytes) {
    device()->default_stream().synchronize();
    VkDevice dev = vk::device(*device());
    VkCommandPoolCreateInfo pi{};
    pi.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pi.queueFamilyIndex = vk::queue_family(*device());
    VkCommandPool pool = VK_NULL_HANDLE;
    REQUIRE(vkCreateCommandPool(dev, &pi, nullptr, &pool) == VK_SUCCESS);
    VkCommandBufferAllocateInfo ai{};
    ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    ai.commandPool = pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    VkCommandBuffer cb = VK_NULL_HANDLE;
    REQUIRE(vkAllocateCommandBuffers(dev, &ai, &cb) == VK_SUCCESS);
    VkCommandBufferBeginInfo bi{};
    bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    REQUIRE(vkBeginCommandBuffer(cb, &bi) == VK_SUCCESS);
    const VkBufferCopy region{src_off, dst_off, bytes};
    vkCmdCopyBuffer(cb, src, dst, 1, &region);
    VkMemoryBarrier hb{};  // the copy's writes visible to the host
    hb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    hb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    hb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &hb, 0, nullptr, 0,
                         nullptr);
    REQUIRE(vkEndCommandBuffer(cb) == VK_SUCCESS);
    VkFenceCreateInfo fi{};
    fi.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    VkFence fence = VK_NULL_HANDLE;
    REQUIRE(vkCreateFence(dev, &fi, nullptr, &fence) == VK_SUCCESS);
    VkSubmitInfo si{};
    si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    REQUIRE(vkQueueSubmit(vk::queue(device()->default_stream()), 1, &si, fence) == VK_SUCCESS);
    REQUIRE(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX) == VK_SUCCESS);
    vkDestroyFence(dev, fence, nullptr);
    vkDestroyCommandPool(dev, pool, nullptr);
}

// y[i] = factor · x[i], the signature of scale.comp.
KernelSource scale_source() {
    KernelSource s;
    s.name = "scale";
    s.params = {KernelParam::in("x"), KernelParam::out("y"), KernelParam::scalar("factor", ParamType::f32),
                KernelParam::scalar("n", ParamType::u32)};
    return s;
}

const char* kScaleGlsl = R"(#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Scalars { float factor; uint n; };
void main() {
    const uint i = gl_GlobalInvocationID.x;
    if (i < n) y[i] = factor * x[i] * SCALE;
})";

// Launches `k` (a scale kernel) on fresh data; the count of wrong elements
// against factor · x · extra.
std::size_t wrong_scaled(UserKernel& k, std::uint64_t seed, float extra) {
    auto g = rng(seed);
    const std::size_t n = 1 + g() % 3000;
    const auto x = uniform(g, n);
    const float factor = uniform(g, 1, 0.5f, 2.0f)[0];
    auto X = Tensor::from_host(device(), {n}, x);
    Tensor Y(device(), {n});
    k.launch(geometry_1d(n, 64, device()->info().limits), {X, Y, factor, n});
    const auto y = Y.download();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += y[i] != factor * x[i] * extra;
    return wrong;
}

}  // namespace

TEST_CASE("a VkBuffer the program made is tensors at aligned offsets that ops and copies use in place") {
    if (!on_vulkan() || without_shaderc()) return;
    auto g = rng(4601);
    const std::size_t m = 37, k = 19, n = 23;
    const auto a = uniform(g, m * k), b = uniform(g, k * n);
    const std::size_t align = std::max<std::size_t>(limits().minStorageBufferOffsetAlignment, 4);
    // A, B and C of one program buffer, each at a non-zero aligned offset, with gaps between.
    const std::size_t off_a = align_up(100, align), off_b = align_up(off_a + a.size() * 4 + 4, align),
                      off_c = align_up(off_b + b.size() * 4 + 4, align), total = off_c + m * n * 4 + 64;
    ProgramBuffer pb(total);
    const float sentinel = -7.25f;
    std::fill(pb.data, pb.data + total / 4, sentinel);
    std::memcpy(reinterpret_cast<char*>(pb.data) + off_a, a.data(), a.size() * 4);
    std::memcpy(reinterpret_cast<char*>(pb.data) + off_b, b.data(), b.size() * 4);
    const auto want = reference::matmul(a, b, m, n, k);
    {
        Tensor A = vk::tensor_over(device(), pb.buffer, off_a, {m, k});
        Tensor B = vk::tensor_over(device(), pb.buffer, off_b, {k, n});
        Tensor C = vk::tensor_over(device(), pb.buffer, off_c, {m, n});
        const vk::Memory am = vk::memory(A);
        CHECK(am.buffer == pb.buffer);
        CHECK(am.offset == off_a);
        CHECK(A.download() == a);  // a copy to the host from the offset
        ops::matmul(A, B, C);
        device()->synchronize();
        std::vector<float> got(pb.data + off_c / 4, pb.data + off_c / 4 + m * n);
        expect_close(got, want, threshold(Op::matmul), "matmul into the program's buffer");

        // accel's own tensor, read through its VkBuffer and offset by the program's copy.
        Tensor R(device(), {m, n});
        ops::matmul(A, B, R);
        const vk::Memory rm = vk::memory(R);
        CHECK(rm.offset == 0);
        std::fill(pb.data + off_c / 4, pb.data + off_c / 4 + m * n, 0.0f);
        program_copy(rm.buffer, rm.offset, pb.buffer, off_c, m * n * 4);
        got.assign(pb.data + off_c / 4, pb.data + off_c / 4 + m * n);
        expect_close(got, want, threshold(Op::matmul), "accel's matmul read through its VkBuffer");

        // Copies from the host and between two tensors of one VkBuffer, at their offsets.
        const auto fresh = uniform(g, m * k);
        A.upload(fresh);
        device()->copy_device_to_device(C.buffer(), 0, A.buffer(), 0, 16 * 4);
        device()->synchronize();
        CHECK(std::memcmp(reinterpret_cast<char*>(pb.data) + off_a, fresh.data(), fresh.size() * 4) == 0);
        CHECK(std::memcmp(reinterpret_cast<char*>(pb.data) + off_c, fresh.data(), 16 * 4) == 0);
    }
    // Nothing outside the three ranges was written.
    std::size_t touched = 0;
    for (std::size_t i = 0; i < total / 4; ++i) {
        const std::size_t byte = i * 4;
        const bool inside = (byte >= off_a && byte < off_a + a.size() * 4) ||
                            (byte >= off_b && byte < off_b + b.size() * 4) ||
                            (byte >= off_c && byte < off_c + m * n * 4);
        touched += !inside && pb.data[i] != sentinel;
    }
    CHECK_MESSAGE(touched == 0, touched << " floats outside the tensors' ranges written");
}

TEST_CASE("unsuitable Vulkan handles and requests are clear errors") {
    if (!on_vulkan()) return;
    ProgramBuffer pb(4096);
    const std::size_t align = limits().minStorageBufferOffsetAlignment;
    if (align > 1) {
        const std::string why = message_of([&] { (void)vk::tensor_over(device(), pb.buffer, align / 2, {8}); });
        CHECK(contains(why, "minStorageBufferOffsetAlignment"));
        CHECK(contains(why, std::to_string(align)));
    }
    CHECK(contains(message_of([&] { (void)vk::tensor_over(device(), pb.buffer, 0, {4000}); }), "at most"));
    CHECK(contains(message_of([&] { (void)vk::tensor_over(device(), VK_NULL_HANDLE, 0, {8}); }), "null handle"));
    CHECK(vk::queue_family(*device()) < 64);
    CHECK(vk::instance(*device()) != VK_NULL_HANDLE);
    const std::string no_context = message_of([&] { (void)device()->native_object("vulkan", "context"); });
    CHECK(contains(no_context, "VkInstance"));
    CHECK_THROWS_AS((void)device()->native_object("vulkan", "execution_space"), Unsupported);
    const auto queue = reinterpret_cast<std::uint64_t>(vk::queue(device()->default_stream()));
    const std::string no_stream = message_of([&] { (void)device()->stream_over_native_queue("vulkan", queue); });
    CHECK(contains(no_stream, "synchronize the accel stream"));
    CHECK_THROWS_AS((void)device()->stream_over_native_queue("vulkan", queue), Unsupported);
}

TEST_CASE("a GLSL kernel's compile errors and mismatches with its signature are clear errors") {
    if (!on_vulkan() || without_shaderc()) return;
    KernelSource s = scale_source();
    s.code["glsl"] = kScaleGlsl;
    s.build_options = "-DSCALE=2.0";  // a power of two: exact whatever the order of the products
    UserKernel good(s);
    CHECK(wrong_scaled(good, 4602, 2.0f) == 0);  // the -D macro reaches the shader

    auto error_of = [&](const std::string& glsl, const std::string& options = "-DSCALE=1.0") {
        KernelSource bad = scale_source();
        bad.code["glsl"] = glsl;
        bad.build_options = options;
        UserKernel k(bad);
        return message_of([&] { k.build(*device()); });
    };
    auto replaced = [](std::string text, const std::string& from, const std::string& to) {
        text.replace(text.find(from), from.size(), to);
        return text;
    };
    const std::string glsl = kScaleGlsl;
    const std::string log = error_of(replaced(glsl, "factor * x[i]", "factor * undefined_name"));
    CHECK(contains(log, "shaderc"));
    CHECK(contains(log, "undefined_name"));  // shaderc's own log
    CHECK(contains(error_of(glsl, "-O2"), "-DNAME"));
    CHECK(contains(error_of(replaced(glsl, "binding = 1", "binding = 2")), "binding 2"));
    CHECK(contains(error_of(replaced(glsl, "float factor; uint n;", "uint factor; uint n;")), "declare it as float"));
    CHECK(contains(error_of(replaced(glsl, "float factor; uint n;", "float factor; uint n; uint spare;")),
                   "3 member(s), the signature 2"));
    CHECK(contains(error_of(replaced(glsl, "local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2",
                                     "local_size_x = 64")),
                   "local_size_x_id = 0"));
    KernelSource both = scale_source();
    both.code["glsl"] = glsl;
    both.set_spirv({0x07230203u});
    CHECK(contains(message_of([&] { UserKernel(both).build(*device()); }), "give one"));
    KernelSource junk = scale_source();
    junk.set_spirv({1, 2, 3, 4, 5, 6});
    CHECK(contains(message_of([&] { UserKernel(junk).build(*device()); }), "not a SPIR-V module"));
}

TEST_CASE("SPIR-V words run with or without shaderc; GLSL without shaderc names what to install") {
    if (!on_vulkan()) return;
    KernelSource s = scale_source();
    s.set_spirv({
#include "scale.spv.inc"
    });
    UserKernel k(s);
    CHECK(wrong_scaled(k, 4603, 1.0f) == 0);
    if (!without_shaderc()) return;
    KernelSource g = scale_source();
    g.code["glsl"] = kScaleGlsl;
    UserKernel kg(g);
    const std::string why = message_of([&] { kg.build(*device()); });
    CHECK(contains(why, "libshaderc1"));
    CHECK(contains(why, "KernelSource::set_spirv"));
    CHECK_THROWS_AS(kg.build(*device()), Unsupported);
}

TEST_CASE("SPIR-V compiled from GLSL is cached on disk, and a damaged cache file is never trusted") {
    if (!on_vulkan() || without_shaderc()) return;
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("accel-vulkan-kernels-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    ScopedEnv cache("ACCEL_CACHE_DIR", dir.c_str());
    KernelSource s = scale_source();
    // A source no other test builds: its own cache file.
    s.code["glsl"] = std::string(kScaleGlsl) + "\n// " + std::to_string(rng(4604)()) + "\n";
    s.build_options = "-DSCALE=2.0";
    auto check_run = [&](const char* when, std::uint64_t seed) {
        UserKernel k(s);  // built again, from the cache when it holds the module
        CHECK_MESSAGE(wrong_scaled(k, seed, 2.0f) == 0, when);
    };
    check_run("first build", 4605);
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir / "vulkan-kernels")) files.push_back(e.path());
    REQUIRE(files.size() == 1);
    auto intact = [&] { return cache_file_intact(files[0].string(), "accelSP1"); };
    CHECK(intact());
    const auto size = fs::file_size(files[0]);
    const auto written = fs::last_write_time(files[0]);
    check_run("from the cache", 4606);
    CHECK(fs::last_write_time(files[0]) == written);  // read, not compiled and written again
    {
        std::ofstream f(files[0], std::ios::binary | std::ios::trunc);
        f << std::string(size, 'x');
    }
    check_run("after garbage", 4607);
    CHECK(intact());
    fs::resize_file(files[0], size / 2);
    check_run("after truncation", 4608);
    CHECK(intact());
    fs::remove_all(dir);
}
