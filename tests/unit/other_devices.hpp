// other_devices.hpp — the unit tests' devices of every backend but the host's.
#pragma once

#include <accel/accel.hpp>

#include <doctest/doctest.h>

#include <memory>
#include <vector>

/// One device (open_device(name)) of each available backend other than host,
/// in backend_statuses() order; a backend whose device does not open is
/// reported skipped, with accel's reason, and left out.
inline std::vector<std::shared_ptr<accel::Device>> other_backend_devices() {
    std::vector<std::shared_ptr<accel::Device>> devices;
    for (const accel::BackendStatus& s : accel::backend_statuses()) {
        if (s.name == "host" || !s.availability.available) continue;
        try {
            devices.push_back(accel::open_device(s.name));
        } catch (const accel::Error& e) {
            MESSAGE("skipped " << s.name << ", which did not open: " << std::string(e.what()));
        }
    }
    return devices;
}
