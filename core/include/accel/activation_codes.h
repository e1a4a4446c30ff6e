/* accel/activation_codes.h — the integer codes of accel::Activation, in one
 * place for the kernel sources that cannot include C++ headers (OpenCL C is
 * given them as -D build options; CUDA and Kokkos device code include this).
 * Plain C preprocessor definitions. */
#ifndef ACCEL_ACTIVATION_CODES_H
#define ACCEL_ACTIVATION_CODES_H

#define ACCEL_ACTIVATION_NONE 0    /* y = v */
#define ACCEL_ACTIVATION_SIGMOID 1 /* y = 1 / (1 + exp(-v)) */
#define ACCEL_ACTIVATION_RELU 2    /* y = max(v, 0), NaN kept */
#define ACCEL_ACTIVATION_GELU 3    /* y = v * Phi(v), the op gelu */
#define ACCEL_ACTIVATION_GELU_TANH 4 /* y = the op gelu_tanh of v */

#endif
