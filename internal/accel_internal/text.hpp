// Text helpers shared by libaccel's sources (internal: not installed).
#pragma once

#include <accel/closest_name.hpp>

#include <algorithm>
#include <cctype>
#include <sstream>
#include <string>
#include <vector>

namespace accel {
namespace detail {

/// `s` without leading and trailing blanks (space, tab, CR, LF).
inline std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

/// The elements of `items` separated by `separator`.
template <class Strings>
std::string join(const Strings& items, const std::string& separator = ", ") {
    std::string out;
    bool first = true;
    for (const auto& item : items) {
        out += (first ? "" : separator) + std::string(item);
        first = false;
    }
    return out;
}

/// `s` with ASCII letters in lower case.
inline std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

/// `s` as an error message may echo it: control characters become '?' (a
/// message stays one line), and past `keep` characters only the first `keep`
/// are kept, followed by "… (N characters)" (a huge input must not make a
/// huge message). Characters are UTF-8 code points; a cut never splits one.
inline std::string echo(const std::string& s, std::size_t keep = 64) {
    auto continuation = [](char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; };
    std::string out;
    std::size_t chars = 0, trailing = 0;  // trailing: continuation bytes since the last lead byte
    for (char c : s) {
        // At most 3 continuation bytes follow a lead byte in UTF-8; any other
        // is a stray byte, counted and shown as one '?' (so that invalid text
        // cannot pass the cut).
        if (continuation(c) && chars > 0 && trailing < 3) {
            ++trailing;
            if (chars <= keep) out += c;
            continue;
        }
        const bool shown_as_is = !continuation(c) && static_cast<unsigned char>(c) >= 0x20 && c != 0x7f;
        trailing = 0;
        if (++chars <= keep) out += shown_as_is ? c : '?';
    }
    if (chars > keep) out += "… (" + std::to_string(chars) + " characters)";
    return out;
}

/// A float for a message: the shorter of fixed or exponent form, 6
/// significant digits (1e-08, not std::to_string's 0.000000).
inline std::string number(double v) {
    std::ostringstream s;
    s << v;
    return s.str();
}

}  // namespace detail
}  // namespace accel
