// Helpers shared by every kernel of the OpenCL backend. The program is built
// from common.cl, elementwise.cl, reduce.cl and matmul.cl concatenated in that
// order, so the later files may use what is defined here.

// Elementwise kernels use grid-stride loops over a flattened 1-, 2- or 3-D
// NDRange, so every launch geometry (any grid, any block) is correct. Indices
// are ulong: sizes may exceed 2^32 elements.
ulong flat_id(void) {
    return get_global_id(0) + get_global_size(0) * (get_global_id(1) + get_global_size(1) * (ulong)get_global_id(2));
}

ulong flat_size(void) { return (ulong)get_global_size(0) * get_global_size(1) * get_global_size(2); }

#define FOR_EACH(i, n) for (ulong i = flat_id(), stride_ = flat_size(); i < (n); i += stride_)

// Stable logistic: exp() only of a non-positive argument, so it never overflows.
float sigmoid1(float x) {
    // One exp of -|x| (never overflows) and a select: no divergent branch.
    const float e = exp(-fabs(x));
    const float r = 1.0f / (1.0f + e);
    return x >= 0.0f ? r : e * r;
}

// max(x, 0) that keeps NaN (as PyTorch): NaN <= 0 is false, so NaN passes.
float relu1(float x) { return x <= 0.0f ? 0.0f : x; }

// Activation codes of `dense` (accel::Activation): 0 none, 1 sigmoid, 2 relu.
float activate(float v, int act) {
    if (act == 1) return sigmoid1(v);
    if (act == 2) return relu1(v);
    return v;
}
