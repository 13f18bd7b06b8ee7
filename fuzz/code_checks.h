// Checks of generated source shared by the fuzzing batch and the hardening tests:
// user text may appear only inside // comments, and only as printable ASCII.
#pragma once

#include <string>

namespace polyred::fuzz {

// Whether every byte is printable ASCII or '\n'.
inline bool plainAscii(const std::string& s) {
  for (char c : s)
    if (c != '\n' && (c < 0x20 || c > 0x7e)) return false;
  return true;
}

// The source with the rest of every line from "//" removed.
inline std::string withoutComments(const std::string& source) {
  std::string out;
  for (size_t start = 0; start < source.size();) {
    size_t end = source.find('\n', start);
    if (end == std::string::npos) end = source.size();
    std::string line = source.substr(start, end - start);
    out += line.substr(0, line.find("//")) + "\n";
    start = end + 1;
  }
  return out;
}

}  // namespace polyred::fuzz
