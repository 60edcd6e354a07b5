// safetensors: reading (memory-mapped, single file or sharded through model.safetensors.index.json) and
// writing (the oracle's outputs and the golden op tensors). Format: u64 header length, JSON header
// {name: {dtype, shape, data_offsets}}, then the raw little-endian data.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common.h"
#include "io/mapped_file.h"

namespace hl {

enum class DType { F64, F32, F16, BF16, I64, I32, U8 };
const char* dtype_name(DType t);
size_t dtype_size(DType t);

struct TensorView {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  const uint8_t* data = nullptr;
  size_t nbytes = 0;
  std::shared_ptr<MappedFile> file;  // keeps the mapping alive

  int64_t numel() const;
  std::string shape_str() const;
  // Converts elements [first, first + n) to float (F64/F32/F16/BF16) or throws for integer tensors.
  void read_f32(int64_t first, int64_t n, float* out) const;
  void read_f64(int64_t first, int64_t n, double* out) const;
  std::vector<int64_t> read_i64() const;  // integer tensors (token ids)
  template <class S> Mat<S> to_mat(int64_t rows, int64_t cols) const;  // whole tensor, reshaped
  template <class S> Mat<S> to_mat() const;  // 1-D -> [1, n], 2-D as is, N-D -> [prod(first N-1), last]
};

std::string shape_str(const std::vector<int64_t>& shape);

class SafetensorsFile {
 public:
  static SafetensorsFile open(const std::string& path);  // throws hl::Error on any malformed header
  const TensorView* find(const std::string& name) const;
  const TensorView& at(const std::string& name) const;  // throws naming the tensor and file
  const std::map<std::string, TensorView>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::map<std::string, TensorView> tensors_;
  std::map<std::string, std::string> metadata_;
};

// All tensors of a checkpoint directory: model.safetensors.index.json if present (sharded), else every
// *.safetensors file in the directory.
class SafetensorsSet {
 public:
  static SafetensorsSet open_dir(const std::string& dir);
  const TensorView* find(const std::string& name) const;
  std::vector<std::string> names() const;
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  std::map<std::string, TensorView> tensors_;
};

// A tensor to write: raw little-endian bytes of the given dtype.
struct OutTensor {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  template <class S> static OutTensor from_mat(const std::string& name, const Mat<S>& m, DType as = DType::F32);
  static OutTensor from_i64(const std::string& name, const std::vector<int64_t>& v);
};

void write_safetensors(const std::string& path, const std::vector<OutTensor>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace hl
