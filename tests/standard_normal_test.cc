// MindSpore's StandardNormal, read as PhiloxNormal over each element's position
// (ir/philox.h, frontend/composite_index_ops). Checked: Philox4x32-10 against the
// published known-answer vectors (Random123's kat_vectors), the first values against
// the Box-Muller formula applied to those words by hand, the reference and the lowered
// kernel on the CPU against each other, the distribution (moments, tails, neighbours),
// seeds, fusion with a reduction, and malformed ops. The GPU half: OpsGpu over
// tests/data/ops/standard_normal.json.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "frontend/builder.h"
#include "frontend/composite_writer.h"
#include "interp/reference.h"
#include "ir/philox.h"
#include "one_op_graph.h"

using namespace polyred;
using namespace polyred::test_support;

namespace {

TEST(Philox, MatchesTheKnownAnswerVectors) {
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, 0, 0), (PhiloxWords{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, 0xffffffff, 0xffffffff),
            (PhiloxWords{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, 0xa4093822, 0x299f31d0),
            (PhiloxWords{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(Philox, KeyWordsAreTheSeeds) {
  EXPECT_EQ(philoxKey(5, 0), 5);
  EXPECT_EQ(philoxKey(5, 7), 5 + (int64_t{7} << 32));
  EXPECT_EQ(philoxKey(int64_t{3} << 32, 0), int64_t{3} << 32);
  EXPECT_EQ(philoxKey(0, int64_t{3} << 32), 3);  // seed2's high word meets seed's low word
}

// Box-Muller by hand on two words of Philox's answer: the cosine's value, or the sine's.
double boxMuller(uint32_t w0, uint32_t w1, bool sine = false) {
  const double u1 = ((w0 >> 8) | 1u) / 16777216.0, u2 = ((w1 >> 8) | 1u) / 16777216.0;
  return std::sqrt(-2 * std::log(u1)) * (sine ? std::sin(2 * M_PI * u2) : std::cos(2 * M_PI * u2));
}

std::vector<double> referenceValues(const Graph& g) { return valuesOf(evaluateReference(g, {}).at(0)); }

TEST(StandardNormal, FirstValuesAreBoxMullerOfTheKnownAnswer) {
  // Positions 0-3 under seed 0 take Philox's block 0, the all-zero vector: cos and sin
  // of the words (w0, w1), then of (w2, w3); positions 4-7 block 1, the counter
  // (1, 0, 0, 0) (a block's words are (low, high, 0, 0)).
  const Graph g = oneOp("StandardNormal", {}, desc("y", {2, 3}, "float32"), {attr("seed", 0), attr("seed2", 0)});
  const std::vector<double> v = referenceValues(g);
  EXPECT_EQ(v[0], static_cast<float>(boxMuller(0x6627e8d5, 0xe169c58d)));
  EXPECT_EQ(v[1], static_cast<float>(boxMuller(0x6627e8d5, 0xe169c58d, true)));
  EXPECT_EQ(v[2], static_cast<float>(boxMuller(0xbc57ac4c, 0x9b00dbd8)));
  EXPECT_EQ(v[3], static_cast<float>(boxMuller(0xbc57ac4c, 0x9b00dbd8, true)));
  const PhiloxWords next = philox4x32_10({1, 0, 0, 0}, 0, 0);
  EXPECT_EQ(v[4], static_cast<float>(boxMuller(next[0], next[1])));
  expectOutput(g, {}, v);  // the lowered kernel on the CPU gives the same, bit for bit
}

TEST(StandardNormal, ValuesAreStandardNormal) {
  GraphBuilder b("normal");
  b.output(b.standardNormal({1000, 1000}, 42, 7));
  const std::vector<double> v = referenceValues(b.build());
  const double n = static_cast<double>(v.size());
  double sum = 0, squares = 0, neighbours = 0, within1 = 0, below = 0, largest = 0;
  for (size_t k = 0; k < v.size(); ++k) {
    sum += v[k];
    squares += v[k] * v[k];
    if (k + 1 < v.size()) neighbours += v[k] * v[k + 1];
    within1 += std::fabs(v[k]) < 1;
    below += v[k] < -1.959964;
    largest = std::max(largest, std::fabs(v[k]));
  }
  // Bounds of about 5 standard errors of each estimate for 10^6 samples.
  EXPECT_LT(std::fabs(sum / n), 0.005);
  EXPECT_NEAR(squares / n, 1.0, 0.008);
  EXPECT_LT(std::fabs(neighbours / n), 0.005);
  EXPECT_NEAR(within1 / n, 0.682689, 0.0025);
  EXPECT_NEAR(below / n, 0.025, 0.0008);
  EXPECT_GT(largest, 4.0);
  EXPECT_LE(largest, 5.77);  // the uniforms' 24 bits bound |z| (ir/philox.h)
}

TEST(StandardNormal, Float64ValuesUseWiderUniforms) {
  GraphBuilder b("normal64");
  b.output(b.standardNormal({200000}, 1, 0, DType::Float64));
  const std::vector<double> v = referenceValues(b.build());
  double sum = 0, squares = 0;
  int notFloat = 0;
  for (double x : v) {
    sum += x;
    squares += x * x;
    notFloat += static_cast<double>(static_cast<float>(x)) != x;
  }
  EXPECT_LT(std::fabs(sum / 200000), 0.012);
  EXPECT_NEAR(squares / 200000, 1.0, 0.016);
  EXPECT_GT(notFloat, 199000);  // double precision values, not float ones widened
}

TEST(StandardNormal, SeedsChooseTheStream) {
  auto values = [](int64_t seed, int64_t seed2) {
    return referenceValues(oneOp("StandardNormal", {}, desc("y", {64}, "float32"), {attr("seed", seed), attr("seed2", seed2)}));
  };
  EXPECT_EQ(values(3, 4), values(3, 4));
  EXPECT_NE(values(3, 4), values(3, 5));
  EXPECT_NE(values(3, 4), values(4, 4));
  EXPECT_NE(values(0, 0), values(1, 0));
}

TEST(StandardNormal, ReaderAndBuilderAgreeOnEveryShape) {
  for (const Shape& shape : {Shape{}, Shape{1}, Shape{1, 1}, Shape{7}, Shape{3, 1, 5}, Shape{2, 129, 3}}) {
    GraphBuilder b("normal");
    b.output(b.standardNormal(shape, 9, 2, DType::Float16));
    const Graph read = oneOp("StandardNormal", {}, desc("y", shape, "float16"),
                             {attr("seed", 9), attr("seed2", 2), attr("shape", shape)});
    const std::vector<double> v = referenceValues(read);
    EXPECT_EQ(v, referenceValues(b.build())) << toString(shape);
    // Position p of a row-major tensor takes counter p: the flat order of [7] is [3,1,5]'s too.
    if (shape == Shape{2, 129, 3}) {
      GraphBuilder flat("flat");
      flat.output(flat.standardNormal({2 * 129 * 3}, 9, 2, DType::Float16));
      EXPECT_EQ(v, referenceValues(flat.build()));
    }
    expectOutput(read, {}, v);
  }
}

TEST(StandardNormal, ShapeMayComeAsAConstantInput) {
  Json shapeInput = desc("shape", {2}, "int64");
  shapeInput["value"] = {4, 6};
  Json ins = Json::array({Json::array({shapeInput})});
  const Json out = Json::array({desc("y", {4, 6}, "float32")});
  const Graph g = parseComposite(oneOpDocument("StandardNormal", Json::array(), ins, out, {attr("seed", 11)}).dump(), "n.json");
  GraphBuilder b("normal");
  b.output(b.standardNormal({4, 6}, 11));
  EXPECT_EQ(referenceValues(g), referenceValues(b.build()));
}

TEST(StandardNormal, WrittenGraphsReadBackTheSameValues) {
  // A key past 2^53 too: the writer and the reader keep int64 constants exact.
  GraphBuilder b("written");
  b.output(b.standardNormal({5, 9}, int64_t{1} << 62, 12345));
  const Graph g = b.build();
  const std::string text = writeComposite(g);
  EXPECT_NE(text.find("PhiloxNormal"), std::string::npos);
  EXPECT_EQ(referenceValues(parseComposite(text, "written.json")), referenceValues(g));
}

TEST(StandardNormal, FusesWithAReduction) {
  // Noise added to x, then summed over the rows: one kernel, checked on the CPU.
  GraphBuilder b("noisy_sum");
  Value x = b.input("x", DType::Float32, {300, 1000});
  b.output(b.reduceSum(b.add(x, b.standardNormal({300, 1000}, 5)), {1}));
  expectCheckPasses(b.build());
}

TEST(StandardNormal, FeedsEveryKindOfKernel) {
  // A scan, a tuple reduction (argmax), a row-resident softmax and a multi-block column
  // sum of noise: each kernel compiles with NVRTC (the per-thread memo is declared
  // wherever values are drawn) and passes the CPU check.
  auto noisy = [](GraphBuilder& b, const Shape& s) { return b.add(b.input("x", DType::Float32, s), b.standardNormal(s, 8)); };
  {
    GraphBuilder b("noise_scan");
    b.output(b.scan(noisy(b, {64, 300}), Reduction::sum(DType::Float32), 1));
    expectCheckPasses(b.build());
  }
  {
    GraphBuilder b("noise_argmax");
    b.output(b.argmax(noisy(b, {50, 1000}), 1));
    expectCheckPasses(b.build());
  }
  {
    GraphBuilder b("noise_softmax");
    Value x = noisy(b, {40, 700});
    Value e = b.unary(OpKind::Exp, b.sub(x, b.reduceMax(x, {1}, true)));
    b.output(b.binary(OpKind::Div, e, b.reduceSum(e, {1}, true)));
    expectCheckPasses(b.build());
  }
  {
    GraphBuilder b("noise_column_sum");
    b.output(b.reduceSum(b.standardNormal({100000, 3}, 4, 1, DType::Float64), {0}));
    expectCheckPasses(b.build());
  }
}

TEST(StandardNormal, MalformedOpsAreRefused) {
  expectRejected([] { oneOp("StandardNormal", {}, desc("y", {4}, "float32"), {attr("shape", {5})}); },
                 "is not its declared output's");
  expectRejected([] { oneOp("StandardNormal", {}, desc("y", {4}, "int32"), Json::array()); }, "gives float values");
  expectRejected([] { oneOp("StandardNormal", {}, desc("y", {4}, "float32"), {attr("seed", -1)}); }, "non-negative");
  expectRejected([] { oneOp("StandardNormal", {desc("x", {4}, "float32")}, desc("y", {4}, "float32"), Json::array()); },
                 "must be an integer constant list");
  GraphBuilder b("wrong_counter");
  Value counter = b.input("c", DType::Int32, {4});
  expectRejected([&] { b.output(b.binary(OpKind::PhiloxNormal, counter, b.constant(Scalar::ofInt(DType::Int64, 1)))); b.build(); },
                 "should be int64");
}

}  // namespace
