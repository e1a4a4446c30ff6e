#version 450
// y = max(x, 0), NaN kept (x <= 0 is false for NaN)
#define INPUTS 1
#include "common.glsl"
acc op(acc a, acc b) { return a <= acc(0) ? acc(0) : a; }
#include "elementwise.glsl"
