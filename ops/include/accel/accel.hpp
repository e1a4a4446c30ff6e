// accel/accel.hpp — everything a program needs: devices, tensors, ops.
#pragma once

#include <accel/check.hpp>
#include <accel/closest_name.hpp>
#include <accel/device.hpp>
#include <accel/diagnostics.hpp>
#include <accel/dtype.hpp>
#include <accel/environment.hpp>
#include <accel/error.hpp>
#include <accel/geometry.hpp>
#include <accel/graph.hpp>
#include <accel/op_table.hpp>
#include <accel/ops.hpp>
#include <accel/page_locked.hpp>
#include <accel/registry.hpp>
#include <accel/tensor.hpp>
#include <accel/trace.hpp>
#include <accel/user_kernel.hpp>
#include <accel/version.hpp>
