// accel::UserKernel (accel/user_kernel.hpp): the checks of a program's own
// kernel launch, the build once per device, the trace.
#include <accel/error.hpp>
#include <accel/user_kernel.hpp>

#include <accel_internal/graph_capture.hpp>
#include <accel_internal/instrument.hpp>

#include <cstring>
#include <limits>
#include <set>
#include <string>

namespace accel {

namespace {

std::string describe(const KernelSource& s, std::size_t i) {
    return "kernel '" + s.name + "' argument " + std::to_string(i) + " ('" + s.params[i].name + "', " +
           param_type_name(s.params[i].type) + (s.params[i].type == ParamType::tensor
                                                    ? std::string(" of ") + dtype_name(s.params[i].dtype)
                                                    : std::string()) +
           ")";
}

// An integer argument as `type`'s bits, or an error naming the range.
std::uint64_t integer_bits(const KernelArg& a, ParamType type, const std::string& what) {
    const bool negative = a.kind() == KernelArg::Kind::signed_int && a.signed_value() < 0;
    const std::uint64_t magnitude = a.kind() == KernelArg::Kind::signed_int
                                        ? (negative ? 0 : static_cast<std::uint64_t>(a.signed_value()))
                                        : a.unsigned_value();
    std::int64_t lo = 0;
    std::uint64_t hi = 0;
    switch (type) {
        case ParamType::i32: lo = std::numeric_limits<std::int32_t>::min(), hi = std::numeric_limits<std::int32_t>::max(); break;
        case ParamType::u32: hi = std::numeric_limits<std::uint32_t>::max(); break;
        case ParamType::i64: lo = std::numeric_limits<std::int64_t>::min(), hi = std::numeric_limits<std::int64_t>::max(); break;
        default: hi = std::numeric_limits<std::uint64_t>::max(); break;
    }
    const bool fits = negative ? a.signed_value() >= lo : magnitude <= hi;
    if (!fits) {
        const std::string value =
            negative ? std::to_string(a.signed_value()) : std::to_string(magnitude);
        throw InvalidArgument(what + ": " + value + " does not fit " + param_type_name(type) + " [" +
                              std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    if (negative) return static_cast<std::uint64_t>(a.signed_value()) & (type == ParamType::i32 ? 0xffffffffu : ~0ull);
    return magnitude;
}

}  // namespace

UserKernel::UserKernel(KernelSource source) : source_(std::move(source)) {
    if (source_.name.empty())
        throw InvalidArgument("UserKernel: the kernel has no name; set KernelSource::name to its entry point");
    std::set<std::string> seen;
    for (std::size_t i = 0; i < source_.params.size(); ++i) {
        const std::string& n = source_.params[i].name;
        if (n.empty())
            throw InvalidArgument("UserKernel '" + source_.name + "': parameter " + std::to_string(i) +
                                  " has no name; name every parameter (messages and the trace use it)");
        if (!seen.insert(n).second)
            throw InvalidArgument("UserKernel '" + source_.name + "': two parameters are named '" + n + "'");
    }
}

std::shared_ptr<BuiltKernel> UserKernel::built_for(Device& device) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = built_.begin(); it != built_.end();) {
        const auto d = it->first.lock();
        if (!d) {
            it = built_.erase(it);
            continue;
        }
        if (d.get() == &device) return it->second;
        ++it;
    }
    // Built under the lock: two threads launching first on one device build once.
    auto built = device.build_kernel(source_);
    built_.emplace_back(device.weak_from_this(), built);
    return built;
}

void UserKernel::build(Device& device) { (void)built_for(device); }

std::vector<ResolvedArg> UserKernel::resolve(const std::vector<KernelArg>& args, const Device& device) const {
    if (args.size() != source_.params.size())
        throw InvalidArgument("kernel '" + source_.name + "': " + std::to_string(args.size()) +
                              " argument(s) given, its signature has " + std::to_string(source_.params.size()));
    std::vector<ResolvedArg> out(args.size());
    for (std::size_t i = 0; i < args.size(); ++i) {
        const KernelParam& p = source_.params[i];
        const KernelArg& a = args[i];
        const std::string what = describe(source_, i);
        out[i].type = p.type;
        if (p.type == ParamType::tensor) {
            const Tensor* t = a.tensor();
            if (a.kind() != KernelArg::Kind::tensor)
                throw InvalidArgument(what + ": a scalar given; pass a tensor");
            if (!t->handle()) throw InvalidArgument(what + ": an empty tensor given");
            if (&t->device() != &device)
                throw InvalidArgument(what + ": the tensor is on " + t->device().selector() + ", the launch on " +
                                      device.selector());
            if (t->dtype() != p.dtype)
                throw InvalidArgument(what + ": the tensor is " + dtype_name(t->dtype()) + "; pass a " +
                                      dtype_name(p.dtype) + " tensor");
            out[i].handle = t->handle();
            out[i].bytes = t->bytes();
            continue;
        }
        switch (a.kind()) {
            case KernelArg::Kind::tensor: throw InvalidArgument(what + ": a tensor given; pass a scalar");
            case KernelArg::Kind::signed_int:
            case KernelArg::Kind::unsigned_int:
                if (p.type == ParamType::f32 || p.type == ParamType::f64)
                    throw InvalidArgument(what + ": an integer given; pass a " +
                                          (p.type == ParamType::f32 ? "float" : "double"));
                out[i].bits = integer_bits(a, p.type, what);
                break;
            case KernelArg::Kind::f32:
            case KernelArg::Kind::f64:
                if (p.type == ParamType::f32 && a.kind() == KernelArg::Kind::f32) {
                    const float f = static_cast<float>(a.floating_value());
                    std::memcpy(&out[i].bits, &f, sizeof f);
                } else if (p.type == ParamType::f64) {
                    const double d = a.floating_value();
                    std::memcpy(&out[i].bits, &d, sizeof d);
                } else {
                    throw InvalidArgument(what + ": a " +
                                          (a.kind() == KernelArg::Kind::f32 ? "float" : "double") + " given; pass " +
                                          (p.type == ParamType::f32 ? "a float (e.g. 0.5f)" : "an integer"));
                }
                break;
        }
    }
    return out;
}

void UserKernel::launch(const LaunchGeometry& geometry, const std::vector<KernelArg>& args, Stream& stream) {
    Device& device = stream.device();
    const std::vector<ResolvedArg> resolved = resolve(args, device);
    check_geometry(geometry, device.info().limits, "kernel '" + source_.name + "'");
    const std::shared_ptr<BuiltKernel> built = built_for(device);
    if (detail::Capture* c = detail::capture_of_thread()) {
        std::vector<DeviceHandle> handles;
        for (const ResolvedArg& a : resolved)
            if (a.type == ParamType::tensor) handles.push_back(a.handle);
        return detail::record(*c, source_.name, stream, handles,
                              [built, geometry, resolved](Stream& s, bool) { built->launch(geometry, resolved, s); });
    }
    instrument::Span span(device, source_.name.c_str(), "kernel", &stream);
    if (span.live()) {
        span.arg("geometry", geometry.to_string());
        span.arg("user_kernel", true);
    }
    built->launch(geometry, resolved, stream);
}

void UserKernel::launch(const LaunchGeometry& geometry, const std::vector<KernelArg>& args) {
    for (const KernelArg& a : args)
        if (a.kind() == KernelArg::Kind::tensor && a.tensor()->handle()) {
            launch(geometry, args, a.tensor()->device().default_stream());
            return;
        }
    throw InvalidArgument("kernel '" + source_.name +
                          "': no tensor argument tells the device; pass the stream to launch on");
}

}  // namespace accel
