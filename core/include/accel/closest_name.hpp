// "Did you mean ...?": the known name closest to a mistyped one, for the
// messages of accel's registry and environment checks, its tools and user
// programs. Header-only.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

namespace accel {

/// Edit distance between a and b, in bytes: the fewest insertions, deletions,
/// substitutions and swaps of two neighbouring characters, each of cost 1
/// (the optimal string alignment form of Damerau's distance: "hots" is one
/// edit from "host"; Damerau 1964, Levenshtein 1966). O(|a|·|b|) time and
/// memory. Never throws but std::bad_alloc. Thread-safe.
inline std::size_t edit_distance(const std::string& a, const std::string& b) {
    const std::size_t w = b.size() + 1;
    std::vector<std::size_t> d((a.size() + 1) * w);
    for (std::size_t i = 0; i <= a.size(); ++i) d[i * w] = i;
    for (std::size_t j = 0; j <= b.size(); ++j) d[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i)
        for (std::size_t j = 1; j <= b.size(); ++j) {
            std::size_t best = std::min({d[(i - 1) * w + j] + 1, d[i * w + j - 1] + 1,
                                         d[(i - 1) * w + j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                best = std::min(best, d[(i - 2) * w + j - 2] + 1);
            d[i * w + j] = best;
        }
    return d[a.size() * w + b.size()];
}

/// The one of `known` (any range of strings or C strings) closest to `name`
/// by edit_distance, ASCII letter case ignored, for "did you mean": empty
/// when none is within max(2, |name|/4) edits (a guess that far off helps no
/// one: "json" is 3 from "csv"). Ties go to the first in `known`. Thread-safe.
template <class Strings>
std::string closest_name(const std::string& name, const Strings& known) {
    auto lower = [](std::string s) {
        std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
        return s;
    };
    std::string best;
    std::size_t best_distance = 0;
    for (const auto& k : known) {
        const std::size_t d = edit_distance(lower(name), lower(std::string(k)));
        if (best.empty() || d < best_distance) best = std::string(k), best_distance = d;
    }
    return !best.empty() && best_distance <= std::max<std::size_t>(2, name.size() / 4) ? best : std::string();
}

}  // namespace accel
