// The machine a tool runs on, for the records it writes (accel-bench's
// runs, accel-conformance's verdicts). Header-only; Linux.
#pragma once

#include <sys/utsname.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <string>

namespace tool_machine {

/// The machine a run happened on.
struct Machine {
    std::string cpu;       ///< /proc/cpuinfo "model name" (or "unknown")
    std::string os;        ///< uname: sysname release machine
    std::string hostname;  ///< gethostname()
};

/// Facts about this machine; never throws (unknown fields say "unknown").
inline Machine this_machine() {
    Machine m;
    m.cpu = "unknown";
    std::ifstream f("/proc/cpuinfo");
    for (std::string line; std::getline(f, line);) {
        const auto colon = line.find(':');
        if (line.rfind("model name", 0) == 0 && colon != std::string::npos) {
            const auto start = line.find_first_not_of(' ', colon + 1);
            m.cpu = start == std::string::npos ? "unknown" : line.substr(start);
            break;
        }
    }
    utsname u{};
    m.os = uname(&u) == 0 ? std::string(u.sysname) + " " + u.release + " " + u.machine : "unknown";
    char host[256] = {};
    m.hostname = gethostname(host, sizeof host - 1) == 0 ? host : "unknown";
    return m;
}

/// Now in UTC as ISO 8601 to the second ("2026-12-02T10:45:00Z"). Thread-safe.
inline std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char out[32];
    return std::strftime(out, sizeof out, "%Y-%m-%dT%H:%M:%SZ", &tm) ? out : "unknown";
}

}  // namespace tool_machine
