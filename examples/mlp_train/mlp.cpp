#include "mlp.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <limits>

namespace mlp {
namespace {

using accel::InvalidArgument;
using json = nlohmann::ordered_json;  // keeps w1, b1, w2, b2 in file order

void need_size(const char* name, std::size_t got, std::size_t want) {
    if (got != want)
        throw InvalidArgument(std::string("parameter ") + name + " has " + std::to_string(got) + " values; expected " +
                              std::to_string(want));
}

// A [rows, cols] matrix as nested JSON lists (rows of cols).
json to_rows(const std::vector<float>& v, std::size_t rows, std::size_t cols) {
    json out = json::array();
    for (std::size_t r = 0; r < rows; ++r)
        out.push_back(std::vector<float>(v.begin() + static_cast<std::ptrdiff_t>(r * cols),
                                         v.begin() + static_cast<std::ptrdiff_t>((r + 1) * cols)));
    return out;
}

const json& key(const json& j, const char* name, const std::string& path) {
    if (!j.is_object() || !j.contains(name))
        throw InvalidArgument("weights file \"" + path + "\" lacks key \"" + name +
                              "\"; expected {\"w1\": [[...]], \"b1\": [...], \"w2\": [[...]], \"b2\": [...]}");
    return j.at(name);
}

std::vector<float> flat_vector(const json& j, const char* name, const std::string& path) {
    if (!j.is_array())
        throw InvalidArgument("weights file \"" + path + "\": \"" + name + "\" must be a list of numbers");
    std::vector<float> out;
    for (const auto& e : j) {
        if (!e.is_number())
            throw InvalidArgument("weights file \"" + path + "\": \"" + name + "\" holds a non-number " + e.dump());
        out.push_back(e.get<float>());
    }
    return out;
}

// A nested list of equal-length rows; returns the values row-major and the row length.
std::vector<float> flat_matrix(const json& j, const char* name, const std::string& path, std::size_t& cols) {
    if (!j.is_array() || j.empty())
        throw InvalidArgument("weights file \"" + path + "\": \"" + name + "\" must be a non-empty list of rows");
    std::vector<float> out;
    cols = 0;
    for (std::size_t r = 0; r < j.size(); ++r) {
        const auto row = flat_vector(j[r], name, path);
        if (r == 0) cols = row.size();
        if (row.size() != cols || cols == 0)
            throw InvalidArgument("weights file \"" + path + "\": \"" + name + "\" row " + std::to_string(r) + " has " +
                                  std::to_string(row.size()) + " values; rows must be non-empty and of equal length");
        out.insert(out.end(), row.begin(), row.end());
    }
    return out;
}

}  // namespace

void Params::validate() const {
    if (in == 0 || hidden == 0)
        throw InvalidArgument("network sizes in " + std::to_string(in) + ", hidden " + std::to_string(hidden) +
                              " must be positive");
    need_size("w1 [hidden, in]", w1.size(), hidden * in);
    need_size("b1 [hidden]", b1.size(), hidden);
    need_size("w2 [1, hidden]", w2.size(), hidden);
    need_size("b2 [1]", b2.size(), 1);
}

Params init_params(std::size_t in, std::size_t hidden, std::uint64_t seed) {
    if (in == 0 || hidden == 0)
        throw InvalidArgument("init_params: in " + std::to_string(in) + ", hidden " + std::to_string(hidden) +
                              " must be positive");
    Params p;
    p.in = in;
    p.hidden = hidden;
    auto g = make_rng(seed, Stream::init);
    auto fill = [&g](std::vector<float>& v, std::size_t n, std::size_t fan_in) {
        const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
        v.resize(n);
        for (auto& x : v) x = uniform_symmetric(g, bound);
    };
    fill(p.w1, hidden * in, in);
    fill(p.b1, hidden, in);
    fill(p.w2, hidden, hidden);
    fill(p.b2, 1, hidden);
    return p;
}

Params load_params(const std::string& path) {
    std::ifstream f(path);
    if (!f) throw InvalidArgument("cannot open weights file \"" + path + "\"");
    json j;
    try {
        j = json::parse(f);
    } catch (const json::exception& e) {
        throw InvalidArgument("weights file \"" + path + "\" is not valid JSON: " + e.what());
    }
    Params p;
    std::size_t w2_cols = 0;
    p.w1 = flat_matrix(key(j, "w1", path), "w1", path, p.in);
    p.hidden = p.w1.size() / p.in;
    p.b1 = flat_vector(key(j, "b1", path), "b1", path);
    p.w2 = flat_matrix(key(j, "w2", path), "w2", path, w2_cols);
    p.b2 = flat_vector(key(j, "b2", path), "b2", path);
    if (w2_cols != p.hidden || p.w2.size() != p.hidden)
        throw InvalidArgument("weights file \"" + path + "\": w2 must be [[" + std::to_string(p.hidden) +
                              " values]] (one output, hidden = rows of w1)");
    p.validate();
    return p;
}

void save_params(const Params& p, const std::string& path) {
    p.validate();
    const json j = {{"w1", to_rows(p.w1, p.hidden, p.in)},
                    {"b1", p.b1},
                    {"w2", to_rows(p.w2, 1, p.hidden)},
                    {"b2", p.b2}};
    std::ofstream f(path);
    if (!f) throw InvalidArgument("cannot write weights file \"" + path + "\"");
    f << j.dump(1) << "\n";  // nlohmann prints floats with round-trip precision
    if (!f) throw InvalidArgument("writing weights file \"" + path + "\" failed");
}

Shard shard_of(std::size_t batch, int rank, int ranks) {
    if (ranks < 1 || rank < 0 || rank >= ranks)
        throw InvalidArgument("shard_of: rank " + std::to_string(rank) + " of " + std::to_string(ranks) +
                              " ranks; expected ranks >= 1 and 0 <= rank < ranks");
    const std::size_t p = static_cast<std::size_t>(ranks), r = static_cast<std::size_t>(rank);
    const std::size_t base = batch / p, extra = batch % p;
    Shard s;
    s.count = base + (r < extra ? 1 : 0);
    s.first = r * base + std::min(r, extra);
    return s;
}

std::vector<std::size_t> epoch_order(std::size_t n, std::uint64_t seed, std::size_t epoch) {
    auto g = make_rng(seed, Stream::epoch, static_cast<std::uint32_t>(epoch));
    return permutation(n, g);
}

double accuracy(const std::vector<float>& logits, const std::vector<float>& labels) {
    if (logits.size() != labels.size())
        throw InvalidArgument("accuracy: " + std::to_string(logits.size()) + " logits for " +
                              std::to_string(labels.size()) + " labels");
    if (logits.empty()) return 0.0;
    std::size_t right = 0;
    for (std::size_t i = 0; i < logits.size(); ++i) right += (logits[i] > 0.0f ? 1.0f : 0.0f) == labels[i];
    return static_cast<double>(right) / static_cast<double>(logits.size());
}

namespace {
// Uploads float data into a tensor of any dtype (rounded to it).
void upload_floats(accel::Tensor& t, const std::vector<float>& data) {
    if (t.dtype() == accel::DType::f32) return t.upload(data);
    std::vector<unsigned char> raw(t.bytes());
    accel::convert_elements(data.data(), accel::DType::f32, raw.data(), t.dtype(), data.size());
    t.buffer().upload(raw.data(), raw.size());
}
}  // namespace

Model::Model(std::shared_ptr<accel::Device> device, const Params& p, accel::DType dtype)
    : device_(std::move(device)), in_(p.in), hidden_(p.hidden), dtype_(dtype),
      master_dtype_(dtype == accel::DType::f64 ? accel::DType::f64 : accel::DType::f32) {
    p.validate();
    const accel::Shape sw1{hidden_, in_}, sb1{hidden_}, sw2{1, hidden_}, sb2{1};
    w1_ = accel::Tensor::from_host(device_, sw1, p.w1, master_dtype_);
    b1_ = accel::Tensor::from_host(device_, sb1, p.b1, master_dtype_);
    w2_ = accel::Tensor::from_host(device_, sw2, p.w2, master_dtype_);
    b2_ = accel::Tensor::from_host(device_, sb2, p.b2, master_dtype_);
    gw1_ = accel::Tensor(device_, sw1, dtype_);
    gb1_ = accel::Tensor(device_, sb1, dtype_);
    gw2_ = accel::Tensor(device_, sw2, dtype_);
    gb2_ = accel::Tensor(device_, sb2, dtype_);
    const accel::Shape shapes[4] = {sw1, sb1, sw2, sb2};
    for (int i = 0; i < 4; ++i) {
        const std::vector<float> zeros(shapes[i].elements(), 0.0f);
        m_[i] = accel::Tensor::from_host(device_, shapes[i], zeros, master_dtype_);
        v_[i] = accel::Tensor::from_host(device_, shapes[i], zeros, master_dtype_);
        if (mixed()) {
            copy_[i] = accel::Tensor(device_, shapes[i], dtype_);
            accel::ops::convert(*masters()[i], copy_[i]);
            master_grad_[i] = accel::Tensor(device_, shapes[i], master_dtype_);
        }
    }
}

Model::Batch& Model::batch_tensors(std::size_t b) {
    auto it = batches_.find(b);
    if (it != batches_.end()) return it->second;
    const accel::DType t = dtype_;
    Batch bt{accel::Tensor(device_, {b, in_}, t), accel::Tensor(device_, {b, 1}, t),
             accel::Tensor(device_, {b, hidden_}, t), accel::Tensor(device_, {b, 1}, t),
             accel::Tensor(device_, {b, 1}, t), accel::Tensor(device_, {b, hidden_}, t), accel::Graph(), 0.0f};
    return batches_.emplace(b, std::move(bt)).first->second;
}

void Model::forward(const accel::Tensor& x, Batch& bt) {
    accel::ops::dense(x, weight(0), weight(1), bt.h, accel::Activation::relu);
    accel::ops::dense(bt.h, weight(2), weight(3), bt.z, accel::Activation::none);
}

double Model::train_epoch(const Dataset& train, const TrainConfig& cfg, std::size_t epoch) {
    if (train.features != in_)
        throw InvalidArgument("training set has " + std::to_string(train.features) + " features; the network takes " +
                              std::to_string(in_));
    if (cfg.batch == 0) throw InvalidArgument("batch size 0; use a positive batch size");
    if (cfg.dtype != dtype_)
        throw InvalidArgument(std::string("training in ") + accel::dtype_name(cfg.dtype) + " but the model holds " +
                              accel::dtype_name(dtype_) + "; make the Model with the config's dtype");
    if (cfg.collective && dtype_ != accel::DType::f32)
        throw InvalidArgument(std::string("data-parallel training sums float32 gradients; ") +
                              accel::dtype_name(dtype_) + " is not supported there (use f32)");
    if (cfg.collective && cfg.graph)
        throw InvalidArgument("a graph of the training step cannot hold the gradient sum over the ranks, which runs "
                              "between backward and Adam; train data-parallel without --graph");
    const auto order = epoch_order(train.samples, cfg.seed, epoch);
    accel::ops::AdamParams adam;
    adam.lr = cfg.lr;
    double loss_sum = 0.0;
    Collective* const coll = cfg.collective;
    const int rank = coll ? coll->rank() : 0, ranks = coll ? coll->ranks() : 1;
    for (std::size_t start = 0; start < train.samples; start += cfg.batch) {
        const std::size_t global_b = std::min(cfg.batch, train.samples - start);
        const Shard mine = shard_of(global_b, rank, ranks);
        const std::size_t b = mine.count;
        if (b == 0) {
            // No rows here this batch (global batch < ranks): contribute zeros, then the step.
            for (accel::Tensor* g : {&gw1_, &gb1_, &gw2_, &gb2_}) upload_floats(*g, std::vector<float>(g->elements(), 0.0f));
            backward_and_step(nullptr, global_b, coll, adam);
            continue;
        }
        xb_.resize(b * in_);
        tb_.resize(b);
        for (std::size_t i = 0; i < b; ++i) {
            const std::size_t s = order[start + mine.first + i];
            std::copy_n(train.x.begin() + static_cast<std::ptrdiff_t>(s * in_), in_,
                        xb_.begin() + static_cast<std::ptrdiff_t>(i * in_));
            tb_[i] = train.y[s];
        }
        Batch& bt = batch_tensors(b);
        upload_floats(bt.x, xb_);
        upload_floats(bt.t, tb_);
        if (!cfg.graph) {
            forward(bt.x, bt);
            loss_sum += static_cast<double>(accel::ops::bce_with_logits_loss(bt.z, bt.t)) * static_cast<double>(b);
            backward_and_step(&bt, global_b, coll, adam);
            continue;
        }
        // The same calls replayed; the loss, which reads only z and t, after them.
        if (bt.step.empty() || bt.step_lr != cfg.lr) {
            bt.step_lr = cfg.lr;
            bt.step = accel::capture(device_->default_stream(), [&] {
                forward(bt.x, bt);
                backward_and_step(&bt, global_b, coll, adam);  // counts this step (++step_)
            });
        } else {
            ++step_;
        }
        bt.step.launch();
        loss_sum += static_cast<double>(accel::ops::bce_with_logits_loss(bt.z, bt.t)) * static_cast<double>(b);
    }
    if (coll) loss_sum = coll->sum(loss_sum);
    return loss_sum / static_cast<double>(train.samples);
}

void Model::backward_and_step(Batch* batch, std::size_t global_b, Collective* coll, const accel::ops::AdamParams& adam) {
    accel::Tensor* const grads[4] = {&gw1_, &gb1_, &gw2_, &gb2_};
    if (batch) {
        Batch& bt = *batch;
        if (coll)  // this shard's share of the global batch mean
            accel::ops::bce_with_logits_backward_scaled(bt.z, bt.t, bt.dz, 1.0f / static_cast<float>(global_b));
        else
            accel::ops::bce_with_logits_backward(bt.z, bt.t, bt.dz);
        accel::ops::dense_backward(bt.h, weight(2), bt.z, bt.dz, accel::Activation::none, &bt.dh, gw2_, &gb2_);
        accel::ops::dense_backward(bt.x, weight(0), bt.h, bt.dh, accel::Activation::relu, nullptr, gw1_, &gb1_);
    }
    if (coll) coll->sum_gradients(grads, 4);
    ++step_;
    accel::Tensor* params[4] = {&w1_, &b1_, &w2_, &b2_};
    for (int i = 0; i < 4; ++i) {
        if (!mixed()) {
            accel::ops::adam_step_from(*params[i], *grads[i], m_[i], v_[i], step_, adam);
            continue;
        }
        // Mixed precision: Adam on the f32 masters, then fresh 16-bit copies.
        accel::ops::convert(*grads[i], master_grad_[i]);
        accel::ops::adam_step_from(*params[i], master_grad_[i], m_[i], v_[i], step_, adam);
        accel::ops::convert(*params[i], copy_[i]);
    }
}

std::vector<float> Model::logits(const Dataset& d) {
    if (d.features != in_)
        throw InvalidArgument("data set has " + std::to_string(d.features) + " features; the network takes " +
                              std::to_string(in_));
    if (d.samples == 0) return {};
    const auto x = accel::Tensor::from_host(device_, {d.samples, in_}, d.x, dtype_);
    Batch bt{accel::Tensor(), accel::Tensor(), accel::Tensor(device_, {d.samples, hidden_}, dtype_),
             accel::Tensor(device_, {d.samples, 1}, dtype_), accel::Tensor(), accel::Tensor(), accel::Graph(), 0.0f};
    forward(x, bt);
    return bt.z.download_as<float>();
}

Params Model::params() const {
    Params p;
    p.in = in_;
    p.hidden = hidden_;
    p.w1 = w1_.download_as<float>();
    p.b1 = b1_.download_as<float>();
    p.w2 = w2_.download_as<float>();
    p.b2 = b2_.download_as<float>();
    return p;
}

EpochTimes epoch_times(const std::vector<double>& ms) {
    EpochTimes t;
    if (ms.empty()) return t;
    t.first_ms = ms.front();
    std::vector<double> steady(ms.size() > 1 ? ms.begin() + 1 : ms.begin(), ms.end());
    t.steady_epochs = ms.size() - 1;
    std::sort(steady.begin(), steady.end());
    const std::size_t h = steady.size() / 2;
    t.steady_median_ms = steady.size() % 2 ? steady[h] : 0.5 * (steady[h - 1] + steady[h]);
    t.steady_min_ms = steady.front();
    t.steady_max_ms = steady.back();
    return t;
}

TrainResult train(const std::shared_ptr<accel::Device>& device, const Params& init, const Dataset& train,
                  const Dataset& test, const TrainConfig& cfg, const std::function<void(std::size_t, double)>& on_epoch) {
    TrainResult r;
    r.backend = device->selector();
    r.dtype = accel::dtype_name(cfg.dtype);
    r.device_name = device->info().name;
    Model model(device, init, cfg.dtype);
    double ms = 0.0;
    for (std::size_t e = 0; e < cfg.epochs; ++e) {
        const auto t0 = std::chrono::steady_clock::now();
        const double loss = model.train_epoch(train, cfg, e);
        device->synchronize();  // the Adam steps after the last loss read are part of the epoch
        r.epoch_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        ms += r.epoch_ms.back();
        r.epoch_loss.push_back(loss);
        if (on_epoch) on_epoch(e, loss);
    }
    r.ms_per_epoch = cfg.epochs ? ms / static_cast<double>(cfg.epochs) : 0.0;
    r.train_accuracy = accuracy(model.logits(train), train.y);
    r.test_accuracy = accuracy(model.logits(test), test.y);
    r.final_params = model.params();
    return r;
}

}  // namespace mlp
