// The op-support matrix of `accel-info --ops`: for every device this machine
// has, whether each op runs in each dtype on each path, and where it does
// not, why — the text the device's kernel table gives
// (KernelTable::unsupported_reason), never one written here. Columns are
// named by stable selector (opencl:pocl:0, not the CPU's name), so the output
// is the same on every machine with the same backends and implementations
// (docs/ops/support.md is one).
#pragma once

#include <accel/accel.hpp>

#include <string>
#include <vector>

namespace op_support {

/// Whether one op runs in one dtype on one path of one device.
struct Cell {
    accel::Op op = accel::Op::add;
    accel::DType dtype = accel::DType::f32;
    accel::OpPath path = accel::OpPath::native;
    bool supported = false;
    /// Why not: KernelTable::unsupported_reason's text; "" when supported.
    std::string reason;
};

/// One device: its cells for every op of accel::ops (OpInfo::kernel_only ops
/// left out) × dtype × path, in op-table, then dtype (kAllDTypes), then path
/// (native, vendor) order.
struct Column {
    std::string implementation;  ///< the stable selector, else the selector ("opencl:pocl:0", "host:0")
    std::string backend;         ///< "opencl"
    std::vector<Cell> cells;
};

/// The matrix: its columns sorted by backend name, then implementation, so
/// that their order does not depend on the order runtimes enumerate devices.
struct Matrix {
    std::vector<Column> columns;
    /// The backends not in it, one line each with why ("cuda: unavailable —
    /// ..."): what this machine lacks, not a fault.
    std::vector<std::string> unavailable;
    /// The devices of available backends that could not be opened, one line
    /// each with the error ("opencl:1 cannot be opened: ...").
    std::vector<std::string> failed;
};

/// Opens every device of every available backend (by index, and the
/// simulators opened only by name; each runtime starts as open_device
/// starts it) and reads its kernel table; the devices are released before
/// it returns. A device that cannot be opened is left out with its error
/// (Matrix::failed), an unavailable backend with its reason
/// (Matrix::unavailable). Throws only std::bad_alloc. Thread-safe as
/// open_device is; the plugins are those of the process's environment
/// (ACCEL_PLUGIN_PATH, the runtimes' own variables) when first loaded.
Matrix collect();

/// The matrix as CSV (RFC 4180, "\n" line ends): a header, then one line per
/// cell, columns in Matrix order:
/// implementation,backend,op,dtype,path,supported,reason
/// with supported "yes" or "no" and reason "" where it is yes. Reads `m`
/// only: thread-safe. Never throws beyond std::bad_alloc.
std::string to_csv(const Matrix& m);

/// The matrix as Markdown: a table of ops (rows: op and path; the vendor
/// path only for ops with one, OpInfo::has_vendor_path) by implementation
/// (columns), each cell the dtypes that run and those that do not, each
/// with the number of its reason, and the numbered reasons below (numbered
/// in the order the table first cites them, so the text depends on the
/// matrix alone). Reads `m` only: thread-safe. Never throws beyond
/// std::bad_alloc.
std::string to_markdown(const Matrix& m);

}  // namespace op_support
