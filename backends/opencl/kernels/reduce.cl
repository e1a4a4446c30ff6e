// Reductions.

// y[c] = sum over r of x[r, c] for x[rows, cols] (row-major): one work-item
// per column (grid-stride over columns), summing in row order so that
// neighbouring work-items read neighbouring addresses. The sum runs in acc
// and is rounded once when stored.
__kernel void column_sum(__global const real* x, __global real* y, ulong rows, ulong cols) {
    FOR_EACH(c, cols) {
        acc s = (acc)0;
        for (ulong r = 0; r < rows; ++r) s += LOAD(x, r * cols + c);
        STORE(y, c, s);
    }
}
