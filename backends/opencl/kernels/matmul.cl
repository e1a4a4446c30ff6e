// Register-blocked GEMM with a fused epilogue, serving both matmul and dense.
//
//   C[M,N] = act(op(A)·op(B) + bias)   row-major (element [r][c] at r·cols + c);
//   op(A) is A[M,K], or A[K,M] read transposed when trans_a;
//   op(B) is B[K,N], or B[N,K] read transposed when trans_b.
// matmul: bias = NULL, has_bias = 0, act = 0. dense: A = x[batch,in], B =
// W[out,in] with trans_b = 1 (nn.Linear), M = batch, N = out, K = in.
//
// Compile-time parameters (build options, chosen per device by the host):
//   MM_BX, MM_BY  work-group size (x walks columns of C, y rows)
//   MM_WM         rows of C per work-item
//   MM_VW         width of the accumulator vectors (1 = scalar: the compiler
//                 may then vectorize across work-items instead)
//   MM_WN         accumulator vectors per row of a work-item
//   MM_TK         depth of the K slice staged in local memory
//   MM_KU         unroll factor of the loop over one slice (default 1)
//   MM_FMA        1: accumulate with fma() (the device fuses in hardware;
//                 mad() may compile to a multiply and an add), 0: mad()
// A work-group computes a TM × TN tile of C, TM = MM_BY·MM_WM and
// TN = MM_BX·MM_WN·MM_VW. Work-item (tx, ty) owns the rows ty·MM_WM + p
// (p < MM_WM) and, in each row, the vectors of MM_VW columns starting at
// (q·MM_BX + tx)·MM_VW (q < MM_WN): with MM_VW = 1 neighbouring work-items own
// neighbouring columns, with MM_VW > 1 each vector is contiguous.
//
// Element types (common.cl): A, B, C and bias are of the storage type
// `real`, read with LOAD(p, i) / LOAD4(p, i) and written with STORE(p, i, v);
// local memory, accumulators and the epilogue are of the compute type `acc`
// (float for f32, f16 and bf16; double for f64), and each element of C is
// rounded once, when stored.

#ifndef MM_KU
#define MM_KU 1
#endif

#if MM_FMA
#define MM_MAC(a, b, c) fma(a, b, c)
#else
#define MM_MAC(a, b, c) mad(a, b, c)
#endif

#define MM_CAT_(a, b) a##b
#define MM_CAT(a, b) MM_CAT_(a, b)

#define TM (MM_BY * MM_WM)
#define TN (MM_BX * MM_WN * MM_VW)
#define TK MM_TK
#define NT (MM_BX * MM_BY)

// accv: MM_VW accumulators as one value; LOADV/STOREV move one accv from/to
// consecutive acc elements at p[i] (i need not be a multiple of MM_VW: vloadn
// needs only element alignment).
#if MM_VW == 1
#define accv acc
#define LOADV(p, i) ((p)[i])
#define STOREV(v, p) ((p)[0] = (v))
#else
#define accv MM_CAT(acc, MM_VW)
#define LOADV(p, i) MM_CAT(vload, MM_VW)(0, (p) + (i))
#define STOREV(v, p) MM_CAT(vstore, MM_VW)((v), 0, (p))
#endif

// Stages the R × S block src[r0 + i][c0 + j] (i < R, j < S) of the row-major
// matrix src[rows, cols] into local memory: dst[i·S + j], or dst[j·R + i]
// when transpose. Elements outside the matrix are stored as 0, so partial
// tiles and K slices add nothing. The NT work-items of the group share the
// copy (lid = flat local id). When the block lies inside the matrix and its
// rows start at a multiple of 4 elements (cols and c0 multiples of 4), each
// work-item moves 4 consecutive elements at a time with LOAD4, a vector load
// (vload4, vload_half4) that needs only element alignment.
void gemm_stage(__local acc* dst, __global const real* src, ulong rows, ulong cols, ulong r0, ulong c0, const int R,
                const int S, const int transpose, const int lid) {
    if ((S % 4) == 0 && r0 + R <= rows && c0 + S <= cols && (cols % 4) == 0 && (c0 % 4) == 0) {
        for (int e = lid; e < R * S / 4; e += NT) {
            const int i = e / (S / 4), j = (e % (S / 4)) * 4;
            const MM_CAT(acc, 4) v = LOAD4(src, (r0 + i) * cols + c0 + j);
            if (transpose) {
                dst[(j + 0) * R + i] = v.s0;
                dst[(j + 1) * R + i] = v.s1;
                dst[(j + 2) * R + i] = v.s2;
                dst[(j + 3) * R + i] = v.s3;
            } else {
                vstore4(v, 0, dst + i * S + j);
            }
        }
    } else {
        for (int e = lid; e < R * S; e += NT) {
            const int i = e / S, j = e % S;
            const ulong r = r0 + i, c = c0 + j;
            const acc v = (r < rows && c < cols) ? LOAD(src, r * cols + c) : (acc)0;
            dst[transpose ? j * R + i : i * S + j] = v;
        }
    }
}

// Every GEMM kernel of this file: the same arguments, which the host sets in
// this order (OpenclDevice::k_matmul, k_dense), and the same work-group size.
#define MM_GEMM_KERNEL(name)                                                                                 \
    __kernel __attribute__((reqd_work_group_size(MM_BX, MM_BY, 1))) void name(                               \
        __global const real* A, __global const real* B, __global real* C, __global const real* bias,         \
        int has_bias, int act, ulong M, ulong N, ulong K, int trans_a, int trans_b)

// The column of C that is column o (< MM_WN·MM_VW) of work-item tx in the
// work-group tile starting at column col0: lane o % MM_VW of its vector o / MM_VW.
ulong mm_column(ulong col0, int tx, int o) { return col0 + (ulong)((o / MM_VW) * MM_BX + tx) * MM_VW + o % MM_VW; }

// GLOAD_N(n, p, i): the n elements p[i..] of a __global real array as an
// acc vector (n a vector size: 2, 4, 8, 16); element alignment is enough.
#if defined(ACCEL_REAL_F16)
#define GLOAD_N(n, p, i) MM_CAT(vload_half, n)(0, (p) + (i))
#elif defined(ACCEL_REAL_BF16)
#define GLOAD_N(n, p, i) MM_CAT(as_float, n)(MM_CAT(convert_uint, n)(MM_CAT(vload, n)(0, (p) + (i))) << 16)
#else
#define GLOAD_N(n, p, i) MM_CAT(vload, n)(0, (p) + (i))
#endif
#define GLOADV(p, i) GLOAD_N(MM_VW, p, i)

#if MM_VW > 1 && !defined(ACCEL_REAL_F64)
// activate() on the MM_VW lanes of an accumulator vector of floats.
#define accuv MM_CAT(uint, MM_VW)
DEFINE_SIGMOID_F32(exp_nonpositive_mm, sigmoid_mm, accv, accuv, MM_CAT(as_uint, MM_VW), MM_CAT(as_float, MM_VW))
DEFINE_ACTIVATE_F32(activate_mm, accv, sigmoid_mm)
// MM_VW elements of C from an accumulator vector (f32, f16: vector stores; bf16 lane by lane).
#if defined(ACCEL_REAL_F16)
#define STOREV_C(v, p, i) MM_CAT(MM_CAT(vstore_half, MM_VW), _rte)((v), 0, (p) + (i))
#elif !defined(ACCEL_REAL_BF16)
#define STOREV_C(v, p, i) MM_CAT(vstore, MM_VW)((v), 0, (p) + (i))
#endif
#endif

// The epilogue of one accumulator vector: C[r][c0 + l] = act(v[l] + bias[c0 +
// l]) for the lanes l with c0 + l < N. A vector whose lanes all lie inside C
// is biased, activated and stored as one where the type allows (a scalar
// epilogue per element costs more than a short K's products); the others
// element by element. Both give the same bits.
void gemm_store(__global real* C, __global const real* bias, int has_bias, int act, ulong N, ulong r, ulong c0,
                accv cv) {
#if defined(STOREV_C)
    if (c0 + MM_VW <= N) {
        STOREV_C(activate_mm(cv + (has_bias ? GLOADV(bias, c0) : (accv)0), act), C, r * N + c0);
        return;
    }
#endif
    acc v[MM_VW];
    STOREV(cv, v);
    for (int l = 0; l < MM_VW; ++l) {
        const ulong cc = c0 + l;
        if (cc < N) STORE(C, r * N + cc, activate(v[l] + (has_bias ? LOAD(bias, cc) : (acc)0), act));
    }
}

// One work-group per TM × TN tile of C; groups past the output return at once
// (a caller may launch a larger grid). Per K slice: stage op(A)'s TM × TK
// block as As[k][i] and op(B)'s TK × TN block as Bs[k][j] (transposes are
// undone here, so the inner loop is the same for every trans_a/trans_b), then
// each work-item accumulates its MM_WM × MM_WN accv register tile: per k, one
// vector of B per q, one broadcast of A per p. K == 0 leaves the accumulators
// at 0, so C = act(bias) (or 0 for matmul).
MM_GEMM_KERNEL(gemm) {
    __local acc As[TK * TM];  // As[k·TM + i] = op(A)[row0 + i][k0 + k]
    __local acc Bs[TK * TN];  // Bs[k·TN + j] = op(B)[k0 + k][col0 + j]
    const int tx = get_local_id(0), ty = get_local_id(1), lid = ty * MM_BX + tx;
    const ulong row0 = (ulong)get_group_id(1) * TM, col0 = (ulong)get_group_id(0) * TN;
    if (row0 >= M || col0 >= N) return;  // the whole group: no barrier is skipped by part of it

    accv c[MM_WM][MM_WN];
#pragma unroll
    for (int p = 0; p < MM_WM; ++p)
#pragma unroll
        for (int q = 0; q < MM_WN; ++q) c[p][q] = (accv)0;

    for (ulong k0 = 0; k0 < K; k0 += TK) {
        if (trans_a)
            gemm_stage(As, A, K, M, k0, row0, TK, TM, 0, lid);
        else
            gemm_stage(As, A, M, K, row0, k0, TM, TK, 1, lid);
        if (trans_b)
            gemm_stage(Bs, B, N, K, col0, k0, TN, TK, 1, lid);
        else
            gemm_stage(Bs, B, K, N, k0, col0, TK, TN, 0, lid);
        barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll MM_KU
        for (int k = 0; k < TK; ++k) {
#if MM_KBREAK
            if (k0 + k >= K) break;  // K tail; a second loop exit also keeps the loop one region per work-item
#endif
            accv b[MM_WN];
#pragma unroll
            for (int q = 0; q < MM_WN; ++q) b[q] = LOADV(Bs, k * TN + (q * MM_BX + tx) * MM_VW);
#pragma unroll
            for (int p = 0; p < MM_WM; ++p) {
                const accv a = (accv)As[k * TM + ty * MM_WM + p];
#pragma unroll
                for (int q = 0; q < MM_WN; ++q) c[p][q] = MM_MAC(a, b[q], c[p][q]);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);  // the next slice overwrites As and Bs
    }

    for (int p = 0; p < MM_WM; ++p) {
        const ulong r = row0 + ty * MM_WM + p;
        if (r >= M) break;
        for (int q = 0; q < MM_WN; ++q)
            gemm_store(C, bias, has_bias, act, N, r, mm_column(col0, tx, q * MM_VW), c[p][q]);
    }
}

// The same C = act(op(A)·op(B) + bias) with the same work-group tile and the
// same elements per work-item as gemm (so one launch geometry serves both),
// but without local memory: each work-item reads its rows of op(A) and its
// columns of op(B) straight from global memory, per k one scalar of A per
// row and one accv of B per vector of columns. No barrier, so a work-item
// with nothing to compute returns at once. The host takes it where staging
// K slices costs more than it saves: a K shorter than one slice (K = 1, the
// outer product of a backward pass, pads a TK slice with zeros), and on CPU
// devices, where local memory is ordinary cache and the gemm's staging and
// barriers are the cost (MLP shapes: M or N of 1, K of 30).
MM_GEMM_KERNEL(gemm_direct) {
    const int tx = get_local_id(0), ty = get_local_id(1);
    const ulong r0 = (ulong)get_group_id(1) * TM + ty * MM_WM, col0 = (ulong)get_group_id(0) * TN;
    if (r0 >= M) return;
    const int rows = (int)min((ulong)MM_WM, M - r0);
    // op(A)[r][k] is A[r·sap + k·sak], op(B)[k][c] is B[k·sbk + c·sbc].
    const ulong sap = trans_a ? 1 : K, sak = trans_a ? M : 1;
    const ulong sbk = trans_b ? 1 : N, sbc = trans_b ? K : 1;
    ulong cq[MM_WN];  // first column of each vector
    int full[MM_WN];  // whether all MM_VW columns of vector q lie inside C and are contiguous in B
#pragma unroll
    for (int q = 0; q < MM_WN; ++q) {
        cq[q] = mm_column(col0, tx, q * MM_VW);
        full[q] = cq[q] + MM_VW <= N && sbc == 1;
    }

    accv c[MM_WM][MM_WN];
#pragma unroll
    for (int p = 0; p < MM_WM; ++p)
#pragma unroll
        for (int q = 0; q < MM_WN; ++q) c[p][q] = (accv)0;

    for (ulong k = 0; k < K; ++k) {
        accv b[MM_WN];
#pragma unroll
        for (int q = 0; q < MM_WN; ++q) {
            const ulong at = k * sbk + cq[q] * sbc;
#if MM_VW == 1
            b[q] = cq[q] < N ? LOAD(B, at) : (acc)0;
#else
            if (full[q]) {
                b[q] = GLOADV(B, at);
            } else {
                acc e[MM_VW];
#pragma unroll
                for (int l = 0; l < MM_VW; ++l) e[l] = cq[q] + l < N ? LOAD(B, at + l * sbc) : (acc)0;
                b[q] = LOADV(e, 0);
            }
#endif
        }
#pragma unroll
        for (int p = 0; p < MM_WM; ++p) {
            const accv a = (accv)(p < rows ? LOAD(A, r0 * sap + p * sap + k * sak) : (acc)0);
#pragma unroll
            for (int q = 0; q < MM_WN; ++q) c[p][q] = MM_MAC(a, b[q], c[p][q]);
        }
    }

    for (int p = 0; p < rows; ++p)
        for (int q = 0; q < MM_WN; ++q) gemm_store(C, bias, has_bias, act, N, r0 + p, cq[q], c[p][q]);
}

// gemm_dot and gemm_rows take a work-item's columns 4 at a time.
#define MM_COLUMNS_BY_4 ((MM_WN * MM_VW) % 4 == 0)

#if MM_VW > 1 && MM_COLUMNS_BY_4
// The sum of the MM_VW lanes of v.
acc hsum(accv v) {
#if MM_VW == 16
    const MM_CAT(acc, 8) h8 = v.lo + v.hi;
#elif MM_VW == 8
    const MM_CAT(acc, 8) h8 = v;
#endif
#if MM_VW >= 8
    const MM_CAT(acc, 4) h4 = h8.lo + h8.hi;
#elif MM_VW == 4
    const MM_CAT(acc, 4) h4 = v;
#endif
#if MM_VW >= 4
    const MM_CAT(acc, 2) h2 = h4.lo + h4.hi;
#else
    const MM_CAT(acc, 2) h2 = v;
#endif
    return h2.x + h2.y;
}

#if MM_VW % 4 == 0
#define acc4v MM_CAT(acc, 4)
#define acc8v MM_CAT(acc, 8)
// (Σ lanes of s0, Σ s1, Σ s2, Σ s3): halves added until 4 lanes are left,
// then pairs of lanes, two vectors at a time.
acc4v hsum4(accv s0, accv s1, accv s2, accv s3) {
#if MM_VW == 16
#define MM_FOLD(v) ((v).lo.lo + (v).lo.hi + (v).hi.lo + (v).hi.hi)
#elif MM_VW == 8
#define MM_FOLD(v) ((v).lo + (v).hi)
#else
#define MM_FOLD(v) (v)
#endif
    const acc8v a = (acc8v)(MM_FOLD(s0), MM_FOLD(s1));
    const acc8v b = (acc8v)(MM_FOLD(s2), MM_FOLD(s3));
#undef MM_FOLD
    const acc8v e = (acc8v)(a.even + a.odd, b.even + b.odd);
    return e.even + e.odd;
}

// activate() on 4 lanes: relu as a select, the others lane by lane.
acc4v activate4(acc4v v, int act) {
    if (act == ACCEL_ACTIVATION_RELU) return select(v, (acc4v)0, v <= (acc4v)0);
    if (act == ACCEL_ACTIVATION_NONE) return v;
    return (acc4v)(activate(v.x, act), activate(v.y, act), activate(v.z, act), activate(v.w, act));
}
#endif

// gemm_direct for op(B) = Bᵀ with A not transposed (dense: y = x·Wᵀ), where
// both operands run along K in memory: each of a work-item's MM_WM × MM_WN·MM_VW
// outputs is a dot product of a row of A and a row of B, taken MM_VW lanes
// at a time with vector loads (gemm_direct would gather B's columns element
// by element), 4 rows × 4 columns of accumulators at once, K's last
// K % MM_VW elements as one zero-padded vector, the lanes summed at the end. Same tile and
// outputs per work-item as gemm. Only on CPU devices (see the host).
MM_GEMM_KERNEL(gemm_dot) {
    (void)trans_a;
    (void)trans_b;  // always 0 and 1
    const int tx = get_local_id(0), ty = get_local_id(1);
    const ulong r0 = (ulong)get_group_id(1) * TM + ty * MM_WM, col0 = (ulong)get_group_id(0) * TN;
    if (r0 >= M) return;
    const ulong kv = K / MM_VW * MM_VW;  // the part of K taken in vectors
    for (int rp = 0; rp < MM_WM; rp += 4) {
        if (r0 + rp >= M) break;
        ulong ra[4];  // the 4 rows (repeating the last one past M, whose results are not stored)
#pragma unroll
        for (int i = 0; i < 4; ++i) ra[i] = min(r0 + rp + i, M - 1);
        for (int cp = 0; cp < MM_WN * MM_VW; cp += 4) {
            ulong cb[4];  // the 4 columns (likewise clamped to N - 1)
            int any = 0;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int o = cp + j;  // the o-th column of the work-item
                const ulong c = mm_column(col0, tx, o);
                any |= c < N;
                cb[j] = min(c, N - 1);
            }
            if (!any) continue;
            accv s[4][4];
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) s[i][j] = (accv)0;
            for (ulong k = 0; k < kv; k += MM_VW) {
                accv a[4], b[4];
#pragma unroll
                for (int i = 0; i < 4; ++i) a[i] = GLOADV(A, ra[i] * K + k);
#pragma unroll
                for (int j = 0; j < 4; ++j) b[j] = GLOADV(B, cb[j] * K + k);
#pragma unroll
                for (int i = 0; i < 4; ++i)
#pragma unroll
                    for (int j = 0; j < 4; ++j) s[i][j] = MM_MAC(a[i], b[j], s[i][j]);
            }
            if (kv < K) {  // K's last K % MM_VW elements, zero-padded to one vector
                accv a[4], b[4];
                acc e[MM_VW];
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                    for (int l = 0; l < MM_VW; ++l) e[l] = kv + l < K ? LOAD(A, ra[i] * K + kv + l) : (acc)0;
                    a[i] = LOADV(e, 0);
                }
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    for (int l = 0; l < MM_VW; ++l) e[l] = kv + l < K ? LOAD(B, cb[j] * K + kv + l) : (acc)0;
                    b[j] = LOADV(e, 0);
                }
#pragma unroll
                for (int i = 0; i < 4; ++i)
#pragma unroll
                    for (int j = 0; j < 4; ++j) s[i][j] = MM_MAC(a[i], b[j], s[i][j]);
            }
#if MM_VW % 4 == 0
            // The 4 columns are adjacent (one vector's lanes): the lanes summed
            // and the epilogue run 4 columns at a time.
            if (cb[3] == cb[0] + 3) {
                const acc4v b4 = has_bias ? GLOAD_N(4, bias, cb[0]) : (acc4v)0;
                for (int i = 0; i < 4; ++i) {
                    const ulong r = r0 + rp + i;
                    if (r >= M || i + rp >= MM_WM) break;
                    acc v[4];
                    vstore4(activate4(hsum4(s[i][0], s[i][1], s[i][2], s[i][3]) + b4, act), 0, v);
                    for (int j = 0; j < 4; ++j) STORE(C, r * N + cb[0] + j, v[j]);
                }
                continue;
            }
#endif
            for (int i = 0; i < 4; ++i) {
                const ulong r = r0 + rp + i;
                if (r >= M || i + rp >= MM_WM) break;
                for (int j = 0; j < 4; ++j) {
                    const int o = cp + j;
                    const ulong c = mm_column(col0, tx, o);
                    if (c >= N) continue;
                    STORE(C, r * N + c, activate(hsum(s[i][j]) + (has_bias ? LOAD(bias, c) : (acc)0), act));
                }
            }
        }
    }
}
#endif

#if (MM_WM == 2 || MM_WM == 4 || MM_WM == 8 || MM_WM == 16) && MM_COLUMNS_BY_4
#define accm MM_CAT(acc, MM_WM)
// gemm_direct for op(A) = Aᵀ with B not transposed (a weight gradient,
// dW = dzᵀ·x): A[K,M] runs along the rows of C, so a work-item's MM_WM rows
// are one vector of A per k, times one element of B per column (a broadcast
// load), each of its MM_WN·MM_VW columns an accumulator vector of its rows
// (built where MM_WN·MM_VW is a multiple of 4).
// Same tile and outputs per work-item as gemm. Only on CPU devices (see the
// host), in programs whose MM_WM is a vector size.
MM_GEMM_KERNEL(gemm_rows) {
    (void)trans_a;
    (void)trans_b;  // always 1 and 0
    const int tx = get_local_id(0), ty = get_local_id(1);
    const ulong r0 = (ulong)get_group_id(1) * TM + ty * MM_WM, col0 = (ulong)get_group_id(0) * TN;
    if (r0 >= M || col0 >= N) return;
    const int rows = (int)min((ulong)MM_WM, M - r0);
    // 4 columns at a time (4 accumulator vectors: they and A's vector stay
    // in registers), the work-item's vectors of columns one after another.
    for (int o = 0; o < MM_WN * MM_VW; o += 4) {
        ulong cb[4];
        int inside = 0;  // how many of the 4 columns lie inside C
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int oj = o + j;  // column oj of the work-item
            cb[j] = mm_column(col0, tx, oj);
            inside += cb[j] < N;
        }
        if (!inside) continue;
        accm c[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) c[j] = (accm)0;
        for (ulong k = 0; k < K; ++k) {
            accm a;
            if (rows == MM_WM) {
                a = GLOAD_N(MM_WM, A, k * M + r0);
            } else {
                acc e[MM_WM];
                for (int p = 0; p < MM_WM; ++p) e[p] = p < rows ? LOAD(A, k * M + r0 + p) : (acc)0;
                a = MM_CAT(vload, MM_WM)(0, e);
            }
            if (inside == 4) {
#pragma unroll
                for (int j = 0; j < 4; ++j) c[j] = MM_MAC(a, (accm)LOAD(B, k * N + cb[j]), c[j]);
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j) c[j] = MM_MAC(a, (accm)(cb[j] < N ? LOAD(B, k * N + cb[j]) : (acc)0), c[j]);
            }
        }
        for (int j = 0; j < 4; ++j) {
            if (cb[j] >= N) continue;
            acc v[MM_WM];
            MM_CAT(vstore, MM_WM)(c[j], 0, v);
            const acc b = has_bias ? LOAD(bias, cb[j]) : (acc)0;
            for (int p = 0; p < rows; ++p) STORE(C, (r0 + p) * N + cb[j], activate(v[p] + b, act));
        }
    }
}
#endif

// dst [cols, rows] = src [rows, cols]ᵀ (row-major): dst[c·rows + r] =
// src[r·cols + c]. The host uses it on CPU devices to hand gemm_direct
// operands it reads fastest (see OpenclDevice::k_matmul). Each work-item
// takes runs of `run` consecutive elements (a grid-stride loop over runs) in
// the order whose fast index runs over the shorter side: dst's (r fast) when
// rows <= cols, so the few rows read stay cached, else src's (c fast), so the
// few rows written do. Within a run the indices advance by a carry: a 64-bit
// division per element cost more than the copy.
__kernel void transpose(__global const real* src, __global real* dst, ulong rows, ulong cols, ulong run) {
    const ulong n = rows * cols;
    const int r_fast = rows <= cols;
    const ulong fast_extent = r_fast ? rows : cols;
    for (ulong i0 = flat_id() * run; i0 < n; i0 += flat_size() * run) {
        ulong slow = i0 / fast_extent, fast = i0 % fast_extent;
        const ulong end = min(i0 + run, n);
        for (ulong i = i0; i < end; ++i) {
            const ulong r = r_fast ? fast : slow, c = r_fast ? slow : fast;
            STORE(dst, c * rows + r, LOAD(src, r * cols + c));
            if (++fast == fast_extent) {
                fast = 0;
                ++slow;
            }
        }
    }
}
