// hl::quant::Error: the single exception type of the format layer (GGUF files and ggml block formats).
// Every message is one line; file names and keys taken from untrusted files are escaped by printable().
#pragma once
#include <stdexcept>
#include <string>
#include <string_view>

namespace hl::quant {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// `s` quoted, with control and non-ASCII bytes as \xNN, cut to `max_len` bytes ("..." appended), so that a
// name read from a malformed file can never break the one-line contract of an error message.
std::string printable(std::string_view s, size_t max_len = 80);

}  // namespace hl::quant
