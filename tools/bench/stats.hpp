// accel-bench: the rank statistics that decide when a row has enough runs
// (a confidence interval of its median) and whether two runs of a row
// differ (the Mann–Whitney U test and the Hodges–Lehmann interval of the
// shift). Pure functions of their arguments, no accel dependency; every
// function is thread-safe and throws nothing beyond std::bad_alloc unless
// it says so.
#pragma once

#include <cstddef>
#include <vector>

namespace bench::stats {

/// The median of `v` (the mean of the middle two for an even count); 0 for
/// an empty `v`.
double median(std::vector<double> v);

/// A two-sided interval [lo, hi]; `ok` is false where the samples are too
/// few for the confidence asked (lo and hi are then the samples' min and max,
/// or 0 for no samples).
struct Interval {
    double lo = 0, hi = 0;
    bool ok = false;
};

/// The distribution-free confidence interval of the median of the
/// population `v` was drawn from: [x_(l), x_(n+1-l)] of the sorted samples,
/// l the largest rank with P(Binomial(n, 1/2) < l) <= (1 - confidence) / 2,
/// which covers the median with probability >= `confidence` for any
/// continuous distribution (Conover, Practical Nonparametric Statistics,
/// 3rd ed. 1999, section 3.2; Thompson 1936). Needs n >= 6 at 95 %.
/// confidence in (0, 1).
Interval median_ci(std::vector<double> v, double confidence = 0.95);

/// The two-sided Mann–Whitney U test of "x and y come from one
/// distribution" (Mann & Whitney 1947; Wilcoxon 1945 rank-sum form).
struct UTest {
    double u = 0;        ///< pairs (x_i, y_j) with x_i < y_j, ties counted 1/2 (0 .. n_x·n_y)
    double p = 1;        ///< two-sided p-value
    bool exact = false;  ///< p from the exact null distribution (else the normal approximation)
};

/// The largest sample sizes (each) for which mann_whitney() uses the exact
/// null distribution of U when there are no ties.
constexpr std::size_t kExactLimit = 50;

/// Mann–Whitney U on samples x and y. Without ties and with both sizes <=
/// kExactLimit, p is exact: 2·min(P(U <= u), P(U >= u)) under the null
/// distribution of U, counted by the recurrence of Mann & Whitney (1947,
/// eq. 1). Otherwise p is from the normal approximation with the tie
/// correction of the variance and a continuity correction of 1/2
/// (Lehmann, Nonparametrics, 1975, eq. 1.58; what SciPy's
/// mannwhitneyu(method="asymptotic") computes). p is 1 when either sample
/// is empty or every value is equal.
UTest mann_whitney(const std::vector<double>& x, const std::vector<double>& y);

/// The smallest two-sided p-value the U test can give on samples of sizes
/// m and n whatever their values: 2 / C(m+n, m), at most 1. When it exceeds
/// the test's alpha no difference can be called ("no verdict").
double smallest_p(std::size_t m, std::size_t n);

/// The Hodges–Lehmann estimate of the shift d in "y is distributed as x + d"
/// (Hodges & Lehmann 1963): the median of the n_x·n_y differences y_j - x_i,
/// with the confidence interval [D_(c), D_(n_x·n_y+1-c)] of the sorted
/// differences, c the largest count with P(U < c) <= (1 - confidence) / 2
/// under the null distribution of U (exact up to kExactLimit, else the
/// normal approximation; Lehmann 1975, section 2.6; Bauer 1972). Applied to
/// the logs of times it estimates log(new/base). `interval.ok` is false
/// where the samples are too few for the confidence (the interval is then
/// the smallest and largest difference). confidence in (0, 1).
struct Shift {
    double estimate = 0;
    Interval interval;
};
Shift hodges_lehmann(const std::vector<double>& x, const std::vector<double>& y, double confidence = 0.95);

}  // namespace bench::stats
