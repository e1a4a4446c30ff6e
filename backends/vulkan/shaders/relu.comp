#version 450
// y = max(x, 0), NaN kept (relu1 of common.glsl)
#define INPUTS 1
#include "common.glsl"
acc op(acc a, acc b) { return relu1(a); }
#include "elementwise.glsl"
