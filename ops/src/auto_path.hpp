// What ops.cpp asks of the automatic path choice (auto_path.cpp).
#pragma once

#include <accel/ops.hpp>

namespace accel {
namespace ops {

/// path_evidence(device, shape).path, remembered per open device, shape
/// class and cache file, so that a call after the first builds no record
/// key (a device's facts do not change while it is open). Thread-safe;
/// throws what path_evidence throws.
OpPath automatic_path(const Device& device, GemmShape shape);

}  // namespace ops
}  // namespace accel
