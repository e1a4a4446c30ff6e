#version 450
// dx = dy * (Phi(x) + x * phi(x)) (a = dy, b = x; common.glsl)
#define INPUTS 2
#include "common.glsl"
acc op(acc a, acc b) { return gelu_backward1(a, b); }
#include "elementwise.glsl"
