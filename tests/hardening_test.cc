// Hardening tests (untrusted input): names are data and never code, messages are
// printable, checks stay within their memory and time budgets, and the tolerance of a
// reduction follows the magnitude of its terms.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "driver/cpu_check.h"
#include "driver/outcome.h"
#include "driver/pipeline.h"
#include "frontend/builder.h"
#include "frontend/composite_reader.h"
#include "frontend/composite_writer.h"
#include "fuzz/code_checks.h"
#include "fuzz/mutator.h"
#include "interp/compare.h"
#include "interp/point_reference.h"
#include "interp/random_inputs.h"
#include "support/budget.h"
#include "support/error.h"
#include "support/printable.h"

using namespace polyred;
using fuzz::plainAscii;
using fuzz::withoutComments;

namespace {

// x[64,300] -> (x * 3, sum over axis 1 of x * 3, x - sum): an elementwise output, a
// reduction and an epilogue, so names reach every kind of generated statement.
Graph sampleGraph() {
  GraphBuilder b("g");
  Value x = b.input("x", DType::Float32, {64, 300});
  Value m = b.mul(x, b.constant(Scalar::ofFloat(DType::Float32, 3)));
  Value s = b.reduceSum(m, {1}, true);
  b.output(m);
  b.output(s);
  b.output(b.sub(x, s));
  return b.build();
}

// Every name of `g` replaced: tensor k gets names[k % names.size()] plus a suffix that
// keeps names unique; the graph and the nodes get hostile names too.
Graph withNames(Graph g, const std::vector<std::string>& names) {
  g.name = names[0];
  for (size_t t = 0; t < g.tensors.size(); ++t) g.tensors[t].name = names[t % names.size()] + "#" + std::to_string(t);
  for (size_t n = 0; n < g.nodes.size(); ++n) g.nodes[n].name = names[(n + 1) % names.size()];
  return g;
}

}  // namespace

TEST(Printable, EscapesControlBytesBackslashesAndNonAscii) {
  EXPECT_EQ(printable("plain name_1.json"), "plain name_1.json");
  EXPECT_EQ(printable(std::string("a\nb\0c\\d\x80", 8)), "a%0Ab%00c%5Cd%80");
  EXPECT_TRUE(isPrintableText(printable("\x1b[31m\r\t")));
  EXPECT_EQ(printable(printable("x\ny")), printable("x\ny"));  // idempotent
  std::string longName(1000, 'n');
  std::string shown = printable(longName + "tail", 40);
  EXPECT_LE(shown.size(), 40u);
  EXPECT_NE(shown.find("..."), std::string::npos);
  EXPECT_EQ(shown.substr(shown.size() - 4), "tail");
}

// A report of several lines keeps its breaks (and a final one); every other byte is as
// printable() makes it, each line within the limit.
TEST(Printable, LinesKeepTheirBreaksAndNothingElse) {
  EXPECT_EQ(printableLines("  output %a: ok\n  output %b: ok\n"), "  output %a: ok\n  output %b: ok\n");
  EXPECT_EQ(printableLines("one\n\nthree\r\t"), "one\n\nthree%0D%09");
  EXPECT_EQ(printableLines(""), "");
  EXPECT_EQ(printableLines("  output %" + printable("x\ny") + ": ok\n"), "  output %x%0Ay: ok\n");
  const std::string shown = printableLines(std::string(1000, 'n') + "\nshort", 40);
  EXPECT_LE(shown.find('\n'), 40u);
  EXPECT_EQ(shown.substr(shown.find('\n')), "\nshort");
}

// No byte sequence in a name changes the generated code: the CUDA of a graph with
// hostile names equals, outside comments, the CUDA of the same graph with neutral
// names, and holds only printable ASCII.
TEST(HostileNames, CannotChangeGeneratedCode) {
  const Graph neutral = sampleGraph();
  for (bool deterministic : {false, true}) {
    CompileOptions o;
    o.deterministic = deterministic;
    CompiledGraph reference = compileGraph(neutral, o);
    const auto& hostile = fuzz::CompositeMutator::hostileNames();
    for (size_t shift = 0; shift < hostile.size(); ++shift) {
      std::vector<std::string> names(hostile.begin() + static_cast<std::ptrdiff_t>(shift), hostile.end());
      names.insert(names.end(), hostile.begin(), hostile.begin() + static_cast<std::ptrdiff_t>(shift));
      CompiledGraph c = compileGraph(withNames(neutral, names), o);
      ASSERT_EQ(c.program.kernels.size(), reference.program.kernels.size());
      for (size_t k = 0; k < c.program.kernels.size(); ++k) {
        const std::string& source = c.program.kernels[k].source;
        EXPECT_TRUE(plainAscii(source)) << source;
        EXPECT_EQ(withoutComments(source), withoutComments(reference.program.kernels[k].source)) << source;
        EXPECT_EQ(c.program.kernels[k].name, reference.program.kernels[k].name);
      }
    }
  }
}

// The same through the composite reader, the way a hostile file arrives.
TEST(HostileNames, FromACompositeFileStayInComments) {
  const std::string text = writeComposite(withNames(sampleGraph(), fuzz::CompositeMutator::hostileNames()));
  CompiledGraph c = compileGraph(parseComposite(text, "hostile.json"), CompileOptions{});
  for (const KernelSpec& k : c.program.kernels) {
    EXPECT_TRUE(plainAscii(k.source));
    for (const std::string& line : {std::string("#error injected"), std::string("__global__ void evil")})
      for (size_t at = k.source.find(line); at != std::string::npos; at = k.source.find(line, at + 1))
        EXPECT_NE(k.source.rfind("//", at), std::string::npos) << "outside a comment: " << line;
  }
}

TEST(HostileNames, MessagesArePrintableAndNameTheFile) {
  Graph g = withNames(sampleGraph(), {std::string("dup\0licate\n", 11)});
  g.tensors[1].name = g.tensors[0].name;  // a duplicate name: the verifier refuses it
  std::ostringstream err;
  Exit e = runGuarded(std::string("evil\nfile.json"), err, [&] {
    g.verify();
    return Exit::Ok;
  });
  EXPECT_EQ(e, Exit::BadInput);
  std::string line = err.str();
  ASSERT_FALSE(line.empty());
  EXPECT_EQ(line.back(), '\n');
  line.pop_back();
  EXPECT_TRUE(isPrintableText(line)) << line;
  EXPECT_NE(line.find("evil%0Afile.json: "), std::string::npos) << line;
  EXPECT_NE(line.find("duplicate tensor name"), std::string::npos) << line;
  EXPECT_NE(line.find("dup%00licate%0A"), std::string::npos) << line;  // not cut at the NUL

  // An op name with a NUL byte: the message keeps the reason after it.
  std::string text = writeComposite(sampleGraph());
  std::string op = "\"name\":\"Mul\"";
  text.replace(text.find(op), op.size(), "\"name\":\"Mu\\u0000l\"");
  std::ostringstream err2;
  EXPECT_EQ(runGuarded("f.json", err2, [&] { parseComposite(text, "f.json"); return Exit::Ok; }), Exit::BadInput);
  EXPECT_NE(err2.str().find("Mu%00l is outside polyred's scope"), std::string::npos) << err2.str();
}

TEST(Budget, ParsesSizes) {
  EXPECT_EQ(parseByteSize("123"), 123);
  EXPECT_EQ(parseByteSize("64K"), 64 << 10);
  EXPECT_EQ(parseByteSize("2G"), int64_t{2} << 30);
  for (const char* bad : {"", "G", "-1", "1.5G", "12Q", "0", "99999999999T"})
    EXPECT_THROW(parseByteSize(bad), Error) << bad;
  EXPECT_EQ(formatBytes(1536), "1.5 KiB");
}

TEST(Budget, CheckRefusesMoreMemoryThanTheLimit) {
  GraphBuilder b("big");
  Value x = b.input("x", DType::Float32, {int64_t{1} << 20, int64_t{1} << 20});  // 4 TiB
  b.output(b.reduceSum(x, {0}));
  CompiledGraph c = compileGraph(b.build(), CompileOptions{});
  CheckMemory m = planCheckMemory(c);
  EXPECT_EQ(m.inputs, int64_t{4} << 40);
  EXPECT_TRUE(m.sampledReference);
  CpuCheckOptions o;
  o.limits.maxMemoryBytes = int64_t{1} << 30;
  try {
    checkOnCpu(c, o);
    FAIL() << "a 4 TiB check was not refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--max-memory"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("4.0 TiB"), std::string::npos) << e.what();
  }
}

TEST(Budget, CheckStopsAtItsDeadlineSayingHowFarItGot) {
  GraphBuilder b("slow");
  Value x = b.input("x", DType::Float32, {4096, 4096});
  b.output(b.reduceSum(b.mul(x, x), {0}));
  CompiledGraph c = compileGraph(b.build(), CompileOptions{});
  CpuCheckOptions o;
  o.maxPoints = 0;                    // every block: far more than the budget allows
  o.limits.timeoutSeconds = 0.05;
  try {
    checkOnCpu(c, o);
    FAIL() << "the check did not stop";
  } catch (const TimeBudgetExceeded& e) {
    EXPECT_NE(std::string(e.what()).find("--timeout"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(" while "), std::string::npos) << e.what();
  }
}

// A check too large to evaluate whole is compared on the executor's sample through
// the point reference, and still catches a wrong value there.
TEST(Budget, LargeCheckSamplesAndStillCompares) {
  GraphBuilder b("column_sum");
  Value x = b.input("x", DType::Float32, {8192, 4096});  // 2^25 elements: sampled
  b.output(b.reduceSum(x, {0}));
  CompiledGraph c = compileGraph(b.build(), CompileOptions{});
  ASSERT_TRUE(planCheckMemory(c).sampledReference);
  CpuCheckReport r = checkOnCpu(c, CpuCheckOptions{});
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_TRUE(r.sampled);

  const Graph& g = c.graph;
  std::vector<HostTensor> inputs = makeRandomInputs(g, 1);
  PointReference points(g, inputs);
  HostTensor got = HostTensor::zeros(DType::Float32, {4096});
  std::vector<std::vector<bool>> written = {std::vector<bool>(4096, false)};
  for (int64_t k : {0, 17, 4095}) {
    got.set(k, points.value(g.outputs[0].tensor, k));
    written[0][static_cast<size_t>(k)] = true;
  }
  Deadline none = Deadline::none();
  auto expected = referenceOutputs(g, inputs, {got}, written, true, points, none);
  EXPECT_TRUE(compareOutputs(g, {got}, written, expected, &points).ok);
  got.set(17, Scalar::ofFloat(DType::Float32, got.get(17).f + 0.5));  // a dropped term's worth
  EXPECT_FALSE(compareOutputs(g, {got}, written, expected, &points).ok);
}

// Terms of magnitude 2^63 that cancel: float32 accumulation errors are of size
// 2^63 * u * sqrt(L), far above the O(1) absolute bound. The magnitude-scaled bound
// accepts a correctly rounded float32 sum and still rejects a wrong one.
TEST(Tolerance, FollowsTheMagnitudeOfTheTerms) {
  GraphBuilder b("scaled_sum");
  Value x = b.input("x", DType::Float32, {4096, 64});
  b.output(b.reduceSum(b.mul(x, b.constant(Scalar::ofFloat(DType::Float32, 0x1p63))), {0}));
  Graph g = b.build();
  // Rows 2048.. negate rows 0..2047: every column sums to exactly 0 in double, while
  // float32 rounding leaves errors of about 2^63 * u * sqrt(L).
  std::vector<HostTensor> inputs = makeRandomInputs(g, 3);
  for (int64_t k = 2048 * 64; k < 4096 * 64; ++k) inputs[0].set(k, Scalar::ofFloat(DType::Float32, -inputs[0].get(k - 2048 * 64).f));
  PointReference points(g, inputs);
  const TensorId out = g.outputs[0].tensor;
  HostTensor expected = HostTensor::zeros(DType::Float32, {64}), f32 = expected, wrong = expected;
  for (int64_t col = 0; col < 64; ++col) {
    float acc = 0;  // a sequential float32 sum: what a kernel could compute
    for (int64_t row = 0; row < 4096; ++row) acc += static_cast<float>(inputs[0].get(row * 64 + col).f * 0x1p63);
    f32.set(col, Scalar::ofFloat(DType::Float32, acc));
    expected.set(col, points.value(out, col));
    wrong.set(col, Scalar::ofFloat(DType::Float32, acc + 0x1p62));
  }
  Tolerance tol = toleranceFor(DType::Float32, accumulationLength(g, out));
  MagnitudeAt magnitude = [&](int64_t k) { return points.magnitude(out, k); };
  EXPECT_FALSE(compareTensors(f32, expected, tol).ok) << "the O(1) bound alone should read this as a mismatch";
  EXPECT_TRUE(compareTensors(f32, expected, tol, magnitude).ok);
  EXPECT_FALSE(compareTensors(wrong, expected, tol, magnitude).ok);
  EXPECT_GT(points.magnitude(out, 0), 0x1p63 * 4096 * 0.4);  // sum of |terms|, not |sum|
}
