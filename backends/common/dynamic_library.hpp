// dlopen/dlsym of optional libraries and symbols, shared by the backends
// that look for a CPU BLAS (host, Kokkos) or load a compiler at run time
// (NVRTC, shaderc).
#pragma once

#include <dlfcn.h>

#include <string>

namespace accel {
namespace dl {

/// Drops the calling thread's record of a failed dl call. glibc keeps it
/// until dlerror() is called twice (the first call formats the message and
/// returns it, the second frees both and returns null); a record left at
/// exit reads as a leak to LeakSanitizer. Call it after a failure whose
/// message is not wanted, or once the message has been copied.
inline void clear_error() {
    (void)dlerror();
    (void)dlerror();
}

/// `name` in `library` (a dlopen handle), or null when the library lacks
/// it; a miss leaves no dl error behind.
inline void* optional_symbol(void* library, const char* name) {
    void* p = dlsym(library, name);
    if (!p) clear_error();
    return p;
}

/// Sets `fn` to `name` in `library` (null where it lacks it); the first
/// name missing is recorded in `missing` as "`library_name` lacks NAME",
/// which later misses leave as it is.
template <class F>
void bind(void* library, F& fn, const char* name, const char* library_name, std::string& missing) {
    fn = reinterpret_cast<F>(optional_symbol(library, name));
    if (!fn && missing.empty()) missing = std::string(library_name) + " lacks " + name;
}

}  // namespace dl
}  // namespace accel
