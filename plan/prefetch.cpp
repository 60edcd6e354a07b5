// Decode prefetch (plan/prefetch.h).
#include "plan/prefetch.h"

#include <algorithm>

#include "ops/vulkan_variant.h"

namespace hl::gpu {

void prefetch(Device& d, const BufferPtr& after, const std::vector<PrefetchRange>& ranges) {
  constexpr uint32_t kWg = 256, kPer = 4, kRanges = 8;
  const uint32_t stride = std::max<uint32_t>(4, d.tune("decode.prefetch.stride")) / 4 * 4;
  struct {
    uint32_t first[kRanges], words[kRanges];
    uint32_t never;
  } pc;
  // Volatile loads (prefetch.comp) or plain loads whose xor a sink may take (prefetch_sink.comp: a sink per dispatch,
  // so that no two prefetches are ordered by it).
  const bool sink = d.tune("decode.prefetch.volatile") == 0;
  const auto& p = d.pipeline(sink ? "prefetch_sink" : "prefetch", {{0, kWg}, {1, stride / 4}, {2, kPer}},
                             1 + kRanges + (sink ? 1 : 0), sizeof pc);
  for (size_t r0 = 0; r0 < ranges.size(); r0 += kRanges) {
    pc = {};
    pc.never = 0xffffffffu;
    std::vector<BufferPtr> bind{after};
    const size_t nr = std::min<size_t>(kRanges, ranges.size() - r0);
    uint64_t most = 0;
    for (size_t i = 0; i < kRanges; ++i) {
      const PrefetchRange& r = ranges[r0 + std::min(i, nr - 1)];  // unused slots bound to a used buffer, never read
      if (i < nr) {
        if (r.offset % 4 || r.bytes % 4 || r.offset + r.bytes > r.buffer->size() || (r.offset + r.bytes) / 4 > UINT32_MAX)
          fail("prefetch: bytes [{}, {}) of a {}-byte buffer are not whole words within it and 32-bit indices", r.offset,
               r.offset + r.bytes, r.buffer->size());
        pc.first[i] = u32(r.offset / 4), pc.words[i] = u32(r.bytes / 4);
        most = std::max<uint64_t>(most, pc.words[i]);
      }
      bind.push_back(r.buffer);
    }
    const uint64_t per_group = uint64_t(kWg) * kPer * (stride / 4), groups = (most + per_group - 1) / per_group;
    if (groups == 0) continue;
    if (sink) bind.push_back(d.alloc(kWg * 4));
    if (groups > d.info().max_workgroup_count[0]) fail("prefetch: {} words need {} workgroups, beyond the device's", most, groups);
    d.dispatch(p, bind, pc, u32(groups), u32(nr));
  }
}

}  // namespace hl::gpu
