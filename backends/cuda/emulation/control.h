// Fault injection in accel's CUDA emulation, switched by test code.
//
// The emulated plugin (emulated-plugins/libaccel-backend-cuda.so) exports
// these C functions; a test dlopen()s the same file the registry loads
// (RTLD_NOLOAD or first) and dlsym()s them. Not thread-safe against calls the
// emulated runtime is making at the same moment: set faults while the
// emulated devices are idle.
#pragma once

extern "C" {

/// The environment variable ACCEL_CUDA_EMULATION_FAULTS sets faults too, when
/// the emulation starts: "NAME[@DEVICE]=VALUE;..." (DEVICE default 0), e.g.
/// "launch_error=700" (device 0's first kernel fails with a sticky illegal
/// address) or "devices=2;busy@1=1". A malformed entry ends the process
/// with exit status 2 and a message on stderr.
///
/// Sets fault `name` of emulated device `device` (ignored where a fault is
/// process-wide) to `value`. Returns 0, or -1 for an unknown name or a device
/// index out of range. Faults:
///   "devices"          process-wide: the number of emulated devices (default 1;
///                      takes effect at the plugin's first probe)
///   "driver_version"   process-wide: the driver's CUDA version as
///                      cudaDriverGetVersion encodes it (default 13000); 0 is no
///                      driver installed, and below 13000 (the runtime's) the
///                      device count fails with cudaErrorInsufficientDriver
///   "event_not_ready"  the next `value` cudaEventQuery calls on the device
///                      answer cudaErrorNotReady (and leave it in the calling
///                      thread's last-error slot, as every failed call does)
///   "malloc_fail"      the next `value` cudaMalloc calls on the device fail
///                      with cudaErrorMemoryAllocation
///   "launch_error"     the next kernel on the device fails asynchronously with
///                      code `value` (e.g. 700); codes the CUDA documentation
///                      calls unrecoverable make the device return it from then
///                      on (sticky), others only from that stream's synchronize
///   "hang"             the `value`-th kernel launched on the device from now
///                      (1: the next) never finishes: its stream blocks for
///                      good, as on a GPU whose kernel is stuck and no watchdog
///                      resets it; only a signal ends the process then
///   "kill_process"     the `value`-th kernel launch on the device from now
///                      kills the process with SIGKILL (as the OOM killer or
///                      a driver fault ends it: no handler, no exit code of
///                      its own)
///   "fail_call:<name>" the next call of runtime function <name> (cudaFree,
///                      cudaEventRecord, cudaMemGetInfo, cudaPointerGetAttributes,
///                      ...) on the device returns
///                      code `value` without doing anything
///   "compute_mode"     cudaDevAttrComputeMode of the device (0 default,
///                      2 prohibited, 3 exclusive-process)
///   "compute_capability" the device's compute capability as major·10 + minor
///                      (default 90, as an H100; 50..129): cudaDeviceProp's
///                      major and minor, and so the kernels the plugin picks
///                      (below 80 the f16/bf16 GEMMs run without tensor
///                      cores); set before the plugin opens the device
///   "warp_size"        the device's warp width, 32 or 64 (default 32; the HIP
///                      emulation's default 64): warpSize in kernels,
///                      cudaDevAttrWarpSize, cudaDeviceProp::warpSize; set
///                      before the plugin opens the device
///   "busy"             1: another process holds the device (exclusive mode):
///                      creating a context there fails with
///                      cudaErrorDevicesUnavailable
///   "no_kernel_image"  1: the build has no kernel image for the device:
///                      launches and cudaFuncGetAttributes fail with
///                      cudaErrorNoKernelImageForDevice
///   "event_time_percent" cudaEventElapsedTime on the device reads this
///                      percentage of the real time (default 100; 0: a timer
///                      that does not advance, as some OpenCL runtimes'
///                      profiling counters read; 100000: a timer in the
///                      wrong unit)
int accel_cuda_emulation_fault(const char* name, int device, long value);

/// Counter `name` of emulated device `device`, or -1 for an unknown name or a
/// device index out of range:
///   "cudaMalloc"          successful cudaMalloc calls on the device
///   "cudaFree"            cudaFree calls that freed memory of the device
///                         (not cudaFree(0)); each waits for all its work
///   "cudaLaunchHostFunc"  host callbacks enqueued on the device's streams
///   "cudaGraphLaunch"     graph launches on the device's streams
///   "pinned_bytes"        process-wide (device ignored): bytes now held
///                         through cudaMallocHost
///   "pinned_peak_bytes"   process-wide: the most "pinned_bytes" has been
///                         since the process started or the last
///                         accel_cuda_emulation_reset_pinned_peak()
long accel_cuda_emulation_counter(const char* name, int device);

/// Sets "pinned_peak_bytes" to "pinned_bytes".
void accel_cuda_emulation_reset_pinned_peak();

/// cudaMallocHost(bytes) / cudaFreeHost(p) on behalf of a test (page-locked
/// host memory as a CUDA application would pass it to accel); null when
/// refused.
void* accel_cuda_emulation_host_alloc(unsigned long bytes);
void accel_cuda_emulation_host_free(void* p);

/// The emulation's own runtime function `name` (one of cudaSetDevice,
/// cudaMalloc, cudaFree, cudaMemcpyAsync, cudaStreamCreateWithFlags,
/// cudaStreamDestroy, cudaStreamSynchronize, cudaLaunchHostFunc; CUDA's
/// signatures), for a test that plays a CUDA program beside accel (interop);
/// null for any other name.
void* accel_cuda_emulation_runtime_function(const char* name);

/// The calling thread's current emulated device (cudaGetDevice), so that a
/// test can check that accel leaves it as it found it.
int accel_cuda_emulation_current_device();
}
