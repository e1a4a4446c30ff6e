#include "cli.hpp"

#include <cmath>
#include <cstdlib>

namespace bench {

Args parse_args(const std::vector<std::string>& args, const std::set<std::string>& flags,
                const std::set<std::string>& valued) {
    Args out;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a.size() < 2 || a[0] != '-') {
            out.positional.push_back(a);
            continue;
        }
        const auto eq = a.find('=');
        const std::string name = a.substr(0, eq);
        if (flags.count(name) && eq == std::string::npos) {
            out.options.emplace_back(name, "");
        } else if (valued.count(name)) {
            if (eq != std::string::npos)
                out.options.emplace_back(name, a.substr(eq + 1));
            else if (i + 1 < args.size())
                out.options.emplace_back(name, args[++i]);
            else
                throw UsageError("option " + name + " needs a value");
        } else {
            std::string valid;
            for (const auto& f : flags) valid += " " + f;
            for (const auto& v : valued) valid += " " + v + " V";
            throw UsageError("unknown option '" + a + "'; valid options:" + valid);
        }
    }
    return out;
}

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t comma = text.find(',', start);
        if (comma == std::string::npos) comma = text.size();
        if (comma > start) out.push_back(text.substr(start, comma - start));
        start = comma + 1;
    }
    return out;
}

std::size_t parse_count(const std::string& text, const std::string& what) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !(v >= 1) || v > 1e15 || std::floor(v) != v)
        throw UsageError(what + ": '" + text + "' is not a positive whole number (e.g. 1000 or 1e3)");
    return std::size_t(v);
}

double parse_number(const std::string& text, const std::string& what) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !(v >= 0) || !std::isfinite(v))
        throw UsageError(what + ": '" + text + "' is not a non-negative number");
    return v;
}

std::vector<std::size_t> parse_shape(const std::string& text, std::size_t parts, const std::string& what) {
    std::vector<std::size_t> dims;
    std::size_t start = 0;
    for (;;) {
        const std::size_t x = text.find('x', start);
        dims.push_back(parse_count(text.substr(start, x == std::string::npos ? std::string::npos : x - start), what));
        if (x == std::string::npos) break;
        start = x + 1;
    }
    if (dims.size() != parts)
        throw UsageError(what + ": '" + text + "' has " + std::to_string(dims.size()) + " extent(s); expected " +
                         std::to_string(parts) + " separated by 'x'");
    return dims;
}

}  // namespace bench
