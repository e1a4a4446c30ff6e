// Fuzzes accel::parse_selector with any text: it is either refused with
// accel::InvalidArgument (a short message: one line, or two where the backend
// is unknown, the second naming the backends found) or accepted as a known
// backend and an index or device name that round-trip through
// Selector::to_string().
#include "fuzz.hpp"

#include <accel/error.hpp>
#include <accel/registry.hpp>

#include <algorithm>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    accel::Selector sel;
    try {
        sel = accel::parse_selector(text);
    } catch (const accel::InvalidArgument& e) {
        ACCEL_FUZZ_CHECK_MESSAGE_LINES(e.what(), 2);
        return 0;
    }
    const auto& names = accel::known_backends();
    ACCEL_FUZZ_CHECK(sel.backend == "auto" || std::find(names.begin(), names.end(), sel.backend) != names.end());
    ACCEL_FUZZ_CHECK(sel.index >= -1);
    ACCEL_FUZZ_CHECK(sel.backend != "auto" || (sel.index == -1 && (sel.device.empty() || sel.device == "local")));
    ACCEL_FUZZ_CHECK(sel.index == -1 || sel.device.empty());
    ACCEL_FUZZ_CHECK(sel.device.size() <= 64);
    const accel::Selector again = accel::parse_selector(sel.to_string());
    ACCEL_FUZZ_CHECK(again.backend == sel.backend && again.index == sel.index && again.device == sel.device);
    ACCEL_FUZZ_CHECK(again.to_string() == sel.to_string());
    return 0;
}
