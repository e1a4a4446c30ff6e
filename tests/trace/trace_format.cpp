#include "trace_format.hpp"

#include <accel/op_table.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>

namespace trace_format {

using json = nlohmann::json;

std::vector<std::string> problems(const json& trace) {
    std::vector<std::string> out;
    if (!trace.is_object() || !trace.contains("traceEvents") || !trace["traceEvents"].is_array()) {
        out.push_back("the document is not an object with a traceEvents array");
        return out;
    }
    struct Span {
        double ts, end;
        std::string name;
    };
    std::map<std::pair<long, long>, std::vector<Span>> tracks;
    std::map<long, std::set<unsigned long long>> seqs;
    std::size_t i = 0;
    for (const json& e : trace["traceEvents"]) {
        const std::string at = "event " + std::to_string(i++) + " " + e.dump().substr(0, 160);
        if (!e.is_object()) {
            out.push_back(at + ": not an object");
            continue;
        }
        bool fields = true;
        for (const char* key : {"ph", "ts", "pid", "tid"})
            if (!e.contains(key)) {
                out.push_back(at + ": has no " + key);
                fields = false;
            }
        if (!fields) continue;
        if (!e["ph"].is_string() || !e["ts"].is_number() || !e["pid"].is_number_integer() ||
            !e["tid"].is_number_integer()) {
            out.push_back(at + ": ph, ts, pid or tid of the wrong type");
            continue;
        }
        const std::string ph = e["ph"];
        if (ph != "X" && ph != "M" && ph != "C" && ph != "i") out.push_back(at + ": unknown ph " + ph);
        if (ph == "C") {
            if (!e.contains("args") || !e["args"].is_object() || e["args"].empty())
                out.push_back(at + ": a counter without args");
            else
                for (const auto& item : e["args"].items())
                    if (!item.value().is_number()) out.push_back(at + ": counter value " + item.key() + " is not a number");
        }
        if (ph != "X") continue;
        if (!e.contains("name") || !e["name"].is_string() || !e.contains("dur") || !e["dur"].is_number()) {
            out.push_back(at + ": a complete event without a name or dur");
            continue;
        }
        const double ts = e["ts"], dur = e["dur"];
        if (dur < 0) out.push_back(at + ": negative duration");
        tracks[{e["pid"].get<long>(), e["tid"].get<long>()}].push_back({ts, ts + dur, e["name"]});
        if (e.value("cat", "") == "op") {
            const json args = e.value("args", json::object());
            if (!accel::find_op(e["name"].get<std::string>())) out.push_back(at + ": names no op of the table");
            for (const char* key : {"seq", "of_op", "dtype", "path", "shapes"})
                if (!args.contains(key)) out.push_back(at + ": an op without args." + key);
            // Device-time events repeat their host event's seq on a stream track.
            const bool device_time = args.contains("device_ms");
            if (args.contains("seq") && !device_time &&
                !seqs[e["pid"].get<long>()].insert(args["seq"].get<unsigned long long>()).second)
                out.push_back(at + ": seq " + args["seq"].dump() + " appears twice on its device");
        }
    }
    // On a track, events either follow one another or nest.
    constexpr double kSlackUs = 1e-3;  // rounding of ts + dur in the file
    for (auto& [track, spans] : tracks) {
        std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
            return a.ts != b.ts ? a.ts < b.ts : a.end > b.end;
        });
        std::vector<Span> open;
        for (const Span& s : spans) {
            while (!open.empty() && open.back().end <= s.ts + kSlackUs) open.pop_back();
            if (!open.empty() && s.end > open.back().end + kSlackUs)
                out.push_back("track pid " + std::to_string(track.first) + " tid " + std::to_string(track.second) +
                              ": " + s.name + " at " + std::to_string(s.ts) + " overlaps " + open.back().name +
                              " (ends " + std::to_string(open.back().end) + ") without nesting in it");
            open.push_back(s);
        }
    }
    return out;
}

json read(const std::string& path) {
    std::ifstream f(path);
    if (!f) throw std::runtime_error("cannot open " + path);
    json j = json::parse(f, nullptr, false);
    if (j.is_discarded()) throw std::runtime_error(path + " is not JSON");
    return j;
}

std::vector<json> complete_events(const json& trace, const std::string& cat) {
    std::vector<json> out;
    for (const json& e : trace.value("traceEvents", json::array()))
        if (e.value("ph", "") == "X" && (cat.empty() || e.value("cat", "") == cat)) out.push_back(e);
    return out;
}

std::string process_name(const json& trace, long pid) {
    for (const json& e : trace.value("traceEvents", json::array()))
        if (e.value("ph", "") == "M" && e.value("name", "") == "process_name" && e.value("pid", -1L) == pid)
            return e["args"].value("name", "");
    return "";
}

}  // namespace trace_format
