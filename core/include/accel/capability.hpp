#pragma once

// What a device may have beyond the runtime every device has (memory,
// copies, streams, events): benchmark probes, tunable kernels, interop with
// its runtime, program kernels, page-locked host memory. Each is an
// interface class of its own that a device hands out by name
// (Device::capability<C>()), so a capability added later changes neither
// Device's layout nor the plugin ABI: a plugin built before it answers
// "none" and keeps loading.

#include <string_view>

namespace accel {

/// Names a capability interface C across the plugin boundary. Each
/// capability class declares
///   static constexpr std::string_view capability_name = "accel.<what>/<version>";
/// The name, not the C++ type, crosses the boundary: an interface whose
/// virtual functions change takes a new version ("/2"), so a plugin built
/// against the old one is never handed the new layout.
template <class C>
constexpr std::string_view capability_name_of() noexcept {
    return C::capability_name;
}

/// What a backend's Device::do_capability returns: `self` as the first of
/// `Caps...` whose name is `name`, or nullptr when none is. `Self` derives
/// from every class in `Caps`. A device that is its own Probes and
/// NativeInterop, say, writes
///   void* do_capability(std::string_view name) noexcept override {
///       return accel::offer_capability<accel::Probes, accel::NativeInterop>(this, name);
///   }
/// The pointer is converted to exactly `C*` before it becomes `void*`, and
/// Device::capability<C>() converts it back to `C*`: the pair is the only
/// cast, so multiple inheritance cannot shift it. Never throws.
template <class... Caps, class Self>
void* offer_capability(Self* self, std::string_view name) noexcept {
    void* found = nullptr;
    ((found == nullptr && name == capability_name_of<Caps>() ? (found = static_cast<void*>(static_cast<Caps*>(self)))
                                                               : nullptr),
     ...);
    return found;
}

}  // namespace accel
