#version 450
// y = x * Phi(x), Phi(x) = erfc(-x / sqrt(2)) / 2 (common.glsl)
#define INPUTS 1
#include "common.glsl"
acc op(acc a, acc b) { return gelu1(a); }
#include "elementwise.glsl"
