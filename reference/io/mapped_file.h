// A read-only memory map of a whole file: checkpoints are read in place, never copied whole.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace hl {

class MappedFile {
 public:
  static std::shared_ptr<MappedFile> open(const std::string& path);  // throws hl::Error
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  MappedFile() = default;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

}  // namespace hl
