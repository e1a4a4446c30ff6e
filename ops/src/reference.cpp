// Float64 oracle: straightforward loops, independent of every backend.
#include <accel/reference.hpp>

#include <cmath>
#include <limits>

namespace accel {
namespace reference {

namespace {
// max(x, 0) keeping NaN, as PyTorch.
double relu1(double x) { return x <= 0 ? 0.0 : x; }

double sigmoid1(double x) {
    if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
    const double e = std::exp(x);
    return e / (1.0 + e);
}
}  // namespace

Vec add(const FVec& a, const FVec& b) {
    Vec c(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) c[i] = double(a[i]) + double(b[i]);
    return c;
}

Vec sigmoid(const FVec& x) {
    Vec y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = sigmoid1(x[i]);
    return y;
}

Vec relu(const FVec& x) {
    Vec y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = relu1(x[i]);
    return y;
}

Vec relu_backward(const FVec& dy, const FVec& x) {
    Vec dx(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) dx[i] = x[i] > 0 ? double(dy[i]) : 0.0;
    return dx;
}

Vec sigmoid_backward(const FVec& dy, const FVec& y) {
    Vec dx(y.size());
    for (std::size_t i = 0; i < y.size(); ++i) dx[i] = double(dy[i]) * double(y[i]) * (1.0 - double(y[i]));
    return dx;
}

Vec matmul(const FVec& a, const FVec& b, std::size_t m, std::size_t n, std::size_t k, bool ta, bool tb) {
    Vec c(m * n, 0.0);
    for (std::size_t i = 0; i < m; ++i)
        for (std::size_t p = 0; p < k; ++p) {
            const double av = ta ? a[p * m + i] : a[i * k + p];
            for (std::size_t j = 0; j < n; ++j) c[i * n + j] += av * double(tb ? b[j * k + p] : b[p * n + j]);
        }
    return c;
}

Vec dense(const FVec& x, const FVec& w, const FVec& bias, std::size_t batch, std::size_t in, std::size_t out,
          Activation act) {
    Vec y = matmul(x, w, batch, out, in, false, true);
    for (std::size_t r = 0; r < batch; ++r)
        for (std::size_t o = 0; o < out; ++o) {
            double& v = y[r * out + o];
            if (!bias.empty()) v += bias[o];
            if (act == Activation::relu) v = relu1(v);
            if (act == Activation::sigmoid) v = sigmoid1(v);
        }
    return y;
}

Vec column_sum(const FVec& x, std::size_t rows, std::size_t cols) {
    Vec y(cols, 0.0);
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) y[c] += x[r * cols + c];
    return y;
}

Vec bce_with_logits(const FVec& z, const FVec& t) {
    Vec l(z.size());
    for (std::size_t i = 0; i < z.size(); ++i) {
        const double zz = z[i];
        l[i] = std::max(zz, 0.0) - zz * double(t[i]) + std::log1p(std::exp(-std::fabs(zz)));
    }
    return l;
}

Vec bce_with_logits_backward(const FVec& z, const FVec& t, double scale) {
    Vec dz(z.size());
    for (std::size_t i = 0; i < z.size(); ++i) dz[i] = scale * (sigmoid1(z[i]) - double(t[i]));
    return dz;
}

void adam_step(Vec& p, const Vec& g, Vec& m, Vec& v, std::size_t step, double lr, double beta1, double beta2,
               double eps) {
    const double bc1 = 1.0 - std::pow(beta1, double(step)), bc2 = 1.0 - std::pow(beta2, double(step));
    for (std::size_t i = 0; i < p.size(); ++i) {
        m[i] = beta1 * m[i] + (1.0 - beta1) * g[i];
        v[i] = beta2 * v[i] + (1.0 - beta2) * g[i] * g[i];
        p[i] -= (lr / bc1) * m[i] / (std::sqrt(v[i]) / std::sqrt(bc2) + eps);
    }
}

double fma_throughput_value(std::size_t i, std::size_t iterations) {
    double total = 0;
    for (int j = 0; j < 8; ++j) {
        // a ← a·r + c converges geometrically to c/(1−r); closed form.
        const double r = 0.9999f, c = 1e-4f, a0 = double(float(i) * 1e-9f + float(j));
        const double rn = std::pow(r, double(iterations));
        total += a0 * rn + c * (1.0 - rn) / (1.0 - r);
    }
    return total;
}

namespace {
template <class G>
double nmse_of(const G& got, const Vec& ref) {
    if (got.size() != ref.size()) return std::numeric_limits<double>::infinity();
    double err = 0, norm = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (!std::isfinite(got[i])) return std::numeric_limits<double>::infinity();
        const double d = double(got[i]) - ref[i];
        err += d * d;
        norm += ref[i] * ref[i];
    }
    if (got.empty()) return 0.0;
    return norm > 0 ? err / norm : err / double(got.size());
}

template <class G>
double max_abs_error_of(const G& got, const Vec& ref) {
    if (got.size() != ref.size()) return std::numeric_limits<double>::infinity();
    double worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (!std::isfinite(got[i])) return std::numeric_limits<double>::infinity();
        worst = std::max(worst, std::fabs(double(got[i]) - ref[i]));
    }
    return worst;
}
}  // namespace

double nmse(const FVec& got, const Vec& ref) { return nmse_of(got, ref); }
double nmse(const Vec& got, const Vec& ref) { return nmse_of(got, ref); }
double max_abs_error(const FVec& got, const Vec& ref) { return max_abs_error_of(got, ref); }
double max_abs_error(const Vec& got, const Vec& ref) { return max_abs_error_of(got, ref); }

}  // namespace reference
}  // namespace accel
