// "Did you mean": the known name closest to a misspelled one, for the CLI's options and
// commands and the composite reader's op names.
#pragma once

#include <string>
#include <vector>

namespace polyred {

// The candidate closest to `word` by edit distance, if close enough to be a likely
// typo (at most a third of the word's length, and at least 2, edits); "" otherwise.
std::string closestName(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace polyred
