#include "plan/replay.h"

namespace hl::gpu {

DecodeGraph::DecodeGraph(Device& d, const void* owner)
    : dev_(d), owner_(owner), early_(d.tune("decode.capture.submit_early") != 0) {
  dev_.begin_capture();
}

void DecodeGraph::cut(std::shared_ptr<Device::Segment> seg, bool live) {
  if (seg && early_) dev_.submit_now(seg);  // the step's own run of it: end() does not submit it again
  if (live) live_segments_.push_back(early_ ? nullptr : std::move(seg));
  else if (seg) items_.emplace_back(std::move(seg));
}

void DecodeGraph::begin_live() {
  if (in_live_) return;
  cut(dev_.end_segment(), false);
  in_live_ = true;
}

void DecodeGraph::live(const Tensor& out, Rerun rerun) {
  begin_live();
  cut(dev_.end_segment(), true);
  if (!out.device_current()) fail("decode replay: a live op ran on the host; replay needs every op on the device");
  items_.emplace_back(Live{out, std::move(rerun)});
  in_live_ = false;
}

void DecodeGraph::end(const Tensor& logits) {
  if (!capturing_) fail("decode replay: the step was already captured");
  cut(dev_.end_segment(), false);
  dev_.end_capture();
  capturing_ = false;
  if (!logits.device_current()) fail("decode replay: the logits are not on the device");
  logits_ = logits;
  size_t live = 0;
  if (!early_)  // else every segment has run already (cut())
    for (auto& item : items_) {
      if (auto* seg = std::get_if<std::shared_ptr<Device::Segment>>(&item)) dev_.submit(*seg, false);
      else if (auto& s = live_segments_.at(live++)) dev_.submit(s, false);
    }
  dev_.sync();
  live_segments_.clear();
}

Tensor DecodeGraph::replay(int32_t token, int64_t pos) {
  if (capturing_) fail("decode replay: the step is still being captured");
  // The GPU is idle until the step's first submission when the step before was waited for (its token feeds this one),
  // so the first segment goes at once, not when device.stream.flush_dispatches dispatches are queued.
  bool first = dev_.tune("decode.replay.early_flush") != 0;
  for (auto& item : items_) {
    if (auto* seg = std::get_if<std::shared_ptr<Device::Segment>>(&item)) {
      dev_.submit(*seg);
      if (first) dev_.flush(), first = false;
      continue;
    }
    Live& l = std::get<Live>(item);
    rerun_into_ = &l.out;
    const Tensor y = l.rerun(token, pos);
    rerun_into_ = nullptr;
    if (y.id() == l.out.id()) l.out.buffer_mut(dev_);  // written in place: any host copy is stale now
    else dev_.copy(y.buffer(dev_), l.out.buffer_mut(dev_), l.out.bytes());
  }
  dev_.flush();
  logits_.buffer_mut(dev_);  // rewritten by the last segment: a host copy from an earlier step is stale
  return logits_;
}

Tensor DecodeGraph::replay(const Tensor& ids, int64_t pos) {
  if (ids.type() != Tensor::Type::I32 || ids.numel() != 1 || !ids.device_current())
    fail("decode replay: the token ids must be one i32 on the device");
  token_ids_ = &ids;
  try {
    Tensor l = replay(-1, pos);
    token_ids_ = nullptr;
    return l;
  } catch (...) {
    token_ids_ = nullptr;
    throw;
  }
}

}  // namespace hl::gpu
