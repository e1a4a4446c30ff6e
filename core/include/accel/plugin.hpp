// accel/plugin.hpp — the binary interface between libaccel and a backend plugin.
#pragma once

#include <accel/device.hpp>

/// Bumped whenever Device/Backend/Stream/Event/DeviceInfo/KernelArgs change
/// layout or virtuals — not when an op is added: kernels are registered by op
/// name (Device::register_kernel), so a plugin built before an op existed
/// loads and reports that op unsupported. 3: DeviceInfo gained uuid,
/// pci_bus_id and host; Device's constructor moved into libaccel. 4: kernels
/// are data (register_kernel, KernelArgs, dtypes); probes moved to Probes.
#define ACCEL_PLUGIN_ABI 4

extern "C" {
/// What a plugin's entry point returns. Plain C layout so that the ABI check
/// reads it safely before any C++ object crosses the boundary.
struct accel_plugin_info {
    int abi_version;           ///< must equal ACCEL_PLUGIN_ABI
    const char* backend_name;  ///< "host", "opencl", "kokkos", "cuda"
    /// Returns the process-wide Backend object (owned by the plugin, never
    /// deleted: plugins stay loaded until the process ends).
    accel::Backend* (*backend)();
    /// sizeof(accel::KernelArgs) in the plugin's build: checked beside
    /// abi_version, so a mismatched header is caught even without a bump.
    unsigned long kernel_args_size;
};
/// The symbol every plugin exports.
typedef const accel_plugin_info* (*accel_plugin_entry_fn)();
}

/// Defines the entry point of a plugin whose Backend class is BackendClass.
#define ACCEL_DEFINE_PLUGIN(NAME, BackendClass)                                   \
    extern "C" __attribute__((visibility("default"))) const accel_plugin_info*  \
    accel_backend_plugin() {                                                    \
        static const accel_plugin_info info{ACCEL_PLUGIN_ABI, NAME, []() -> accel::Backend* { \
            static BackendClass instance;                                       \
            return &instance;                                                   \
        }, sizeof(accel::KernelArgs)};                                          \
        return &info;                                                           \
    }

/// Declares, inside a backend's Device subclass, an override of every runtime
/// hook of accel::Device (memory, copies, streams, events, synchronization);
/// their contracts are in accel/device.hpp. Each backend
/// defines them in its <name>_backend.cpp.
#define ACCEL_DEVICE_RUNTIME_OVERRIDES                                                                             \
    accel::DeviceHandle do_allocate(std::size_t bytes) override;                                                   \
    void do_deallocate(accel::DeviceHandle h) noexcept override;                                                   \
    void do_copy_h2d(accel::DeviceHandle dst, std::size_t off, const void* src, std::size_t bytes,                 \
                     accel::Stream& s, bool blocking) override;                                                    \
    void do_copy_d2h(void* dst, accel::DeviceHandle src, std::size_t off, std::size_t bytes, accel::Stream& s,     \
                     bool blocking) override;                                                                      \
    void do_copy_d2d(accel::DeviceHandle dst, std::size_t dst_off, accel::DeviceHandle src, std::size_t src_off,   \
                     std::size_t bytes, accel::Stream& s, bool blocking) override;                                 \
    std::unique_ptr<accel::Stream> do_create_stream() override;                                                    \
    std::unique_ptr<accel::Event> do_create_event() override;                                                      \
    double do_elapsed_ms(accel::Event& start, accel::Event& end) override;                                         \
    void do_synchronize() override;

/// Declares, inside a backend's Device subclass, the float32 kernels that
/// accel::register_f32_kernels() registers: one member per op, arguments
/// unpacked from KernelArgs (handles of this device, sizes in elements, a
/// checked geometry, the stream). Semantics are the op table's
/// (accel/op_table.hpp) and accel/ops.hpp's. A backend defines them in its
/// <name>_ops.cpp; k_gemm_vendor only where has_vendor_gemm() is true.
#define ACCEL_DEVICE_F32_KERNELS                                                                                    \
    void k_add(accel::DeviceHandle a, accel::DeviceHandle b, accel::DeviceHandle c, std::size_t n,                 \
               const accel::LaunchGeometry& g, accel::Stream& s);                                                  \
    void k_sigmoid(accel::DeviceHandle x, accel::DeviceHandle y, std::size_t n, const accel::LaunchGeometry& g,   \
                   accel::Stream& s);                                                                              \
    void k_relu(accel::DeviceHandle x, accel::DeviceHandle y, std::size_t n, const accel::LaunchGeometry& g,      \
                accel::Stream& s);                                                                                 \
    void k_relu_backward(accel::DeviceHandle dy, accel::DeviceHandle x, accel::DeviceHandle dx, std::size_t n,    \
                         const accel::LaunchGeometry& g, accel::Stream& s);                                        \
    void k_sigmoid_backward(accel::DeviceHandle dy, accel::DeviceHandle y, accel::DeviceHandle dx, std::size_t n, \
                            const accel::LaunchGeometry& g, accel::Stream& s);                                     \
    void k_matmul(accel::DeviceHandle a, accel::DeviceHandle b, accel::DeviceHandle c, std::size_t m,             \
                  std::size_t n, std::size_t k, bool trans_a, bool trans_b, const accel::LaunchGeometry& g,        \
                  accel::Stream& s);                                                                               \
    void k_dense(accel::DeviceHandle x, accel::DeviceHandle w, accel::DeviceHandle bias, accel::DeviceHandle y,   \
                 std::size_t batch, std::size_t in, std::size_t out, accel::Activation act,                        \
                 const accel::LaunchGeometry& g, accel::Stream& s);                                                \
    void k_bias_activation(accel::DeviceHandle bias, accel::DeviceHandle y, std::size_t rows, std::size_t cols,   \
                           bool read_y, accel::Activation act, const accel::LaunchGeometry& g, accel::Stream& s);  \
    void k_column_sum(accel::DeviceHandle x, accel::DeviceHandle y, std::size_t rows, std::size_t cols,           \
                      const accel::LaunchGeometry& g, accel::Stream& s);                                           \
    void k_bce_with_logits(accel::DeviceHandle z, accel::DeviceHandle t, accel::DeviceHandle l, std::size_t n,    \
                           const accel::LaunchGeometry& g, accel::Stream& s);                                      \
    void k_bce_with_logits_backward(accel::DeviceHandle z, accel::DeviceHandle t, accel::DeviceHandle dz,         \
                                    std::size_t n, float scale, const accel::LaunchGeometry& g, accel::Stream& s); \
    void k_adam_step(accel::DeviceHandle p, accel::DeviceHandle grad, accel::DeviceHandle m, accel::DeviceHandle v, \
                     std::size_t n, float beta1, float beta2, float eps, float step_size,                          \
                     float bias_correction2_sqrt, const accel::LaunchGeometry& g, accel::Stream& s);               \
    bool has_vendor_gemm() const;                                                                                  \
    void k_gemm_vendor(accel::DeviceHandle a, accel::DeviceHandle b, accel::DeviceHandle c, std::size_t m,        \
                       std::size_t n, std::size_t k, bool trans_a, bool trans_b, float beta, accel::Stream& s);

namespace accel {

/// Registers the members declared by ACCEL_DEVICE_F32_KERNELS as `d`'s f32
/// kernels (native; gemm on the vendor path where d.has_vendor_gemm()).
/// Call from the device's constructor. The kernels keep a reference to `d`.
template <class D>
void register_f32_kernels(D& d) {
    const DType f = DType::f32;
    const OpPath nat = OpPath::native;
    d.register_kernel("add", f, nat, [&d](const KernelArgs& a) { d.k_add(a.in[0], a.in[1], a.out[0], a.n, a.geometry, *a.stream); });
    d.register_kernel("sigmoid", f, nat, [&d](const KernelArgs& a) { d.k_sigmoid(a.in[0], a.out[0], a.n, a.geometry, *a.stream); });
    d.register_kernel("relu", f, nat, [&d](const KernelArgs& a) { d.k_relu(a.in[0], a.out[0], a.n, a.geometry, *a.stream); });
    d.register_kernel("relu_backward", f, nat, [&d](const KernelArgs& a) {
        d.k_relu_backward(a.in[0], a.in[1], a.out[0], a.n, a.geometry, *a.stream);
    });
    d.register_kernel("sigmoid_backward", f, nat, [&d](const KernelArgs& a) {
        d.k_sigmoid_backward(a.in[0], a.in[1], a.out[0], a.n, a.geometry, *a.stream);
    });
    d.register_kernel("matmul", f, nat, [&d](const KernelArgs& a) {
        d.k_matmul(a.in[0], a.in[1], a.out[0], a.m, a.n, a.k, a.trans_a, a.trans_b, a.geometry, *a.stream);
    });
    d.register_kernel("dense", f, nat, [&d](const KernelArgs& a) {
        d.k_dense(a.in[0], a.in[1], a.in[2], a.out[0], a.m, a.k, a.n, a.act, a.geometry, *a.stream);
    });
    d.register_kernel("bias_activation", f, nat, [&d](const KernelArgs& a) {
        d.k_bias_activation(a.in[0], a.out[0], a.m, a.n, a.scalars[0] != 0, a.act, a.geometry, *a.stream);
    });
    d.register_kernel("column_sum", f, nat, [&d](const KernelArgs& a) {
        d.k_column_sum(a.in[0], a.out[0], a.m, a.n, a.geometry, *a.stream);
    });
    d.register_kernel("bce_with_logits", f, nat, [&d](const KernelArgs& a) {
        d.k_bce_with_logits(a.in[0], a.in[1], a.out[0], a.n, a.geometry, *a.stream);
    });
    d.register_kernel("bce_with_logits_backward", f, nat, [&d](const KernelArgs& a) {
        d.k_bce_with_logits_backward(a.in[0], a.in[1], a.out[0], a.n, static_cast<float>(a.scalars[0]), a.geometry,
                                     *a.stream);
    });
    d.register_kernel("adam_step", f, nat, [&d](const KernelArgs& a) {
        const auto s = [&a](int i) { return static_cast<float>(a.scalars[static_cast<std::size_t>(i)]); };
        d.k_adam_step(a.out[0], a.in[1], a.out[1], a.out[2], a.n, s(0), s(1), s(2), s(3), s(4), a.geometry, *a.stream);
    });
    if (d.has_vendor_gemm())
        d.register_kernel("gemm", f, OpPath::vendor, [&d](const KernelArgs& a) {
            d.k_gemm_vendor(a.in[0], a.in[1], a.out[0], a.m, a.n, a.k, a.trans_a, a.trans_b,
                            static_cast<float>(a.scalars[0]), *a.stream);
        });
}

}  // namespace accel
