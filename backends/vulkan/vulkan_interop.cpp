// What a program brings to a Vulkan device: its own kernels (GLSL compiled
// by shaderc, its library opened at run time or else its glslc, or SPIR-V words) and its runtime's objects
// (VkInstance, VkPhysicalDevice, VkDevice, the VkQueue, VkBuffer ranges),
// both ways. The conventions a kernel follows are accel/kernel_source.hpp's.
#include "vulkan_device.hpp"
#include "../common/cache_file.hpp"
#include "../common/dynamic_library.hpp"

#include <accel/error.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace accel {
namespace vulkan {

namespace {

// ---- shaderc, opened at run time ------------------------------------------------

// The few declarations of shaderc's C API (libshaderc/include/shaderc/
// shaderc.h, env.h, status.h) used here: Debian's libshaderc1 ships no
// headers, and the plugin must load without it. Handles are opaque pointers.
constexpr int kShadercComputeShader = 2;    // shaderc_compute_shader (shaderc_shader_kind)
constexpr int kShadercTargetEnvVulkan = 0;  // shaderc_target_env_vulkan
// shaderc_env_version_vulkan_1_N is (1 << 22) | (N << 12), Vulkan's own
// version number of 1.N (VK_API_VERSION_1_N).
constexpr const char* kShadercStatus[] = {"success",          "invalid_stage",        "compilation_error",
                                          "internal_error",   "null_result_object",   "invalid_assembly",
                                          "validation_error", "transformation_error", "configuration_error"};

struct Shaderc {
    std::string missing;   ///< why shaderc cannot be used ("" when it can)
    std::string identity;  ///< its SPIR-V version and library file, for the cache key
    void* (*compiler_initialize)() = nullptr;
    void (*compiler_release)(void*) = nullptr;
    void* (*options_initialize)() = nullptr;
    void (*options_release)(void*) = nullptr;
    void (*options_set_target_env)(void*, int, std::uint32_t) = nullptr;
    void (*options_add_macro_definition)(void*, const char*, std::size_t, const char*, std::size_t) = nullptr;
    void* (*compile_into_spv)(const void*, const char*, std::size_t, int, const char*, const char*,
                              const void*) = nullptr;
    int (*result_get_compilation_status)(const void*) = nullptr;
    std::size_t (*result_get_length)(const void*) = nullptr;
    const char* (*result_get_bytes)(const void*) = nullptr;
    const char* (*result_get_error_message)(const void*) = nullptr;
    void (*result_release)(void*) = nullptr;
};

// libshaderc.so.1, opened once (never closed) and resolved. Thread-safe.
const Shaderc& shaderc() {
    static const Shaderc sc = [] {
        Shaderc s;
        // Debian 12's libshaderc1 (2023.2) does not load on its own: it uses
        // glslang and SPIRV-Tools symbols that only glslc, which links them
        // statically, provides. Then compile_glsl runs glslc instead.
        void* lib = dlopen("libshaderc.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            const char* e = dlerror();
            s.missing = std::string("shaderc (libshaderc.so.1) could not be opened: ") + (e ? e : "not found");
            dl::clear_error();
            return s;
        }
        auto get = [&](auto& fn, const char* name) { dl::bind(lib, fn, name, "libshaderc.so.1", s.missing); };
        get(s.compiler_initialize, "shaderc_compiler_initialize");
        get(s.compiler_release, "shaderc_compiler_release");
        get(s.options_initialize, "shaderc_compile_options_initialize");
        get(s.options_release, "shaderc_compile_options_release");
        get(s.options_set_target_env, "shaderc_compile_options_set_target_env");
        get(s.options_add_macro_definition, "shaderc_compile_options_add_macro_definition");
        get(s.compile_into_spv, "shaderc_compile_into_spv");
        get(s.result_get_compilation_status, "shaderc_result_get_compilation_status");
        get(s.result_get_length, "shaderc_result_get_length");
        get(s.result_get_bytes, "shaderc_result_get_bytes");
        get(s.result_get_error_message, "shaderc_result_get_error_message");
        get(s.result_release, "shaderc_result_release");
        if (!s.missing.empty()) return s;
        // The cache key's part for the compiler: its SPIR-V version and the
        // library file (path, size, time), which changes with an upgrade.
        s.identity = "shaderc";
        void (*spv_version)(unsigned*, unsigned*) = nullptr;
        spv_version = reinterpret_cast<decltype(spv_version)>(dl::optional_symbol(lib, "shaderc_get_spv_version"));
        if (spv_version) {
            unsigned version = 0, revision = 0;
            spv_version(&version, &revision);
            s.identity += " spv " + std::to_string(version) + "." + std::to_string(revision);
        }
        Dl_info info{};
        struct stat st{};
        if (dladdr(reinterpret_cast<void*>(s.compile_into_spv), &info) && info.dli_fname &&
            ::stat(info.dli_fname, &st) == 0)
            s.identity += std::string(" ") + info.dli_fname + " " + std::to_string(st.st_size) + " " +
                          std::to_string(static_cast<long long>(st.st_mtime));
        return s;
    }();
    return sc;
}

// The -DNAME[=VALUE] macros of `options` (KernelSource::build_options), the
// only options a GLSL kernel takes. Throws InvalidArgument for anything else.
std::vector<std::pair<std::string, std::string>> glsl_macros(const std::string& options, const std::string& what) {
    std::vector<std::pair<std::string, std::string>> macros;
    std::size_t i = 0;
    while (i < options.size()) {
        if (std::isspace(static_cast<unsigned char>(options[i]))) {
            ++i;
            continue;
        }
        std::size_t end = i;
        while (end < options.size() && !std::isspace(static_cast<unsigned char>(options[end]))) ++end;
        const std::string token = options.substr(i, end - i);
        const std::size_t eq = token.find('=');
        const std::string name = token.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
        if (token.compare(0, 2, "-D") != 0 || name.empty())
            throw InvalidArgument(what + ": build option '" + token + "' is not -DNAME or -DNAME=VALUE, the only "
                                  "options a GLSL kernel takes (KernelSource::build_options)");
        macros.emplace_back(name, eq == std::string::npos ? "" : token.substr(eq + 1));
        i = end;
    }
    return macros;
}

// ---- glslc, shaderc's command-line compiler, where the library does not load ----

// Runs `args` (args[0] looked up on PATH, no shell) with its output and errors
// to `log_file`; its exit status, or -1 when it could not be started.
int run_tool(const std::vector<std::string>& args, const std::string& log_file) {
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0) return -1;
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return -1;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string read_text(const std::string& path, std::size_t max_bytes) {
    std::string text;
    if (FILE* f = std::fopen(path.c_str(), "rb")) {
        text.resize(max_bytes);
        text.resize(std::fread(&text[0], 1, max_bytes, f));
        std::fclose(f);
    }
    return text;
}

// A private folder for one compilation, removed with the object.
struct TempDir {
    std::string path;
    TempDir() {
        std::string t = (std::filesystem::temp_directory_path() / "accel-glslc-XXXXXX").string();
        if (mkdtemp(&t[0])) path = t;
    }
    ~TempDir() {
        std::error_code ec;
        if (!path.empty()) std::filesystem::remove_all(path, ec);
    }
};

// glslc's version line (its identity for the cache key), or "" where it does not run.
const std::string& glslc_version() {
    static const std::string version = [] {
        TempDir dir;
        if (dir.path.empty() || run_tool({"glslc", "--version"}, dir.path + "/log") != 0) return std::string();
        std::string text = read_text(dir.path + "/log", 4096);
        return "glslc " + text.substr(0, text.find('\n'));
    }();
    return version;
}

// The compiler's identity for the cache key, or "" when there is none.
std::string compiler_identity() { return shaderc().missing.empty() ? shaderc().identity : glslc_version(); }

// SPIR-V words from `glsl` by glslc, for Vulkan 1.`minor`; throws as compile_glsl.
std::vector<std::uint32_t> run_glslc(const KernelSource& s, const std::vector<std::pair<std::string, std::string>>& macros,
                                     std::uint32_t minor, const std::string& what) {
    TempDir dir;
    if (dir.path.empty()) throw DeviceError(what + ": no temporary folder for glslc (mkdtemp failed)", errno, "errno");
    const std::string src = dir.path + "/" + "kernel.comp", out = dir.path + "/kernel.spv", log = dir.path + "/log";
    if (FILE* f = std::fopen(src.c_str(), "wb")) {
        const std::string glsl = s.code_for("glsl");
        const bool ok = std::fwrite(glsl.data(), 1, glsl.size(), f) == glsl.size();
        if (std::fclose(f) != 0 || !ok) throw DeviceError(what + ": could not write " + src + " for glslc", 0, "io");
    } else {
        throw DeviceError(what + ": could not write " + src + " for glslc", errno, "errno");
    }
    std::vector<std::string> args{"glslc", "-fshader-stage=compute", "--target-env=vulkan1." + std::to_string(minor)};
    for (const auto& m : macros) args.push_back("-D" + m.first + (m.second.empty() ? "" : "=" + m.second));
    args.insert(args.end(), {"-o", out, src});
    const int status = run_tool(args, log);
    if (status != 0) {
        std::string text = read_text(log, 64 << 10);
        while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
        throw DeviceError(what + ": shaderc (glslc) could not compile the GLSL (exit status " + std::to_string(status) +
                              "); its log:\n" + text,
                          status, "glslc");
    }
    const std::string bytes = read_text(out, 64 << 20);
    if (bytes.size() < 20 || bytes.size() % 4 != 0)
        throw DeviceError(what + ": glslc wrote no SPIR-V module", 0, "glslc");
    std::vector<std::uint32_t> words(bytes.size() / 4);
    std::memcpy(words.data(), bytes.data(), bytes.size());
    return words;
}

// SPIR-V words from `glsl`, for Vulkan 1.`minor`: by the shaderc library, or
// by glslc where the library does not load. Throws Unsupported without
// either, InvalidArgument for bad options, DeviceError with shaderc's log.
std::vector<std::uint32_t> compile_glsl(const KernelSource& s, std::uint32_t minor, const std::string& what) {
    const auto macros = glsl_macros(s.build_options, what);
    const Shaderc& sc = shaderc();
    if (!sc.missing.empty()) {
        if (!glslc_version().empty()) return run_glslc(s, macros, minor, what);
        throw Unsupported(what + ": a GLSL kernel needs shaderc to compile it, and " + sc.missing +
                          ", nor does its compiler glslc run (not on PATH); install it (Debian/Ubuntu: libshaderc1 "
                          "and glslc) or give the kernel as SPIR-V words (KernelSource::set_spirv, e.g. from glslc)");
    }
    void* compiler = sc.compiler_initialize();
    void* options = sc.options_initialize();
    if (!compiler || !options) {
        if (compiler) sc.compiler_release(compiler);
        if (options) sc.options_release(options);
        throw DeviceError(what + ": shaderc could not initialize its compiler", 0, "shaderc");
    }
    sc.options_set_target_env(options, kShadercTargetEnvVulkan, (1u << 22) | (minor << 12));
    for (const auto& m : macros)
        sc.options_add_macro_definition(options, m.first.data(), m.first.size(), m.second.data(), m.second.size());
    const std::string glsl = s.code_for("glsl");
    void* result = sc.compile_into_spv(compiler, glsl.data(), glsl.size(), kShadercComputeShader,
                                       (s.name + ".comp").c_str(), "main", options);
    const int status = result ? sc.result_get_compilation_status(result) : 4;
    std::vector<std::uint32_t> words;
    std::string log;
    if (status == 0) {
        const std::size_t n = sc.result_get_length(result);
        const char* bytes = sc.result_get_bytes(result);
        if (bytes && n >= 20 && n % 4 == 0) {
            words.resize(n / 4);
            std::memcpy(words.data(), bytes, n);
        }
    } else if (result && sc.result_get_error_message(result)) {
        log = sc.result_get_error_message(result);
    }
    if (result) sc.result_release(result);
    sc.options_release(options);
    sc.compiler_release(compiler);
    while (!log.empty() && (log.back() == '\n' || log.back() == ' ')) log.pop_back();
    const std::string name = status >= 0 && status < 9 ? kShadercStatus[status] : std::to_string(status);
    if (status != 0)
        throw DeviceError(what + ": shaderc could not compile the GLSL (shaderc_compilation_status_" + name +
                              "); its log:\n" + log,
                          status, "shaderc_compilation_status_" + name);
    if (words.empty()) throw DeviceError(what + ": shaderc returned no SPIR-V module", 0, "shaderc");
    return words;
}

// ---- what a SPIR-V module declares --------------------------------------------

// SPIR-V enumerants (SPIR-V specification 1.6).
constexpr std::uint32_t kSpirvMagic = 0x07230203u;
constexpr std::uint32_t kOpCapability = 17, kOpTypeInt = 21, kOpTypeFloat = 22, kOpTypeStruct = 30,
                        kOpTypePointer = 32, kOpVariable = 59, kOpDecorate = 71, kOpMemberDecorate = 72;
constexpr std::uint32_t kDecorationSpecId = 1, kDecorationBinding = 33, kDecorationDescriptorSet = 34,
                        kDecorationOffset = 35;
constexpr std::uint32_t kStoragePushConstant = 9, kCapFloat64 = 10, kCapInt64 = 11;

// The interface of a compute shader as far as the signature's checks need it.
struct ModuleInterface {
    bool int64 = false, float64 = false;  ///< capabilities Int64, Float64
    std::set<std::uint32_t> spec_ids;     ///< SpecId decorations
    std::vector<std::pair<std::uint32_t, std::uint32_t>> bindings;  ///< (set, binding) of each decorated variable
    bool has_push = false;
    struct Member {
        std::uint32_t offset = 0, width = 0;
        bool is_float = false, is_signed = false, scalar = false;  ///< scalar: an OpTypeInt/OpTypeFloat
    };
    std::vector<Member> push;  ///< the push-constant block's members, in order
};

// Reads `w` (a SPIR-V module, its header checked by the caller); false when
// an instruction's length runs past the end.
bool read_interface(const std::vector<std::uint32_t>& w, ModuleInterface& out) {
    std::map<std::uint32_t, std::uint32_t> set_of, binding_of, pointee, push_pointer_types;
    std::map<std::uint32_t, std::vector<std::uint32_t>> struct_members;
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> member_offset;
    std::map<std::uint32_t, ModuleInterface::Member> scalar_types;
    std::uint32_t push_var_type = 0;
    for (std::size_t i = 5; i < w.size();) {
        const std::uint32_t n = w[i] >> 16, op = w[i] & 0xffffu;
        if (n == 0 || i + n > w.size()) return false;
        const std::uint32_t* a = &w[i + 1];  // the operands, n - 1 of them
        if (op == kOpCapability && n >= 2) {
            out.int64 = out.int64 || a[0] == kCapInt64;
            out.float64 = out.float64 || a[0] == kCapFloat64;
        } else if (op == kOpDecorate && n >= 4) {
            if (a[1] == kDecorationSpecId) out.spec_ids.insert(a[2]);
            if (a[1] == kDecorationDescriptorSet) set_of[a[0]] = a[2];
            if (a[1] == kDecorationBinding) binding_of[a[0]] = a[2];
        } else if (op == kOpMemberDecorate && n >= 5 && a[2] == kDecorationOffset) {
            member_offset[{a[0], a[1]}] = a[3];
        } else if (op == kOpTypeInt && n >= 4) {
            scalar_types[a[0]] = {0, a[1], false, a[2] != 0, true};
        } else if (op == kOpTypeFloat && n >= 3) {
            scalar_types[a[0]] = {0, a[1], true, true, true};
        } else if (op == kOpTypeStruct && n >= 2) {
            struct_members[a[0]].assign(a + 1, a + n - 1);
        } else if (op == kOpTypePointer && n >= 4) {
            pointee[a[0]] = a[2];
        } else if (op == kOpVariable && n >= 4 && a[2] == kStoragePushConstant) {
            push_var_type = a[0];
            out.has_push = true;
        }
        i += n;
    }
    for (const auto& [id, binding] : binding_of)
        out.bindings.emplace_back(set_of.count(id) ? set_of[id] : 0, binding);
    if (out.has_push) {
        const std::uint32_t block = pointee[push_var_type];
        const auto& members = struct_members[block];
        for (std::uint32_t m = 0; m < members.size(); ++m) {
            ModuleInterface::Member member;
            auto t = scalar_types.find(members[m]);
            if (t != scalar_types.end()) member = t->second;
            member.offset = member_offset.count({block, m}) ? member_offset[{block, m}] : 0;
            out.push.push_back(member);
        }
    }
    return true;
}

std::string glsl_type(ParamType t) {
    switch (t) {
        case ParamType::i32: return "int";
        case ParamType::u32: return "uint";
        case ParamType::i64: return "int64_t";
        case ParamType::u64: return "uint64_t";
        case ParamType::f32: return "float";
        case ParamType::f64: return "double";
        case ParamType::tensor: break;
    }
    return "?";
}

}  // namespace

// ---- a program's kernel -------------------------------------------------------

/// A program's kernel on one device: its shader module, the descriptor set
/// layout (a storage buffer per tensor parameter, bindings 0.. in signature
/// order), the pipeline layout (one push-constant range over the scalars at
/// their std430 offsets) and a compute pipeline per work-group size, made on
/// first use. Thread-safe (the pipelines' map has a mutex). Launches hold it
/// until their commands complete, so it outlives its pipelines' use; it
/// holds the VkDevice (DeviceCore) as long.
class UserPipeline final : public BuiltKernel, public std::enable_shared_from_this<UserPipeline> {
public:
    UserPipeline(VulkanDevice& d, const KernelSource& s, const std::vector<std::uint32_t>& words,
                 const std::string& what)
        : core_(d.core()), name_(s.name), what_(what) {
        std::vector<VkDescriptorSetLayoutBinding> bindings;
        std::uint32_t push_end = 0;
        for (const KernelParam& p : s.params) {
            if (p.type == ParamType::tensor) {
                VkDescriptorSetLayoutBinding b{};
                b.binding = static_cast<std::uint32_t>(bindings.size());
                b.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
                b.descriptorCount = 1;
                b.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
                bindings.push_back(b);
                offsets_.push_back(0);
            } else {
                const auto size = static_cast<std::uint32_t>(param_type_size(p.type));
                push_end = (push_end + size - 1) / size * size;  // std430: a scalar aligned to its size
                offsets_.push_back(push_end);
                push_end += size;
            }
        }
        push_bytes_ = push_end;
        try {
            VkShaderModuleCreateInfo mi{};
            mi.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
            mi.codeSize = words.size() * sizeof(std::uint32_t);
            mi.pCode = words.data();
            check_vk(vkCreateShaderModule(core_->device, &mi, nullptr, &module_), what + ": vkCreateShaderModule");
            VkDescriptorSetLayoutCreateInfo li{};
            li.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
            li.bindingCount = static_cast<std::uint32_t>(bindings.size());
            li.pBindings = bindings.data();
            check_vk(vkCreateDescriptorSetLayout(core_->device, &li, nullptr, &set_layout_),
                     what + ": vkCreateDescriptorSetLayout");
            const VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes_};
            VkPipelineLayoutCreateInfo pi{};
            pi.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
            pi.setLayoutCount = 1;
            pi.pSetLayouts = &set_layout_;
            pi.pushConstantRangeCount = push_bytes_ ? 1 : 0;
            pi.pPushConstantRanges = &range;
            check_vk(vkCreatePipelineLayout(core_->device, &pi, nullptr, &layout_), what + ": vkCreatePipelineLayout");
        } catch (...) {
            destroy();
            throw;
        }
    }
    ~UserPipeline() override { destroy(); }

    void launch(const LaunchGeometry& g, const std::vector<ResolvedArg>& args, Stream& stream) override {
        auto& d = static_cast<VulkanDevice&>(stream.device());
        const VkDeviceSize range_limit = d.pd_.props.limits.maxStorageBufferRange;
        std::vector<VkDescriptorBufferInfo> infos;
        std::vector<unsigned char> push(push_bytes_);
        for (std::size_t i = 0; i < args.size(); ++i) {
            const ResolvedArg& a = args[i];
            if (a.type != ParamType::tensor) {
                std::memcpy(push.data() + offsets_[i], &a.bits, param_type_size(a.type));
                continue;
            }
            if (a.bytes > range_limit)
                throw Unsupported("kernel '" + name_ + "' on " + d.selector() + ": argument " + std::to_string(i) +
                                  " is a tensor of " + std::to_string(a.bytes) + " bytes, above the " +
                                  std::to_string(range_limit) +
                                  " one storage buffer reaches (maxStorageBufferRange); split it");
            const auto* b = static_cast<const VulkanBuffer*>(a.handle);
            infos.push_back({b->buffer, b->start, a.bytes});
        }
        const VkPipeline p = pipeline(d, g.block);
        std::pair<VkDescriptorSet, VkDescriptorPool> set{VK_NULL_HANDLE, VK_NULL_HANDLE};
        if (!infos.empty()) {
            set = d.allocate_set(set_layout_);
            d.write_storage_buffers(set.first, infos);
        }
        // Recorded like accel's own ops (VulkanDevice::dispatch): in order on
        // the stream, timed by its events. A user kernel is the user's: the
        // grid is dispatched as given, with no splitting into chunks.
        auto self = shared_from_this();  // held until the command completes
        VulkanDevice* dev = &d;
        VulkanDevice::state_of(stream).submit(
            [&](VkCommandBuffer cb) {
                vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p);
                if (set.first)
                    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout_, 0, 1, &set.first, 0, nullptr);
                if (push_bytes_)
                    vkCmdPushConstants(cb, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes_, push.data());
                vkCmdDispatch(cb, static_cast<std::uint32_t>(g.grid.x), static_cast<std::uint32_t>(g.grid.y),
                              static_cast<std::uint32_t>(g.grid.z));
            },
            [self, dev, set] {
                if (set.first) dev->free_set(set.first, set.second);
            });
    }

private:
    // The pipeline of work-group size `block` (specialization constants 0..2).
    VkPipeline pipeline(VulkanDevice& d, const Dim3& block) {
        std::lock_guard<std::mutex> lock(mutex_);
        const auto key = std::make_tuple(block.x, block.y, block.z);
        if (auto found = pipelines_.find(key); found != pipelines_.end()) return found->second;
        VkPipeline p = d.compute_pipeline(module_, layout_, block, {}, what_);
        pipelines_[key] = p;
        return p;
    }

    void destroy() noexcept {
        for (auto& p : pipelines_) vkDestroyPipeline(core_->device, p.second, nullptr);
        if (layout_) vkDestroyPipelineLayout(core_->device, layout_, nullptr);
        if (set_layout_) vkDestroyDescriptorSetLayout(core_->device, set_layout_, nullptr);
        if (module_) vkDestroyShaderModule(core_->device, module_, nullptr);
    }

    std::shared_ptr<DeviceCore> core_;
    std::string name_, what_;
    std::vector<std::uint32_t> offsets_;  ///< per parameter: a scalar's push-constant offset (bytes)
    std::uint32_t push_bytes_ = 0;
    VkShaderModule module_ = VK_NULL_HANDLE;
    VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
    VkPipelineLayout layout_ = VK_NULL_HANDLE;
    std::mutex mutex_;  ///< guards pipelines_
    std::map<std::tuple<std::size_t, std::size_t, std::size_t>, VkPipeline> pipelines_;
};

std::shared_ptr<BuiltKernel> VulkanDevice::build_program_kernel(const KernelSource& source) {
    const std::string what = "kernel '" + source.name + "' for " + selector() + " (" + info().name + ")";
    const std::string spirv = source.code_for("spirv");
    if (!source.code_for("glsl").empty() && !spirv.empty())
        throw InvalidArgument(what + ": both code[\"glsl\"] and code[\"spirv\"] are given; give one");
    if (spirv.size() % 4 != 0)
        throw InvalidArgument(what + ": code[\"spirv\"] holds " + std::to_string(spirv.size()) +
                              " bytes, not a whole number of 32-bit words (KernelSource::set_spirv)");
    // The Vulkan version GLSL is compiled for: the device's and the loader's,
    // at most 1.2 (for 1.3 glslang sets the work-group size by LocalSizeId,
    // which needs the maintenance4 feature, not enabled on accel's VkDevice).
    std::uint32_t api = std::min<std::uint32_t>(pd_.props.apiVersion, VK_API_VERSION_1_2);
    std::uint32_t loader = VK_API_VERSION_1_0;
    if (vkEnumerateInstanceVersion && vkEnumerateInstanceVersion(&loader) == VK_SUCCESS) api = std::min(api, loader);
    const std::uint32_t minor = VK_API_VERSION_MINOR(api);
    std::vector<std::uint32_t> words(spirv.size() / 4);
    if (!spirv.empty()) std::memcpy(words.data(), spirv.data(), spirv.size());
    if (words.empty()) {
        // SPIR-V compiled from GLSL is kept in ACCEL_CACHE_DIR/vulkan-kernels/
        // (cache_file.hpp's keyed entries): compiling costs more than the
        // driver's pipeline cache saves, which starts from SPIR-V.
        constexpr char kMagic[9] = "accelSP1";
        const std::string compiler = compiler_identity();
        const std::string key = compiler + "\nvulkan 1." + std::to_string(minor) + "\n" + source.build_options + "\n" +
                                source.code_for("glsl");
        const std::string file = compiler.empty() ? "" : cache_file::keyed_path("vulkan-kernels", key, "spv");
        const auto cached = cache_file::read_keyed(file, kMagic, key, std::uint64_t{64} << 20);
        if (cached.size() >= 20 && cached.size() % 4 == 0) {
            words.resize(cached.size() / 4);
            std::memcpy(words.data(), cached.data(), cached.size());
        }
        if (words.empty() || words[0] != kSpirvMagic) {
            words = compile_glsl(source, minor, what);
            cache_file::write_keyed(file, kMagic, key, reinterpret_cast<const unsigned char*>(words.data()),
                                    words.size() * sizeof(std::uint32_t));
        }
    }
    // The module against the signature and the conventions, so that a
    // mismatch is an error here rather than undefined behaviour in the driver.
    ModuleInterface m;
    if (words.size() < 5 || words[0] != kSpirvMagic || !read_interface(words, m))
        throw InvalidArgument(what + ": code[\"spirv\"] is not a SPIR-V module (it starts with the magic "
                              "number 0x07230203; give the words of a .spv file, host byte order)");
    if ((m.int64 || m.float64) && !pd_.fp64)
        throw Unsupported(what + ": the shader uses " + (m.float64 ? "64-bit floats" : "64-bit integers") +
                          ", which this device lacks (shaderFloat64 and shaderInt64)");
    if (!m.spec_ids.count(0) || !m.spec_ids.count(1) || !m.spec_ids.count(2))
        throw InvalidArgument(what + ": the work-group size is not specialization constants 0, 1, 2, which accel "
                              "sets to the launch's block; declare layout(local_size_x_id = 0, local_size_y_id = 1, "
                              "local_size_z_id = 2) in;");
    std::uint32_t tensors = 0;
    std::vector<const KernelParam*> scalars;
    for (const KernelParam& p : source.params) {
        if (p.type == ParamType::tensor) ++tensors;
        else scalars.push_back(&p);
    }
    for (const auto& [set, binding] : m.bindings)
        if (set != 0 || binding >= tensors)
            throw InvalidArgument(what + ": the shader declares a buffer at set " + std::to_string(set) + ", binding " +
                                  std::to_string(binding) + "; the signature's " + std::to_string(tensors) +
                                  " tensor(s) are the storage buffers of set 0 at bindings 0.." +
                                  (tensors ? std::to_string(tensors - 1) : std::string("(none)")) +
                                  ", in signature order");
    const auto& limits = pd_.props.limits;
    if (tensors > std::min<std::uint32_t>({limits.maxPerStageDescriptorStorageBuffers,
                                           limits.maxDescriptorSetStorageBuffers, 4096}))
        throw InvalidArgument(what + ": " + std::to_string(tensors) + " tensor parameters, above the " +
                              std::to_string(std::min(limits.maxPerStageDescriptorStorageBuffers, 4096u)) +
                              " storage buffers a compute shader may bind here");
    // Scalars: one push-constant block, members in signature order at std430 offsets.
    if (!scalars.empty() && !m.has_push)
        throw InvalidArgument(what + ": the signature has " + std::to_string(scalars.size()) +
                              " scalar(s) but the shader declares no push-constant block; declare "
                              "layout(push_constant) uniform Scalars { ... }; with one member per scalar, in order");
    if (m.has_push && m.push.size() != scalars.size())
        throw InvalidArgument(what + ": the shader's push-constant block has " + std::to_string(m.push.size()) +
                              " member(s), the signature " + std::to_string(scalars.size()) +
                              " scalar(s); one member per scalar, in signature order");
    std::uint32_t offset = 0;
    for (std::size_t i = 0; i < scalars.size(); ++i) {
        const KernelParam& p = *scalars[i];
        const auto size = static_cast<std::uint32_t>(param_type_size(p.type));
        offset = (offset + size - 1) / size * size;
        const ModuleInterface::Member& member = m.push[i];
        const bool is_float = p.type == ParamType::f32 || p.type == ParamType::f64;
        const bool is_signed = p.type == ParamType::i32 || p.type == ParamType::i64 || is_float;
        if (!member.scalar || member.width != size * 8 || member.is_float != is_float || member.is_signed != is_signed ||
            member.offset != offset)
            throw InvalidArgument(what + ": push-constant member " + std::to_string(i) + " does not match scalar '" +
                                  p.name + "' (" + param_type_name(p.type) + "): declare it as " + glsl_type(p.type) +
                                  " at offset " + std::to_string(offset) + " (std430, in signature order)");
        offset += size;
    }
    if (offset > limits.maxPushConstantsSize)
        throw InvalidArgument(what + ": the scalars take " + std::to_string(offset) + " bytes of push constants, above "
                              "the device's " + std::to_string(limits.maxPushConstantsSize) +
                              " (maxPushConstantsSize); pass fewer scalars, or pass them in a tensor");
    return std::make_shared<UserPipeline>(*this, source, words, what);
}

// ---- the runtime's objects ----------------------------------------------------------

std::uint64_t VulkanDevice::object(const std::string& name) {
    if (name == "instance") return reinterpret_cast<std::uint64_t>(instance_);
    if (name == "physical_device") return reinterpret_cast<std::uint64_t>(pd_.handle);
    if (name == "device") return reinterpret_cast<std::uint64_t>(device_);
    if (name == "queue_family") return core_->queue_family;
    throw Unsupported("a Vulkan device has no object '" + name + "'" +
                      "; it has an instance (VkInstance), a physical_device (VkPhysicalDevice), a device (VkDevice) "
                      "and a queue_family (the index of its compute queue's family)");
}

// Every stream of the device submits to this one VkQueue, under a mutex of
// accel's (DeviceCore::submit) that a program cannot take: see
// accel/interop/vulkan.hpp for what a program submitting to it must do.
std::uint64_t VulkanDevice::queue(Stream&) { return reinterpret_cast<std::uint64_t>(core_->queue); }

NativeMemory VulkanDevice::memory(void* handle, std::size_t bytes) {
    const auto* b = static_cast<const VulkanBuffer*>(handle);
    return {reinterpret_cast<std::uint64_t>(b->buffer), static_cast<std::size_t>(b->start), bytes};
}

void* VulkanDevice::adopt(const NativeMemory& m) {
    const std::string what = "adopt_native_memory on " + selector();
    const VkDeviceSize align = pd_.props.limits.minStorageBufferOffsetAlignment;
    if (align > 1 && m.offset % align != 0)
        throw InvalidArgument(what + ": offset " + std::to_string(m.offset) + " is not a multiple of " +
                              std::to_string(align) + " bytes (minStorageBufferOffsetAlignment), where a storage "
                              "buffer's range must start; pass an aligned offset");
    const auto buffer = reinterpret_cast<VkBuffer>(m.handle);
    // The buffer's size is not queryable; its memory requirement bounds it.
    VkMemoryRequirements req{};
    vkGetBufferMemoryRequirements(device_, buffer, &req);
    if (m.offset > req.size || m.bytes > req.size - m.offset)
        throw InvalidArgument(what + ": bytes [" + std::to_string(m.offset) + ", " + std::to_string(m.offset + m.bytes) +
                              ") asked of a VkBuffer of at most " + std::to_string(req.size) + " bytes");
    auto* b = new VulkanBuffer();
    b->buffer = buffer;
    b->start = m.offset;
    b->size = m.bytes;
    return b;
}

void VulkanDevice::release(void* handle) noexcept { delete static_cast<VulkanBuffer*>(handle); }

std::unique_ptr<Stream> VulkanDevice::stream_over(std::uint64_t) {
    throw Unsupported("stream_over_native_queue on " + selector() +
                      ": a Vulkan device has one VkQueue, which all of accel's streams share and submit to under "
                      "accel's own lock, so a stream cannot be made over a queue of the program's; synchronize the "
                      "accel stream and submit the program's work after it (to its own queue, or to the queue "
                      "accel::interop::vulkan::queue returns, as that header says)");
}

}  // namespace vulkan
}  // namespace accel
