// How backends name their devices in selectors (accel/registry.hpp): text
// compared in lower case, and the PIECE[:I] form (a piece of a driver's,
// platform's or space's name, then the index of a device among those it
// matches) that Backend::find_device resolves.
#pragma once

#include <accel/error.hpp>

#include <algorithm>
#include <cctype>
#include <string>

namespace accel {

/// `s` with ASCII letters in lower case.
inline std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

/// A selector's device text split as PIECE[:I].
struct DeviceName {
    std::string piece;  ///< the text before the first ':' (all of it without one)
    int within = 0;     ///< I: 0 when absent
};

/// Splits `spec` (the text after "<backend>:") as PIECE[:I]. Throws
/// InvalidArgument when I is not 1 to 6 decimal digits, naming the selector
/// and the indices there may be (`indices`, e.g. "0, 1, ...").
inline DeviceName split_device_name(const std::string& backend, const std::string& spec, const std::string& indices) {
    const auto colon = spec.find(':');
    DeviceName name{spec.substr(0, colon), 0};
    if (colon == std::string::npos) return name;
    const std::string digits = spec.substr(colon + 1);
    if (digits.empty() || digits.size() > 6 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
        throw InvalidArgument(backend + ":" + spec + ": after '" + name.piece +
                              ":' comes the index of a device among those it matches (" + indices + ")");
    name.within = std::stoi(digits);
    return name;
}

}  // namespace accel
