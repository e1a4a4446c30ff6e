// Float64 oracle: straightforward loops, independent of every backend.
#include <accel/error.hpp>
#include <accel/reference.hpp>

#include <algorithm>

#include <cmath>
#include <limits>

namespace accel {
namespace reference {

namespace {
double relu1(double x) { return element::relu(x, 0); }
double sigmoid1(double x) { return element::sigmoid(x, 0); }

template <class T, class F>
Vec each(const std::vector<T>& a, F f) {
    Vec y(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) y[i] = f(double(a[i]), 0.0);
    return y;
}

template <class T, class F>
Vec each(const std::vector<T>& a, const std::vector<T>& b, F f) {
    Vec y(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) y[i] = f(double(a[i]), double(b[i]));
    return y;
}

template <class T>
Vec elementwise_of(Op op, const std::vector<std::vector<T>>& inputs) {
    const OpInfo& info = op_info(op);
    if (!info.elementwise_reference)
        throw InvalidArgument(std::string("reference::elementwise: ") + op_name(op) +
                              " has no elementwise oracle in the op table (OpInfo::elementwise_reference)");
    if (inputs.size() != info.inputs.size() || inputs.empty() || inputs.size() > 2)
        throw InvalidArgument(std::string("reference::elementwise: ") + op_name(op) + " takes " +
                              std::to_string(info.inputs.size()) + " inputs, given " + std::to_string(inputs.size()));
    if (inputs.size() == 2 && inputs[0].size() != inputs[1].size())
        throw InvalidArgument(std::string("reference::elementwise: ") + op_name(op) + ": inputs of " +
                              std::to_string(inputs[0].size()) + " and " + std::to_string(inputs[1].size()) +
                              " elements; give one length");
    return inputs.size() == 1 ? each(inputs[0], info.elementwise_reference)
                              : each(inputs[0], inputs[1], info.elementwise_reference);
}

template <class T>
Vec matmul_of(const std::vector<T>& a, const std::vector<T>& b, std::size_t m, std::size_t n, std::size_t k, bool ta,
              bool tb) {
    Vec c(m * n, 0.0);
    for (std::size_t i = 0; i < m; ++i)
        for (std::size_t p = 0; p < k; ++p) {
            const double av = ta ? a[p * m + i] : a[i * k + p];
            for (std::size_t j = 0; j < n; ++j) c[i * n + j] += av * double(tb ? b[j * k + p] : b[p * n + j]);
        }
    return c;
}

template <class T>
Vec dense_of(const std::vector<T>& x, const std::vector<T>& w, const std::vector<T>& bias, std::size_t batch,
             std::size_t in, std::size_t out, Activation act) {
    Vec y = matmul_of(x, w, batch, out, in, false, true);
    for (std::size_t r = 0; r < batch; ++r)
        for (std::size_t o = 0; o < out; ++o) {
            double& v = y[r * out + o];
            if (!bias.empty()) v += bias[o];
            if (act == Activation::relu) v = relu1(v);
            if (act == Activation::sigmoid) v = sigmoid1(v);
            if (act == Activation::gelu) v = element::gelu(v, 0);
            if (act == Activation::gelu_tanh) v = element::gelu_tanh(v, 0);
        }
    return y;
}

template <class T>
Vec column_sum_of(const std::vector<T>& x, std::size_t rows, std::size_t cols) {
    Vec y(cols, 0.0);
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) y[c] += x[r * cols + c];
    return y;
}

template <class T>
Vec bce_with_logits_backward_of(const std::vector<T>& z, const std::vector<T>& t, double scale) {
    Vec dz(z.size());
    for (std::size_t i = 0; i < z.size(); ++i) dz[i] = scale * (sigmoid1(z[i]) - double(t[i]));
    return dz;
}
}  // namespace

Vec add(const FVec& a, const FVec& b) { return each(a, b, element::add); }
Vec sigmoid(const FVec& x) { return each(x, element::sigmoid); }
Vec relu(const FVec& x) { return each(x, element::relu); }
Vec relu_backward(const FVec& dy, const FVec& x) { return each(dy, x, element::relu_backward); }
Vec sigmoid_backward(const FVec& dy, const FVec& y) { return each(dy, y, element::sigmoid_backward); }

Vec elementwise(Op op, const std::vector<FVec>& inputs) { return elementwise_of(op, inputs); }
Vec elementwise(Op op, const std::vector<Vec>& inputs) { return elementwise_of(op, inputs); }

Vec matmul(const FVec& a, const FVec& b, std::size_t m, std::size_t n, std::size_t k, bool ta, bool tb) {
    return matmul_of(a, b, m, n, k, ta, tb);
}
Vec matmul(const Vec& a, const Vec& b, std::size_t m, std::size_t n, std::size_t k, bool ta, bool tb) {
    return matmul_of(a, b, m, n, k, ta, tb);
}

Vec dense(const FVec& x, const FVec& w, const FVec& bias, std::size_t batch, std::size_t in, std::size_t out,
          Activation act) {
    return dense_of(x, w, bias, batch, in, out, act);
}
Vec dense(const Vec& x, const Vec& w, const Vec& bias, std::size_t batch, std::size_t in, std::size_t out,
          Activation act) {
    return dense_of(x, w, bias, batch, in, out, act);
}

Vec column_sum(const FVec& x, std::size_t rows, std::size_t cols) { return column_sum_of(x, rows, cols); }
Vec column_sum(const Vec& x, std::size_t rows, std::size_t cols) { return column_sum_of(x, rows, cols); }

Vec bce_with_logits(const FVec& z, const FVec& t) { return each(z, t, element::bce_with_logits); }

Vec bce_with_logits_backward(const FVec& z, const FVec& t, double scale) {
    return bce_with_logits_backward_of(z, t, scale);
}
Vec bce_with_logits_backward(const Vec& z, const Vec& t, double scale) {
    return bce_with_logits_backward_of(z, t, scale);
}

Vec scale(const Vec& x, double s) {
    Vec y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = s * x[i];
    return y;
}

Vec triad(const Vec& b, const Vec& c, double s) {
    if (b.size() != c.size()) throw InvalidArgument("reference::triad: b and c differ in length");
    Vec a(b.size());
    for (std::size_t i = 0; i < b.size(); ++i) a[i] = b[i] + s * c[i];
    return a;
}

double dot(const Vec& a, const Vec& b) {
    if (a.size() != b.size()) throw InvalidArgument("reference::dot: a and b differ in length");
    double sum = 0, lost = 0;  // Neumaier's compensated sum of the (exact in f64 for f32 inputs) products
    for (std::size_t i = 0; i < a.size(); ++i) {
        const double term = a[i] * b[i], t = sum + term;
        lost += std::abs(sum) >= std::abs(term) ? (sum - t) + term : (term - t) + sum;
        sum = t;
    }
    return sum + lost;
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

namespace {
// x rounded once to the nearest half, ties to even (accel's conversion).
double to_half(double x) {
    Half h;
    convert_elements(&x, DType::f64, &h, DType::f16, 1);
    return double(to_float(h));
}
}  // namespace

double fma_throughput_value(std::size_t i, std::size_t iterations, DType dtype) {
    if (dtype == DType::bf16)
        throw InvalidArgument("fma_throughput_value: no bf16 probe (bf16 computes in f32)");
    double total = 0;
    if (dtype == DType::f16) {
        // r·a is exact in double (11 × 11 bits) and so is adding c: one rounding per fma.
        const double r = to_half(0.999), c = to_half(0.001);
        for (int j = 0; j < 8; ++j) {
            double a = to_half(double(float(i) * 1e-9f + float(j)));
            for (std::size_t it = 0; it < iterations; ++it) a = to_half(a * r + c);
            total = to_half(total + a);
        }
        return total;
    }
    for (int j = 0; j < 8; ++j) {
        // a ← a·r + c converges geometrically to c/(1−r); closed form.
        const double r = 0.9999f, c = 1e-4f, a0 = double(float(i) * 1e-9f + float(j));
        const double rn = std::pow(r, double(iterations));
        total += a0 * rn + c * (1.0 - rn) / (1.0 - r);
    }
    return total;
}

double matrix_throughput_value(std::size_t iterations) { return 112.0 + 32.0 * double(iterations); }

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
