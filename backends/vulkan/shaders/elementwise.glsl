// The body of every elementwise shader: a shader defines INPUTS (1 or 2) and
// `acc op(acc a, acc b)` (b = 0 for one input), then includes this file.
// Bindings: the inputs, then the output (set 0, in KernelArgs order); push
// constants: the elements this dispatch covers (vulkan_ops.cpp splits a launch). Any geometry is correct (grid-stride loop); an output may be
// the same buffer as an input (each element is read before it is written,
// by the same invocation).
layout(std430, set = 0, binding = 0) readonly buffer In0 { real in0[]; };
#if INPUTS == 2
layout(std430, set = 0, binding = 1) readonly buffer In1 { real in1[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out0 { real out0[]; };
#else
layout(std430, set = 0, binding = 1) writeonly buffer Out0 { real out0[]; };
#endif
layout(push_constant) uniform Push { uint base, count; } pc;  // this dispatch's elements

void main() {
    FOR_EACH(i, pc.base, pc.count) {
#if INPUTS == 2
        STORE(out0, i, op(LOAD(in0, i), LOAD(in1, i)));
#else
        STORE(out0, i, op(LOAD(in0, i), acc(0)));
#endif
    }
}
