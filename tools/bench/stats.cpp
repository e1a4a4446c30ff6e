#include "stats.hpp"

#include <algorithm>
#include <cmath>

namespace bench::stats {
namespace {

// P(U = u), u = 0 .. m·n, of U = #{x_i < y_j} for samples of sizes m and n
// from one continuous distribution. The larger of the m + n values is an x
// with probability m/(m+n) (it adds no pair) or a y (it adds m pairs), so
// P_{m,n}(u) = m/(m+n)·P_{m-1,n}(u) + n/(m+n)·P_{m,n-1}(u-m) (Mann & Whitney
// 1947), with P_{m,0} = P_{0,n} = [u = 0]. Probabilities, not counts, so
// nothing overflows.
std::vector<double> u_distribution(std::size_t m, std::size_t n) {
    std::vector<std::vector<double>> prev(n + 1, std::vector<double>{1.0}), cur(n + 1);
    for (std::size_t i = 1; i <= m; ++i) {
        cur[0] = {1.0};
        for (std::size_t j = 1; j <= n; ++j) {
            std::vector<double>& p = cur[j];
            p.assign(i * j + 1, 0.0);
            const double a = double(i) / double(i + j), b = double(j) / double(i + j);
            for (std::size_t u = 0; u < prev[j].size(); ++u) p[u] += a * prev[j][u];
            for (std::size_t u = 0; u < cur[j - 1].size(); ++u) p[u + i] += b * cur[j - 1][u];
        }
        std::swap(prev, cur);
    }
    return prev[n];
}

// The upper (1 - q) quantile of the standard normal distribution (q in (0, 1)), by bisection of erfc.
double normal_upper_quantile(double q) {
    double lo = -40, hi = 40;
    for (int i = 0; i < 200; ++i) {
        const double mid = 0.5 * (lo + hi);
        (0.5 * std::erfc(mid / std::sqrt(2.0)) > q ? lo : hi) = mid;
    }
    return 0.5 * (lo + hi);
}

double log_choose(double n, double k) { return std::lgamma(n + 1) - std::lgamma(k + 1) - std::lgamma(n - k + 1); }

// The count c of Shift: the largest c with P(U < c) <= tail under the null
// distribution of U for sizes m and n (0 when even P(U < 1) is larger).
std::size_t lower_critical_count(std::size_t m, std::size_t n, double tail) {
    if (m <= kExactLimit && n <= kExactLimit) {
        const std::vector<double> p = u_distribution(m, n);
        std::size_t c = 0;
        double below = 0;  // P(U < c)
        while (c < p.size() && below + p[c] <= tail * (1 + 1e-12)) below += p[c++];
        return c;
    }
    const double mn = double(m) * double(n);
    const double sigma = std::sqrt(mn * double(m + n + 1) / 12);
    const double c = std::floor(mn / 2 + 0.5 - normal_upper_quantile(tail) * sigma);
    return c < 0 ? 0 : std::size_t(c);
}

}  // namespace

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

Interval median_ci(std::vector<double> v, double confidence) {
    Interval r;
    if (v.empty()) return r;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    const double tail = (1 - confidence) / 2;
    // l: the largest rank with P(Binomial(n, 1/2) < l) <= tail.
    std::size_t l = 0;
    double below = 0;
    while (l < n / 2) {
        const double next = std::exp(log_choose(double(n), double(l)) - double(n) * std::log(2.0));
        if (below + next > tail * (1 + 1e-12)) break;
        below += next;
        ++l;
    }
    r.ok = l >= 1;
    r.lo = r.ok ? v[l - 1] : v.front();
    r.hi = r.ok ? v[n - l] : v.back();
    return r;
}

double smallest_p(std::size_t m, std::size_t n) {
    if (m == 0 || n == 0) return 1;
    return std::min(1.0, 2 * std::exp(-log_choose(double(m + n), double(m))));
}

UTest mann_whitney(const std::vector<double>& x, const std::vector<double>& y) {
    UTest t;
    const std::size_t m = x.size(), n = y.size();
    if (m == 0 || n == 0) return t;
    // Ranks of the pooled samples (ties: the mean of their ranks) and the
    // tie term sum(t^3 - t) of the variance.
    std::vector<std::pair<double, bool>> all;  // value, from y
    for (double v : x) all.emplace_back(v, false);
    for (double v : y) all.emplace_back(v, true);
    std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    const std::size_t total = m + n;
    double rank_sum_y = 0, ties = 0;
    bool tied = false;
    for (std::size_t i = 0; i < total;) {
        std::size_t j = i;
        while (j < total && all[j].first == all[i].first) ++j;
        const double rank = 0.5 * double(i + 1 + j);  // mean of ranks i+1 .. j
        for (std::size_t k = i; k < j; ++k)
            if (all[k].second) rank_sum_y += rank;
        const double count = double(j - i);
        ties += count * count * count - count;
        tied = tied || j - i > 1;
        i = j;
    }
    // U of y: pairs with y above x.
    t.u = rank_sum_y - double(n) * double(n + 1) / 2;
    const double mn = double(m) * double(n);
    if (!tied && m <= kExactLimit && n <= kExactLimit) {
        const std::vector<double> p = u_distribution(m, n);
        const std::size_t u = std::size_t(std::llround(t.u));
        double le = 0, ge = 0;
        for (std::size_t k = 0; k <= u; ++k) le += p[k];
        for (std::size_t k = u; k < p.size(); ++k) ge += p[k];
        t.p = std::min(1.0, 2 * std::min(le, ge));
        t.exact = true;
        return t;
    }
    const double n_all = double(total);
    const double variance = mn / 12 * ((n_all + 1) - ties / (n_all * (n_all - 1)));
    if (!(variance > 0)) return t;  // every value equal
    const double z = std::max(0.0, std::fabs(t.u - mn / 2) - 0.5) / std::sqrt(variance);
    t.p = std::min(1.0, std::erfc(z / std::sqrt(2.0)));
    return t;
}

Shift hodges_lehmann(const std::vector<double>& x, const std::vector<double>& y, double confidence) {
    Shift s;
    if (x.empty() || y.empty()) return s;
    std::vector<double> d;
    d.reserve(x.size() * y.size());
    for (double b : x)
        for (double a : y) d.push_back(a - b);
    std::sort(d.begin(), d.end());
    const std::size_t h = d.size() / 2;
    s.estimate = d.size() % 2 ? d[h] : 0.5 * (d[h - 1] + d[h]);
    const std::size_t c = lower_critical_count(x.size(), y.size(), (1 - confidence) / 2);
    s.interval.ok = c >= 1 && c <= d.size() / 2;
    s.interval.lo = s.interval.ok ? d[c - 1] : d.front();
    s.interval.hi = s.interval.ok ? d[d.size() - c] : d.back();
    return s;
}

}  // namespace bench::stats
