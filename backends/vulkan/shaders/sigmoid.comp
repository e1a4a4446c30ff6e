#version 450
// y = 1 / (1 + exp(-x)), stable (common.glsl)
#define INPUTS 1
#include "common.glsl"
acc op(acc a, acc b) { return sigmoid1(a); }
#include "elementwise.glsl"
