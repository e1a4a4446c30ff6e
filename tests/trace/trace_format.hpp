// Checks a file against the Chrome trace event format as accel writes it
// (accel/trace.hpp): the tests' one validator, used in-process and by
// accel-trace-check on files programs wrote.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace trace_format {

/// Every problem found in `trace` (empty: valid): the document is an object
/// with a traceEvents array; every event has ph (one of X, M, C, i), ts,
/// pid and tid; complete events (X) have a name and a duration ≥ 0; on one
/// track (pid, tid) complete events do not overlap unless one encloses the
/// other; every op event (cat "op") names an op of accel's table and has
/// seq, of_op, dtype, path and shapes, and its seq is unique on its device
/// (pid); counters (C) have numeric args.
std::vector<std::string> problems(const nlohmann::json& trace);

/// The file parsed; throws std::runtime_error naming the file when it is not JSON.
nlohmann::json read(const std::string& path);

/// The complete events of category `cat` (every category when empty).
std::vector<nlohmann::json> complete_events(const nlohmann::json& trace, const std::string& cat = "");

/// The name of process `pid` (its process_name metadata), "" when none.
std::string process_name(const nlohmann::json& trace, long pid);

}  // namespace trace_format
