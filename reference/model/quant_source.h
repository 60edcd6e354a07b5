// Quantized weights held in host memory: rows stored as ggml blocks (quant::quantize_row), served raw
// (read_raw_rows, for kernels that read blocks directly) and dequantized (read_rows, the oracle's value).
// Tests and experiments use them where a GGUF file would provide quantized tensors.
#pragma once
#include <memory>
#include <string>

#include "model/weights.h"

namespace hl {

// w quantized row by row to type t (Q4_K, Q5_K, Q6_K, Q8_0, F16, ...); w.cols() must be a multiple of
// the block size.
std::shared_ptr<const TensorSource> quantized_source(std::string name, const Mat<float>& w, quant::Type t);
// The same for every row of src (read in slices, quantized in parallel; never held whole as floats).
std::shared_ptr<const TensorSource> quantized_source(std::string name, const TensorSource& src, quant::Type t);
// Random blocks of type t (Q8_0, Q4_K, Q5_K or Q6_K; others: a quantized synthetic_source): random bytes with
// the scale fields set so that the values have about standard deviation `std`. Not the statistics of real
// quantized weights, but built at memory speed, for benchmarks where quantizing would dominate.
// Deterministic in seed.
std::shared_ptr<const TensorSource> random_quantized_source(std::string name, int64_t rows, int64_t cols, quant::Type t,
                                                            uint64_t seed, float std);
// The blocks behind it: blocks [first, first + count) of a stream of random blocks of type t (Q8_0, Q4_K, Q5_K or
// Q6_K; Error otherwise) written to raw; each byte a function of (seed, its position), so any run of blocks is
// the same whether made at once or in pieces, and in parallel.
void random_blocks(quant::Type t, uint8_t* raw, uint64_t first, uint64_t count, uint64_t seed, float std);
bool has_random_blocks(quant::Type t);

}  // namespace hl
