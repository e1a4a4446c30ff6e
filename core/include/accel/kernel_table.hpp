// accel/kernel_table.hpp — the kernels one device runs, per (op, dtype,
// path), and the ones its backend claims to have.
#pragma once

#include <accel/kernel_args.hpp>

#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

namespace accel {

/// A device's kernels (Device::kernel_table()): one Kernel per (op, dtype,
/// path) registered, and the backend's claim of which it has. Kernels are
/// data, as ggml's backends register theirs: a backend registers one
/// function per (op, dtype, path) it runs when its device is created, and
/// the op front-end (accel/ops.hpp) validates a call once and runs the
/// kernel it finds here.
///
/// Thread-safety: every method may be called from any thread at any time;
/// a kernel found (find()) stays callable after another thread replaces it.
class KernelTable {
public:
    /// One row of a backend's kernel table: each op in each dtype on `path`.
    struct Claim {
        std::vector<Op> ops;
        std::vector<DType> dtypes;
        OpPath path = OpPath::native;
    };
    /// The backend's own reason why (op, dtype, path), which its device does
    /// not claim, is not run there (e.g. "the device has no cl_khr_fp16"),
    /// or "" for the default text.
    using ReasonFn = std::function<std::string(Op, DType, OpPath)>;

    /// An empty table of the device named `selector` (e.g. "opencl:0", for
    /// messages) of backend `backend`; `reason` may be null.
    KernelTable(std::string selector, std::string backend, ReasonFn reason);
    KernelTable(const KernelTable&) = delete;
    KernelTable& operator=(const KernelTable&) = delete;

    /// Registers `kernel` as the implementation of `op` in `dtype` on `path`,
    /// replacing an earlier one. Backends register theirs by Op, so that a
    /// misspelled op does not compile; an Op value this libaccel's table
    /// does not have (a plugin built against a newer accel) is ignored.
    /// Throws InvalidArgument for a null kernel.
    void add(Op op, DType dtype, OpPath path, Kernel kernel);
    /// The same for the op named `op` (an op-table name, e.g. "matmul"): how
    /// a program gives a kernel to an op it defined (define_op). Throws
    /// InvalidArgument naming `op` and the table's ops when the table has no
    /// op of that name, or for a null kernel.
    void add(const std::string& op, DType dtype, OpPath path, Kernel kernel);

    /// States the kernels the device has (claimed()): called once, by the
    /// backend's device constructor, from the one table it keeps per backend
    /// (<name>_ops.cpp). Replaces an earlier claim.
    void claim(const std::vector<Claim>& table);

    /// The kernel of (op, dtype, path), or null. Never throws beyond
    /// std::bad_alloc.
    std::shared_ptr<const Kernel> find(Op op, DType dtype, OpPath path) const;

    /// Whether `op` runs in `dtype` on `path`: a kernel is registered for
    /// it, or, for an op the front-end composes on the vendor path
    /// (OpInfo::vendor_composition), for every part. False for an Op value
    /// that names no op. Never throws.
    bool supports(Op op, DType dtype, OpPath path) const noexcept;
    /// supports(op, DType::f32, path).
    bool supports(Op op, OpPath path) const noexcept { return supports(op, DType::f32, path); }

    /// Every registered (op, dtype, path), in op-table order.
    std::vector<KernelKey> registered() const;
    /// What claim() stated, in op-table order, without repeats. A claimed
    /// kernel that is not registered is a defect of the backend, which the
    /// conformance suite reports as a failure (not as unsupported).
    std::vector<KernelKey> claimed() const;

    /// Why (op, dtype, path) does not run here, for messages: "" when it
    /// does (supports()); else that no backend has a vendor path for the op,
    /// that the backend claims it but registered no kernel (a defect), the backend's reason (ReasonFn), or
    /// that it is not in its kernel table (a built-in op of which it has none: plugin older than the op, or lacks it).
    /// Throws InvalidArgument for an Op value that names no op.
    std::string unsupported_reason(Op op, DType dtype, OpPath path) const;

private:
    /// The kernel of (op, dtype, path) or null; the caller holds mutex_.
    const std::shared_ptr<const Kernel>* slot(Op op, DType dtype, OpPath path) const noexcept;

    std::string selector_, backend_;
    ReasonFn reason_;
    mutable std::shared_mutex mutex_;
    /// Per op (Op value): kDTypeCount × 2 slots, index dtype * 2 + path.
    std::vector<std::array<std::shared_ptr<const Kernel>, kDTypeCount * 2>> kernels_;
    std::vector<KernelKey> claimed_;  ///< claim(), in op-table order
};

}  // namespace accel
