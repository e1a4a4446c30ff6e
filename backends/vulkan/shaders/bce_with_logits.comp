#version 450
// l = max(z, 0) - z t + log1p(exp(-|z|)) (a = z, b = t), stable
#define INPUTS 2
#include "common.glsl"
acc op(acc a, acc b) { return bce1(a, b); }
#include "elementwise.glsl"
