// hl::Tensor: a 2-D f32 or i32 array [rows, cols] that lives on the host, on a Vulkan device, or both,
// and moves only when an op on the other side needs it. Copies of a Tensor share storage (a handle);
// clone() makes an independent host copy. Every op of the plan executor takes and returns Tensors.
#pragma once
#include <memory>

#include "common.h"
#include "runtime/device.h"

namespace hl {

class Tensor {
 public:
  enum class Type { F32, I32 };

  Tensor() = default;
  static Tensor from(Mat<float> m);
  static Tensor from_i32(IMat m);
  static Tensor host(int64_t rows, int64_t cols, Type t = Type::F32);  // zeros
  static Tensor device(gpu::Device& d, int64_t rows, int64_t cols, Type t = Type::F32);  // undefined contents
  static Tensor device_zeros(gpu::Device& d, int64_t rows, int64_t cols, Type t = Type::F32);  // zeroed on the device
  // On the device in a resident placement (Device::alloc_resident, for weights), undefined contents.
  static Tensor resident(gpu::Device& d, int64_t rows, int64_t cols, Type t = Type::F32);

  bool valid() const { return bool(s_); }
  int64_t rows() const { return s_->rows; }
  int64_t cols() const { return s_->cols; }
  int64_t numel() const { return s_->rows * s_->cols; }
  Type type() const { return s_->type; }
  size_t bytes() const { return size_t(numel()) * 4; }
  bool host_current() const { return s_->host_ok; }
  bool device_current() const { return s_->dev_ok; }

  // Host access; downloads (and waits for the device) when the device copy is newer. *_mut invalidates
  // the device copy.
  const Mat<float>& f32() const;
  Mat<float>& f32_mut();
  const IMat& i32() const;
  IMat& i32_mut();

  // Device access; uploads when the host copy is newer. buffer_mut also invalidates the host copy (the
  // op is about to write it).
  const gpu::BufferPtr& buffer(gpu::Device& d) const;
  const gpu::BufferPtr& buffer_mut(gpu::Device& d);

  Tensor clone() const;  // an independent host copy

  // Identity of the storage (copies of one Tensor share it).
  const void* id() const { return s_.get(); }
  // Makes this handle's storage (and so every copy of it) hold what `other` holds: for a placeholder whose
  // value another op produced (PlanExecutor's folded add_rmsnorm). Neither may be written afterwards.
  void alias(const Tensor& other) { *s_ = *other.s_; }

 private:
  struct Storage {
    int64_t rows = 0, cols = 0;
    Type type = Type::F32;
    Mat<float> f;
    IMat i;
    bool host_ok = false, dev_ok = false;
    gpu::BufferPtr buf;
    gpu::Device* dev = nullptr;
  };
  void ensure_host() const;
  void ensure_buffer(gpu::Device& d) const;
  std::shared_ptr<Storage> s_;
};

}  // namespace hl
