// The hooks through which the trace (accel/trace.hpp) and the shadow check
// (accel/check.hpp) see every op, copy, synchronize and allocation. The core
// (device.cpp) and the op front-end (ops/src) call them; when neither a
// trace nor a check is on, each costs one relaxed atomic load and a branch.
// Internal to libaccel.
#pragma once

#include <accel/device.hpp>

#include <atomic>
#include <cstdint>
#include <string>

namespace accel {
namespace instrument {

/// Bit kTracing: a trace is written; bit kChecking: the shadow check is on.
enum : int { kTracing = 1, kChecking = 2 };
extern std::atomic<int> g_active;

/// Whether a trace or a check is on and the calling thread is not inside
/// their own device work (which is neither traced nor checked).
bool observing() noexcept;
inline bool active() noexcept { return g_active.load(std::memory_order_relaxed) != 0 && observing(); }
inline bool tracing() noexcept { return (g_active.load(std::memory_order_relaxed) & kTracing) && observing(); }

/// While one lives, the calling thread's device calls are not observed: the
/// tracer's and checker's own copies, events and reruns.
class Quiet {
public:
    Quiet() noexcept;
    ~Quiet();
    Quiet(const Quiet&) = delete;
    Quiet& operator=(const Quiet&) = delete;
};

/// Reads ACCEL_TRACE and ACCEL_CHECK (with ACCEL_CHECK_MODE, ACCEL_CHECK_DIR)
/// the first time it is called; after an error it reads them again on the
/// next call. Called by open_device before it takes the registry's lock.
/// Throws InvalidArgument naming the variable.
void start_from_environment();

/// Sets (or clears) the shadow check's bit; called by the checker.
void set_checking(bool on) noexcept;

/// A kernel call's numbers on its device (see accel/trace.hpp): seq counts
/// every kernel call, of_op the calls of this op.
struct CallNumber {
    std::uint64_t seq = 0;
    std::uint64_t of_op = 0;
};
CallNumber next_call(Device& d, Op op);

/// The trace's name of a stream: "stream 0" is the device's default stream.
std::string stream_name(Device& d, const Stream& s);

/// One traced call: a complete event on the calling thread's track of the
/// device's process, from construction to end(); with a stream, also the
/// work's device time on the stream's track. Inert (and nearly free) when
/// no trace is written.
class Span {
public:
    Span(Device& d, const char* name, const char* category, Stream* stream = nullptr);
    ~Span() { end(); }
    Span(const Span&) = delete;
    Span& operator=(const Span&) = delete;
    bool live() const noexcept { return live_; }
    /// Adds an arg to the event (call only when live()).
    void arg(const char* name, const std::string& text);
    void arg(const char* name, const char* text) { arg(name, std::string(text)); }
    void arg(const char* name, double number);
    void arg(const char* name, std::uint64_t number);
    void arg(const char* name, bool flag);
    /// Ends the span (the destructor does it when not called). Never throws.
    void end() noexcept;

private:
    bool live_ = false;
    Device* device_ = nullptr;
    Stream* stream_ = nullptr;
    const char* name_ = nullptr;
    const char* category_ = nullptr;
    double start_us_ = 0;
    std::unique_ptr<Event> start_event_;
    std::string args_;  ///< "key":value,... (JSON text)
    void key(const char* name);
};

/// JSON text of a string (escaped, quoted) and of a number, appended to `out`.
void append_json_string(std::string& out, const char* text);
void append_json_number(std::string& out, double v);

/// After an allocation or a free: the "memory in use" counter of `d`
/// (Device::memory_info().in_use).
void memory_changed(Device& d) noexcept;
/// After a synchronize: `s` (or every stream of `d` when null) has finished
/// its work, so its device times can be read without waiting.
void synchronized(Device& d, const Stream* s) noexcept;
/// A device or stream going away (its address may be reused).
void device_destroyed(const Device* d) noexcept;
void stream_destroyed(const Stream* s) noexcept;

}  // namespace instrument
}  // namespace accel
