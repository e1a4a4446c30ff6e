// accel-bench: writing results (table for people, CSV, JSON) and reading them back.
#pragma once

#include "runner.hpp"

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <string>
#include <vector>

#include <machine.hpp>
#include <tool_io.hpp>

namespace bench {

/// The machine a run happened on (tools/common/machine.hpp).
using tool_machine::Machine;
using tool_machine::this_machine;

/// The run as a JSON document: {"accel_version", "machine", "settings",
/// "devices": [...with ceilings...], "rows": [...], "notes", "unavailable"}.
/// Row keys: backend, device, selector, stable_selector, runtime (the
/// implementation and its version), timer, op, activation (dense rows:
/// "none", "relu", "sigmoid", "gelu" or "gelu_tanh"), shape, size, size_unit, path,
/// block, geometry, runs, kernel_ms {median,min,max}, end_to_end_ms, gbps or
/// gflops, fraction_of_ceiling, cache_resident (memory-bound rows), nmse,
/// nmse_threshold, oracle, pass, and error when the row could not run.
nlohmann::json to_json(const Settings& s, const Results& r, const Machine& m);

/// The number `obj[key]` holds, or 0 where it is absent or null (a figure the
/// run did not measure). Throws nothing.
double figure_or_zero(const nlohmann::json& obj, const char* key) noexcept;

/// The op of a saved row as tables name it, with its activation: "dense+sigmoid".
/// Dense rows of files written before rows named their activation were
/// sigmoid's and read as such, so old and new files pair in `compare`.
std::string op_text(const nlohmann::json& row);

/// A device as a compact table's legend names it.
struct LegendEntry {
    std::string id;       ///< what the table's rows say: the stable selector, e.g. "opencl:pocl:0"
    std::string name;     ///< DeviceInfo::name
    std::string runtime;  ///< DeviceInfo::runtime_version (platform and version); "" leaves it out
    std::string driver;   ///< DeviceInfo::driver_version; left out when "", "-" or part of runtime
    std::string timer;    ///< the clock its rows were timed with; "" leaves it out
};

/// "devices:" and one line per device: its id, then its name, runtime,
/// driver and timer, so that tables can name devices by id alone.
void write_device_legend(std::ostream& out, const std::vector<LegendEntry>& devices);

/// Aligned table for people: a header (version, machine, devices with
/// ceilings, notes) and one line per row, units in the column headers; then
/// native against vendor, and with two or more devices a side-by-side table
/// (one rate column per device, ratios to the first). Compact by default:
/// rows name their device by stable selector, and a legend gives each one's
/// name, runtime, driver and timer once; `width` > 0 keeps it within that
/// many columns (optional columns left out, prose wrapped: TextTable::write,
/// fit_text); 0, `--wide`: every column, the name in every row and runtime
/// and timer in the device table instead (no legend), lines whole.
void write_table(std::ostream& out, const Results& r, const Machine& m, std::size_t width);

/// CSV with a header line; one line per row (the JSON row keys, flattened).
void write_csv(std::ostream& out, const Results& r);

/// Reads a JSON file written by `accel-bench run --format json`. Throws
/// std::runtime_error whose message starts with the path and says what is
/// wrong: cannot be read, empty, truncated JSON, not JSON, an `accel-bench
/// mlp` report, no "rows" array, a row that is not an object, or a row's
/// kernel_ms.samples that is not an array of positive times (never
/// nlohmann's own text).
nlohmann::json read_results(const std::string& path);

/// Columns of a plain-text table, padded to the widest cell; right-aligned
/// except the columns named in `left`. Not thread-safe.
class TextTable {
public:
    explicit TextTable(std::vector<std::string> header, std::size_t left_columns = 0)
        : rows_{std::move(header)}, left_(left_columns) {}
    void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
    /// True when no row was added (only the header).
    bool empty() const { return rows_.size() <= 1; }
    /// The columns, by header text, that write() may leave out to fit its
    /// width, the first named left out first (names not in the header are
    /// ignored).
    void set_optional(std::vector<std::string> headers) { optional_ = std::move(headers); }
    /// Writes the header, a rule and every row. With `max_width` > 0 and the
    /// table wider than that many columns, optional columns are left out, in
    /// their order, until it fits (or none is left), and a last line names
    /// them and says that --wide shows them. 0: every column.
    void write(std::ostream& out, std::size_t max_width = 0) const;

private:
    std::vector<std::vector<std::string>> rows_;
    std::size_t left_;  // the first left_ columns are left-aligned
    std::vector<std::string> optional_;
};

/// `text` for a terminal `width` columns wide (0: as it is): lines within it
/// kept, longer ones (prose: legends, notes, errors) broken at spaces, each
/// continuation indented two columns past its line's start
/// (tool_cli::wrap_lines).
std::string fit_text(const std::string& text, std::size_t width);

/// printf-style formatting into a std::string (tool_io.hpp).
using tool_cli::format;

/// A time or rate for a table: 4 significant digits, no exponent from 1e4 up.
std::string num(double x);

/// `s` as one CSV text field (RFC 4180): in double quotes, each quote
/// doubled, so that device names and errors may hold commas and quotes.
std::string csv_field(const std::string& s);

}  // namespace bench
