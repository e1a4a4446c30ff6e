// Local-memory tiled GEMM with a fused epilogue, serving both matmul and dense.
//
//   C[M,N] = act(op(A)·op(B) + bias)   row-major; op(A) is A[M,K], or A[K,M]
//   transposed when trans_a; op(B) is B[K,N], or B[N,K] transposed when trans_b.
//
// A work-group of MM_BLOCK × MM_BLOCK work-items computes a TS × TS tile of C
// (TS = MM_BLOCK·MM_WPT); each work-item keeps an MM_WPT × MM_WPT register
// block of accumulators for rows ty + a·MM_BLOCK and columns tx + b·MM_BLOCK,
// so that neighbouring work-items touch neighbouring columns. K is walked in
// slices of TK = MM_BLOCK: each slice of op(A) and op(B) is staged in local
// memory once and reused TS times. Out-of-range elements load as 0, so any M,
// N, K (K == 0 included: C = act(bias), or zeros) is handled, and work-groups
// beyond the output only take part in the barriers.
// MM_BLOCK and MM_WPT are set by the host when the program is built.
// matmul: bias = NULL, has_bias = 0, act = 0. dense: A = x, B = W with
// trans_b = 1 (W[out,in] as nn.Linear), M = batch, N = out, K = in.

#define TS (MM_BLOCK * MM_WPT)
#define TK MM_BLOCK

// Loads element e (< TK·TS) of the current slice into local memory, choosing
// the mapping of e so that consecutive work-items read consecutive addresses.
void load_a(__local float (*As)[TS], __global const float* A, ulong M, ulong K, int trans_a, ulong row0, ulong k0,
            int e) {
    const int kk = trans_a ? e / TS : e % TK;
    const int ii = trans_a ? e % TS : e / TK;
    const ulong r = row0 + ii, k = k0 + kk;
    As[kk][ii] = (r < M && k < K) ? (trans_a ? A[k * M + r] : A[r * K + k]) : 0.0f;
}

void load_b(__local float (*Bs)[TS], __global const float* B, ulong N, ulong K, int trans_b, ulong col0, ulong k0,
            int e) {
    const int kk = trans_b ? e % TK : e / TS;
    const int jj = trans_b ? e / TK : e % TS;
    const ulong c = col0 + jj, k = k0 + kk;
    Bs[kk][jj] = (c < N && k < K) ? (trans_b ? B[c * K + k] : B[k * N + c]) : 0.0f;
}

__kernel __attribute__((reqd_work_group_size(MM_BLOCK, MM_BLOCK, 1))) void gemm_tiled(
    __global const float* A, __global const float* B, __global float* C, __global const float* bias, int has_bias,
    int act, ulong M, ulong N, ulong K, int trans_a, int trans_b) {
    __local float As[TK][TS];  // As[k][i] = op(A)[row0 + i][k0 + k]
    __local float Bs[TK][TS];  // Bs[k][j] = op(B)[k0 + k][col0 + j]
    const int tx = get_local_id(0), ty = get_local_id(1);
    const int lid = ty * MM_BLOCK + tx;
    const ulong row0 = (ulong)get_group_id(1) * TS, col0 = (ulong)get_group_id(0) * TS;

    float acc[MM_WPT][MM_WPT];
    for (int a = 0; a < MM_WPT; ++a)
        for (int b = 0; b < MM_WPT; ++b) acc[a][b] = 0.0f;

    for (ulong k0 = 0; k0 < K; k0 += TK) {
        // TK·TS elements per operand, MM_BLOCK² work-items: MM_WPT loads each.
        for (int l = 0; l < MM_WPT; ++l) {
            const int e = l * MM_BLOCK * MM_BLOCK + lid;
            load_a(As, A, M, K, trans_a, row0, k0, e);
            load_b(Bs, B, N, K, trans_b, col0, k0, e);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TK; ++k) {
            float bv[MM_WPT];
            for (int b = 0; b < MM_WPT; ++b) bv[b] = Bs[k][tx + b * MM_BLOCK];
            for (int a = 0; a < MM_WPT; ++a) {
                const float av = As[k][ty + a * MM_BLOCK];
                for (int b = 0; b < MM_WPT; ++b) acc[a][b] += av * bv[b];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    for (int a = 0; a < MM_WPT; ++a) {
        const ulong r = row0 + ty + a * MM_BLOCK;
        if (r >= M) break;
        for (int b = 0; b < MM_WPT; ++b) {
            const ulong c = col0 + tx + b * MM_BLOCK;
            if (c < N) C[r * N + c] = activate(acc[a][b] + (has_bias ? bias[c] : 0.0f), act);
        }
    }
}
