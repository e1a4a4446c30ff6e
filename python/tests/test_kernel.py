"""accel.Kernel: a program's own kernel from Python on every device that
builds one (OpenCL C and Vulkan GLSL here; skipped, with accel's reason, where the backend
has no code for it), checked against NumPy on fresh random data, and the
errors of a bad launch."""

from __future__ import annotations

import numpy as np
import pytest

import accel
import accel.ops

RNG = np.random.default_rng()

SAXPY_OPENCL = """
__kernel void saxpy(__global const float* x, __global float* y, float alpha, uint n) {
    const size_t i = get_global_id(0);
    if (i < n) y[i] = alpha * x[i] + y[i];
}"""

SAXPY_CUDA = """
extern "C" __global__ void saxpy(const float* x, float* y, float alpha, unsigned n) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = alpha * x[i] + y[i];
}"""

SAXPY_GLSL = """#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform Scalars { float alpha; uint n; };
void main() {
    const uint i = gl_GlobalInvocationID.x;
    if (i < n) y[i] = alpha * x[i] + y[i];
}"""


def saxpy() -> accel.Kernel:
    return accel.Kernel(
        "saxpy",
        [accel.Param.input("x"), accel.Param.output("y"), accel.Param.scalar("alpha", "f32"),
         accel.Param.scalar("n", "u32")],
        opencl=SAXPY_OPENCL,
        cuda=SAXPY_CUDA,
        glsl=SAXPY_GLSL,
    )


def built_or_skip(kernel: accel.Kernel, device: accel.Device) -> None:
    """Builds `kernel`, and launches a kernel doing nothing: the CUDA
    emulation compiles with NVRTC but runs no device code."""
    noop = accel.Kernel("noop", [accel.Param.output("x")],
                        opencl="__kernel void noop(__global float* x) {}",
                        cuda='extern "C" __global__ void noop(float* x) {}',
                        glsl="#version 450\nlayout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;\n"
                             "layout(std430, set = 0, binding = 0) buffer X { float x[]; };\nvoid main() {}\n")
    try:
        kernel.build(device)
        noop(1, 1, accel.zeros((1,), device=device))
    except accel.Unsupported as e:
        pytest.skip(f"{device.selector} runs no kernel from Python here: {str(e).splitlines()[0]}")


@pytest.mark.parametrize("n", [1, 255, 257, 10007])
def test_saxpy(device: accel.Device, n: int) -> None:
    k = saxpy()
    built_or_skip(k, device)
    x = RNG.uniform(-1, 1, n).astype(np.float32)
    y = RNG.uniform(-1, 1, n).astype(np.float32)
    alpha = float(RNG.uniform(-2, 2))
    tx, ty = accel.from_numpy(x, device=device), accel.from_numpy(y, device=device)
    stream = device.create_stream()
    k((n + 127) // 128, 128, tx, ty, alpha, n, stream=stream)
    stream.synchronize()
    want = np.float32(alpha) * x.astype(np.float64) + y
    np.testing.assert_allclose(ty.numpy(), want, rtol=2e-6, atol=2e-6)


def test_bad_launches_name_what_was_wrong(device: accel.Device) -> None:
    k = saxpy()
    built_or_skip(k, device)
    tx = accel.from_numpy(np.ones(8, np.float32), device=device)
    ty = accel.zeros((8,), device=device)
    with pytest.raises(accel.InvalidArgument, match="3 argument"):
        k(1, 8, tx, ty, 1.0)
    with pytest.raises(accel.InvalidArgument, match="does not fit u32"):
        k(1, 8, tx, ty, 1.0, -1)
    with pytest.raises(accel.InvalidArgument, match="a scalar given"):
        k(1, 8, tx, 3, 1.0, 8)
    with pytest.raises(accel.InvalidArgument, match="tuple of 1 to 3 ints"):
        k((1, 1, 1, 1), 8, tx, ty, 1.0, 8)
    with pytest.raises(accel.InvalidArgument, match="pass an accel.Tensor"):
        k(1, 8, tx, ty, "1.0", 8)


def test_a_kernel_without_code_for_the_backend_names_the_argument(device: accel.Device) -> None:
    k = accel.Kernel("nothing", [accel.Param.output("x")])
    with pytest.raises(accel.Unsupported, match="KernelSource::"):
        k.build(device)


def test_signature_errors() -> None:
    with pytest.raises(accel.InvalidArgument, match="no name"):
        accel.Kernel("", [])
    with pytest.raises(accel.InvalidArgument, match="named 'a'"):
        accel.Kernel("twice", [accel.Param.input("a"), accel.Param.output("a")])
    with pytest.raises(accel.InvalidArgument, match="not a scalar type"):
        accel.Param.scalar("n", "u8")


def test_a_stream_over_the_native_queue_of_another_runs_ops_in_its_order(device: accel.Device) -> None:
    """Device.stream_over takes a runtime's queue as an int (here accel's own
    default queue, as a program would pass its cl_command_queue or
    torch.cuda.current_stream().cuda_stream)."""
    try:
        handle = device.default_stream().native_handle
        s = device.stream_over(handle)
    except accel.Unsupported as e:
        assert device.info.backend in ("host", "vulkan"), str(e)
        return
    assert isinstance(handle, int) and handle != 0
    if device.info.backend != "kokkos":  # Kokkos: a copy of the program's instance
        assert s.native_handle == handle
    x = RNG.uniform(-1, 1, 1000).astype(np.float32)
    y = RNG.uniform(-1, 1, 1000).astype(np.float32)
    out = accel.zeros((1000,), device=device)
    accel.ops.add(accel.from_numpy(x, device=device), accel.from_numpy(y, device=device), out=out, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(out.numpy(), x + y)
    if device.info.backend == "opencl":
        with pytest.raises(accel.InvalidArgument, match="null queue"):
            device.stream_over(0)


def test_torch_cuda_memory_and_stream_without_a_copy(device: accel.Device) -> None:
    """A PyTorch CUDA tensor is an accel tensor over the same memory, and
    accel's op runs on PyTorch's current stream."""
    torch = pytest.importorskip("torch")
    if device.info.backend != "cuda" or not torch.cuda.is_available():
        pytest.skip("needs PyTorch with a CUDA GPU and accel's CUDA backend on it")
    n = 4096
    x = torch.rand(n, device="cuda")
    y = torch.rand(n, device="cuda")
    out = torch.empty(n, device="cuda")
    s = device.stream_over(torch.cuda.current_stream().cuda_stream)
    tx, ty, tout = (accel.from_dlpack(t, device=device, copy=False) for t in (x, y, out))
    accel.ops.add(tx, ty, out=tout, stream=s)
    s.synchronize()
    assert torch.equal(out, x + y)


def test_code_by_language_name_computes_what_the_keywords_do(device: accel.Device) -> None:
    """`code` maps a language (Device.info.kernel_languages) to its code; the
    keywords are the same entries."""
    params = [accel.Param.input("x"), accel.Param.output("y"), accel.Param.scalar("alpha", "f32"),
              accel.Param.scalar("n", "u32")]
    k = accel.Kernel("saxpy", params, code={"opencl": SAXPY_OPENCL, "cuda": SAXPY_CUDA, "glsl": SAXPY_GLSL})
    built_or_skip(saxpy(), device)
    n = 1000
    x = RNG.uniform(-1, 1, n).astype(np.float32)
    y = RNG.uniform(-1, 1, n).astype(np.float32)
    tx = accel.from_numpy(x, device=device)
    by_code, by_keyword = accel.from_numpy(y, device=device), accel.from_numpy(y, device=device)
    k((n + 127) // 128, 128, tx, by_code, 0.75, n)
    saxpy()((n + 127) // 128, 128, tx, by_keyword, 0.75, n)
    np.testing.assert_array_equal(by_code.numpy(), by_keyword.numpy())
    assert isinstance(device.info.kernel_languages, list)
    with pytest.raises(accel.InvalidArgument, match="both given"):
        accel.Kernel("saxpy", params, opencl=SAXPY_OPENCL, code={"opencl": SAXPY_OPENCL})


def test_a_kernel_in_no_language_of_the_device_names_its_languages(device: accel.Device) -> None:
    k = accel.Kernel("elsewhere", [accel.Param.output("x")], code={"no-backend-takes-this": "x"})
    languages = device.info.kernel_languages
    if not languages:
        pytest.skip(f"{device.selector} builds no program kernels")
    with pytest.raises(accel.Unsupported, match=languages[0]):
        k.build(device)
