#include "cli.hpp"

#include <accel/accel.hpp>

#include <cmath>
#include <cstdlib>

namespace bench {

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

std::size_t parse_count(const std::string& text) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !(v >= 1) || v > 1e15 || std::floor(v) != v)
        throw UsageError("'" + text + "' is not a positive whole number (e.g. 1000 or 1e3)");
    return std::size_t(v);
}

std::vector<std::size_t> parse_shape(const std::string& text, std::size_t parts) {
    std::vector<std::size_t> dims;
    std::size_t start = 0;
    for (;;) {
        const std::size_t x = text.find('x', start);
        dims.push_back(parse_count(text.substr(start, x == std::string::npos ? std::string::npos : x - start)));
        if (x == std::string::npos) break;
        start = x + 1;
    }
    if (dims.size() != parts)
        throw UsageError("'" + text + "' has " + std::to_string(dims.size()) + " extent(s); expected " +
                         std::to_string(parts) + " separated by 'x'");
    return dims;
}

std::vector<std::string> resolve_backends(const std::string& backends) {
    std::vector<std::string> out;
    const auto env = accel::env::value("ACCEL_BACKEND");
    if (backends.empty() && env) {
        out = {*env};
    } else if (backends.empty() || backends == "all") {
        for (const auto& st : accel::backend_statuses())
            if (st.availability.available)
                for (int i = 0; i < st.availability.device_count; ++i) out.push_back(st.name + ":" + std::to_string(i));
    } else {
        out = split_list(backends);
        if (out.empty()) throw UsageError("--backends '" + backends + "' names no device; give e.g. host,opencl:0");
    }
    for (const auto& sel : out) accel::parse_selector(sel);  // unknown names fail before any work
    return out;
}

CLI::Validator count() {
    return CLI::Validator(
        [](std::string& v) -> std::string {
            try {
                v = std::to_string(parse_count(v));
                return "";
            } catch (const UsageError& e) {
                return e.what();
            }
        },
        "");
}

CLI::Validator shape(std::size_t parts) {
    return tool_cli::throws_if_bad([parts](const std::string& v) { parse_shape(v, parts); }, "");
}

}  // namespace bench
