// Row-wise argmax of logits [rows, vocab], for greedy decoding (hybridlab bench). On the device
// (plan/argmax.comp) when the logits are current there, so only the ids are downloaded; on the host
// otherwise. Ties go to the smallest column, as Eigen's maxCoeff; NaNs are skipped (a row of NaNs gives -1).
#pragma once
#include <vector>

#include "runtime/tensor.h"

namespace hl::gpu {

Tensor argmax_device(Device& d, const Tensor& x);      // I32 [rows, 1], left on the device
std::vector<int32_t> argmax_host(const Mat<float>& x);  // the CPU scan
// The device when x is current there (and d is given), else the host.
std::vector<int32_t> argmax_rows(Device* d, const Tensor& x);

}  // namespace hl::gpu
