// Decode replay: a decode step recorded once as command-list segments, cut at the live ops (OpDef::live: they
// depend on the token or the position), which are recorded afresh each step and write their outputs into the buffers
// the next segment reads (where their variant takes a preset output; else a copy follows). Everything else
// (projections, norms, MoE, the Gated DeltaNet with its states updated in place) is replayed as recorded.
#pragma once
#include <functional>
#include <memory>
#include <variant>
#include <vector>

#include "runtime/tensor.h"

namespace hl::gpu {

class DecodeGraph {
 public:
  // Runs a live op again for a new step: its output for this token and position.
  using Rerun = std::function<Tensor(int32_t token, int64_t pos)>;

  DecodeGraph(Device& d, const void* owner);  // begins the capture
  bool capturing() const { return capturing_; }
  const void* owner() const { return owner_; }
  // Before a live op's work (its own preparation included): the segment recorded so far is cut. Again before the
  // op's live() call: nothing more.
  void begin_live();
  // After a live op ran (while capturing): its commands belong to this step only; `out` is the tensor later
  // segments read, which each replay overwrites with rerun's result.
  void live(const Tensor& out, Rerun rerun);
  // Ends the capture and runs the captured step itself (its segments and its live ops' commands, in order).
  void end(const Tensor& logits);
  // One replayed step; returns its logits (the same tensor each step).
  Tensor replay(int32_t token, int64_t pos);
  // The same with the token read on the device: ids, an i32 [1, 1] device tensor (the step before's argmax), is what
  // the embedding's rerun gathers by, so the host need not wait for the step before to submit this one.
  Tensor replay(const Tensor& ids, int64_t pos);
  // While a live op reruns in replay(ids, pos): ids; null otherwise (the token is the host's).
  const Tensor* token_ids() const { return token_ids_; }
  // While a live op reruns in replay(): the tensor the later segments read, which the executor presets as the op's
  // output (a variant that takes a preset output writes there, and no copy follows); null otherwise.
  const Tensor* rerun_into() const { return rerun_into_; }

 private:
  struct Live {
    Tensor out;
    Rerun rerun;
  };
  // A segment just cut: run now (decode.capture.submit_early), else kept for end().
  void cut(std::shared_ptr<Device::Segment> seg, bool live);
  Device& dev_;
  const void* owner_;
  bool capturing_ = true, in_live_ = false, early_ = false;
  std::vector<std::variant<std::shared_ptr<Device::Segment>, Live>> items_;  // in step order
  std::vector<std::shared_ptr<Device::Segment>> live_segments_;  // the capture step's own live commands
  Tensor logits_;
  const Tensor* rerun_into_ = nullptr;
  const Tensor* token_ids_ = nullptr;
};

}  // namespace hl::gpu
