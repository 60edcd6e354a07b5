// A bounded cache of materialised weights, keyed by the block a WeightRef names. Small models stay
// resident; full-size synthetic or memory-mapped models are materialised per use within a byte budget
// (env HYBRIDLAB_WEIGHT_CACHE_MB, default 8192), least recently used first out.
#pragma once
#include <cstdlib>
#include <list>
#include <map>
#include <memory>
#include <tuple>

#include "model/weights.h"
#include "env.h"

namespace hl {

inline size_t weight_cache_budget_bytes() {
  return env_megabytes("HYBRIDLAB_WEIGHT_CACHE_MB", 8192);
}

template <class V> class WeightCache {
 public:
  explicit WeightCache(size_t budget_bytes = weight_cache_budget_bytes()) : budget_(budget_bytes) {}

  // make() builds the value for w; bytes is its size. The returned pointer stays valid after eviction.
  template <class Make> std::shared_ptr<const V> get(const WeightRef& w, size_t bytes, Make&& make) {
    const Key key{w.src.get(), w.row0, w.rows, int(w.transform)};
    if (auto it = map_.find(key); it != map_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second.pos);
      return it->second.value;
    }
    auto value = std::make_shared<const V>(make());
    // The entry pins its source: a freed source's address could otherwise be reused by a new one and
    // hit this entry.
    while (used_ + bytes > budget_ && !lru_.empty()) {
      auto& victim = map_.at(lru_.back());
      used_ -= victim.bytes;
      map_.erase(lru_.back());
      lru_.pop_back();
    }
    if (bytes <= budget_) {
      lru_.push_front(key);
      map_.emplace(key, Entry{value, w.src, bytes, lru_.begin()});
      used_ += bytes;
    }
    return value;
  }

  size_t used_bytes() const { return used_; }
  void clear() { map_.clear(), lru_.clear(), used_ = 0; }

 private:
  using Key = std::tuple<const void*, int64_t, int64_t, int>;
  struct Entry {
    std::shared_ptr<const V> value;
    std::shared_ptr<const TensorSource> src;
    size_t bytes;
    typename std::list<Key>::iterator pos;
  };
  size_t budget_, used_ = 0;
  std::map<Key, Entry> map_;
  std::list<Key> lru_;
};

}  // namespace hl
