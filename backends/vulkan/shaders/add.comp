#version 450
// c = a + b
#define INPUTS 2
#include "common.glsl"
acc op(acc a, acc b) { return a + b; }
#include "elementwise.glsl"
