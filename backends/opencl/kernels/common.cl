// Helpers shared by every kernel of the OpenCL backend. The program is built
// from common.cl, elementwise.cl, reduce.cl and matmul.cl concatenated in that
// order, so the later files may use what is defined here.

// ---- element types ----------------------------------------------------------
// One program per accel dtype is built from these sources; the build option
// that names the dtype selects the element macros below (none: f32):
//   real          storage type of tensor elements (kernel pointer arguments)
//   acc           compute type: elements are loaded into it, all arithmetic
//                 and accumulation runs in it, op scalars are passed in it
//   LOAD(p, i)    element p[i] widened exactly to acc
//   LOAD4(p, i)   the 4 elements p[i..i+3] as an acc4 (element alignment only)
//   STORE(p, i, v) p[i] = v rounded once to real, to nearest, ties to even
// ACCEL_REAL_F64   real = acc = double (needs cl_khr_fp64).
// ACCEL_REAL_F16   real = half (IEEE binary16), acc = float: half is used only
//                  as a pointer type, through vload_half / vstore_half_rte,
//                  which are core OpenCL C (no cl_khr_fp16 needed).
// ACCEL_REAL_BF16  real = ushort holding the upper 16 bits of a binary32,
//                  acc = float.
#if defined(ACCEL_REAL_F64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define real double
#define acc double
#define LOAD(p, i) ((p)[i])
#define LOAD4(p, i) vload4(0, (p) + (i))
#define STORE(p, i, v) ((p)[i] = (v))
#elif defined(ACCEL_REAL_F16)
#define real half
#define acc float
#define LOAD(p, i) vload_half((i), (p))
#define LOAD4(p, i) vload_half4(0, (p) + (i))
#define STORE(p, i, v) vstore_half_rte((v), (i), (p))
#elif defined(ACCEL_REAL_BF16)
#define real ushort
#define acc float
#define LOAD(p, i) as_float((uint)(p)[i] << 16)
#define LOAD4(p, i) as_float4(convert_uint4(vload4(0, (p) + (i))) << 16)
#define STORE(p, i, v) ((p)[i] = bf16_round(v))
// v rounded to the nearest bfloat16, ties to even: adding 0x7FFF plus the
// lowest kept bit carries into bit 16 exactly when the dropped half is above
// the halfway point, or at it with the kept part odd; a carry out of the
// fraction raises the exponent (the largest finite values round to Inf, Inf
// stays Inf). NaN gives the quiet NaN 0x7FC0 with v's sign: the carry could
// otherwise turn a NaN whose payload lies in the dropped bits into Inf.
ushort bf16_round(float v) {
    const uint u = as_uint(v);
    if (isnan(v)) return (ushort)(((u >> 16) & 0x8000u) | 0x7FC0u);
    return (ushort)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
#else
#define real float
#define acc float
#define LOAD(p, i) ((p)[i])
#define LOAD4(p, i) vload4(0, (p) + (i))
#define STORE(p, i, v) ((p)[i] = (v))
#endif

// Elementwise kernels use grid-stride loops over a flattened 1-, 2- or 3-D
// NDRange, so every launch geometry (any grid, any block) is correct. Indices
// are ulong: sizes may exceed 2^32 elements.
ulong flat_id(void) {
    return get_global_id(0) + get_global_size(0) * (get_global_id(1) + get_global_size(1) * (ulong)get_global_id(2));
}

ulong flat_size(void) { return (ulong)get_global_size(0) * get_global_size(1) * get_global_size(2); }

#define FOR_EACH(i, n) for (ulong i = flat_id(), stride_ = flat_size(); i < (n); i += stride_)

// Stable logistic: exp() only of a non-positive argument, so it never overflows.
acc sigmoid1(acc x) {
    // One exp of -|x| (never overflows) and a select: no divergent branch.
    const acc e = exp(-fabs(x));
    const acc r = (acc)1 / ((acc)1 + e);
    return x >= (acc)0 ? r : e * r;
}

// max(x, 0) that keeps NaN (as PyTorch): NaN <= 0 is false, so NaN passes.
acc relu1(acc x) { return x <= (acc)0 ? (acc)0 : x; }

// Activation codes of `dense`: accel::Activation's, given as build options
// (ACCEL_ACTIVATION_*, accel/activation_codes.h).
acc activate(acc v, int act) {
    if (act == ACCEL_ACTIVATION_SIGMOID) return sigmoid1(v);
    if (act == ACCEL_ACTIVATION_RELU) return relu1(v);
    return v;
}
