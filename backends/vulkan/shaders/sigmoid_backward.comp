#version 450
// dx = dy * y * (1 - y) (a = dy, b = y)
#define INPUTS 2
#include "common.glsl"
acc op(acc a, acc b) { return a * b * (acc(1) - b); }
#include "elementwise.glsl"
