// accel/error.hpp — the one exception hierarchy of accel.
#pragma once

#include <stdexcept>
#include <string>

namespace accel {

/// Base of every exception accel throws. what() is a complete, user-facing
/// sentence naming what was asked, what was found and what would be right.
class Error : public std::runtime_error {
public:
    explicit Error(const std::string& message) : std::runtime_error(message) {}
};

/// The backend named by a selector cannot be used here: plugin file missing,
/// driver/runtime error, no device, or device index out of range. The message
/// lists every backend with its status.
class BackendUnavailable : public Error {
public:
    using Error::Error;
};

/// The caller passed something invalid: a malformed selector, mismatched
/// shapes, rank > 2, a tensor from another device, a copy past a buffer's end,
/// a launch geometry outside the device's limits, a size whose byte count
/// overflows size_t.
class InvalidArgument : public Error {
public:
    using Error::Error;
};

/// The op or path asked for is not implemented by this backend (e.g. the
/// vendor path on a backend built without its vendor library).
class Unsupported : public Error {
public:
    using Error::Error;
};

/// An allocation larger than the device can hold, or refused by the runtime.
/// The message gives the bytes asked and the device's total.
class OutOfMemory : public Error {
public:
    using Error::Error;
};

/// A native runtime call failed. code() is the runtime's numeric code
/// (cudaError_t, cl_int, ...), code_name() its symbolic name.
class DeviceError : public Error {
public:
    DeviceError(const std::string& message, long code, std::string code_name)
        : Error(message), code_(code), code_name_(std::move(code_name)) {}
    /// The native error code as returned by the runtime.
    long code() const noexcept { return code_; }
    /// The symbolic name of the native code, e.g. "CL_OUT_OF_RESOURCES".
    const std::string& code_name() const noexcept { return code_name_; }

private:
    long code_;
    std::string code_name_;
};

}  // namespace accel
