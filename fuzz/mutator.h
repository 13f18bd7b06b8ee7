// Seeded mutations of composite JSON files, for the fuzzing batch, the libFuzzer
// target's custom mutator and the bad-input tests.
//
// Takes the text of a (valid) composite file and a seed; gives a mutated text. Byte
// edits (truncation, bit flips, deletions, insertions of JSON punctuation and
// non-ASCII bytes), number swaps with edge values, and structural edits of the parsed
// document: swapped or hostile tensor and op names (line breaks, NUL, comment
// delimiters, backslashes, preprocessor lines, 10 000-byte names), inflated
// dimensions (65 537, 2^31, 2^40, 2^62), extreme constants (+-2^63, 1e308, NaN) and
// deleted keys. The same seed gives the same text on every machine (std::mt19937 and
// no std::distribution).
#pragma once

#include <cstdint>
#include <random>
#include <string>

namespace polyred::fuzz {

class CompositeMutator {
 public:
  explicit CompositeMutator(uint64_t seed) : rng_(seed) {}

  // One to three edits of `text`.
  std::string mutate(std::string text);

  // Names no code generator should ever let through: each is a valid JSON string.
  static const std::vector<std::string>& hostileNames();

 private:
  uint64_t pick(uint64_t n) { return n == 0 ? 0 : rng_() % n; }

  std::string byteEdit(std::string text);
  std::string replaceNumber(const std::string& text);
  std::string structuralEdit(const std::string& text, int kind);

  std::mt19937_64 rng_;
};

}  // namespace polyred::fuzz
