// Printable renderings of user-supplied text (support/printable.h).
#include "support/printable.h"

namespace polyred {

namespace {

// Bytes that pass through unchanged: printable ASCII except the backslash, which
// before a line break would splice the next line into a comment. '%' passes too, so
// that printable() is idempotent (a message built from printable names can be made
// printable again unchanged); a name that really holds "%0A" reads like one holding a
// line break, which is only cosmetic.
bool passesThrough(unsigned char c) { return c >= 0x20 && c <= 0x7e && c != '\\'; }

}  // namespace

bool isPrintableText(std::string_view text) {
  for (char c : text)
    if (!passesThrough(static_cast<unsigned char>(c))) return false;
  return true;
}

std::string printable(std::string_view text, size_t maxBytes) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  auto escape = [](std::string_view part) {
    std::string out;
    out.reserve(part.size());
    for (char ch : part) {
      auto c = static_cast<unsigned char>(ch);
      if (passesThrough(c)) {
        out += ch;
      } else {
        out += '%';
        out += kHex[c >> 4];
        out += kHex[c & 15];
      }
    }
    return out;
  };
  if (maxBytes < 8 || text.size() <= maxBytes) return escape(text);
  size_t keep = (maxBytes - 3) / 2;
  return escape(text.substr(0, keep)) + "..." + escape(text.substr(text.size() - keep));
}

std::string printableLines(std::string_view text, size_t maxLineBytes) {
  std::string out;
  for (size_t start = 0;;) {
    const size_t end = text.find('\n', start);
    out += printable(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start),
                     maxLineBytes);
    if (end == std::string_view::npos) return out;
    out += '\n';
    start = end + 1;
  }
}

}  // namespace polyred
