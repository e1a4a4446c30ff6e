#version 450
// Device-to-device copy (Device::copy_device_to_device): `bytes` bytes from
// byte spos of binding 0 to byte dpos of binding 1. The host
// (vulkan_copy.cpp) splits the bytes into a head (until the destination is
// aligned to the body's unit), a body of whole units and a tail, and picks
// the body's mode from the two positions:
//   mode 0: 16-byte units (uvec4) on both sides (positions equal mod 16);
//   mode 1: 4-byte words on both sides (equal mod 4);
//   mode 2: 4-byte destination words, each from two source words shifted by
//           `shift` bits (positions differ mod 4; little-endian bytes).
// The body is a grid-stride loop over units [base, base + count); the head and
// tail bytes (fewer than 16 + 8) are copied one by one in the dispatch of
// base 0 (8-bit storage), so no byte outside the destination range is written.
#define ACCEL_F32
#include "common.glsl"
#extension GL_EXT_shader_8bit_storage : require

layout(std430, set = 0, binding = 0) readonly buffer Src16 { uvec4 s16[]; };
layout(std430, set = 0, binding = 0) readonly buffer Src4 { uint s4[]; };
layout(std430, set = 0, binding = 0) readonly buffer Src1 { uint8_t s1[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Dst16 { uvec4 d16[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Dst4 { uint d4[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Dst1 { uint8_t d1[]; };
// src0, dst0: the body's first unit in each binding (in the mode's units);
// head: bytes before the body; tail: where the bytes after it start.
layout(push_constant) uniform Push {
    uint base, count, mode, src0, dst0, shift, spos, dpos, head, tail, bytes;
} pc;

void main() {
    if (pc.mode == 0u) {
        FOR_EACH(u, pc.base, pc.count) d16[pc.dst0 + u] = s16[pc.src0 + u];
    } else if (pc.mode == 1u) {
        FOR_EACH(u, pc.base, pc.count) d4[pc.dst0 + u] = s4[pc.src0 + u];
    } else {
        const uint up = 32u - pc.shift;
        FOR_EACH(u, pc.base, pc.count) d4[pc.dst0 + u] = (s4[pc.src0 + u] >> pc.shift) | (s4[pc.src0 + u + 1u] << up);
    }
    if (pc.base != 0u) return;
    const uint scalars = pc.head + (pc.bytes - pc.tail);
    for (uint j = flat_id(); j < scalars; j += flat_size()) {
        const uint b = j < pc.head ? j : pc.tail + (j - pc.head);
        d1[pc.dpos + b] = s1[pc.spos + b];
    }
}
