// accel-bench's rank statistics (tools/bench/stats.hpp) against independent
// references: the exact p-value by enumerating every split of the pooled
// ranks, the median and the shift intervals by their coverage over many
// fresh samples of known distributions.
#include "../../tools/bench/stats.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

using namespace bench::stats;

namespace {

// The two-sided p-value of U on x, y by brute force: U over every way of
// choosing which |x| of the pooled values are the x sample (the
// permutation distribution, ties included), p = 2·min of the tails.
double permutation_p(const std::vector<double>& x, const std::vector<double>& y) {
    std::vector<double> all(x);
    all.insert(all.end(), y.begin(), y.end());
    const std::size_t m = x.size(), total = all.size();
    auto u_of = [&](const std::vector<bool>& is_x) {
        double u = 0;
        for (std::size_t i = 0; i < total; ++i)
            for (std::size_t j = 0; j < total; ++j)
                if (is_x[i] && !is_x[j]) u += all[i] < all[j] ? 1 : all[i] == all[j] ? 0.5 : 0;
        return u;
    };
    std::vector<bool> observed(total, false);
    for (std::size_t i = 0; i < m; ++i) observed[i] = true;
    const double u0 = u_of(observed);
    std::vector<bool> pick(total, false);
    std::fill(pick.begin(), pick.begin() + std::ptrdiff_t(m), true);
    double le = 0, ge = 0, count = 0;
    do {  // prev_permutation walks every subset of size m
        const double u = u_of(pick);
        le += u <= u0 + 1e-9;
        ge += u >= u0 - 1e-9;
        ++count;
    } while (std::prev_permutation(pick.begin(), pick.end()));
    return std::min(1.0, 2 * std::min(le, ge) / count);
}

std::vector<double> draw(std::mt19937_64& rng, std::size_t n, double shift = 0, double scale = 1) {
    std::lognormal_distribution<double> d(0, 0.3);
    std::vector<double> v(n);
    for (auto& x : v) x = scale * d(rng) + shift;
    return v;
}

}  // namespace

TEST_CASE("stats: exact U p-values match the permutation distribution") {
    std::mt19937_64 rng(20261202);
    for (const auto& sizes : {std::pair<std::size_t, std::size_t>{3, 4}, {5, 5}, {6, 4}, {4, 7}}) {
        const std::size_t m = sizes.first, n = sizes.second;
        for (int trial = 0; trial < 5; ++trial) {
            const auto x = draw(rng, m), y = draw(rng, n, 0, trial % 2 ? 1.5 : 1.0);
            const UTest t = mann_whitney(x, y);
            CAPTURE(m);
            CAPTURE(n);
            CHECK(t.exact);
            CHECK(t.p == doctest::Approx(permutation_p(x, y)).epsilon(1e-9));
        }
    }
    // Completely separated samples: the smallest p there is.
    const UTest apart = mann_whitney({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10});
    CHECK(apart.u == 25);
    CHECK(apart.p == doctest::Approx(2.0 / 252));
    CHECK(smallest_p(5, 5) == doctest::Approx(2.0 / 252));
    CHECK(smallest_p(4, 4) == doctest::Approx(2.0 / 70));
    CHECK(smallest_p(3, 3) > 0.05);  // 3 + 3 samples can never reach 5 %
    CHECK(smallest_p(0, 9) == 1);
}

TEST_CASE("stats: the normal approximation with ties is close to the permutation p") {
    std::mt19937_64 rng(7);
    for (int trial = 0; trial < 6; ++trial) {
        // Times on a coarse clock: many ties, so the approximation is used.
        auto coarse = [](std::vector<double> v) {
            for (auto& x : v) x = std::round(x * 4) / 4;
            return v;
        };
        const auto x = coarse(draw(rng, 7)), y = coarse(draw(rng, 7, trial * 0.1));
        const UTest t = mann_whitney(x, y);
        if (t.exact) continue;  // no tie drawn
        const double exact = permutation_p(x, y);
        CHECK(std::fabs(t.p - exact) <= 0.01 + 0.1 * exact);  // the permutation p is a step function
    }
    // Few distinct values (the tie correction of the variance matters).
    const std::vector<double> tx{1, 1, 1, 2, 2, 2, 2, 3, 1}, ty{2, 2, 3, 3, 3, 3, 2, 3};
    const double exact = permutation_p(tx, ty);
    CHECK(std::fabs(mann_whitney(tx, ty).p - exact) <= 0.5 * exact);  // 0.36 here; 2.1 without the correction
    // Every value equal: nothing to tell apart.
    CHECK(mann_whitney({2, 2, 2}, {2, 2, 2, 2}).p == 1);
    // Past the exact limit: the normal approximation, and a clear shift is found.
    const auto x = draw(rng, 60), y = draw(rng, 60, 0.5);
    const UTest big = mann_whitney(x, y);
    CHECK_FALSE(big.exact);
    CHECK(big.p < 1e-6);
}

TEST_CASE("stats: the U test holds its level on samples of one distribution") {
    std::mt19937_64 rng(11);
    int rejected = 0;
    const int trials = 2000;
    for (int i = 0; i < trials; ++i) rejected += mann_whitney(draw(rng, 10), draw(rng, 12)).p < 0.05;
    CHECK(double(rejected) / trials < 0.065);
    CHECK(double(rejected) / trials > 0.03);
}

TEST_CASE("stats: the median's interval covers the median at its confidence") {
    std::mt19937_64 rng(3);
    const double true_median = 1.0;  // lognormal(0, s) has median e^0
    for (std::size_t n : {6, 10, 20, 57}) {
        int covered = 0;
        const int trials = 2000;
        for (int i = 0; i < trials; ++i) {
            const Interval ci = median_ci(draw(rng, n));
            REQUIRE(ci.ok);
            covered += ci.lo <= true_median && true_median <= ci.hi;
        }
        CAPTURE(n);
        CHECK(double(covered) / trials >= 0.935);
        CHECK(double(covered) / trials <= 0.995);
    }
    CHECK_FALSE(median_ci({1, 2, 3, 4, 5}).ok);  // 5 samples: no 95 % interval from order statistics
    CHECK(median({3, 1, 2}) == 2);
    CHECK(median({4, 1, 2, 3}) == 2.5);
}

TEST_CASE("stats: Hodges-Lehmann estimates a shift and covers it") {
    std::mt19937_64 rng(5);
    // y an exact shifted copy of x: the estimate is the shift.
    const auto x = draw(rng, 9);
    std::vector<double> y(x);
    for (auto& v : y) v += 0.25;
    CHECK(hodges_lehmann(x, y).estimate == doctest::Approx(0.25));
    for (const auto& sizes : {std::pair<std::size_t, std::size_t>{8, 10}, {60, 55}}) {
        const std::size_t m = sizes.first, n = sizes.second;
        int covered = 0;
        const int trials = 1000;
        for (int i = 0; i < trials; ++i) {
            const Shift s = hodges_lehmann(draw(rng, m), draw(rng, n, 0.3));
            REQUIRE(s.interval.ok);
            covered += s.interval.lo <= 0.3 && 0.3 <= s.interval.hi;
        }
        CAPTURE(m);
        CHECK(double(covered) / trials >= 0.93);
        CHECK(double(covered) / trials <= 0.99);
    }
    CHECK_FALSE(hodges_lehmann({1, 2}, {3, 4}).interval.ok);  // 2 + 2: no 95 % interval
}
