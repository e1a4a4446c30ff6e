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

// dot (accel's DotArgs): a work-group of at most DOT_MAX_ITEMS work-items
// (the host refuses larger ones). Work-item t of group j sums its grid-stride
// elements in order into one acc; the group's values meet in a fixed tree
// (pairs 1 apart, then 2, 4, ...) into partials[j]; dot_total, one group,
// adds the partials the same way and stores y[0] rounded once.
#define DOT_MAX_ITEMS 1024

uint local_linear_id(void) {
    return get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2));
}

uint local_items(void) { return get_local_size(0) * get_local_size(1) * get_local_size(2); }

void local_tree_sum(__local acc* sum, uint t, uint items) {
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = 1; s < items; s *= 2) {
        if (t % (2 * s) == 0 && t + s < items) sum[t] += sum[t + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

__kernel void dot_blocks(__global const real* a, __global const real* b, __global acc* partials, ulong n) {
    __local acc sum[DOT_MAX_ITEMS];
    const uint t = local_linear_id();
    acc s = (acc)0;
    FOR_EACH(i, n) s += LOAD(a, i) * LOAD(b, i);
    sum[t] = s;
    local_tree_sum(sum, t, local_items());
    if (t == 0)
        partials[get_group_id(0) + get_num_groups(0) * (get_group_id(1) + get_num_groups(1) * (ulong)get_group_id(2))] =
            sum[0];
}

__kernel void dot_total(__global const acc* partials, ulong blocks, __global real* y) {
    __local acc sum[DOT_MAX_ITEMS];
    const uint t = local_linear_id(), items = local_items();
    acc s = (acc)0;
    for (ulong j = t; j < blocks; j += items) s += partials[j];
    sum[t] = s;
    local_tree_sum(sum, t, items);
    if (t == 0) STORE(y, 0, sum[0]);
}
