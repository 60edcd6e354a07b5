// The op registry: every op of the forward pass with its signature written once (named inputs, weights,
// states, outputs, parameters), and every variant that implements it ("reference", "vulkan:<name>", ...).
// All variants of an op take the same OpArgs, so tests, validate mode and experiments treat them alike.
// Each op registers itself from its folder (ops/<op>/op.cpp, called from ops/all_ops.cpp).
#pragma once
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "runtime/tensor.h"
#include "model/weight_cache.h"
#include "model/weights.h"
#include "ops/golden.h"

namespace hl::gpu {

// One call of an op: tensors by name (inputs; states, updated in place; outputs, set by the variant),
// weights by reference (each variant materialises them where it needs them), scalar parameters.
struct OpArgs {
  std::map<std::string, Tensor> t;
  std::map<std::string, WeightRef> w;
  std::map<std::string, double> p;

  const Tensor& in(const std::string& name) const;
  Tensor& state(const std::string& name);
  void set(const std::string& name, Tensor v) { t[name] = std::move(v); }
  const WeightRef& weight(const std::string& name) const;
  double param(const std::string& name) const;
  int64_t iparam(const std::string& name) const { return int64_t(param(name)); }
};

// How big a case is: Test (small: the op's tests, on lavapipe in CI), Quick (the experiment on a CPU device),
// Full (the model's real shapes).
enum class Scale { Test, Quick, Full };

// What a case must move and compute at the least: every input read once, every output written once.
struct Cost {
  double bytes = 0, flops = 0;
};

// One case of an op: a shape, fresh random inputs for it, and its napkin math.
struct Case {
  std::string label;                     // "T=1024"
  std::string group;                     // the series it belongs to ("f32 decode", "q4_K", ...): an experiment's parts
  std::map<std::string, double> shape;   // named sizes; the first is the x axis of the plots
  std::function<OpArgs(std::mt19937_64&)> inputs;  // fresh random inputs (never zeros)
  Cost cost;
  std::map<std::string, uint32_t> tune;  // tuning overrides for this case (a sweep point)
};

// A kernel tuning parameter: its full key ("<op>.<variant>.<param>"), its default, and the device profiles
// ("nvidia-hopper", "amd-rdna4", "lavapipe", "generic") that override it. Declared with the variant (or the op)
// that reads it; Device::tune(key) then finds it (HYBRIDLAB_TUNE and ScopedTuning override both).
struct Tunable {
  std::string key;
  uint32_t value = 0;
  std::map<std::string, uint32_t> per_profile;
};

struct OpDef {
  std::string name;
  std::string summary;  // one line: what it computes, with shapes
  std::vector<std::string> inputs, weights, states, outputs, params;
  // Depends on the token or the position (embed, rope, attention): a captured decode step records it afresh
  // each step instead of replaying it (plan/executor.h).
  bool live = false;
  // Composite ops (gdn_prep, add_rmsnorm): with the reference variant the forward pass runs these parts instead,
  // each as the plan picks it.
  std::vector<std::string> parts;
  // The outputs to compare after the reference ran on `ref` (every output, or those it set).
  std::vector<std::string> outputs_set(const OpArgs& ref) const;
  std::vector<Tunable> tunables;  // read by several of its variants (shared helpers)
  // Its cases (ops/<op>/cases.cpp): inputs at each scale with the bytes and flops they must move and compute. Its
  // tests run every variant against the reference on the Scale::Test cases; its experiment times them on the
  // Quick or Full ones. tolerance: the relative L2 against the reference that f32 arithmetic in another order
  // stays within (a variant computing in lower precision is held to its precision_tolerance instead).
  std::function<std::vector<Case>(Scale)> cases;
  double tolerance = 1e-5;
  std::vector<OpCase> goldens;  // golden/ops/<name>.safetensors (ops/cases.h)
  // Trailing outputs a call may leave unset (matmul_group's y1..y3 for fewer weights): checks compare those the
  // reference sets.
  bool optional_outputs = false;
};

// Materialised weights, cached per place: host f32 matrices for host variants, device buffers for
// Vulkan variants (env HYBRIDLAB_WEIGHT_CACHE_MB bounds the host side; the device side is bounded by
// HYBRIDLAB_DEVICE_WEIGHT_CACHE_MB, default 80% of the device-local heap).
class WeightStore {
 public:
  explicit WeightStore(Device* dev);
  Tensor host(const WeightRef& w);
  Tensor device(const WeightRef& w);
  // The weight's raw storage rows (ggml blocks for a quantized source, floats for F32), back to back from
  // byte 0, as an i32 tensor [1, words] used as an untyped word buffer (row r starts at byte
  // r * quant::row_bytes(w.storage_type(), w.cols)). Zero padded to whole 16-byte units plus 16 spare
  // bytes, so kernels may read whole uvec4s and one word past any value. Cached like device() (a cache of
  // its own with the same budget).
  Tensor device_raw(const WeightRef& w);
  // The same blocks with each row planar (quant::planar_row: every block's first field, then every block's
  // second, ...) and rows at a stride of row_bytes rounded up to 16 bytes (planar_row_stride), so each plane
  // of a Q6_K row starts on a 16-byte boundary; padded like device_raw. Block types only. Cached likewise.
  Tensor device_planar(const WeightRef& w);
  static size_t planar_row_stride(const WeightRef& w);
  // The same blocks in chunk columns: rows in groups of `group` (an expert's rows), each block padded to whole 16-byte
  // chunks, and within a group chunk c of block b of every row back to back (byte ((b chunks + c) group + r) 16 of the
  // group, chunks = ceil(block bytes / 16)), so that one unit of neighbouring rows lies in neighbouring bytes. K-quant
  // types; 16 spare bytes. Cached likewise (one group size per weight).
  Tensor device_chunk_columns(const WeightRef& w, int64_t group);
  Vec<float> host_vec(const WeightRef& w) { return w.to_vec<float>(); }
  // A device tensor [rows, cols] kept under `key` for ops that need the same large scratch on every call
  // (route_pack's dequantized expert stacks, a GiB per layer at full size): one buffer reused, instead of a
  // pool allocation per call that the pool, still holding the last layer's in the stream, misses and must
  // drain for. Calls that reuse it are ordered by the device's barrier tracking (runtime/device.h).
  Tensor scratch(const std::string& key, int64_t rows, int64_t cols);
  // A small constant table kept on the device under `key` (rope's frequencies): made and uploaded by `make` on the
  // first call, the same device tensor after, so a decode step does not upload it again. The key must name
  // everything the table depends on, or `version` says which of several the key holds now: a key holds one table at a
  // time, and a call with another version replaces it (commands already issued keep the old buffer alive).
  Tensor constant(const std::string& key, const std::function<Tensor()>& make, const std::string& version = "");

 private:
  Device* dev_;
  WeightCache<Tensor> host_, device_, raw_, planar_;
  WeightCache<std::pair<Tensor, int64_t>> columns_;  // the chunk columns and their group
  std::map<std::string, Tensor> scratch_;
  std::map<std::string, std::pair<std::string, Tensor>> constant_;  // key -> (version, table)
};

struct VariantCtx {
  Device* dev = nullptr;  // null when no Vulkan device is open
  WeightStore* weights = nullptr;
  Device& device() const;  // Error when there is none
};

struct Variant {
  std::string op;
  std::string name;    // "reference", "vulkan:per_token", ...
  std::string family;  // "reference", "vulkan", ...: the text before ':'
  std::string summary;
  bool family_default = false;  // chosen by '<op>=<family>' and '*=<family>'
  // What `hybridlab ops` shows: "default" (a family default: what '*=<family>' picks), "baseline" (kept to
  // compare against) or "experimental". Family defaults are "default"; the rest must say which.
  std::string status = "experimental";
  bool per_token = false;       // walks a prefill chunk token by token (reported as a fallback)
  bool needs_device = false;
  // Its device work can be captured into a replayed decode step (false: it submits work of its own, as Halide's
  // Vulkan runtime does). capturable_on, where set, decides per device (a tunable may route its work through another
  // runtime: halide.vulkan.own_dispatch).
  bool capturable = true;
  std::function<bool(const Device& dev)> capturable_on;
  bool quantized_weights_only = false;  // reads ggml blocks directly: tests and experiments give it only those
  std::vector<quant::Type> weight_types;  // the only storage types it reads (empty: any its flags allow)
  // Whether it takes these arguments' weights (quantized_weights_only, weight_types): tests and experiments skip
  // the cases it does not.
  bool takes(const OpArgs& a) const;
  // Relative-L2 error this variant may show against the f32 reference because it deliberately computes in
  // lower precision (int8 activations, f16 matrix inputs); 0 = none beyond f32 rounding. Checks use the
  // larger of this and their own tolerance, and reports print it.
  double precision_tolerance = 0;
  bool cooperative_matrices = false;  // its products run on matrix units: reports hold it to the f16 matrix ceiling
  // Why this variant cannot run on `dev` ("" = it can). Called only when needs_device.
  std::function<std::string(const Device& dev)> unavailable;
  std::function<void(VariantCtx&, OpArgs&)> run;
  // A variant that hands each call to another variant of its op (vulkan:auto): the name of the one to run for
  // these arguments ("" = run itself). Registry::resolve follows it, so the executor runs, times, validates and
  // reports the kernel that actually ran. Without `run`, running the variant runs what this picks.
  std::function<std::string(VariantCtx&, const OpArgs&)> delegate;
  bool delegates_only = false;  // it has no kernel of its own (set by the registry when delegate comes without run)
  std::vector<Tunable> tunables;
};

class Registry {
 public:
  static const Registry& get();  // every op and variant of hybridlab

  void add_op(OpDef def);
  void add_variant(Variant v);  // its op must exist; the name must be new

  const std::vector<OpDef>& ops() const { return ops_; }
  const OpDef& op(const std::string& name) const;  // Error listing the ops
  const Variant& variant(const std::string& op, const std::string& name) const;  // Error listing variants
  const Variant* family_default(const std::string& op, const std::string& family) const;  // or null
  std::vector<const Variant*> variants(const std::string& op) const;
  std::string availability(const Variant& v, const Device* dev) const;  // "" or why not
  // The variant that runs for these arguments: v, or where v delegates, what it picks (followed to the end).
  const Variant& resolve(const Variant& v, VariantCtx& c, const OpArgs& a) const;
  // Every declared tunable (ops' and variants'), for listings.
  std::vector<const Tunable*> tunables() const;

 private:
  std::vector<OpDef> ops_;
  std::vector<Variant> variants_;
};

// The host-side reference variant of an op: the oracle in f32 (name "reference", the reference family's default).
Variant reference_variant(std::string op, std::string summary, std::function<void(VariantCtx&, OpArgs&)> run);

}  // namespace hl::gpu
