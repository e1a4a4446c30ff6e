// accel/ops.hpp — the op set, the same on every backend.
//
// Every op validates here, once, before any backend is called: all tensors on
// one device and of one dtype (f32, f64, f16, bf16; accel/dtype.hpp), shapes as documented (the message gives the shapes received
// and the rule broken), a caller-given launch geometry within the device's
// limits. Outputs are written only after validation passed, so a rejected
// call leaves them untouched. Ops are enqueued on Options::stream (default:
// the device's default stream) and may return before the work finished;
// Tensor::download() and the blocking copies use the default stream, so
// results of ops on the default stream are visible to them.
//
// Two paths per op where a platform has a library (see OpPath): `native`
// (accel's own kernel) and `vendor` (CPU BLAS on host, CLBlast on OpenCL,
// cuBLAS on CUDA, Kokkos Kernels on Kokkos). Only matmul and dense have a
// vendor path; it is composed here, the same on every backend: the library's
// gemm, then one bias + activation pass (accel/op_table.hpp, Op::gemm and
// Op::bias_activation). A (op, dtype, path) the device has no kernel for
// raises Unsupported naming all four. Path choice: Options::path; when `automatic`, the
// environment variable ACCEL_OP_PATH (native|vendor|auto, any case) decides, and
// `auto` (default) means native where the device has no vendor path, else the
// path that ran matmul faster on this device at the call's shape class
// (path_evidence(): measured once per device, driver, library version and
// shape class, then recorded).
// Asking for vendor explicitly where the device has none raises Unsupported.
//
// Deterministic mode (Options::deterministic, else Device::deterministic(),
// which ACCEL_DETERMINISTIC=1 turns on): every op runs its native kernel,
// which the device's backend promises (DeviceInfo::determinism) gives the
// same bits on every run, stream and thread count, and for matmul, dense and
// dense_backward's dx the same row i whatever the number of rows; `auto`
// then means native, whatever was measured. What cannot keep the promise is
// refused with Unsupported naming the reason, never run: the vendor path
// asked for (Options::path or ACCEL_OP_PATH; a BLAS picks other kernels for
// other shapes and thread counts), or a device whose backend promises
// nothing. Ops a program defines (ops::run) and its own kernels
// (accel/user_kernel.hpp) are its own code: the mode does not cover them.
#pragma once

#include <accel/device.hpp>
#include <accel/tensor.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace accel {
namespace ops {

/// How the caller picks a path (see file comment).
enum class PathChoice { automatic, native, vendor };

/// Per-call options shared by every op. Converts from a stream or a path,
/// so that an op on a stream is one expression: `ops::add(a, b, c, *stream)`
/// (or `stream`, the handle Device::create_stream() returns), and
/// `ops::matmul(a, b, c, {}, ops::PathChoice::vendor)`.
struct Options {
    Options() = default;
    /// Enqueue on `s` (of the tensors' device).
    Options(Stream& s) : stream(&s) {}  // NOLINT(google-explicit-constructor): the point is the conversion
    /// Enqueue on *s; a null handle means the default stream.
    Options(const std::unique_ptr<Stream>& s) : stream(s.get()) {}  // NOLINT(google-explicit-constructor)
    /// Run on path `p`, with launch geometry `g` and on stream `s` (the
    /// fields below, in their order: `{PathChoice::native, {}, nullptr}`).
    Options(PathChoice p, std::optional<LaunchGeometry> g = std::nullopt,  // NOLINT(google-explicit-constructor)
            Stream* s = nullptr)
        : path(p), geometry(g), stream(s) {}

    PathChoice path = PathChoice::automatic;
    /// Launch geometry; default: Device::default_geometry(). Checked against
    /// the device's limits (InvalidArgument when outside them).
    std::optional<LaunchGeometry> geometry;
    /// Stream to enqueue on; nullptr = the device's default stream. Must
    /// belong to the tensors' device.
    Stream* stream = nullptr;
    /// Deterministic mode for this call (file comment): true on, false off,
    /// nullopt the device's setting (Device::deterministic()).
    std::optional<bool> deterministic;
};

/// Whether an op on `device` under `options` runs in deterministic mode:
/// options.deterministic when set, else device.deterministic(). Thread-safe;
/// never throws.
bool deterministic_mode(const Device& device, const Options& options) noexcept;

/// Parses an op-path name as ACCEL_OP_PATH holds it: "native", "vendor", or
/// "auto" / empty (PathChoice::automatic); case-insensitive, surrounding
/// blanks ignored. Throws InvalidArgument quoting the text (its first 64
/// characters when longer) and the accepted names for anything else.
/// Thread-safe (pure).
PathChoice parse_path_choice(const std::string& text);

/// The activation named `text`: "none", "relu", "sigmoid", "gelu" or
/// "gelu_tanh" (exact, as
/// activation_name() writes them; those dense applies). Throws
/// InvalidArgument quoting the text (its first 64 characters when longer)
/// and the accepted names for anything else. Thread-safe (pure).
Activation parse_activation(const std::string& text);

/// A product's shape: op(A) [m, k] · op(B) [k, n] (counts of elements), and
/// which operands are stored transposed (A as [k, m], B as [n, k]; dense's
/// x·Wᵀ has trans_b): the kernels a device picks differ with the layout, so
/// the automatic path measures the layout the call uses.
struct GemmShape {
    std::size_t m = 256, n = 256, k = 256;
    bool trans_a = false, trans_b = false;
};

/// The class of products of shape `s`, which share one automatic decision:
/// each dimension rounded to the nearest power of two (in log scale; 0
/// counts as 1), then the largest halved while m·n·k exceeds 2^27 (a 512³
/// product); the transposes kept. 256×4096×30 and 256×4096×32 share one,
/// 4096×30×256 (a skinny weight gradient) does not share 256×256×256's, nor
/// A·B A·Bᵀ's. Thread-safe (pure).
GemmShape path_class(GemmShape s);

/// The path `op` will run on `device` in `dtype` under `options` for a
/// product of shape `shape` (matmul: its op(a)·op(b) and transposes; dense:
/// [batch, in]·[out, in]ᵀ; other ops ignore it): see the file comment; `auto` for a dtype other than f32
/// takes the vendor path where the device has one for that dtype (the
/// libraries outrun accel's kernels there). In deterministic mode
/// (deterministic_mode) native, always. Throws Unsupported when vendor
/// is demanded (by Options or ACCEL_OP_PATH=vendor for an op that has a
/// vendor path) but the device has none for the dtype, or in deterministic
/// mode at all; in deterministic mode also when the device's backend does
/// not promise reproducible kernels (DeviceInfo::determinism.reproducible),
/// or, for matmul and dense, batch-invariant ones; InvalidArgument
/// for a bad ACCEL_OP_PATH value (see parse_path_choice).
OpPath resolve_path(const Device& device, Op op, const Options& options = {}, DType dtype = DType::f32,
                    GemmShape shape = {});

/// Why PathChoice::automatic takes the path it takes for matmul and dense on
/// a device at one shape class (both ops share the decision: dense's vendor
/// path is the same GEMM).
struct PathEvidence {
    OpPath path = OpPath::native;  ///< the path `automatic` takes
    double native_gflops = 0;      ///< accel's kernel at `shape`, best of 3 runs, GFLOP/s (host clock)
    double vendor_gflops = 0;      ///< the vendor library, measured the same way (0: none, or it failed)
    /// The product measured: the first call's of its class, the largest
    /// dimension halved while above 512³ (0s: nothing measured). Not the
    /// class's power of two: a library's padding path at N = 30 can run
    /// 1.7x slower than at N = 32 (CLBlast on PoCL).
    GemmShape shape{0, 0, 0};
    std::string key;               ///< what the record is for: accel version, backend, device, driver, runtime, library, class
    std::string source;            ///< "measured now", "recorded in FILE", or why nothing was measured
};

/// The evidence recorded for `device` at the class of `shape` in this
/// process or in the cache file (ACCEL_CACHE_DIR, else
/// $XDG_CACHE_HOME/accel, else ~/.cache/accel; file paths.json), without
/// measuring; nullopt when there is none. The file is untrusted: an entry
/// that does not parse is ignored. Thread-safe; never throws.
std::optional<PathEvidence> recorded_path_evidence(const Device& device, GemmShape shape = {});

/// The evidence for `device` at the class of `shape`: native when it has no
/// vendor path; else the recorded evidence; else measured now (matmul at
/// `shape` with its transposes, the largest dimension halved while above
/// 512³, recorded for its class, path_class(shape): one untimed run per path, then three rounds
/// alternating the paths, best run of each, host clock between
/// synchronizations; native is taken when it ran at least 1.2× as fast as
/// vendor; a device where matmul 16³ takes 50 ms or more, a simulator, is
/// not measured and takes native) and recorded (in memory, and in the cache
/// file when its directory can be written). One measurement per device at a
/// time; other threads wait for it. A vendor path that throws during the
/// measurement is not chosen (and not recorded). Throws what the native
/// matmul throws (DeviceError, OutOfMemory) if the native path fails, and
/// InvalidArgument when ACCEL_CACHE_DIR names a file (not a folder).
PathEvidence path_evidence(const Device& device, GemmShape shape = {});

/// Which operands are transposed in matmul.
struct Transpose {
    bool a = false;
    bool b = false;
};

/// c = a + b elementwise. a, b, c: the same shape (rank 1 or 2). c may alias a or b.
void add(const Tensor& a, const Tensor& b, Tensor& c, const Options& o = {});
/// c = a · b elementwise (one rounding of the product to c's dtype). a, b,
/// c: the same shape (rank 1 or 2), device and dtype. c may alias a or b.
/// Throws InvalidArgument on mismatched devices, dtypes or shapes or a bad
/// geometry, Unsupported where the device has no kernel (file comment).
void mul(const Tensor& a, const Tensor& b, Tensor& c, const Options& o = {});
/// y = x elementwise by a kernel: BabelStream's copy (which moves 2 arrays;
/// Device::copy_device_to_device moves bytes without one). x, y: the same
/// shape (rank 1 or 2), device and dtype. Throws as mul.
void copy(const Tensor& x, Tensor& y, const Options& o = {});
/// y = s · x elementwise: BabelStream's mul (which moves 2 arrays). s is
/// rounded once to the compute type (f64 for f64, f32 otherwise); the
/// product is rounded once to y's dtype. x, y: the same shape (rank 1 or 2),
/// device and dtype; y may alias x. Throws InvalidArgument on mismatched
/// devices, dtypes or shapes or a bad geometry, Unsupported where the device
/// has no kernel.
void scale(const Tensor& x, double s, Tensor& y, const Options& o = {});
/// a = b + s · c elementwise: BabelStream's triad (3 arrays), BLAS's axpy
/// into another output. s as in scale; the sum is computed in the compute
/// type (an fma where the backend fuses it) and rounded once to a's dtype.
/// a, b, c: the same shape (rank 1 or 2), device and dtype; a may alias b
/// or c. Throws as scale.
void triad(const Tensor& b, const Tensor& c, double s, Tensor& a, const Options& o = {});
/// y[0] = Σ_i a[i] · b[i] over every element of a and b (the same shape,
/// device and dtype; any rank): BabelStream's dot (2 arrays read). The sum
/// is accumulated in the compute type (f64 for f64, f32 otherwise) in a
/// fixed order given by n and the geometry (KernelArgs' DotArgs), so a call
/// gives the same bits on every run, and y[0] is rounded once to y's dtype.
/// An empty a gives 0. y: one element of the same dtype, aliasing neither
/// input. Allocates a temporary of one value per block (a graph that
/// captures the call keeps it). Throws InvalidArgument on mismatched devices,
/// dtypes or shapes, a y of more than one element or one that aliases an
/// input, or a bad geometry, Unsupported where the device has no kernel,
/// OutOfMemory when the temporary does not fit.
void dot(const Tensor& a, const Tensor& b, Tensor& y, const Options& o = {});
/// y = 1/(1+exp(-x)) elementwise, evaluated stably for large |x|
/// (exp of a non-positive argument only). y may alias x.
void sigmoid(const Tensor& x, Tensor& y, const Options& o = {});
/// y = max(x, 0) elementwise; NaN stays NaN (as PyTorch), −Inf gives 0. y may alias x.
void relu(const Tensor& x, Tensor& y, const Options& o = {});
/// dx = dy where x > 0, else 0 (ReLU's gradient; 0 at x == 0 as in PyTorch).
/// x = NaN gives 0 (NaN > 0 is false), where PyTorch's threshold_backward
/// passes dy; a NaN of dy where x > 0 is passed on.
/// dy, x, dx: one shape.
void relu_backward(const Tensor& dy, const Tensor& x, Tensor& dx, const Options& o = {});
/// dx = dy · y · (1 − y), the sigmoid's gradient given its output y. dy, y, dx: one shape.
void sigmoid_backward(const Tensor& dy, const Tensor& y, Tensor& dx, const Options& o = {});
/// GELU, y = x·Φ(x) = x·(1 + erf(x/√2))/2 elementwise (Hendrycks & Gimpel,
/// "Gaussian Error Linear Units", 2016; PyTorch's gelu, approximate='none').
/// gelu(+Inf) = +Inf and gelu(−Inf) = −0, the limits (PyTorch's x·Φ(x)
/// gives NaN at −Inf); NaN stays NaN; ±0 keep their sign. y may alias x.
void gelu(const Tensor& x, Tensor& y, const Options& o = {});
/// GELU's tanh approximation, y = x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))/2
/// (PyTorch's gelu, approximate='tanh'); saturates for large |x| (no NaN
/// where x³ overflows), −0 at −Inf. y may alias x.
void gelu_tanh(const Tensor& x, Tensor& y, const Options& o = {});
/// dx = dy·(Φ(x) + x·φ(x)), φ(x) = exp(−x²/2)/√(2π): gelu's gradient given
/// its input x (the order of relu_backward: dy first). dy, x, dx: one shape.
void gelu_backward(const Tensor& dy, const Tensor& x, Tensor& dx, const Options& o = {});
/// dx = dy·gelu_tanh'(x): with u = √(2/π)(x + 0.044715x³), t = tanh u,
/// (1 + t)/2 + x·(1 − t²)/2·√(2/π)(1 + 3·0.044715x²). dy, x, dx: one shape.
void gelu_tanh_backward(const Tensor& dy, const Tensor& x, Tensor& dx, const Options& o = {});

/// C[M,N] = op(A)·op(B), row-major. op(A) is A[M,K] (or A[K,M] with t.a),
/// op(B) is B[K,N] (or B[N,K] with t.b). All rank 2; inner dimensions must
/// agree; c must be [M,N] and must not alias a or b. K == 0 gives zeros.
/// Native tiled kernels accept the block shapes their backend documents.
void matmul(const Tensor& a, const Tensor& b, Tensor& c, Transpose t = {}, const Options& o = {});

/// y[batch,out] = act(x[batch,in]·W[out,in]ᵀ + bias[out]), W laid out as
/// PyTorch's nn.Linear.weight. bias: a tensor, or std::nullopt (no bias). x may be rank 1
/// [in] (batch 1; y then [out]). y must not alias x, W or bias. relu keeps
/// NaN, as ops::relu.
void dense(const Tensor& x, const Tensor& w, OptionalTensor bias, Tensor& y, Activation act = Activation::none,
           const Options& o = {});

/// Gradients of dense given dy (the gradient of the loss with respect to y)
/// and the forward's x, W and output y (needed for sigmoid/relu).
/// Outputs: dx[batch,in] (may be null: not computed), dw[out,in],
/// db[out] (may be null). Uses a temporary of dy's shape. Shapes as in dense.
/// gelu and gelu_tanh: their derivative is not a function of y, so they
/// need `pre_activation`, z = x·Wᵀ + bias [batch, out] (dense with
/// Activation::none gives it); InvalidArgument naming it when it is absent
/// or of another shape. Other activations ignore it.
void dense_backward(const Tensor& x, const Tensor& w, const Tensor& y, const Tensor& dy, Activation act,
                    Tensor* dx, Tensor& dw, Tensor* db, const Options& o = {},
                    OptionalTensor pre_activation = std::nullopt);

/// y[c] = Σ_r x[r,c]: x rank 2 [rows,cols], y rank 1 [cols] (the bias gradient).
void column_sum(const Tensor& x, Tensor& y, const Options& o = {});

/// Elementwise binary cross-entropy with logits, the stable form used by
/// PyTorch's BCEWithLogitsLoss: l = max(z,0) − z·t + log1p(exp(−|z|)).
/// z (logits), t (targets in [0,1]), l: one shape.
void bce_with_logits(const Tensor& z, const Tensor& t, Tensor& l, const Options& o = {});
/// Mean of bce_with_logits over all elements, returned to the host
/// (blocking: synchronizes the stream). Empty inputs give NaN, as PyTorch.
float bce_with_logits_loss(const Tensor& z, const Tensor& t, const Options& o = {});
/// Gradient of the mean loss: dz = (sigmoid(z) − t) / n, n = elements. One shape.
void bce_with_logits_backward(const Tensor& z, const Tensor& t, Tensor& dz, const Options& o = {});
/// dz = (sigmoid(z) − t) · scale, one shape: the gradient of a loss that
/// weighs each element by `scale`, e.g. 1/B when z holds this process's
/// shard of a batch of B elements spread over several processes (the
/// shards' dz then add up to the batch mean's gradient). Throws
/// InvalidArgument when scale is not finite, and as bce_with_logits_backward.
void bce_with_logits_backward_scaled(const Tensor& z, const Tensor& t, Tensor& dz, float scale,
                                     const Options& o = {});

/// y = x converted to y's dtype, elementwise (PyTorch's Tensor.to(dtype)):
/// widening is exact, narrowing rounds to nearest, ties to even; NaN and
/// ±Inf are kept, values beyond the target's range become ±Inf. x and y: one
/// shape, on one device, of any dtypes (the one op whose operands may
/// differ in dtype); y must not alias x unless both have one dtype. The
/// kernel is looked up by y's dtype; it converts from every source dtype.
void convert(const Tensor& x, Tensor& y, const Options& o = {});

/// Adam hyper-parameters; defaults are torch.optim.Adam's.
struct AdamParams {
    float lr = 1e-3f;
    float beta1 = 0.9f;
    float beta2 = 0.999f;
    float eps = 1e-8f;
};
/// One Adam update of `param` in place, with moment tensors m and v (same
/// shape, zero-initialized by the caller before step 1). `step` is the
/// 1-based step count t. Math: Kingma & Ba 2015, in PyTorch's arrangement
/// (torch.optim.Adam, single-tensor form), per element:
///   m = beta1*m + (1-beta1)*g;  v = beta2*v + (1-beta2)*g*g;
///   p -= step_size * m / (sqrt(v) / bias_correction2_sqrt + eps)
/// with step_size = lr / (1 - beta1^t), bias_correction2_sqrt = sqrt(1 - beta2^t)
/// (KernelArgs::scalars {beta1, beta2, eps, step_size, bias_correction2_sqrt}),
/// computed in f32 (f64 for f64 tensors). Throws InvalidArgument for step == 0 or a
/// non-positive lr / eps, betas outside [0,1).
void adam_step(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, std::size_t step,
               const AdamParams& hp = {}, const Options& o = {});
/// adam_step with the step count read from `step_count` each time the update
/// is enqueued: at this call and, when it is captured (accel/graph.hpp), at
/// every replay of the graph, as PyTorch's Adam(capturable=True) keeps its
/// step on the device. The program advances the count between replays (one
/// training step captured once: ++t; step.launch()). `step_count` must
/// outlive every graph that captured the call. Throws as adam_step, for a
/// count of 0 at the call; a replay with the count at 0 throws
/// InvalidArgument before any of the graph's later kernels is enqueued
/// (the ones before it are).
void adam_step_from(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const std::size_t& step_count,
                    const AdamParams& hp = {}, const Options& o = {});

/// Runs an op a program defined (accel::define_op) whose operands all have
/// one shape and dtype (elementwise form): `inputs` and `outputs` in the
/// order of its OpInfo, on the device's kernel registered for it
/// (KernelTable::add; KernelArgs::n = elements). Throws
/// InvalidArgument for a wrong operand count, a null operand, mixed devices,
/// dtypes or shapes, an output over part of an input's memory (the input
/// itself is fine: in place), and Unsupported where the device has no kernel
/// for it (naming op, dtype, path and device).
void run(Op op, const std::vector<const Tensor*>& inputs, const std::vector<Tensor*>& outputs,
         const Options& o = {});
}  // namespace ops
}  // namespace accel
