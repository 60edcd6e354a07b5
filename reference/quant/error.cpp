#include "quant/error.h"

#include <fmt/format.h>

namespace hl::quant {

std::string printable(std::string_view s, size_t max_len) {
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < max_len; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') out += char(c);
    else out += fmt::format("\\x{:02x}", c);
  }
  out += s.size() > max_len ? "'..." : "'";
  return out;
}

}  // namespace hl::quant
