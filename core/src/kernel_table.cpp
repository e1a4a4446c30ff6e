#include <accel/error.hpp>
#include <accel/kernel_table.hpp>

#include <algorithm>
#include <mutex>
#include <tuple>

namespace accel {

KernelTable::KernelTable(std::string selector, std::string backend, ReasonFn reason)
    : selector_(std::move(selector)), backend_(std::move(backend)), reason_(std::move(reason)) {}

void KernelTable::add(Op op, DType dtype, OpPath path, Kernel kernel) {
    if (!kernel)
        throw InvalidArgument(std::string("register a kernel: the kernel of ") + op_name(op) + " (" +
                              dtype_name(dtype) + ", " + path_name(path) + ") on " + selector_ +
                              " is null; pass a callable");
    const auto index = static_cast<std::size_t>(op);
    if (static_cast<int>(op) < 0 || index >= op_table().size()) return;  // an op of a newer accel
    auto shared = std::make_shared<const Kernel>(std::move(kernel));
    std::unique_lock<std::shared_mutex> lock(mutex_);
    if (kernels_.size() <= index) kernels_.resize(index + 1);
    kernels_[index][static_cast<std::size_t>(dtype) * 2 + static_cast<std::size_t>(path)] = std::move(shared);
}

void KernelTable::add(const std::string& op, DType dtype, OpPath path, Kernel kernel) {
    const OpInfo* info = find_op(op);
    if (!info) {
        std::string names;
        for (const OpInfo* i : op_table()) names += (names.empty() ? "" : ", ") + i->name;
        throw InvalidArgument("register a kernel: the op table has no op named '" + op.substr(0, 64) +
                              "' (for a kernel on " + selector_ + "); ops: " + names +
                              "; define an op first with accel::define_op");
    }
    add(info->op, dtype, path, std::move(kernel));
}

void KernelTable::claim(const std::vector<Claim>& table) {
    std::vector<KernelKey> all;
    for (const Claim& row : table)
        for (Op op : row.ops)
            for (DType t : row.dtypes) all.push_back({op, t, row.path});
    const auto key = [](const KernelKey& k) { return std::make_tuple(int(k.op), int(k.dtype), int(k.path)); };
    std::sort(all.begin(), all.end(), [&](const KernelKey& a, const KernelKey& b) { return key(a) < key(b); });
    all.erase(std::unique(all.begin(), all.end(), [&](const KernelKey& a, const KernelKey& b) { return key(a) == key(b); }),
              all.end());
    std::unique_lock<std::shared_mutex> lock(mutex_);
    claimed_ = std::move(all);
}

std::vector<KernelKey> KernelTable::claimed() const {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    return claimed_;
}

const std::shared_ptr<const Kernel>* KernelTable::slot(Op op, DType dtype, OpPath path) const noexcept {
    const auto index = static_cast<std::size_t>(op);
    if (static_cast<int>(op) < 0 || index >= kernels_.size()) return nullptr;
    const auto& k = kernels_[index][static_cast<std::size_t>(dtype) * 2 + static_cast<std::size_t>(path)];
    return k ? &k : nullptr;
}

std::shared_ptr<const Kernel> KernelTable::find(Op op, DType dtype, OpPath path) const {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    const auto* k = slot(op, dtype, path);
    return k ? *k : nullptr;
}

bool KernelTable::supports(Op op, DType dtype, OpPath path) const noexcept {
    const OpInfo* info = nullptr;
    try {
        info = &op_info(op);
    } catch (const InvalidArgument&) {
        return false;
    }
    if (path == OpPath::vendor && !info->has_vendor_path) return false;
    std::shared_lock<std::shared_mutex> lock(mutex_);
    if (path == OpPath::vendor && !info->vendor_composition.empty()) {
        // gemm runs on the vendor path; the epilogue kernels are native.
        for (Op part : info->vendor_composition)
            if (!slot(part, dtype, op_info(part).has_vendor_path ? OpPath::vendor : OpPath::native)) return false;
        return true;
    }
    return slot(op, dtype, path) != nullptr;
}

std::vector<KernelKey> KernelTable::registered() const {
    std::vector<KernelKey> all;
    std::shared_lock<std::shared_mutex> lock(mutex_);
    for (std::size_t op = 0; op < kernels_.size(); ++op)
        for (DType t : kAllDTypes)
            for (OpPath p : {OpPath::native, OpPath::vendor})
                if (slot(static_cast<Op>(op), t, p)) all.push_back({static_cast<Op>(op), t, p});
    return all;
}

std::string KernelTable::unsupported_reason(Op op, DType dtype, OpPath path) const {
    if (supports(op, dtype, path)) return "";
    if (path == OpPath::vendor && !op_info(op).has_vendor_path)
        return std::string("no backend has a vendor path for ") + op_name(op);
    const std::string what = std::string(op_name(op)) + " in " + dtype_name(dtype) + " on the " + path_name(path) +
                             " path is ";
    bool claims_op = false;  // in some dtype or path
    for (const KernelKey& k : claimed()) {
        if (k.op == op && k.dtype == dtype && k.path == path)
            return what + "in the " + backend_ + " backend's kernel table but has no kernel: a defect of the backend";
        claims_op = claims_op || k.op == op;
    }
    const std::string own = reason_ ? reason_(op, dtype, path) : std::string();
    if (!own.empty()) return own;
    // A built-in op a plugin states nothing of: built-in ops only grow, and
    // a plugin built before one existed loads and lacks all of it.
    if (!claims_op && static_cast<std::size_t>(op) < kBuiltinOpCount)
        return what + "not in the " + backend_ + " backend's kernel table, which has no " + op_name(op) +
               " in any dtype or path: its plugin was built before the op existed, or the backend lacks it";
    return what + "not in the " + backend_ + " backend's kernel table";
}

}  // namespace accel
