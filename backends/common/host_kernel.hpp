// A program's C++ kernel (KernelSource::host) run block by block, shared by
// the backends that run it on the CPU (host, Kokkos host spaces): the block
// each call sees, and an exception of any block turned into one DeviceError
// after the launch (an exception may not leave an OpenMP region or a Kokkos
// kernel).
#pragma once

#include <accel/error.hpp>
#include <accel/kernel_source.hpp>

#include <exception>
#include <mutex>
#include <string>

namespace accel {

/// Runs `fn` for every block of `g` through `for_each_block(blocks, body)`,
/// which must call body(i) once for each i in [0, blocks) (in parallel or
/// not) and return when all have run. Throws DeviceError("kernel '<name>' on
/// <where> threw: ...") when a block threw (the first one's message).
template <class ForEachBlock>
void run_host_blocks(const std::string& name, const char* where, const HostKernelFn& fn, const LaunchGeometry& g,
                     const std::vector<ResolvedArg>& args, ForEachBlock&& for_each_block) {
    std::mutex mutex;
    std::exception_ptr first;  // guarded by mutex
    for_each_block(g.grid.volume(), [&](std::size_t i) {
        HostBlock b;
        b.block_idx = {i % g.grid.x, (i / g.grid.x) % g.grid.y, i / (g.grid.x * g.grid.y)};
        b.block_dim = g.block;
        b.grid_dim = g.grid;
        b.args = &args;
        try {
            fn(b);
        } catch (...) {
            std::lock_guard<std::mutex> lock(mutex);
            if (!first) first = std::current_exception();
        }
    });
    if (!first) return;
    try {
        std::rethrow_exception(first);
    } catch (const std::exception& e) {
        throw DeviceError("kernel '" + name + "' on " + where + " threw: " + e.what(), 0, "HostKernelThrew");
    } catch (...) {
        throw DeviceError("kernel '" + name + "' on " + where + " threw a non-standard exception", 0, "HostKernelThrew");
    }
}

}  // namespace accel
