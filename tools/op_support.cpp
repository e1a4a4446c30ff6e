#include "op_support.hpp"

#include <algorithm>
#include <exception>
#include <map>
#include <new>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace op_support {

namespace {

constexpr accel::OpPath kPaths[] = {accel::OpPath::native, accel::OpPath::vendor};

Column column_of(const accel::Device& d) {
    Column c;
    c.implementation = d.info().stable_selector.empty() ? d.selector() : d.info().stable_selector;
    c.backend = d.info().backend;
    const accel::KernelTable& table = d.kernel_table();
    for (const accel::OpInfo* op : accel::op_table()) {
        if (op->kernel_only) continue;  // building blocks (gemm), not ops a program calls
        for (accel::DType t : accel::kAllDTypes)
            for (accel::OpPath p : kPaths) {
                Cell cell{op->op, t, p, table.supports(op->op, t, p), ""};
                if (!cell.supported) cell.reason = table.unsupported_reason(op->op, t, p);
                c.cells.push_back(std::move(cell));
            }
    }
    return c;
}

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string q = "\"";
    for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return q + "\"";
}

std::string md_text(const std::string& s) {
    std::string out;
    for (char ch : s) {
        if (ch == '|') out += '\\';
        out += ch == '\n' ? ' ' : ch;
    }
    return out;
}

// The reasons, numbered in the order the table first cites them.
class Reasons {
public:
    int number(const std::string& reason) {
        const auto it = numbers_.find(reason);
        if (it != numbers_.end()) return it->second;
        texts_.push_back(reason);
        return numbers_[reason] = static_cast<int>(texts_.size());
    }
    const std::vector<std::string>& texts() const { return texts_; }

private:
    std::map<std::string, int> numbers_;
    std::vector<std::string> texts_;
};

// "all"; or the dtypes that run, then "no" and the others, grouped by reason:
// "f32 f64; no f16 [3], no bf16 [4]"; "none [1]" when no dtype runs for one reason.
std::string md_cell(const std::vector<const Cell*>& cells, Reasons& reasons) {
    std::string runs, gaps;
    std::vector<std::pair<int, std::string>> by_reason;  // reason number, its dtypes
    for (const Cell* c : cells) {
        if (c->supported) {
            runs += (runs.empty() ? "" : " ") + std::string(accel::dtype_name(c->dtype));
            continue;
        }
        const int n = reasons.number(c->reason);
        auto it = std::find_if(by_reason.begin(), by_reason.end(), [n](const auto& r) { return r.first == n; });
        if (it == by_reason.end()) it = by_reason.insert(by_reason.end(), {n, ""});
        it->second += (it->second.empty() ? "" : " ") + std::string(accel::dtype_name(c->dtype));
    }
    if (by_reason.empty()) return "all";
    if (runs.empty() && by_reason.size() == 1) return "none [" + std::to_string(by_reason.front().first) + "]";
    for (const auto& r : by_reason)
        gaps += (gaps.empty() ? "" : ", ") + std::string("no ") + r.second + " [" + std::to_string(r.first) + "]";
    return runs.empty() ? gaps : runs + "; " + gaps;
}

}  // namespace

Matrix collect() {
    Matrix m;
    for (const accel::BackendStatus& st : accel::backend_statuses()) {
        if (!st.availability.available) {
            m.unavailable.push_back(st.summary());
            continue;
        }
        std::vector<std::string> selectors;
        for (int i = 0; i < st.availability.device_count; ++i) selectors.push_back(st.name + ":" + std::to_string(i));
        for (const auto& s : st.availability.named_only) selectors.push_back(s);
        for (const std::string& s : selectors) {
            try {
                const auto d = accel::open_device(s);
                m.columns.push_back(column_of(*d));
            } catch (const std::bad_alloc&) {
                throw;
            } catch (const std::exception& e) {  // accel::Error; a plugin's own, to be safe
                m.failed.push_back(s + " cannot be opened: " + e.what());
            }
        }
    }
    std::sort(m.columns.begin(), m.columns.end(), [](const Column& a, const Column& b) {
        return std::tie(a.backend, a.implementation) < std::tie(b.backend, b.implementation);
    });
    return m;
}

std::string to_csv(const Matrix& m) {
    std::string out = "implementation,backend,op,dtype,path,supported,reason\n";
    for (const Column& c : m.columns)
        for (const Cell& cell : c.cells)
            out += csv_field(c.implementation) + "," + csv_field(c.backend) + "," + accel::op_name(cell.op) + "," +
                   accel::dtype_name(cell.dtype) + "," + accel::path_name(cell.path) + "," +
                   (cell.supported ? "yes" : "no") + "," + csv_field(cell.reason) + "\n";
    return out;
}

std::string to_markdown(const Matrix& m) {
    std::string out =
        "# Op support\n\n"
        "Which op runs in which dtype on which path of each device, and why not where it does not: each device's "
        "kernel table (`accel-info --ops --format md`; `--format csv` gives one line per cell). Columns are "
        "devices by stable selector. How accel's committed copy (docs/ops/support.md) is made, and what its "
        "columns say of other hardware: docs/ops.md, \"Op support\".\n\n";
    out += "| op | path |";
    std::string rule = "| --- | --- |";
    for (const Column& c : m.columns) {
        out += " " + md_text(c.implementation) + " |";
        rule += " --- |";
    }
    out += "\n" + rule + "\n";
    Reasons reasons;
    std::string without_vendor;
    for (const accel::OpInfo* op : accel::op_table()) {
        if (op->kernel_only) continue;
        if (!op->has_vendor_path) without_vendor += (without_vendor.empty() ? "" : ", ") + ("`" + op->name + "`");
        for (accel::OpPath p : kPaths) {
            if (p == accel::OpPath::vendor && !op->has_vendor_path) continue;
            out += "| `" + op->name + "` | " + accel::path_name(p) + " |";
            for (const Column& c : m.columns) {
                std::vector<const Cell*> cells;
                for (const Cell& cell : c.cells)
                    if (cell.op == op->op && cell.path == p) cells.push_back(&cell);
                out += " " + md_cell(cells, reasons) + " |";
            }
            out += "\n";
        }
    }
    out += "\nEach cell: the dtypes that run; \"no\" and the dtypes that do not, with the number of the reason "
           "below; \"all\": f32, f64, f16 and bf16 run. The vendor path of " +
           without_vendor +
           ": no backend has one (the op table's `has_vendor_path`); the CSV lists those cells too.\n\n"
           "Reasons, as each device's kernel table gives them (`KernelTable::unsupported_reason`):\n\n";
    for (std::size_t i = 0; i < reasons.texts().size(); ++i)
        out += std::to_string(i + 1) + ". " + md_text(reasons.texts()[i]) + "\n";
    return out;
}

}  // namespace op_support
