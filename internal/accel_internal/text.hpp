// Text helpers shared by libaccel's sources (internal: not installed).
#pragma once

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

/// Edit distance (insertions, deletions, substitutions) between a and b.
inline std::size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

/// The one of `known` closest to `name` by edit distance, letter case
/// ignored, for "did you mean": empty when none is within max(3, |name|/4)
/// edits (a guess that far off helps no one). Ties go to the first in `known`.
template <class Strings>
std::string closest_name(const std::string& name, const Strings& known) {
    std::string best;
    std::size_t best_distance = 0;
    for (const auto& k : known) {
        const std::size_t d = edit_distance(lower(name), lower(std::string(k)));
        if (best.empty() || d < best_distance) best = std::string(k), best_distance = d;
    }
    return !best.empty() && best_distance <= std::max<std::size_t>(3, name.size() / 4) ? best : std::string();
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
