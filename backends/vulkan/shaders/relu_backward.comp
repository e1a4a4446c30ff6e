#version 450
// dx = x > 0 ? dy : 0 (a = dy, b = x; 0 where x is NaN)
#define INPUTS 2
#include "common.glsl"
acc op(acc a, acc b) { return b > acc(0) ? a : acc(0); }
#include "elementwise.glsl"
