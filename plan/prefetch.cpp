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
  } pc;
  const auto& p = d.pipeline("prefetch", {{0, kWg}, {1, stride / 4}, {2, kPer}}, 1 + kRanges, sizeof pc);
  for (size_t r0 = 0; r0 < ranges.size(); r0 += kRanges) {
    pc = {};
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
    if (groups > d.info().max_workgroup_count[0]) fail("prefetch: {} words need {} workgroups, beyond the device's", most, groups);
    d.dispatch(p, bind, pc, u32(groups), u32(nr));
  }
}

}  // namespace hl::gpu
