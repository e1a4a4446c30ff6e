// mlp.cpp — the MLP example's data and random streams (examples/mlp_train:
// data.hpp, mlp.hpp), so that python/examples/mlp_train.py trains on the
// same split, from the same initial weights, in the same batch order as
// mlp_train for one seed.
#include "binding.hpp"

#include "data.hpp"
#include "mlp.hpp"

#include <nanobind/ndarray.h>
#include <nanobind/stl/shared_ptr.h>
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

// mlp::Model (examples/mlp_train/mlp.cpp) with its training set and settings:
// mlp_train's own training loop, for comparisons with a loop written in Python.
struct MlpModel {
    mlp::Dataset train;
    mlp::TrainConfig cfg;
    std::unique_ptr<mlp::Model> model;
};

mlp::Dataset dataset(nb::ndarray<const float, nb::ndim<2>, nb::c_contig, nb::device::cpu> x,
                     nb::ndarray<const float, nb::c_contig, nb::device::cpu> y) {
    mlp::Dataset d;
    d.samples = x.shape(0);
    d.features = x.shape(1);
    if (y.size() != d.samples)
        throw accel::InvalidArgument("MlpModel: " + std::to_string(d.samples) + " samples but " +
                                     std::to_string(y.size()) + " targets");
    d.x.assign(x.data(), x.data() + x.size());
    d.y.assign(y.data(), y.data() + y.size());
    return d;
}

}  // namespace

void bind_mlp(nb::module_& m) {
    nb::class_<MlpModel>(m, "MlpModel",
                         "mlp_train's model and training loop in C++ (examples/mlp_train: mlp::Model), on one "
                         "device: the reference a training loop written in Python through accel.ops is compared "
                         "with (python/examples/mlp_train.py --compare-cpp). Not thread-safe: one thread per model.")
        .def("__init__", [](MlpModel* self, const std::shared_ptr<accel::Device>& device, std::size_t hidden,
                            std::uint64_t seed, nb::ndarray<const float, nb::ndim<2>, nb::c_contig, nb::device::cpu> x,
                            nb::ndarray<const float, nb::c_contig, nb::device::cpu> y, std::size_t batch, double lr,
                            bool graph) {
                new (self) MlpModel();
                self->train = dataset(x, y);
                self->cfg.batch = batch;
                self->cfg.lr = static_cast<float>(lr);
                self->cfg.seed = seed;
                self->cfg.graph = graph;
                const mlp::Params p = mlp::init_params(self->train.features, hidden, seed);
                nb::gil_scoped_release release;
                self->model = std::make_unique<mlp::Model>(device, p);
            },
             nb::arg("device"), nb::arg("hidden"), nb::arg("seed"), nb::arg("train_x"), nb::arg("train_y"),
             nb::arg("batch") = 40, nb::arg("lr") = 1e-3, nb::arg("graph") = false,
             "A model with mlp_init_params(features, hidden, seed) on `device`, training on train_x [n, features] "
             "and train_y [n] (float32, C-contiguous; copied) in batches of `batch` with Adam's learning rate "
             "`lr`, the batch order of `seed` (as mlp_train --seed); graph=True: each batch size's step captured "
             "once and replayed (as mlp_train --graph; the same losses, bit for bit).")
        .def("train_epoch", [](MlpModel& self, std::size_t epoch) {
                nb::gil_scoped_release release;
                return self.model->train_epoch(self.train, self.cfg, epoch);
            },
             nb::arg("epoch"),
             "One epoch (0-based: its batch order is mlp_epoch_order(n, seed, epoch)), as mlp_train runs it; "
             "returns the epoch loss (mean per-sample loss seen). GIL released.");

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
