#version 450
// y = x (the op copy, BabelStream's copy as a kernel)
#define INPUTS 1
#include "common.glsl"
acc op(acc a, acc b) { return a; }
#include "elementwise.glsl"
