// accel/registry.hpp — choosing a backend and device at run time.
//
// Selector grammar (case-insensitive, surrounding blanks ignored):
//   auto | NAME[:N]                 NAME a backend found here, N = device index ≥ 0
//   NAME:DEVICE[:I]                 forms a backend adds (selector_grammar() lists them),
//                                   e.g. opencl:PLATFORM[:I], opencl:gpu|cpu|accelerator
//   BACKEND:local | auto:local      one device per MPI rank
// Named forms survive a change in which devices are installed where an index
// does not; accel-info prints each device's stable form. BACKEND:local picks
// device (node-local rank mod device count) for each MPI rank; it needs the
// rank, so only accel_mpi (accel/mpi.hpp) resolves it: open_device() rejects
// it with InvalidArgument saying so.
// The environment variable ACCEL_BACKEND holds a selector (default "auto").
// `auto` prefers a real GPU (simulators such as Oclgrind do not count): among
// the available backends that report one, the one whose plugin gives the
// highest auto_rank (accel/plugin.hpp; in-tree cuda, then opencl, then
// kokkos), and on it that GPU; else the backend that opens the CPU when no
// GPU is there (host).
// A named backend that cannot be used raises BackendUnavailable: no fallback.
//
// Backends are plugins: any file libaccel-backend-NAME.so in the folders of
// ACCEL_PLUGIN_PATH (colon-separated, searched first) or in the folder
// holding libaccel itself; the registry lists those folders once per process
// and loads a plugin when its backend is first used. A plugin in
// ACCEL_PLUGIN_PATH replaces the one of the same name beside libaccel (how a
// user tries another build; accel-info says so); the same name in two
// ACCEL_PLUGIN_PATH folders is refused as ambiguous, naming both files. A
// plugin exports accel_backend_plugin() (accel/plugin.hpp) and must match
// ACCEL_PLUGIN_ABI. No backend is built into libaccel: what a program can
// select is what was found.
//
// Plugins are untrusted input: every field of their accel_plugin_info, every
// pointer they return and every exception they throw (of any type) is
// checked. A plugin that breaks its contract makes only its own backend
// unavailable, with a one-line reason naming the file, what was wrong and
// what would be right; the process and the other backends carry on.
#pragma once

#include <accel/device.hpp>

#include <memory>
#include <string>
#include <vector>

namespace accel {

/// A parsed selector: backend name ("auto", "host", ...) and device index
/// (-1 when not given: device 0), or a device named otherwise.
struct Selector {
    std::string backend;
    int index = -1;
    /// A device named by something other than its index, lower-case, e.g.
    /// "pocl", "intel:1" or "gpu" (resolved by Backend::find_device); empty
    /// when index names it or nothing does. Never set together with index.
    std::string device;
    /// Canonical text, e.g. "opencl:1", "opencl:pocl:0" or "host".
    std::string to_string() const;
};

/// The names of the backends whose plugin files were found (see above), in
/// alphabetical order; loads no plugin. Thread-safe.
std::vector<std::string> known_backends();

/// The folders searched for plugins, in order: ACCEL_PLUGIN_PATH's, then
/// libaccel's own. Thread-safe.
std::vector<std::string> plugin_folders();

/// The selector forms accepted here, built from the plugins found (each
/// backend's NAME[:N] and the forms its plugin adds), as error messages
/// quote them. Loads every plugin found. Thread-safe.
std::string selector_grammar();

/// Parses a selector. Throws InvalidArgument quoting the text received (its
/// first 64 characters when longer) and the accepted forms for a backend
/// with no plugin found (naming the file looked for and the folders), an index on `auto`, a negative index, an index above 999999, a
/// device name that is not NAME or NAME:I (NAME a letter then [a-z0-9_.-]*,
/// I an index), or one longer than 64 characters.
/// Whether a named device exists is decided when it is opened. Accepted selectors round-trip:
/// parse_selector(s.to_string()) gives s again. Thread-safe.
Selector parse_selector(const std::string& text);

/// Status of one backend on this machine.
struct BackendStatus {
    std::string name;
    bool plugin_found = false;
    std::string plugin_path;  ///< the plugin file
    /// Files of the same name beside libaccel that plugin_path, found in
    /// ACCEL_PLUGIN_PATH, replaces.
    std::vector<std::string> shadowed;
    /// What the plugin says of itself (accel_plugin_info; empty/0 when it
    /// could not be loaded): selector forms beyond NAME[:N], and where
    /// `auto` ranks it.
    std::string selector_forms;
    int auto_rank = 0;
    bool auto_cpu_fallback = false;
    Availability availability;
    /// One line: "opencl: available, 1 device(s)" or "cuda: unavailable — <reason>".
    std::string summary() const;
};

/// The backend `auto` opens among `all` (backend_statuses()): the available
/// backend reporting a GPU with the highest auto_rank, else the available
/// CPU fallback with the highest auto_rank; "" when there is none. Ties go
/// to the first in `all`. Thread-safe; never throws beyond std::bad_alloc.
std::string auto_backend(const std::vector<BackendStatus>& all);

/// Loads (once) and probes every backend found, in known_backends() order; never throws. A probe that
/// throws, or that reports available with a device count outside 1..4096,
/// makes its backend unavailable with that as the reason.
std::vector<BackendStatus> backend_statuses();

/// The file the plugin of backend `name` was loaded from (loaded on first
/// use, as get_backend; no other backend is loaded or probed), or "" when
/// it could not be loaded. Throws InvalidArgument for a name with no plugin
/// file.
/// Thread-safe.
std::string backend_plugin_file(const std::string& name);

/// The Backend object of `name` (plugin loaded on first use).
/// Throws BackendUnavailable (with the loader's message) when the plugin
/// cannot be loaded, InvalidArgument for a name with no plugin file.
Backend& get_backend(const std::string& name);

/// Opens the device named by `selector` (see grammar above). Devices are
/// cached: the same selector returns the same Device while it is alive.
/// Throws InvalidArgument for a malformed selector (a comma list too: only
/// accel::mpi::resolve deals one to ranks) or for an ACCEL_PLUGIN_PATH entry
/// that is not a folder, BackendUnavailable (with every backend's status)
/// when the backend cannot be used or the index is out of range. The
/// accel::Error a backend raises opening the device (DeviceError,
/// OutOfMemory, InvalidArgument for a bad value of one of its variables,
/// e.g. ACCEL_HOST_THREADS, ACCEL_HOST_BLAS, ACCEL_CUDA_TF32) passes through; anything else it throws, or a
/// null device, is BackendUnavailable, and a null device marks the backend
/// unavailable for the rest of the process. Echoed selectors are shortened
/// to 64 characters. Thread-safe (the registry holds one lock).
std::shared_ptr<Device> open_device(const std::string& selector);

/// open_device(ACCEL_BACKEND or "auto"); its errors as open_device's, those
/// about the selector prefixed with "ACCEL_BACKEND: ". Thread-safe.
std::shared_ptr<Device> default_device();

/// The selector in ACCEL_BACKEND, or "auto" when unset or empty.
std::string selector_from_env();

/// How many ranks mpirun says it started this process among
/// (OMPI_COMM_WORLD_SIZE), 1 when none or unreadable. Programs built without
/// accel_mpi use it to refuse running as one of several ranks, where each
/// rank would work alone. Thread-safe; never throws.
int launcher_rank_count() noexcept;

/// What accel did about OpenBLAS' kernel choice before the first plugin was
/// loaded. OpenBLAS picks its kernels once, when the library loads, and some
/// versions do not recognize recent CPUs (Debian's 0.3.21 falls back to SSE3
/// kernels on recent Xeons, 3-5x slower); any plugin may load an OpenBLAS
/// (the host backend's dlopen, Kokkos Kernels' or CLBlast's link), so the
/// registry sets OPENBLAS_CORETYPE from the CPU's features (AVX-512
/// F/BW/DQ/VL → SkylakeX, AVX2+FMA → Haswell) before it loads any plugin, if
/// the user has not set it; a user's own setting is never changed. Returns
/// e.g. "OPENBLAS_CORETYPE=SkylakeX set by accel from the CPU's features",
/// "OPENBLAS_CORETYPE=Haswell from the environment", or "" when neither
/// (no plugin loaded yet, or a CPU without those features). Thread-safe;
/// never throws beyond std::bad_alloc.
std::string openblas_coretype_note();

/// The folder of the OpenMP build of OpenBLAS where the system has it at its
/// usual place (Debian/Ubuntu: /usr/lib/<triplet>/openblas-openmp, package
/// libopenblas0-openmp), else "". accel prefers that build: it shares the
/// OpenMP thread team of accel's host kernels and of Kokkos' OpenMP space,
/// where the pthreads build keeps threads spinning that starve them (Kokkos
/// Kernels' gemm measured at 0.6-0.8 of the host backend's beside a pthreads
/// OpenBLAS, 0.96-1.0 with the OpenMP one). Unless ACCEL_HOST_BLAS names
/// another library, the registry loads its libopenblas.so.0 and libblas.so.3
/// before the first plugin, so that a plugin linking either (Kokkos Kernels)
/// shares it: the dynamic linker reuses a loaded library of the same soname.
/// A BLAS the application itself linked is loaded earlier and keeps
/// precedence. The host backend's default OpenBLAS is this one too.
/// Thread-safe; never throws beyond std::bad_alloc.
std::string preferred_openblas_dir();

}  // namespace accel
