#version 450
// y = x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))) / 2 (common.glsl)
#define INPUTS 1
#include "common.glsl"
acc op(acc a, acc b) { return gelu_tanh1(a); }
#include "elementwise.glsl"
