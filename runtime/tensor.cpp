#include "runtime/tensor.h"

namespace hl {

Tensor Tensor::from(Mat<float> m) {
  Tensor t;
  t.s_ = std::make_shared<Storage>();
  t.s_->rows = m.rows(), t.s_->cols = m.cols(), t.s_->type = Type::F32;
  t.s_->f = std::move(m);
  t.s_->host_ok = true;
  return t;
}

Tensor Tensor::from_i32(IMat m) {
  Tensor t;
  t.s_ = std::make_shared<Storage>();
  t.s_->rows = m.rows(), t.s_->cols = m.cols(), t.s_->type = Type::I32;
  t.s_->i = std::move(m);
  t.s_->host_ok = true;
  return t;
}

Tensor Tensor::host(int64_t rows, int64_t cols, Type type) {
  return type == Type::F32 ? from(Mat<float>::Zero(rows, cols)) : from_i32(IMat::Zero(rows, cols));
}

Tensor Tensor::device(gpu::Device& d, int64_t rows, int64_t cols, Type type) {
  Tensor t;
  t.s_ = std::make_shared<Storage>();
  t.s_->rows = rows, t.s_->cols = cols, t.s_->type = type;
  t.ensure_buffer(d);
  t.s_->dev_ok = true;
  return t;
}

Tensor Tensor::device_zeros(gpu::Device& d, int64_t rows, int64_t cols, Type type) {
  Tensor t = device(d, rows, cols, type);
  d.zero(t.s_->buf, t.bytes());
  return t;
}

Tensor Tensor::resident(gpu::Device& d, int64_t rows, int64_t cols, Type type) {
  Tensor t;
  t.s_ = std::make_shared<Storage>();
  t.s_->rows = rows, t.s_->cols = cols, t.s_->type = type;
  t.s_->buf = d.alloc_resident(t.bytes());
  t.s_->dev = &d;
  t.s_->dev_ok = true;
  return t;
}

void Tensor::ensure_buffer(gpu::Device& d) const {
  if (s_->buf && s_->dev != &d) fail("tensor [{}, {}] lives on another device", s_->rows, s_->cols);
  if (!s_->buf) {
    s_->buf = d.alloc(std::max<size_t>(bytes(), 4));
    s_->dev = &d;
  }
}

void Tensor::ensure_host() const {
  if (s_->host_ok) return;
  if (s_->type == Type::F32) {
    s_->f.resize(s_->rows, s_->cols);
    s_->dev->download(s_->buf, s_->f.data(), bytes());
  } else {
    s_->i.resize(s_->rows, s_->cols);
    s_->dev->download(s_->buf, s_->i.data(), bytes());
  }
  s_->host_ok = true;
}

const Mat<float>& Tensor::f32() const {
  if (s_->type != Type::F32) fail("tensor [{}, {}] is i32, not f32", s_->rows, s_->cols);
  ensure_host();
  return s_->f;
}

Mat<float>& Tensor::f32_mut() {
  f32();
  s_->dev_ok = false;
  return s_->f;
}

const IMat& Tensor::i32() const {
  if (s_->type != Type::I32) fail("tensor [{}, {}] is f32, not i32", s_->rows, s_->cols);
  ensure_host();
  return s_->i;
}

IMat& Tensor::i32_mut() {
  i32();
  s_->dev_ok = false;
  return s_->i;
}

const gpu::BufferPtr& Tensor::buffer(gpu::Device& d) const {
  ensure_buffer(d);
  if (!s_->dev_ok) {
    const void* src = s_->type == Type::F32 ? static_cast<const void*>(s_->f.data()) : s_->i.data();
    d.upload(s_->buf, src, bytes());
    s_->dev_ok = true;
  }
  return s_->buf;
}

const gpu::BufferPtr& Tensor::buffer_mut(gpu::Device& d) {
  buffer(d);  // an op may read what it updates (states)
  s_->host_ok = false;
  return s_->buf;
}

Tensor Tensor::clone() const {
  return s_->type == Type::F32 ? from(Mat<float>(f32())) : from_i32(IMat(i32()));
}

}  // namespace hl
