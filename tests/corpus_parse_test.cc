// Corpus test: takes every file of the AKG composite corpus (POLYRED_CORPUS_DIR) and
// checks that each one either parses and verifies or is refused as out of scope
// (UnsupportedError), never as malformed and never with another exception. Prints the
// counts and pins how many parse, so a regression in the reader shows.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "frontend/composite_reader.h"
#include "support/error.h"

using namespace polyred;
namespace fs = std::filesystem;

namespace {

// 290 files: 20 hold a MatMul (matrix products are outside polyred's scope); all others
// parse, the 7 PadAkg and 3 UnPadAkg files included.
constexpr int kExpectedParsed = 270;
constexpr int kExpectedFiles = 290;

std::vector<fs::path> corpusFiles() {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(POLYRED_CORPUS_DIR)) {
    auto ext = e.path().extension();
    if (e.is_regular_file() && (ext == ".info" || ext == ".json")) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// "MatMul #3" -> "MatMul": count refusals per op name, not per position.
std::string opNameOf(const Error& e) {
  std::string op = e.op().substr(0, e.op().find(" #"));
  return op.empty() ? "(" + e.reason() + ")" : op;
}

}  // namespace

TEST(CorpusParse, EveryFileParsesOrIsOutOfScope) {
  ASSERT_TRUE(fs::is_directory(POLYRED_CORPUS_DIR)) << "the corpus belongs in the repository: " << POLYRED_CORPUS_DIR;
  int parsed = 0;
  std::map<std::string, int> unsupportedByOp;
  const std::vector<fs::path> files = corpusFiles();
  for (const fs::path& file : files) {
    try {
      Graph g = readCompositeFile(file.string());
      EXPECT_FALSE(g.outputs.empty()) << file;
      ++parsed;
    } catch (const UnsupportedError& e) {
      ++unsupportedByOp[opNameOf(e)];
    } catch (const Error& e) {
      ADD_FAILURE() << "malformed? " << e.what();
    }
  }
  std::printf("corpus: %zu files, %d parsed\n", files.size(), parsed);
  for (const auto& [op, n] : unsupportedByOp) std::printf("  unsupported %s: %d\n", op.c_str(), n);
  EXPECT_EQ(static_cast<int>(files.size()), kExpectedFiles);
  EXPECT_EQ(parsed, kExpectedParsed);
  const std::map<std::string, int> expectedUnsupported = {{"MatMul", 20}};
  EXPECT_EQ(unsupportedByOp, expectedUnsupported);
}
