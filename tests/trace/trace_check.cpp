// accel-trace-check FILE... [--op "NAME SHAPES"]... [--device-times] [--ranks]
// Validates trace files written by ACCEL_TRACE (trace_format::problems) and
// what they must hold: every --op (an op event of that name and shapes
// text, e.g. "dense x[40,30] w[10,30] bias[10] -> y[40,10]"); with
// --device-times, device-time events on stream tracks; with --ranks, one
// file per MPI rank: file i's processes are named "rank i · ..." and no pid
// appears in two files. Exit 0 when all holds, 1 otherwise (each problem printed).
#include "trace_format.hpp"

#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    std::vector<std::string> files, ops;
    bool device_times = false, ranks = false;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--op") && i + 1 < argc)
            ops.push_back(argv[++i]);
        else if (!std::strcmp(argv[i], "--device-times"))
            device_times = true;
        else if (!std::strcmp(argv[i], "--ranks"))
            ranks = true;
        else
            files.push_back(argv[i]);
    }
    if (files.empty()) {
        std::fprintf(stderr, "usage: accel-trace-check FILE... [--op \"NAME SHAPES\"]... [--device-times] [--ranks]\n");
        return 2;
    }
    int bad = 0;
    std::map<long, std::string> pid_file;
    std::set<std::string> found_ops;
    for (std::size_t f = 0; f < files.size(); ++f) {
        nlohmann::json t;
        try {
            t = trace_format::read(files[f]);
        } catch (const std::exception& e) {
            std::printf("%s\n", e.what());
            return 1;
        }
        for (const std::string& p : trace_format::problems(t)) {
            std::printf("%s: %s\n", files[f].c_str(), p.c_str());
            ++bad;
        }
        std::size_t events = 0, on_streams = 0;
        for (const auto& e : trace_format::complete_events(t, "op")) {
            ++events;
            const auto& args = e["args"];
            if (args.contains("device_ms")) ++on_streams;
            else found_ops.insert(e["name"].get<std::string>() + " " + args.value("shapes", ""));
            const long pid = e["pid"];
            if (ranks) {
                const std::string want = "rank " + std::to_string(f) + " ";
                if (trace_format::process_name(t, pid).rfind(want, 0) != 0) {
                    std::printf("%s: pid %ld is named '%s', not 'rank %zu · ...'\n", files[f].c_str(), pid,
                                trace_format::process_name(t, pid).c_str(), f);
                    ++bad;
                }
                auto [it, fresh] = pid_file.emplace(pid, files[f]);
                if (!fresh && it->second != files[f]) {
                    std::printf("pid %ld appears in %s and %s\n", pid, it->second.c_str(), files[f].c_str());
                    ++bad;
                }
            }
        }
        std::printf("%s: %zu op events, %zu of them device times\n", files[f].c_str(), events, on_streams);
        if (!events) {
            std::printf("%s: no op events\n", files[f].c_str());
            ++bad;
        }
        if (device_times && !on_streams) {
            std::printf("%s: no device-time events on stream tracks\n", files[f].c_str());
            ++bad;
        }
    }
    for (const std::string& op : ops)
        if (!found_ops.count(op)) {
            std::printf("no op event '%s'; the traces hold:\n", op.c_str());
            for (const std::string& f : found_ops) std::printf("  %s\n", f.c_str());
            ++bad;
        }
    std::printf("%s\n", bad ? "INVALID" : "valid");
    return bad ? 1 : 0;
}
