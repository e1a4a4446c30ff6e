// What core calls of the layer above it (ops/src), through functions that
// ops registers when libaccel loads: core links, and its own tests run,
// without ops (tests/core), and no core file names an ops symbol (test
// layers checks the object files). Internal to libaccel.
#pragma once

#include <accel/tensor.hpp>

namespace accel {
namespace ops_layer {

/// Starts the shadow check from ACCEL_CHECK, ACCEL_CHECK_MODE and
/// ACCEL_CHECK_DIR (ops/src/check.cpp); throws InvalidArgument naming a bad
/// variable.
using CheckStarter = void (*)();
/// ops::convert(from, to): `to` of `from`'s shape in another dtype.
using Converter = void (*)(const Tensor& from, Tensor& to);

/// Registered by ops' static initializers; each once, before main.
void register_check_starter(CheckStarter fn) noexcept;
void register_converter(Converter fn) noexcept;

/// The registered functions, or nullptr in a program without ops (core's
/// own tests). Thread-safe.
CheckStarter check_starter() noexcept;
Converter converter() noexcept;

}  // namespace ops_layer
}  // namespace accel
