// What the emulated runtime (runtime.cpp) runs a kernel's blocks with
// (blocks.cpp): the threads of a block as fibers on the calling OS thread.
// Internal to the emulation; not a CUDA API.
#pragma once

#include <cstddef>
#include <functional>

namespace accel {
namespace cuda {
namespace emulation {

/// What fails a block's run with cudaErrorIllegalInstruction (undefined
/// behaviour on a GPU): `what` is the text after "in block (x,y,z)".
struct IllegalInBlock {
    const char* what;
};

/// Runs the `threads` threads of the current block (blockIdx, blockDim and
/// gridDim set) through `body`, each a fiber switched at its barriers; a
/// block with no barrier on thread 0's path runs its threads as plain calls.
/// Throws IllegalInBlock when a thread failed (a barrier reached by only
/// some threads, a shuffle or warp-wide operation past the block), the
/// other threads abandoned. One block at a time per OS thread.
void run_block(const std::function<void()>& body, std::size_t threads);

}  // namespace emulation
}  // namespace cuda
}  // namespace accel
