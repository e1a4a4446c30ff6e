// The tracer: writes accel/trace.hpp's Chrome trace events as calls happen,
// under one lock, and reads device times back when their stream is known to
// have finished.
#include <accel/environment.hpp>
#include <accel/error.hpp>
#include <accel/trace.hpp>

#include <accel_internal/instrument.hpp>
#include <accel_internal/ops_layer.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <vector>

namespace accel {
namespace instrument {

std::atomic<int> g_active{0};


namespace {

const env::Declaration kTraceVariable{{"ACCEL_TRACE", "a file to write (its folder must exist)",
                                       "writes a Chrome trace event file of every op, copy, synchronize and "
                                       "allocation (default: none; accel/trace.hpp)",
                                       "libaccel"}};

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int kStreamTrackBase = 1000;       // tids of stream tracks: 1000 + stream number
constexpr std::size_t kPendingLimit = 2048;  // unread device times per device before the oldest are awaited

thread_local int t_quiet = 0;
thread_local int t_thread_number = 0;  // 1, 2, ... in the order threads first appear in a trace
std::atomic<int> g_threads{0};

// Device times waiting to be read: the events around one op or copy.
struct Pending {
    const Stream* stream = nullptr;
    int tid = 0;
    std::string name, category;
    std::string args;  // the host event's args, "key":value,...
    std::unique_ptr<Event> start, end;
};

struct DeviceState {
    int pid = 0;
    std::string process_name;
    bool described = false;  // process metadata written to the current file
    std::uint64_t seq = 0;
    std::vector<std::uint64_t> per_op;
    std::map<const Stream*, int> streams;
    int next_stream = 1;  // 0 is the default stream
    std::set<int> named_tracks;
    // device timing: one epoch event synchronized at a known host time
    bool timing_tried = false;
    std::string timing_off;  // why there are no device times ("" while they work)
    std::unique_ptr<Event> epoch;
    double epoch_us = 0;
    std::deque<Pending> pending;
    std::shared_ptr<Device> keep;      // while device times are pending
    std::map<int, double> track_end;  // per stream track: end of the latest device event
};

struct Tracer {
    std::mutex mutex;
    std::ofstream out;
    std::string path;
    bool first_event = true;
    bool at_exit_registered = false;
    Clock::time_point t0 = Clock::now();
    int rank = -1;  // under an MPI launcher of more than one rank
    int next_device = 0;
    std::map<const Device*, DeviceState> devices;
    // environment
    bool env_done = false;
};

Tracer& tracer() {
    static Tracer* t = new Tracer;  // never destroyed: the exit handler and late frees use it
    return *t;
}

double now_us() {
    return std::chrono::duration<double, std::micro>(Clock::now() - tracer().t0).count();
}

int thread_number() {
    if (!t_thread_number) t_thread_number = ++g_threads;
    return t_thread_number;
}

// The launcher's rank and rank count, or -1 when not started as one of several ranks.
int launcher_rank() {
    const char* sizes[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"};
    const char* ranks[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"};
    for (int i = 0; i < 3; ++i) {
        const char* size = std::getenv(sizes[i]);
        const char* rank = std::getenv(ranks[i]);
        if (size && rank && std::atoi(size) > 1) return std::atoi(rank);
    }
    return -1;
}

std::string with_rank(const std::string& path, int rank) {
    if (rank < 0) return path;
    const std::size_t slash = path.find_last_of('/');
    const std::size_t dot = path.find_last_of('.');
    const std::string tag = ".rank" + std::to_string(rank);
    if (dot == std::string::npos || (slash != std::string::npos && dot < slash) || dot == 0 ||
        (slash != std::string::npos && dot == slash + 1))
        return path + tag;
    return path.substr(0, dot) + tag + path.substr(dot);
}

// Caller holds the lock. Metadata and counters, which are rare, go through
// nlohmann::json; the events of calls are written as text (a
// json object per call cost ~50 µs in allocations).
void write_locked(Tracer& t, const json& event) {
    if (!t.out.is_open()) return;
    t.out << (t.first_event ? "\n" : ",\n") << event.dump(-1, ' ', false, json::error_handler_t::replace);
    t.first_event = false;
}
void write_locked(Tracer& t, const std::string& event) {
    if (!t.out.is_open()) return;
    t.out << (t.first_event ? "\n" : ",\n") << event;
    t.first_event = false;
}

}  // namespace

void append_json_string(std::string& out, const char* text) {
    out += '"';
    for (const char* c = text; *c; ++c) {
        const unsigned char u = static_cast<unsigned char>(*c);
        if (u == '"' || u == '\\') {
            out += '\\';
            out += *c;
        } else if (u < 0x20 || u >= 0x7f) {  // controls, and bytes that may not be UTF-8 (names come from drivers)
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", u);
            out += buf;
        } else {
            out += *c;
        }
    }
    out += '"';
}

void append_json_number(std::string& out, double v) {
    if (!std::isfinite(v)) v = 0;  // JSON has no Inf/NaN
    // The shortest text that reads back as v: several times faster than
    // printf's %.17g, which took a fifth of a traced run.
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, r.ptr);
}

namespace {

// One complete event ("X") as text.
std::string complete_event(const std::string& category, const std::string& name, int pid, int tid, double ts,
                           double dur, const std::string& args) {
    std::string e = "{\"ph\":\"X\",\"cat\":";
    append_json_string(e, category.c_str());
    e += ",\"name\":";
    append_json_string(e, name.c_str());
    e += ",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) + ",\"ts\":";
    append_json_number(e, ts);
    e += ",\"dur\":";
    append_json_number(e, dur);
    e += ",\"args\":{" + args + "}}";
    return e;
}

DeviceState& state_locked(Tracer& t, Device& d) {
    auto it = t.devices.find(&d);
    if (it != t.devices.end()) return it->second;
    DeviceState& s = t.devices[&d];
    s.pid = (t.rank >= 0 ? t.rank * 1000 : 0) + (++t.next_device);
    s.process_name = (t.rank >= 0 ? "rank " + std::to_string(t.rank) + " · " : std::string()) + d.selector() + " (" +
                     d.info().name + ")";
    return s;
}

void describe_locked(Tracer& t, DeviceState& s) {
    if (s.described || !t.out.is_open()) return;
    s.described = true;
    write_locked(t, {{"ph", "M"}, {"name", "process_name"}, {"pid", s.pid}, {"tid", 0}, {"ts", 0},
                     {"args", {{"name", s.process_name}}}});
    write_locked(t, {{"ph", "M"}, {"name", "process_sort_index"}, {"pid", s.pid}, {"tid", 0}, {"ts", 0},
                     {"args", {{"sort_index", s.pid}}}});
}

void name_track_locked(Tracer& t, DeviceState& s, int tid, const std::string& name) {
    if (!s.named_tracks.insert(tid).second) return;
    write_locked(t, {{"ph", "M"}, {"name", "thread_name"}, {"pid", s.pid}, {"tid", tid}, {"ts", 0},
                     {"args", {{"name", name}}}});
    write_locked(t, {{"ph", "M"}, {"name", "thread_sort_index"}, {"pid", s.pid}, {"tid", tid}, {"ts", 0},
                     {"args", {{"sort_index", tid}}}});
}

int stream_number_locked(DeviceState& s, Device& d, const Stream& stream) {
    if (&stream == &d.default_stream()) return 0;
    auto it = s.streams.find(&stream);
    if (it != s.streams.end()) return it->second;
    return s.streams[&stream] = s.next_stream++;
}

// Device time of one finished record: start (µs on the host clock) and
// duration (µs). Called without the lock (reads the device's events).
std::pair<double, double> device_time(Device& d, Pending& p, double epoch_us, Event& epoch) {
    double start_ms = 0;
    try {
        start_ms = d.elapsed_ms(epoch, *p.start);
    } catch (const InvalidArgument&) {
        start_ms = 0;  // the two clocks disagree by less than their resolution
    }
    const double ms = d.elapsed_ms(*p.start, *p.end);
    return {epoch_us + start_ms * 1000.0, ms * 1000.0};
}

// Reads the device times of `ready` (their work has finished, or `wait`
// says to wait for it) and writes them on their streams' tracks. Called
// without the lock.
void resolve(Device& d, std::deque<Pending>& ready, bool wait) {
    if (ready.empty()) return;
    Quiet quiet;
    Tracer& t = tracer();
    Event* epoch = nullptr;
    double epoch_us = 0;
    {
        std::lock_guard<std::mutex> lock(t.mutex);
        auto it = t.devices.find(&d);
        if (it == t.devices.end() || !it->second.epoch) return;
        epoch = it->second.epoch.get();  // lives as long as the device's state
        epoch_us = it->second.epoch_us;
    }
    std::vector<std::pair<double, double>> times;
    std::string failure;
    for (Pending& p : ready) {
        try {
            if (wait) p.end->synchronize();
            times.push_back(device_time(d, p, epoch_us, *epoch));
        } catch (const std::exception& e) {
            failure = e.what();
            break;
        }
    }
    std::lock_guard<std::mutex> lock(t.mutex);
    auto it = t.devices.find(&d);
    if (it == t.devices.end()) return;
    DeviceState& s = it->second;
    describe_locked(t, s);
    for (std::size_t i = 0; i < times.size(); ++i) {
        Pending& p = ready[i];
        auto [ts, dur] = times[i];
        // One stream runs its work in order: a later item never starts before
        // the one before it ended (the two clocks' rounding could say so).
        double& last = s.track_end[p.tid];
        if (ts < last) {
            dur = std::max(0.0, ts + dur - last);
            ts = last;
        }
        last = ts + dur;
        std::string args = p.args;
        args += std::string(args.empty() ? "" : ",") + "\"device_ms\":";
        append_json_number(args, dur / 1000.0);
        write_locked(t, complete_event(p.category, p.name, s.pid, p.tid, ts, dur, args));
    }
    if (!failure.empty() && s.timing_off.empty()) {
        s.timing_off = "reading device times failed: " + failure;
        write_locked(t, json{{"ph", "i"}, {"s", "p"}, {"name", "device times off"}, {"pid", s.pid}, {"tid", 0},
                             {"ts", now_us()}, {"args", {{"why", s.timing_off}}}});
    }
}

// Moves out the pending records of `d` on `stream` (all when null), or the
// oldest `oldest` ones. Caller holds the lock; returns the device to release
// (outside the lock) when nothing is pending any more.
std::shared_ptr<Device> take_locked(DeviceState& s, const Stream* stream, std::size_t oldest,
                                    std::deque<Pending>& out) {
    if (oldest) {
        for (std::size_t i = 0; i < oldest && !s.pending.empty(); ++i) {
            out.push_back(std::move(s.pending.front()));
            s.pending.pop_front();
        }
    } else {
        std::deque<Pending> keep;
        for (Pending& p : s.pending)
            (!stream || p.stream == stream ? out : keep).push_back(std::move(p));
        s.pending.swap(keep);
    }
    std::shared_ptr<Device> release;
    if (s.pending.empty()) release.swap(s.keep);
    return release;
}

// Whether device times can be measured on `d`. The first call starts them:
// an event on a fresh stream, synchronized, is the point where the device's
// clock meets the host's. Called without the lock.
bool device_timing(Device& d) {
    Tracer& t = tracer();
    {
        std::lock_guard<std::mutex> lock(t.mutex);
        DeviceState& s = state_locked(t, d);
        if (s.timing_tried) return s.epoch && s.timing_off.empty();
        s.timing_tried = true;
    }
    Quiet quiet;
    std::unique_ptr<Event> epoch;
    double epoch_us = 0;
    std::string why;
    try {
        std::unique_ptr<Stream> stream = d.create_stream();
        epoch = d.create_event();
        epoch->record(*stream);
        epoch->synchronize();
        epoch_us = now_us();
    } catch (const std::exception& e) {
        why = std::string("the device's events cannot be used: ") + e.what();
        epoch.reset();
    }
    std::lock_guard<std::mutex> lock(t.mutex);
    DeviceState& s = state_locked(t, d);
    s.epoch = std::move(epoch);
    s.epoch_us = epoch_us;
    s.timing_off = why;
    return s.epoch && s.timing_off.empty();
}

void finish_locked(Tracer& t) {
    if (!t.out.is_open()) return;
    json other = {{"accel_trace_format", 1}, {"host", host_name()}};
    if (t.rank >= 0) other["rank"] = t.rank;
    t.out << "\n],\"displayTimeUnit\":\"ms\",\"otherData\":" << other.dump(-1, ' ', false, json::error_handler_t::replace)
          << "}\n";
    t.out.close();
    if (!t.out) std::fprintf(stderr, "accel trace: writing %s failed\n", t.path.c_str());
    t.path.clear();
    g_active.fetch_and(~kTracing);
}

void stop_at_exit() { trace::stop(); }

}  // namespace

bool observing() noexcept { return t_quiet == 0; }

Quiet::Quiet() noexcept { ++t_quiet; }
Quiet::~Quiet() { --t_quiet; }

void set_checking(bool on) noexcept {
    if (on)
        g_active.fetch_or(kChecking);
    else
        g_active.fetch_and(~kChecking);
}

void start_from_environment() {
    Tracer& t = tracer();
    {
        std::lock_guard<std::mutex> lock(t.mutex);
        if (t.env_done) return;
    }
    const std::optional<std::string> path = env::value("ACCEL_TRACE");
    if (path) {
        try {
            trace::start(*path);
        } catch (const InvalidArgument& e) {
            env::reject("ACCEL_TRACE", *path, std::string("cannot be written: ") + e.what());
        }
    }
    if (const ops_layer::CheckStarter start_check = ops_layer::check_starter()) start_check();
    std::lock_guard<std::mutex> lock(t.mutex);
    t.env_done = true;
}

CallNumber next_call(Device& d, Op op) {
    Tracer& t = tracer();
    std::lock_guard<std::mutex> lock(t.mutex);
    DeviceState& s = state_locked(t, d);
    const auto index = static_cast<std::size_t>(op);
    if (s.per_op.size() <= index) s.per_op.resize(index + 1, 0);
    return {++s.seq, ++s.per_op[index]};
}

std::string stream_name(Device& d, const Stream& stream) {
    Tracer& t = tracer();
    std::lock_guard<std::mutex> lock(t.mutex);
    return "stream " + std::to_string(stream_number_locked(state_locked(t, d), d, stream));
}

Span::Span(Device& d, const char* name, const char* category, Stream* stream) {
    if (!tracing()) return;
    live_ = true;
    device_ = &d;
    stream_ = stream;
    name_ = name;
    category_ = category;
    if (stream && device_timing(d)) {
        Quiet quiet;
        try {
            start_event_ = d.create_event();
            start_event_->record(*stream);
        } catch (const std::exception&) {
            start_event_.reset();
        }
    }
    start_us_ = now_us();
}

void Span::key(const char* name) {
    if (!args_.empty()) args_ += ',';
    append_json_string(args_, name);
    args_ += ':';
}
void Span::arg(const char* name, const std::string& text) {
    key(name);
    append_json_string(args_, text.c_str());
}
void Span::arg(const char* name, double number) {
    key(name);
    append_json_number(args_, number);
}
void Span::arg(const char* name, std::uint64_t number) {
    key(name);
    args_ += std::to_string(number);
}
void Span::arg(const char* name, bool flag) {
    key(name);
    args_ += flag ? "true" : "false";
}

void Span::end() noexcept {
    if (!live_) return;
    live_ = false;
    try {
        std::unique_ptr<Event> end_event;
        if (start_event_) {
            Quiet quiet;
            try {
                end_event = device_->create_event();
                end_event->record(*stream_);
            } catch (const std::exception&) {
                end_event.reset();
            }
        }
        const double end_us = now_us();
        Tracer& t = tracer();
        std::deque<Pending> overflow;
        {
            std::lock_guard<std::mutex> lock(t.mutex);
            if (!t.out.is_open()) return;
            DeviceState& s = state_locked(t, *device_);
            describe_locked(t, s);
            const int tid = thread_number();
            name_track_locked(t, s, tid, "host thread " + std::to_string(tid));
            if (stream_) {
                const int number = stream_number_locked(s, *device_, *stream_);
                arg("stream", "stream " + std::to_string(number));
                if (end_event) {
                    const int track = kStreamTrackBase + number;
                    name_track_locked(t, s, track, "stream " + std::to_string(number) + (number ? "" : " (default)"));
                    Pending p;
                    p.stream = stream_;
                    p.tid = track;
                    p.name = name_;
                    p.category = category_;
                    p.args = args_;  // the device-time event shows the same call
                    p.start = std::move(start_event_);
                    p.end = std::move(end_event);
                    s.pending.push_back(std::move(p));
                    if (!s.keep) s.keep = device_->shared_from_this();
                    if (s.pending.size() > kPendingLimit) take_locked(s, nullptr, kPendingLimit / 2, overflow);
                }
            }
            write_locked(t, complete_event(category_, name_, s.pid, tid, start_us_, std::max(0.0, end_us - start_us_),
                                           args_));
        }
        resolve(*device_, overflow, true);
    } catch (...) {
        // A trace must not change what the program does: a failed write is
        // reported when the trace is closed.
    }
}

void memory_changed(Device& d) noexcept {
    if (!tracing()) return;
    try {
        const std::uint64_t in_use = d.memory_info().in_use;
        Tracer& t = tracer();
        std::lock_guard<std::mutex> lock(t.mutex);
        if (!t.out.is_open()) return;
        DeviceState& s = state_locked(t, d);
        describe_locked(t, s);
        write_locked(t, {{"ph", "C"}, {"name", "memory in use"}, {"pid", s.pid}, {"tid", 0}, {"ts", now_us()},
                         {"args", {{"bytes", in_use}}}});
    } catch (...) {
    }
}

void synchronized(Device& d, const Stream* stream) noexcept {
    if (!tracing()) return;
    std::deque<Pending> ready;
    std::shared_ptr<Device> release;
    try {
        Tracer& t = tracer();
        {
            std::lock_guard<std::mutex> lock(t.mutex);
            auto it = t.devices.find(&d);
            if (it == t.devices.end() || it->second.pending.empty()) return;
            release = take_locked(it->second, stream, 0, ready);
        }
        resolve(d, ready, false);
    } catch (...) {
    }
    ready.clear();  // the events before the device they belong to
    release.reset();
}

void device_destroyed(const Device* d) noexcept {
    Tracer& t = tracer();
    std::lock_guard<std::mutex> lock(t.mutex);
    t.devices.erase(d);  // nothing pending: a device is kept alive while its times are
}

void stream_destroyed(const Stream* s) noexcept {
    Tracer& t = tracer();
    std::lock_guard<std::mutex> lock(t.mutex);
    auto it = t.devices.find(&s->device());
    if (it != t.devices.end()) it->second.streams.erase(s);
}

}  // namespace instrument

namespace trace {

using instrument::Pending;

void start(const std::string& path) {
    if (path.empty()) throw InvalidArgument("accel::trace::start: the path is empty; name the file to write");
    instrument::Tracer& t = instrument::tracer();
    stop();
    std::lock_guard<std::mutex> lock(t.mutex);
    t.rank = instrument::launcher_rank();
    const std::string file = instrument::with_rank(path, t.rank);
    t.out.clear();
    t.out.open(file, std::ios::out | std::ios::trunc);
    if (!t.out.is_open())
        throw InvalidArgument("accel::trace::start: cannot create '" + file + "': " + std::strerror(errno) +
                              "; give a path in an existing, writable folder");
    t.path = file;
    t.first_event = true;
    t.out << "{\"traceEvents\":[";
    for (auto& entry : t.devices) {
        entry.second.described = false;
        entry.second.named_tracks.clear();
    }
    if (!t.at_exit_registered) {
        t.at_exit_registered = true;
        std::atexit(instrument::stop_at_exit);
    }
    instrument::g_active.fetch_or(instrument::kTracing);
}

void stop() noexcept {
    instrument::Tracer& t = instrument::tracer();
    try {
        // Every device time still pending: wait for it, then close.
        std::list<std::pair<std::shared_ptr<Device>, std::deque<Pending>>> all;
        {
            std::lock_guard<std::mutex> lock(t.mutex);
            if (!t.out.is_open()) return;
            for (auto& entry : t.devices) {
                if (entry.second.pending.empty()) continue;
                std::deque<Pending> ready;
                std::shared_ptr<Device> device = entry.second.keep;
                instrument::take_locked(entry.second, nullptr, 0, ready);
                all.emplace_back(std::move(device), std::move(ready));
            }
        }
        for (auto& [device, ready] : all) instrument::resolve(*device, ready, true);
        {
            std::lock_guard<std::mutex> lock(t.mutex);
            instrument::finish_locked(t);
        }
        for (auto& entry : all) entry.second.clear();  // events before their devices
    } catch (const std::exception& e) {
        std::fprintf(stderr, "accel trace: closing the trace failed: %s\n", e.what());
    }
}

void flush() noexcept {
    instrument::Tracer& t = instrument::tracer();
    std::lock_guard<std::mutex> lock(t.mutex);
    if (t.out.is_open()) t.out.flush();
}

bool active() noexcept { return instrument::g_active.load() & instrument::kTracing; }

std::string path() {
    instrument::Tracer& t = instrument::tracer();
    std::lock_guard<std::mutex> lock(t.mutex);
    return t.path;
}

}  // namespace trace
}  // namespace accel
