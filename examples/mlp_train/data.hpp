// data.hpp — the breast-cancer CSV: loading, a reproducible train/test split,
// standardization, and the seeded random streams the MLP example uses.
//
// Reproducibility: every random choice comes from std::mt19937_64 (whose
// output the C++ standard fixes bit for bit) seeded through std::seed_seq
// (whose algorithm the standard also fixes), and is turned into indices or
// floats by the small formulas documented below, never by std::shuffle or
// the <random> distributions, whose algorithms differ between standard
// libraries. The same seed therefore gives the same split, weights and batch
// order on every platform and every backend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <random>
#include <string>
#include <vector>

namespace mlp {

/// A binary-classification data set held on the host.
struct Dataset {
    std::size_t samples = 0;   ///< rows
    std::size_t features = 0;  ///< columns of x
    std::vector<float> x;      ///< [samples, features], row-major
    std::vector<float> y;      ///< [samples], each 0 or 1
    std::string class0;        ///< name of label 0 (e.g. "malignant")
    std::string class1;        ///< name of label 1 (e.g. "benign")
};

/// Parses the CSV format of data/breast_cancer.csv from `in`:
///   line 1: "<samples>,<features>,<name of class 0>,<name of class 1>"
///   then exactly <samples> lines of <features> floats and a label 0 or 1,
///   comma-separated (blank trailing lines are ignored).
/// `source` names the input in messages (a path, or e.g. "<memory>").
/// Throws accel::InvalidArgument naming the source and the 1-based line for
/// a malformed header, a wrong field count, a non-numeric or non-finite
/// value, a label other than 0/1, or a row count different from the header's.
Dataset parse_csv(std::istream& in, const std::string& source);

/// parse_csv on the file at `path`. Throws accel::InvalidArgument when the
/// file cannot be opened (naming the path), or as parse_csv.
Dataset load_csv(const std::string& path);

/// Purposes of the seeded streams, so that split, init and each epoch's
/// shuffle draw independent numbers from one user seed.
enum class Stream : std::uint32_t { split = 0, init = 1, epoch = 2 };

/// The generator for (seed, purpose, epoch):
///   std::mt19937_64(std::seed_seq{seed & 0xffffffff, seed >> 32, purpose, epoch}).
/// `epoch` is 0 for purposes other than Stream::epoch.
std::mt19937_64 make_rng(std::uint64_t seed, Stream purpose, std::uint32_t epoch = 0);

/// A permutation of 0..n-1 by Fisher–Yates: for i = n-1 down to 1,
/// j = g() % (i + 1), swap(p[i], p[j]) (modulo bias below 2^-50 for n < 2^14).
std::vector<std::size_t> permutation(std::size_t n, std::mt19937_64& g);

/// A float uniform in [-bound, bound): u = (g() >> 11) · 2^-53 in [0, 1),
/// then (2u − 1) · bound, computed in double and rounded to float.
float uniform_symmetric(std::mt19937_64& g, double bound);

/// Train and test parts of a data set.
struct Split {
    Dataset train;
    Dataset test;
};

/// Splits `d`: p = permutation(samples, make_rng(seed, Stream::split));
/// the first round(samples · test_fraction) indices of p form the test set,
/// the rest the training set, each in the order of p.
/// Throws accel::InvalidArgument for test_fraction outside (0, 1) or a split
/// that leaves either part empty.
Split split(const Dataset& d, double test_fraction, std::uint64_t seed);

/// Per-feature mean and standard deviation of a training set (population
/// std, divisor n, computed in double). A feature with std 0 gets std 1 so
/// that standardizing it gives zeros instead of NaN.
struct Standardizer {
    std::vector<double> mean;
    std::vector<double> stddev;

    /// Fits on `train`. Throws accel::InvalidArgument for an empty set.
    static Standardizer fit(const Dataset& train);
    /// x ← (x − mean) / stddev per feature, in double, rounded to float.
    /// Throws accel::InvalidArgument when d.features differs from the fit's.
    void apply(Dataset& d) const;
};

/// The share of samples mlp_train and accel-bench mlp hold out for testing.
constexpr double kTestFraction = 0.2;

/// The breast-cancer CSV a program uses when not given one: the installed
/// copy, `installed_from_program` (a path relative to the folder of the
/// running program, e.g. "../share/accel/breast_cancer.csv"), when it exists,
/// else the source tree's data/breast_cancer.csv (MLP_SOURCE_DATA). Throws
/// std::runtime_error naming both places when neither exists. Thread-safe.
std::string default_data_path(const std::string& installed_from_program);

/// The example's problem from the CSV at `path`: load_csv, split(d,
/// kTestFraction, seed), and both parts standardized with the training
/// set's Standardizer. Throws as load_csv and split do.
Split load_standardized_split(const std::string& path, std::uint64_t seed);

}  // namespace mlp
