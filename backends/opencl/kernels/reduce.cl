// Reductions.

// y[c] = sum over r of x[r, c] for x[rows, cols] (row-major): one work-item
// per column (grid-stride over columns), summing in row order so that
// neighbouring work-items read neighbouring addresses. The sum runs in acc
// and is rounded once when stored.
// In the float32 program (EW_VW > 1), work-item i sums the EW_VW columns
// starting at i·EW_VW with vector loads, and the last cols % EW_VW columns
// are summed one per work-item.
__kernel void column_sum(__global const real* x, __global real* y, ulong rows, ulong cols) {
#if EW_VW > 1
    FOR_EACH_VECTOR(i, cols) {
        floatv s = (floatv)0.0f;
        for (ulong r = 0; r < rows; ++r) s += EW_LOAD(x + r * cols, i);
        EW_STORE(s, y, i);
    }
    FOR_EACH_TAIL(c, cols) {
        float s = 0.0f;
        for (ulong r = 0; r < rows; ++r) s += x[r * cols + c];
        y[c] = s;
    }
#else
    FOR_EACH(c, cols) {
        acc s = (acc)0;
        for (ulong r = 0; r < rows; ++r) s += LOAD(x, r * cols + c);
        STORE(y, c, s);
    }
#endif
}
