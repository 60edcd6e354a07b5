// Decode prefetch: a dispatch that reads the weights an op will read soon, placed beside the op before it, so that
// their lines are in the last-level cache when that op runs. A decode step is a chain of dependent dispatches, each
// short of the read ceiling while its first loads wait on memory (reports/<device>/bandwidth.md's chained reads);
// the prefetch moves those waits beside the previous op's work. Results do not change: it writes nothing they read.
#pragma once
#include <vector>

#include "runtime/device.h"

namespace hl::gpu {

struct PrefetchRange {
  BufferPtr buffer;
  uint64_t offset = 0, bytes = 0;  // multiples of 4
};

// Touches one word per `stride` bytes (the profile's decode.prefetch.stride, 32 by default) of each range, in
// dispatches placed one level past the one that wrote `after` (so beside `after`'s consumers; `after` is bound, not
// read). With the profile's decode.prefetch.volatile (1, the default) the loads are volatile and it writes nothing; at 0
// they are plain loads whose xor each dispatch may write to a sink of its own (plan/prefetch_sink.comp).
void prefetch(Device& d, const BufferPtr& after, const std::vector<PrefetchRange>& ranges);

}  // namespace hl::gpu
