// Printable renderings of user-supplied text (tensor, op and graph names, file paths).
//
// A name in a composite file or a builder call is data: any bytes at all. Wherever
// polyred writes one into text that something else reads — generated CUDA (only
// inside // comments), dumps, error messages — it goes through printable(), whose
// result is printable ASCII without a backslash: it cannot end the line, splice the
// next line into a comment, cut a C string short (NUL) or put control bytes on a
// terminal. Other bytes are written %XX (hex); text longer than `maxBytes` keeps its
// head and tail around "...". printable(printable(s)) == printable(s). Names go
// through printable() when a message is built; a report of several lines keeps its
// line breaks through printableLines().
#pragma once

#include <string>
#include <string_view>

namespace polyred {

inline constexpr size_t kPrintableDefaultMax = 96;

std::string printable(std::string_view text, size_t maxBytes = kPrintableDefaultMax);

// printable(text) between single quotes, the form names take in messages.
inline std::string quotedName(std::string_view text, size_t maxBytes = kPrintableDefaultMax) {
  return "'" + printable(text, maxBytes) + "'";
}

// printable() line by line, for a report that spans lines (a check's outputs, NVRTC's
// log): its '\n' stay, each line is printable(line, maxLineBytes), so a name escaped
// into one line when the report was built still cannot add a line of its own.
std::string printableLines(std::string_view text, size_t maxLineBytes = kPrintableDefaultMax);

// Whether every byte of `text` is one printable() keeps as it is.
bool isPrintableText(std::string_view text);

}  // namespace polyred
