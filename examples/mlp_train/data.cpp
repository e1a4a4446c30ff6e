#include "data.hpp"

#include <accel/error.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <istream>
#include <sstream>
#include <utility>

namespace mlp {
namespace {

[[noreturn]] void fail(const std::string& source, std::size_t line, const std::string& what) {
    throw accel::InvalidArgument(source + ":" + std::to_string(line) + ": " + what);
}

std::vector<std::string> split_fields(const std::string& line) {
    std::vector<std::string> out;
    std::string field;
    std::istringstream s(line);
    while (std::getline(s, field, ',')) out.push_back(field);
    if (!line.empty() && line.back() == ',') out.emplace_back();  // getline drops a trailing empty field
    return out;
}

std::string trim(std::string s) {
    const auto b = s.find_first_not_of(" \t\r");
    const auto e = s.find_last_not_of(" \t\r");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// from_chars: locale-independent and strict (the whole field must be a number).
template <typename T>
bool parse_number(const std::string& text, T& value) {
    const std::string t = trim(text);
    const char* end = t.data() + t.size();
    const auto r = std::from_chars(t.data(), end, value);
    return r.ec == std::errc() && r.ptr == end && !t.empty();
}

}  // namespace

Dataset parse_csv(std::istream& in, const std::string& source) {
    Dataset d;
    std::string line;
    std::size_t lineno = 0;
    if (!std::getline(in, line)) fail(source, 1, "empty input; expected the header \"<samples>,<features>,<class 0>,<class 1>\"");
    ++lineno;
    const auto header = split_fields(line);
    if (header.size() != 4 || !parse_number(header[0], d.samples) || !parse_number(header[1], d.features) ||
        d.samples == 0 || d.features == 0)
        fail(source, lineno, "bad header \"" + line +
                                 "\"; expected \"<samples>,<features>,<class 0>,<class 1>\" with positive counts, "
                                 "e.g. \"569,30,malignant,benign\"");
    d.class0 = trim(header[2]);
    d.class1 = trim(header[3]);
    d.x.reserve(d.samples * d.features);
    d.y.reserve(d.samples);

    std::size_t rows = 0;
    while (std::getline(in, line)) {
        ++lineno;
        if (trim(line).empty()) continue;
        if (rows == d.samples)
            fail(source, lineno, "more data rows than the " + std::to_string(d.samples) + " the header announces");
        const auto f = split_fields(line);
        if (f.size() != d.features + 1)
            fail(source, lineno, std::to_string(f.size()) + " fields; expected " + std::to_string(d.features) +
                                     " features and a label (" + std::to_string(d.features + 1) + " fields)");
        for (std::size_t c = 0; c < d.features; ++c) {
            float v = 0.0f;
            if (!parse_number(f[c], v) || !std::isfinite(v))
                fail(source, lineno, "field " + std::to_string(c + 1) + " \"" + f[c] + "\" is not a finite number");
            d.x.push_back(v);
        }
        int label = -1;
        if (!parse_number(f.back(), label) || (label != 0 && label != 1))
            fail(source, lineno, "label \"" + f.back() + "\" must be 0 or 1");
        d.y.push_back(static_cast<float>(label));
        ++rows;
    }
    if (rows != d.samples)
        fail(source, lineno, "found " + std::to_string(rows) + " data rows; the header announces " +
                                 std::to_string(d.samples));
    return d;
}

Dataset load_csv(const std::string& path) {
    std::ifstream f(path);
    if (!f) throw accel::InvalidArgument("cannot open data file \"" + path + "\"; pass an existing CSV (see data/README.md)");
    return parse_csv(f, path);
}

std::mt19937_64 make_rng(std::uint64_t seed, Stream purpose, std::uint32_t epoch) {
    std::seed_seq seq{static_cast<std::uint32_t>(seed & 0xffffffffu), static_cast<std::uint32_t>(seed >> 32),
                      static_cast<std::uint32_t>(purpose), epoch};
    return std::mt19937_64(seq);
}

std::vector<std::size_t> permutation(std::size_t n, std::mt19937_64& g) {
    std::vector<std::size_t> p(n);
    for (std::size_t i = 0; i < n; ++i) p[i] = i;
    for (std::size_t i = n; i > 1; --i) std::swap(p[i - 1], p[g() % i]);
    return p;
}

float uniform_symmetric(std::mt19937_64& g, double bound) {
    const double u = static_cast<double>(g() >> 11) * 0x1.0p-53;
    return static_cast<float>((2.0 * u - 1.0) * bound);
}

namespace {

Dataset subset(const Dataset& d, const std::size_t* idx, std::size_t n) {
    Dataset s;
    s.samples = n;
    s.features = d.features;
    s.class0 = d.class0;
    s.class1 = d.class1;
    s.x.reserve(n * d.features);
    s.y.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        const float* row = d.x.data() + idx[i] * d.features;
        s.x.insert(s.x.end(), row, row + d.features);
        s.y.push_back(d.y[idx[i]]);
    }
    return s;
}

}  // namespace

Split split(const Dataset& d, double test_fraction, std::uint64_t seed) {
    if (!(test_fraction > 0.0 && test_fraction < 1.0))
        throw accel::InvalidArgument("test fraction " + std::to_string(test_fraction) + " must lie in (0, 1)");
    const auto n_test = static_cast<std::size_t>(std::llround(static_cast<double>(d.samples) * test_fraction));
    if (n_test == 0 || n_test >= d.samples)
        throw accel::InvalidArgument("splitting " + std::to_string(d.samples) + " samples with test fraction " +
                                     std::to_string(test_fraction) + " leaves an empty part; use more samples");
    auto g = make_rng(seed, Stream::split);
    const auto p = permutation(d.samples, g);
    return {subset(d, p.data() + n_test, d.samples - n_test), subset(d, p.data(), n_test)};
}

Standardizer Standardizer::fit(const Dataset& train) {
    if (train.samples == 0) throw accel::InvalidArgument("cannot fit a standardizer on an empty training set");
    const std::size_t n = train.samples, f = train.features;
    Standardizer s;
    s.mean.assign(f, 0.0);
    s.stddev.assign(f, 0.0);
    for (std::size_t r = 0; r < n; ++r)
        for (std::size_t c = 0; c < f; ++c) s.mean[c] += train.x[r * f + c];
    for (auto& m : s.mean) m /= static_cast<double>(n);
    for (std::size_t r = 0; r < n; ++r)
        for (std::size_t c = 0; c < f; ++c) {
            const double e = train.x[r * f + c] - s.mean[c];
            s.stddev[c] += e * e;
        }
    for (auto& v : s.stddev) {
        v = std::sqrt(v / static_cast<double>(n));
        if (v == 0.0) v = 1.0;
    }
    return s;
}

void Standardizer::apply(Dataset& d) const {
    if (d.features != mean.size())
        throw accel::InvalidArgument("standardizer fitted on " + std::to_string(mean.size()) +
                                     " features, applied to a set with " + std::to_string(d.features));
    for (std::size_t r = 0; r < d.samples; ++r)
        for (std::size_t c = 0; c < d.features; ++c) {
            float& v = d.x[r * d.features + c];
            v = static_cast<float>((v - mean[c]) / stddev[c]);
        }
}

#ifndef MLP_SOURCE_DATA
#define MLP_SOURCE_DATA "data/breast_cancer.csv"
#endif

std::string default_data_path(const std::string& installed_from_program) {
    const auto file_exists = [](const std::string& path) {
        struct stat st {};
        return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
    };
    std::string installed;
    std::string exe(4096, '\0');
    const ssize_t n = readlink("/proc/self/exe", exe.data(), exe.size() - 1);
    if (n > 0) {
        exe.resize(static_cast<std::size_t>(n));
        installed = (std::filesystem::path(exe).parent_path() / installed_from_program).lexically_normal().string();
    }
    if (!installed.empty() && file_exists(installed)) return installed;
    if (file_exists(MLP_SOURCE_DATA)) return MLP_SOURCE_DATA;
    throw std::runtime_error("no data set found (looked for " + (installed.empty() ? "" : installed + " and ") +
                             MLP_SOURCE_DATA + "); pass --data PATH to the breast-cancer CSV "
                             "(data/breast_cancer.csv in accel's sources)");
}

Split load_standardized_split(const std::string& path, std::uint64_t seed) {
    Split sp = split(load_csv(path), kTestFraction, seed);
    const Standardizer standardizer = Standardizer::fit(sp.train);
    standardizer.apply(sp.train);
    standardizer.apply(sp.test);
    return sp;
}

}  // namespace mlp
