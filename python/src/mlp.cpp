// mlp.cpp — the MLP example's data and random streams (examples/mlp_train:
// data.hpp, mlp.hpp), so that python/examples/mlp_train.py trains on the
// same split, from the same initial weights, in the same batch order as
// mlp_train for one seed.
#include "binding.hpp"

#include "data.hpp"
#include "mlp.hpp"

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace accel_python {

namespace {

template <class T>
nb::object numpy_of(const std::vector<T>& v, std::size_t rows, std::size_t cols) {
    T* data = new T[v.size() ? v.size() : 1];
    std::memcpy(data, v.data(), v.size() * sizeof(T));
    nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<T*>(p); });
    const std::size_t shape[2] = {rows, cols};
    nb::ndarray<nb::numpy, T> a(data, cols ? 2 : 1, shape, owner);
    return nb::cast(a, nb::rv_policy::reference);
}

}  // namespace

void bind_mlp(nb::module_& m) {
    m.def("mlp_problem", [](const std::string& path, std::uint64_t seed) {
            mlp::Split s;
            {
                nb::gil_scoped_release release;
                s = mlp::load_standardized_split(path, seed);
            }
            return nb::typed<nb::tuple, nb::object, nb::object, nb::object, nb::object>(nb::make_tuple(numpy_of(s.train.x, s.train.samples, s.train.features),
                                  numpy_of(s.train.y, s.train.samples, 0),
                                  numpy_of(s.test.x, s.test.samples, s.test.features),
                                  numpy_of(s.test.y, s.test.samples, 0)));
        },
          nb::arg("path"), nb::arg("seed"),
          "The MLP example's problem (examples/mlp_train/data.hpp, load_standardized_split): the CSV at `path` "
          "split with `seed` (a fifth held out for testing) and standardized with the training part's statistics. "
          "Returns (train_x [n, features], train_y [n], test_x, test_y), float32 NumPy arrays. Raises "
          "InvalidArgument for a missing or malformed file.");
    m.def("mlp_init_params", [](std::size_t in, std::size_t hidden, std::uint64_t seed) {
            const mlp::Params p = mlp::init_params(in, hidden, seed);
            nb::typed<nb::dict, nb::str, nb::object> d;
            d["w1"] = numpy_of(p.w1, hidden, in);
            d["b1"] = numpy_of(p.b1, hidden, 0);
            d["w2"] = numpy_of(p.w2, 1, hidden);
            d["b2"] = numpy_of(p.b2, 1, 0);
            return d;
        },
          nb::arg("inputs"), nb::arg("hidden"), nb::arg("seed"),
          "The MLP example's initial weights for `seed` (torch.nn.Linear's default initialization, drawn from the "
          "example's seeded stream): {'w1': [hidden, inputs], 'b1': [hidden], 'w2': [1, hidden], 'b2': [1]}, "
          "float32 NumPy arrays in nn.Linear layout.");
    m.def("mlp_epoch_order", [](std::size_t n, std::uint64_t seed, std::size_t epoch) {
            const std::vector<std::size_t> order = mlp::epoch_order(n, seed, epoch);
            std::vector<std::int64_t> v(order.begin(), order.end());
            return numpy_of(v, n, 0);
        },
          nb::arg("n"), nb::arg("seed"), nb::arg("epoch"),
          "The MLP example's sample order of `epoch` (0-based) for `seed`: a permutation of range(n) as an int64 "
          "NumPy array; batch k is order[k*B:(k+1)*B].");
}

}  // namespace accel_python
