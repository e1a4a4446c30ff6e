// y[i] = factor · x[i] for i < n: a kernel the interop tests give as SPIR-V
// words (KernelSource::spirv), compiled by glslc at build time.
#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Scalars { float factor; uint n; };
void main() {
    const uint i = gl_GlobalInvocationID.x;
    if (i < n) y[i] = factor * x[i];
}
