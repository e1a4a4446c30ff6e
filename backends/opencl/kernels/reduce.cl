// Reductions.

// y[c] = sum over r of x[r, c] for x[rows, cols] (row-major): one work-item
// per column (grid-stride over columns), summing in row order so that
// neighbouring work-items read neighbouring addresses.
__kernel void column_sum(__global const float* x, __global float* y, ulong rows, ulong cols) {
    FOR_EACH(c, cols) {
        float s = 0.0f;
        for (ulong r = 0; r < rows; ++r) s += x[r * cols + c];
        y[c] = s;
    }
}
