// A device's ceilings for accel-bench: its timer checked against the host
// clock, copy and add bandwidth, peak FMA per compute type, the matrix
// engine's peak, and launch costs, with accel's own kernels and probes.
#pragma once

#include "runner.hpp"

#include <accel/accel.hpp>

#include <memory>
#include <vector>

namespace bench {

/// A device's facts and measured ceilings (DeviceReport): every probe bounded
/// in host time; a failed measurement is kept as the report's error, not
/// thrown. Progress on stderr as `s` asks. Not thread-safe (runs on the
/// device's default stream).
DeviceReport device_report(const std::shared_ptr<accel::Device>& d, const Settings& s);

/// CPU devices of other backends run on the host's processor: their
/// bandwidth and FMA ceilings become the machine's (the host backend's
/// probes, measured here where the run has no host device) where those are
/// higher, and ceiling_source says so.
void use_machine_ceilings(std::vector<DeviceReport>& devices, const Settings& s);

}  // namespace bench
