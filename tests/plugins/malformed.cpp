// Test-only plugins, each broken in one way: the registry must report the
// backend unavailable with a one-line reason and keep every other backend.
// Built once per defect with -DDEFECT=<one of Defect> -DPLUGIN_NAME="<backend>"
// (see tests/CMakeLists.txt).
#include <accel/plugin.hpp>

namespace {

enum Defect {
    wrong_abi,           // accel_plugin_info::abi_version is not ACCEL_PLUGIN_ABI
    wrong_kernel_args,   // kernel_args_size is not sizeof(accel::KernelArgs)
    null_info,           // the entry point returns null
    null_name,           // backend_name is null
    empty_name,          // backend_name is ""
    wrong_name,          // backend_name is another backend's
    null_backend_fn,     // the backend function pointer is null
    backend_null,        // backend() returns null
    backend_throws,      // backend() throws something that is not a std::exception
    self_name_mismatch,  // Backend::name() disagrees with the file's name
    probe_throws,        // probe() throws something that is not a std::exception
    bad_device_count,    // probe() says available with -1 devices
    create_device_null,  // create_device() returns null
};
constexpr Defect kDefect = DEFECT;

struct NotAnException {};

class BrokenBackend : public accel::Backend {
public:
    std::string name() const override { return kDefect == self_name_mismatch ? "opencl" : PLUGIN_NAME; }
    accel::Availability probe() override {
        if (kDefect == probe_throws) throw NotAnException{};
        accel::Availability a;
        a.available = true;
        a.device_count = kDefect == bad_device_count ? -1 : 1;
        return a;
    }
    std::shared_ptr<accel::Device> create_device(int) override { return nullptr; }
};

accel::Backend* backend() {
    if (kDefect == backend_null) return nullptr;
    if (kDefect == backend_throws) throw NotAnException{};
    static BrokenBackend instance;
    return &instance;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const accel_plugin_info* accel_backend_plugin() {
    static const accel_plugin_info info{
        kDefect == wrong_abi ? ACCEL_PLUGIN_ABI + 1000 : ACCEL_PLUGIN_ABI,
        kDefect == null_name ? nullptr : kDefect == empty_name ? "" : kDefect == wrong_name ? "opencl" : PLUGIN_NAME,
        kDefect == null_backend_fn ? nullptr : &backend,
        kDefect == wrong_kernel_args ? sizeof(accel::KernelArgs) + 8 : sizeof(accel::KernelArgs)};
    return kDefect == null_info ? nullptr : &info;
}
