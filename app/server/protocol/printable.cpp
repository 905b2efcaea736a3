#include "app/server/protocol/printable.h"

namespace fieldbrain::server {

std::string printable(std::string_view text, size_t max_chars) {
  static const char* hex = "0123456789abcdef";
  const size_t n = text.size() < max_chars ? text.size() : max_chars;
  std::string out;
  out.reserve(n + 16);
  for (size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\\':
        out += "\\\\";
        break;
      default:
        if (c >= 0x20 && c < 0x7f) {
          out += static_cast<char>(c);
        } else {
          out += "\\x";
          out += hex[c >> 4];
          out += hex[c & 15];
        }
    }
  }
  if (n < text.size()) out += "...(+" + std::to_string(text.size() - n) + " bytes)";
  return out;
}

}  // namespace fieldbrain::server
