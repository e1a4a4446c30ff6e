#version 450
// The empty kernel of the launch-overhead probe (Probes::launch_empty).
#define ACCEL_F32
#include "common.glsl"
void main() {}
