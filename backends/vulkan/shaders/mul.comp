#version 450
// c = a * b (the op mul)
#define INPUTS 2
#include "common.glsl"
acc op(acc a, acc b) { return a * b; }
#include "elementwise.glsl"
