// dlopen/dlsym of optional libraries and symbols, shared by the backends
// that look for a CPU BLAS (host, Kokkos).
#pragma once

#include <dlfcn.h>

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

}  // namespace dl
}  // namespace accel
