// Bad-input tests: take malformed or inconsistent composite JSON (a table of hand-made
// cases, then seeded random corruptions of corpus files) and check that the reader
// answers with polyred::Error naming the file, the op and the reason -- never another
// exception, a crash or a hang.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "frontend/composite_reader.h"
#include "frontend/composite_writer.h"
#include "fuzz/mutator.h"
#include "support/error.h"

using namespace polyred;
using Json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

// A valid kernel: s = sum(x * 2, axis 1), written in place into acc.
constexpr const char* kBase = R"({
  "op": "Fused_Mul_ReduceSum_Assign",
  "input_desc": [
    [{"tensor_name": "x", "data_type": "float32", "shape": [4, 8], "format": "DefaultFormat"}],
    [{"tensor_name": "acc", "data_type": "float32", "shape": [4], "format": "DefaultFormat"}]
  ],
  "op_desc": [
    {"name": "Mul", "attr": null,
     "input_desc": [[{"tensor_name": "x", "data_type": "float32", "shape": [4, 8]}],
                    [{"tensor_name": "two", "data_type": "float32", "shape": [1], "value": 2.0}]],
     "output_desc": [{"tensor_name": "m", "data_type": "float32", "shape": [4, 8]}]},
    {"name": "ReduceSum",
     "attr": [{"name": "axis", "data_type": "listInt", "value": [1]},
              {"name": "keep_dims", "data_type": "bool", "value": false}],
     "input_desc": [[{"tensor_name": "m", "data_type": "float32", "shape": [4, 8]}]],
     "output_desc": [{"tensor_name": "s", "data_type": "float32", "shape": [4]}]},
    {"name": "Assign", "attr": null,
     "input_desc": [[{"tensor_name": "acc", "data_type": "float32", "shape": [4]}],
                    [{"tensor_name": "s", "data_type": "float32", "shape": [4]}]],
     "output_desc": [{"tensor_name": "w", "data_type": "float32", "shape": [4]}]}
  ],
  "output_desc": [{"tensor_name": "s", "data_type": "float32", "shape": [4]},
                  {"tensor_name": "w", "data_type": "float32", "shape": [4]}]
})";

std::string edit(const std::function<void(Json&)>& change) {
  Json doc = Json::parse(kBase);
  change(doc);
  return doc.dump();
}

// Shorthands for the parts of kBase the cases edit.
Json& op(Json& d, int k) { return d["op_desc"][k]; }
Json& opInput(Json& d, int k, int arg) { return d["op_desc"][k]["input_desc"][arg][0]; }
Json& opOutput(Json& d, int k) { return d["op_desc"][k]["output_desc"][0]; }
Json& input(Json& d, int k) { return d["input_desc"][k][0]; }
Json& reduceAttr(Json& d, int k) { return d["op_desc"][1]["attr"][k]["value"]; }

struct BadCase {
  std::string label;
  std::string text;
  std::string op;      // the op the error must name ("" = none)
  std::string reason;  // a fragment the reason must contain
};

std::vector<BadCase> badCases() {
  const std::string base = kBase;
  return {
      {"not JSON", "{ not json", "", "malformed JSON"},
      {"empty text", "", "", "malformed JSON"},
      {"truncated", base.substr(0, base.size() / 2), "", "malformed JSON"},
      {"invalid UTF-8", "{\"op\": \"\xff\xfe\"}", "", "malformed JSON"},
      {"top level is a list", "[1, 2]", "", "top level must be a JSON object"},
      {"deep nesting", std::string(100000, '['), "", "nested deeper than 64"},
      {"deep nesting in a value",
       "{\"op\": \"k\", \"x\": " + std::string(70, '[') + std::string(70, ']') + "}", "",
       "nested deeper than 64"},
      {"missing op_desc", edit([](Json& d) { d.erase("op_desc"); }), "", "missing field \"op_desc\""},
      {"missing output_desc", edit([](Json& d) { d.erase("output_desc"); }), "",
       "missing field \"output_desc\""},
      {"op is a number", edit([](Json& d) { d["op"] = 7; }), "", "op must be a string"},
      {"op_desc is an object", edit([](Json& d) { d["op_desc"] = Json::object(); }), "",
       "op_desc must be a list"},
      {"input_desc is a string", edit([](Json& d) { d["input_desc"] = "x"; }), "",
       "input_desc must be a list"},
      {"op is not an object", edit([](Json& d) { op(d, 0) = 3; }), "op_desc[0]",
       "an op must be an object"},
      {"op without name", edit([](Json& d) { op(d, 0).erase("name"); }), "op_desc[0]",
       "missing field \"name\""},
      {"shape is a string", edit([](Json& d) { input(d, 0)["shape"] = "4,8"; }), "",
       "shape of 'x' must be a list"},
      {"fractional dimension", edit([](Json& d) { input(d, 0)["shape"] = {4, 8.5}; }), "",
       "must be an integer"},
      {"negative dimension", edit([](Json& d) { input(d, 0)["shape"] = {4, -8}; }), "",
       "negative dimension"},
      {"zero-size tensor", edit([](Json& d) { input(d, 1)["shape"] = {0}; }), "", "zero elements"},
      {"element count overflows",
       edit([](Json& d) { input(d, 0)["shape"] = {1 << 30, 1 << 30, 1 << 30}; }), "", "2^48"},
      {"dimension beyond int64",
       edit([](Json& d) { input(d, 0)["shape"] = {uint64_t{18446744073709551615u}}; }), "",
       "out of range"},
      {"rank above 64", edit([](Json& d) { input(d, 1)["shape"] = std::vector<int>(65, 1); }), "",
       "at most 64"},
      {"unknown data_type", edit([](Json& d) { input(d, 0)["data_type"] = "float31"; }), "",
       "unknown data_type 'float31'"},
      {"data_type is a number", edit([](Json& d) { input(d, 0)["data_type"] = 32; }), "",
       "data_type of 'x' must be a string"},
      {"format is a number", edit([](Json& d) { input(d, 0)["format"] = 1; }), "",
       "format of 'x' must be a string"},
      {"empty tensor name", edit([](Json& d) { input(d, 0)["tensor_name"] = ""; }), "",
       "empty tensor_name"},
      {"input without tensor_name", edit([](Json& d) { opInput(d, 1, 0).erase("tensor_name"); }),
       "ReduceSum #1", "missing field \"tensor_name\""},
      {"use before definition", edit([](Json& d) { std::swap(op(d, 0), op(d, 1)); }),
       "ReduceSum #0", "'m', which no input or earlier op defines"},
      {"unknown tensor", edit([](Json& d) { opInput(d, 0, 0)["tensor_name"] = "nope"; }), "Mul #0",
       "'nope', which no input or earlier op defines"},
      {"duplicate input name", edit([](Json& d) { input(d, 1)["tensor_name"] = "x"; }), "",
       "tensor name 'x' is defined twice"},
      {"duplicate op output", edit([](Json& d) { opOutput(d, 2)["tensor_name"] = "m"; }),
       "Assign #2", "tensor name 'm' is defined twice"},
      {"input shape disagrees", edit([](Json& d) { opInput(d, 1, 0)["shape"] = {4, 9}; }),
       "ReduceSum #1", "declared float32[4,9] here but is float32[4,8]"},
      {"input dtype disagrees", edit([](Json& d) { opInput(d, 1, 0)["data_type"] = "float16"; }),
       "ReduceSum #1", "declared float16[4,8]"},
      {"attr is an object of names to values", edit([](Json& d) { op(d, 1)["attr"] = {{"axis", {1}}}; }),
       "ReduceSum #1", "attr must be a list of {\"name\", \"value\"} objects"},
      {"attr is a string", edit([](Json& d) { op(d, 1)["attr"] = "axis=1"; }), "ReduceSum #1",
       "attr must be a list"},
      {"axis out of range", edit([](Json& d) { reduceAttr(d, 0) = {2}; }), "ReduceSum #1",
       "axis 2 out of range for rank 2"},
      {"axis is an object", edit([](Json& d) { reduceAttr(d, 0) = {{"a", 1}}; }), "ReduceSum #1",
       "axis (an integer or a list) must be a list"},
      {"axis entry is a string", edit([](Json& d) { reduceAttr(d, 0) = {"1"}; }), "ReduceSum #1",
       "entry must be an integer"},
      {"keep_dims is a string", edit([](Json& d) { reduceAttr(d, 1) = "no"; }), "ReduceSum #1",
       "keep_dims must be true or false"},
      {"reduction output shape wrong", edit([](Json& d) { opOutput(d, 1)["shape"] = {8}; }),
       "ReduceSum #1", "reducing axes [1] of [4,8] gives [4]"},
      {"elementwise output shape wrong",
       edit([](Json& d) { opOutput(d, 0)["shape"] = opInput(d, 1, 0)["shape"] = {4, 9}; }),
       "Mul #0", "output shape [4,9] should be [4,8]"},
      {"elementwise output dtype wrong",
       edit([](Json& d) { opOutput(d, 0)["data_type"] = opInput(d, 1, 0)["data_type"] = "bool"; }),
       "Mul #0", "output dtype should be float32"},
      {"operand dtypes differ", edit([](Json& d) { opInput(d, 0, 1)["data_type"] = "float16"; }),
       "Mul #0", "dtype mismatch"},
      {"constant value is text", edit([](Json& d) { opInput(d, 0, 1)["value"] = "two"; }), "Mul #0",
       "value of 'two' must be a number"},
      {"constant value is an empty list", edit([](Json& d) { opInput(d, 0, 1)["value"] = Json::array(); }),
       "Mul #0", "empty list"},
      {"constant redefined",
       edit([](Json& d) {
         opInput(d, 0, 0) = opInput(d, 0, 1);
         opInput(d, 0, 0)["value"] = 3.0;
       }),
       "Mul #0", "'two' is given two different definitions"},
      {"output never defined", edit([](Json& d) { d["output_desc"][0]["tensor_name"] = "q"; }), "",
       "output 'q' is not defined"},
      {"output shape disagrees", edit([](Json& d) { d["output_desc"][0]["shape"] = {5}; }), "",
       "declared float32[5] here but is float32[4]"},
      {"no outputs",
       edit([](Json& d) {
         d["op_desc"].erase(2);
         d["output_desc"] = Json::array();
       }),
       "", "no outputs"},
      {"Assign with three inputs",
       edit([](Json& d) { op(d, 2)["input_desc"].push_back(op(d, 2)["input_desc"][0]); }), "Assign #2",
       "takes 2 inputs"},
      {"Assign into an intermediate", edit([](Json& d) { opInput(d, 2, 0)["tensor_name"] = "s"; }), "",
       "in-place output target 's' is not an input"},
      {"two Assigns into one input",
       edit([](Json& d) {
         Json second = op(d, 2);
         second["output_desc"][0]["tensor_name"] = "w2";
         d["op_desc"].push_back(second);
         d["output_desc"].push_back(second["output_desc"][0]);
       }),
       "", "outputs 'w' and 'w2' are both written in place of input 'acc'"},
      {"InplaceAssign with two inputs", edit([](Json& d) { op(d, 2)["name"] = "InplaceAssign"; }),
       "InplaceAssign #2", "takes 3 inputs"},
      {"two outputs on one op",
       edit([](Json& d) { op(d, 0)["output_desc"].push_back(opOutput(d, 1)); }),
       "Mul #0", "exactly one output"},
      {"attr is not an object", edit([](Json& d) { op(d, 1)["attr"][0] = 5; }), "ReduceSum #1",
       "an attr must be an object"},
      {"attr without value", edit([](Json& d) { op(d, 1)["attr"][0].erase("value"); }), "ReduceSum #1",
       "missing field \"value\""},
      {"attr given twice", edit([](Json& d) { op(d, 1)["attr"].push_back(op(d, 1)["attr"][0]); }),
       "ReduceSum #1", "attribute 'axis' is given twice"},
      {"Cast dst_type disagrees",
       edit([](Json& d) {
         op(d, 0)["name"] = "Cast";
         op(d, 0)["input_desc"].erase(1);
         op(d, 0)["attr"] = {{{"name", "dst_type"}, {"value", "float16"}}};
       }),
       "Cast #0", "dst_type is float16 but the output is declared float32"},
      {"Reshape shape attr disagrees",
       edit([](Json& d) {
         op(d, 0)["name"] = "Reshape";
         op(d, 0)["input_desc"].erase(1);
         op(d, 0)["attr"] = {{{"name", "shape"}, {"value", {8, 4}}}};
       }),
       "Reshape #0", "attribute shape [8,4] disagrees"},
      {"Transpose without perm",
       edit([](Json& d) {
         op(d, 0)["name"] = "Transpose";
         op(d, 0)["input_desc"].erase(1);
       }),
       "Transpose #0", "needs a \"perm\""},
      {"Transpose perm repeats an axis",
       edit([](Json& d) {
         op(d, 0)["name"] = "Transpose";
         op(d, 0)["input_desc"].erase(1);
         op(d, 0)["attr"] = {{{"name", "perm"}, {"value", {0, 0}}}};
       }),
       "Transpose #0", "perm is not a permutation"},
  };
}

}  // namespace

TEST(BadInput, BaseDocumentIsValid) {
  Graph g = parseComposite(kBase, "bad.json");
  EXPECT_EQ(g.outputs.size(), 2u);
}

TEST(BadInput, EachCaseIsAnErrorNamingFileOpAndReason) {
  for (const BadCase& c : badCases()) {
    SCOPED_TRACE(c.label);
    try {
      parseComposite(c.text, "bad.json");
      ADD_FAILURE() << "parsed";
    } catch (const UnsupportedError& e) {
      ADD_FAILURE() << "malformed input reported as unsupported: " << e.what();
    } catch (const Error& e) {
      EXPECT_EQ(e.file(), "bad.json");
      EXPECT_EQ(e.op(), c.op) << e.what();
      EXPECT_NE(e.reason().find(c.reason), std::string::npos) << e.what();
    }
  }
}

// ---- fuzzing: seeded mutations of real files (fuzz/mutator) ----

namespace {

std::vector<fs::path> fuzzSeeds() {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(POLYRED_CORPUS_DIR))
    if (e.is_regular_file() && (e.path().extension() == ".json" || e.path().extension() == ".info"))
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<fs::path> seeds;
  for (size_t i = 0; i < files.size(); i += 14) seeds.push_back(files[i]);
  return seeds;
}

std::string readText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST(BadInput, FuzzedCorpusFilesFailCleanly) {
  ASSERT_TRUE(fs::is_directory(POLYRED_CORPUS_DIR)) << "the corpus belongs in the repository: " << POLYRED_CORPUS_DIR;
  const std::vector<fs::path> seeds = fuzzSeeds();
  ASSERT_GE(seeds.size(), 20u);
  int parsed = 0, rejected = 0;
  for (size_t f = 0; f < seeds.size(); ++f) {
    const std::string original = readText(seeds[f]);
    fuzz::CompositeMutator mutator(1000 + f);
    for (int trial = 0; trial < 50; ++trial) {
      const std::string text = mutator.mutate(original);
      try {
        Graph g = parseComposite(text, "fuzz.json");
        // Whatever the reader accepts, the writer must write back to the same graph.
        EXPECT_EQ(parseComposite(writeComposite(g), "rewritten").toString(), g.toString());
        ++parsed;
      } catch (const Error&) {
        ++rejected;
      } catch (const std::exception& e) {
        ADD_FAILURE() << seeds[f] << " trial " << trial << ": foreign exception " << e.what();
      }
    }
  }
  std::printf("fuzz: %d parsed, %d rejected\n", parsed, rejected);
  EXPECT_GT(parsed, 0);
  EXPECT_GT(rejected, 0);
}
