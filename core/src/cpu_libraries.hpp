// The CPU runtime libraries' process-wide settings (internal: not installed).
#pragma once

namespace accel {
namespace detail {

/// Sets OPENBLAS_CORETYPE and GOMP_SPINCOUNT where the user has not, and
/// loads the OpenMP OpenBLAS, once per process: the registry calls it before
/// it loads the first plugin, under its lock (see cpu_libraries.cpp).
void prepare_cpu_libraries();

}  // namespace detail
}  // namespace accel
