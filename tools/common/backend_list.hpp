// The devices a tool's --backends value names (accel-bench, accel-conformance):
// "all", a comma list of selectors, or ACCEL_BACKEND. Header-only, free of
// CLI11; the program links accel.
#pragma once

#include <tool_io.hpp>

#include <accel/accel.hpp>

#include <string>
#include <vector>

namespace tool_cli {

/// Comma-separated items; empty items are dropped.
inline std::vector<std::string> split_list(const std::string& text) {
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

/// The devices a --backends value names: "all" (or nothing, when
/// ACCEL_BACKEND is unset) is every device of every available backend
/// ("host:0", "opencl:0", "opencl:1", ...); nothing with ACCEL_BACKEND set is
/// that selector; otherwise the comma list, in its order. Each selector is
/// checked (accel::parse_selector), so an unknown backend name throws
/// accel::InvalidArgument (naming it and the accepted forms) before any work.
/// Throws UsageError for a list without items (e.g. ","). Loads and probes
/// the plugins for "all"; opens no device.
inline std::vector<std::string> resolve_backends(const std::string& backends) {
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
        if (out.empty()) throw UsageError("--backends '" + backends + "' names no device; give e.g. host,opencl:pocl");
    }
    for (const auto& sel : out) accel::parse_selector(sel);  // unknown names fail before any work
    return out;
}

}  // namespace tool_cli
