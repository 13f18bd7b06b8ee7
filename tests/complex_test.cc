// complex64: the dtype (two float32 parts), the ops Complex / CReal / CImag / Conj and
// complex Add, Sub, Mul, RealDiv, Neg, Abs, Select; sum and prod reductions. Checked
// here on the CPU: the reference semantics of each op on odd shapes, the lowered
// kernels (CPU executor) against the reference in every reduction form, NVRTC
// compiling the generated CUDA, the composite reader/writer, and the refusals (exit 2
// naming the file, the op and the reason). The GPU half is tests/gpu/complex_gpu_test.cc.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "driver/cpu_check.h"
#include "driver/pipeline.h"
#include "frontend/builder.h"
#include "frontend/composite_reader.h"
#include "frontend/composite_writer.h"
#include "interp/compare.h"
#include "interp/random_inputs.h"
#include "interp/reference.h"
#include "runtime/nvrtc.h"
#include "support/error.h"
#include "lowering_helpers.h"

namespace polyred {
namespace {

using test_support::blocksAlongJ;
using test_support::expectNvrtcCompiles;

namespace fs = std::filesystem;

Scalar c64(double re, double im) { return Scalar::ofComplex(DType::Complex64, re, im).castTo(DType::Complex64); }

TEST(Complex64, DTypeStoresTwoFloat32Parts) {
  EXPECT_EQ(parseDType("complex64"), DType::Complex64);
  EXPECT_EQ(dtypeBytes(DType::Complex64), 8);
  EXPECT_TRUE(isComplex(DType::Complex64));
  EXPECT_FALSE(isFloat(DType::Complex64));
  EXPECT_FALSE(isInteger(DType::Complex64));
  HostTensor h = HostTensor::zeros(DType::Complex64, {3});
  h.set(1, Scalar::ofComplex(DType::Complex64, 0.1, -2.5));
  const Scalar v = h.get(1);
  EXPECT_EQ(v.f, static_cast<double>(0.1f));
  EXPECT_EQ(v.im, -2.5);
  float words[2];
  std::memcpy(words, h.bytes.data() + 8, 8);
  EXPECT_EQ(words[0], 0.1f);
  EXPECT_EQ(words[1], -2.5f);
  EXPECT_EQ(Scalar::convert(int64_t{16777217}, DType::Complex64).f, 16777216.0);  // rounded once to float32
  EXPECT_TRUE(c64(1, 2).identical(c64(1, 2)));
  EXPECT_FALSE(c64(1, 2).identical(c64(1, -2)));
  EXPECT_EQ(c64(1.5, -2).toString(), "(1.5 - 2j)");
}

TEST(Complex64, ElementwiseOpsFollowTheTextbookFormulas) {
  const Scalar a = c64(3, -4), b = c64(0.5, 2);
  auto eval = [](OpKind k, std::vector<Scalar> args, DType out) { return evalElementwise(k, args, out); };
  EXPECT_TRUE(eval(OpKind::Add, {a, b}, DType::Complex64).identical(c64(3.5, -2)));
  EXPECT_TRUE(eval(OpKind::Sub, {a, b}, DType::Complex64).identical(c64(2.5, -6)));
  EXPECT_TRUE(eval(OpKind::Mul, {a, b}, DType::Complex64).identical(c64(3 * 0.5 + 8, 6 - 2)));
  const Scalar q = eval(OpKind::Div, {a, b}, DType::Complex64);  // (3-4i)/(0.5+2i) = (-6.5 - 8i)/4.25
  EXPECT_NEAR(q.f, -6.5 / 4.25, 1e-6);
  EXPECT_NEAR(q.im, -8 / 4.25, 1e-6);
  EXPECT_TRUE(eval(OpKind::Neg, {a}, DType::Complex64).identical(c64(-3, 4)));
  EXPECT_TRUE(eval(OpKind::Conj, {a}, DType::Complex64).identical(c64(3, 4)));
  EXPECT_EQ(eval(OpKind::Abs, {a}, DType::Float32).f, 5.0);
  EXPECT_EQ(eval(OpKind::CReal, {a}, DType::Float32).f, 3.0);
  EXPECT_EQ(eval(OpKind::CImag, {a}, DType::Float32).f, -4.0);
  EXPECT_TRUE(eval(OpKind::Complex, {Scalar::ofFloat(DType::Float32, 1), Scalar::ofFloat(DType::Float32, -1)},
                   DType::Complex64)
                  .identical(c64(1, -1)));
  // Smith's division: no overflow where the quotient is finite; 0 divisor gives NaN.
  const Scalar big = eval(OpKind::Div, {c64(1e30, 1e30), c64(1e30, 1e30)}, DType::Complex64);
  EXPECT_EQ(big.f, 1.0);
  EXPECT_EQ(big.im, 0.0);
  const Scalar byZero = eval(OpKind::Div, {c64(1, 1), c64(0, 0)}, DType::Complex64);
  EXPECT_TRUE(std::isnan(byZero.f) && std::isnan(byZero.im));
  // Abs does not overflow in float32 through the squares.
  EXPECT_NEAR(eval(OpKind::Abs, {c64(3e30, 4e30)}, DType::Float32).f / 5e30, 1.0, 1e-6);
}

// Complex(re, im) with broadcasting over odd shapes, every op, parts out again.
TEST(Complex64, ReferenceEvaluatesEveryOpOnOddShapes) {
  GraphBuilder b("ops");
  Value re = b.input("re", DType::Float32, {3, 5, 7});
  Value im = b.input("im", DType::Float32, {5, 1});
  Value z = b.complex(re, im);
  Value wr = b.input("wr", DType::Float32, {7});  // inputs in this order (not as call arguments)
  Value wi = b.input("wi", DType::Float32, {7});
  Value w = b.complex(wr, wi);
  Value sum = b.add(z, w), diff = b.sub(z, w), prod = b.mul(z, w);
  Value quot = b.binary(OpKind::Div, z, w);
  Value all = b.add(b.add(sum, diff), b.add(b.conj(prod), b.neg(quot)));
  b.output(b.creal(all));
  b.output(b.cimag(all));
  b.output(b.unary(OpKind::Abs, z));
  b.output(all);
  const Graph g = b.build();
  const std::vector<HostTensor> in = makeRandomInputs(g, 3);
  const std::vector<HostTensor> out = evaluateReference(g, in);
  ASSERT_EQ(out[3].dtype, DType::Complex64);
  ASSERT_EQ(out[0].shape, (Shape{3, 5, 7}));
  for (int64_t k = 0; k < out[3].size(); ++k) {
    const int64_t c = k % 7, r = (k / 7) % 5;
    auto f = [](const HostTensor& t, int64_t i) { return t.get(i).f; };
    const double zr = f(in[0], k), zi = f(in[1], r), wr = f(in[2], c), wi = f(in[3], c);
    auto r32 = [](double v) { return static_cast<double>(static_cast<float>(v)); };
    const double sr = r32(zr + wr), si = r32(zi + wi), dr = r32(zr - wr), di = r32(zi - wi);
    const double pr = r32(zr * wr - zi * wi), pi = r32(zr * wi + zi * wr);
    double qr, qi;
    complexDivide(zr, zi, wr, wi, qr, qi);
    qr = r32(qr);
    qi = r32(qi);
    const double ar = r32(r32(sr + dr) + r32(pr - qr)), ai = r32(r32(si + di) + r32(-pi - qi));
    ASSERT_EQ(out[3].get(k).f, ar) << k;
    ASSERT_EQ(out[3].get(k).im, ai) << k;
    ASSERT_EQ(out[0].get(k).f, ar) << k;
    ASSERT_EQ(out[1].get(k).f, ai) << k;
    ASSERT_EQ(out[2].get(k).f, r32(std::hypot(zr, zi))) << k;
  }
}

TEST(Complex64, ReferenceSumAndProdAccumulateInDouble) {
  GraphBuilder b("red");
  Value z = b.input("z", DType::Complex64, {2, 3});
  b.output(b.reduceSum(z, {1}));
  b.output(b.reduce(z, Reduction::prod(DType::Complex64), {1}));
  const Graph g = b.build();
  HostTensor in = HostTensor::zeros(DType::Complex64, {2, 3});
  const double v[6][2] = {{1, 2}, {3, -1}, {0.5, 0.5}, {1, 0}, {0, 1}, {-1, 0}};
  for (int k = 0; k < 6; ++k) in.set(k, Scalar::ofComplex(DType::Complex64, v[k][0], v[k][1]));
  const std::vector<HostTensor> out = evaluateReference(g, {in});
  auto expectValue = [](const Scalar& v, double re, double im) {
    EXPECT_EQ(v.type, DType::Complex64);
    EXPECT_EQ(v.f, re);
    EXPECT_EQ(v.im, im);
  };
  expectValue(out[0].get(0), 4.5, 1.5);
  expectValue(out[0].get(1), 0, 1);
  // (1+2i)(3-i) = 5+5i; (5+5i)(0.5+0.5i) = 0+5i.  1 * i * -1 = -i.
  expectValue(out[1].get(0), 0, 5);
  expectValue(out[1].get(1), 0, -1);
}

TEST(Complex64, TolerancesComparePartsAsFloat32) {
  const Tolerance t = toleranceFor(DType::Complex64, 100);
  const Tolerance f = toleranceFor(DType::Float32, 100);
  EXPECT_EQ(t.rtol, f.rtol);
  EXPECT_EQ(t.atol, f.atol);
  HostTensor a = HostTensor::zeros(DType::Complex64, {2}), b = a;
  a.set(1, c64(1, 1));
  b.set(1, c64(1, 1 + 1e-3));
  EXPECT_FALSE(compareTensors(a, b, t).ok);
  b.set(1, c64(1, 1 + 1e-7));
  EXPECT_TRUE(compareTensors(a, b, t).ok);
}

struct FormCase {
  const char* name;
  Shape shape;
  int64_t axis;
  CanonicalForm form;
};
const FormCase kForms[] = {{"all", {60001}, 0, CanonicalForm::AllReduce},
                           {"x", {3, 30001}, 1, CanonicalForm::XReduce},
                           {"y", {30001, 3}, 0, CanonicalForm::YReduce},
                           {"x-short", {37, 45}, 1, CanonicalForm::XReduce}};

// sum and prod of Complex(re, im) * w over one axis, the parts read back by CReal/CImag.
Graph fusedGraph(const FormCase& f) {
  GraphBuilder b("complex_reduce");
  Value re = b.input("re", DType::Float32, f.shape);
  Value im = b.input("im", DType::Float32, f.shape);
  Value w = b.input("w", DType::Complex64, {1});
  Value z = b.mul(b.complex(re, im), w);
  Value s = b.reduceSum(z, {f.axis});
  Value p = b.reduce(b.complex(re, b.constant(Scalar::ofFloat(DType::Float32, 0.0))),
                     Reduction::prod(DType::Complex64), {f.axis});
  b.output(s);
  b.output(b.creal(s));
  b.output(b.cimag(p));
  b.output(p);
  return b.build();
}

TEST(Complex64, LoweredSumAndProdPassTheCpuCheckInEveryForm) {
  for (const FormCase& f : kForms)
    for (bool deterministic : {false, true}) {
      const std::string what = std::string(f.name) + (deterministic ? " deterministic" : " atomic");
      const Graph g = fusedGraph(f);
      CompileOptions o;
      o.deterministic = deterministic;
      CompiledGraph c = compileGraph(g, o);
      ASSERT_EQ(c.kernels.size(), 1u) << what;
      EXPECT_EQ(c.kernels[0].plan.form, f.form) << what;
      if (f.shape[0] > 1000 || (f.shape.size() > 1 && f.shape[1] > 1000)) {
        EXPECT_GT(blocksAlongJ(c), 1) << what << ": the cross-block combine is not exercised";
      }
      CpuCheckReport r = checkOnCpu(c, /*seed=*/11, /*maxPoints=*/0, deterministic);
      EXPECT_TRUE(r.ok) << what << "\n" << r.message;
      if (!deterministic) expectNvrtcCompiles(c, what);
    }
}

// Elementwise-only complex kernels (no reduction) and a complex sum over both axes.
TEST(Complex64, ElementwiseKernelsAndFullSumsCheckAndCompile) {
  GraphBuilder b("complex_ew");
  Value z = b.input("z", DType::Complex64, {129, 257});
  Value w = b.input("w", DType::Complex64, {257});
  Value q = b.binary(OpKind::Div, b.sub(z, w), b.add(w, b.conj(z)));
  b.output(q);
  b.output(b.unary(OpKind::Abs, q));
  b.output(b.reduceSum(b.mul(z, b.neg(w)), {0, 1}));
  CompiledGraph c = compileGraph(b.build(), CompileOptions{});
  CpuCheckReport r = checkOnCpu(c, 2, 0, false);
  EXPECT_TRUE(r.ok) << r.message;
  expectNvrtcCompiles(c, "elementwise");
}

// Every file of tests/data/complex: our own, and one in the form AKG's complex-number
// files take ("attr": {} on every op without attributes, "impl_path", Complex's two
// inputs in one argument list).
TEST(Complex64, CompositeFilesReadCheckAndRoundTrip) {
  const fs::path dir = fs::path(POLYRED_SOURCE_DIR) / "tests/data/complex";
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".json" && e.path().extension() != ".info") continue;
    ++files;
    const Graph g = readCompositeFile(e.path().string());
    CompiledGraph c = compileGraph(g, CompileOptions{});
    CpuCheckReport r = checkOnCpu(c, 1, 0, false);
    EXPECT_TRUE(r.ok) << e.path() << "\n" << r.message;
    expectNvrtcCompiles(c, e.path().string());
    const Graph back = parseComposite(writeComposite(g), "roundtrip");
    EXPECT_EQ(back.toString(), parseComposite(writeComposite(back), "again").toString()) << e.path();
    const std::vector<HostTensor> in = makeRandomInputs(g, 4);
    const std::vector<HostTensor> x = evaluateReference(g, in), y = evaluateReference(back, in);
    for (size_t o = 0; o < x.size(); ++o) EXPECT_EQ(x[o].bytes, y[o].bytes) << e.path();
  }
  EXPECT_GE(files, 2);
}

// A composite document with one op over a complex64 input, for the refusals below.
std::string oneOp(const std::string& op, const std::string& inType, const std::string& outType,
                  const std::string& attrs = "null") {
  return R"({"op": "Fused_bad", "input_desc": [[{"tensor_name": "z", "data_type": ")" + inType +
         R"(", "shape": [4, 8], "format": "DefaultFormat"}]],
  "op_desc": [{"name": ")" + op + R"(", "attr": )" + attrs + R"(,
    "input_desc": [[{"tensor_name": "z", "data_type": ")" + inType + R"(", "shape": [4, 8]}]],
    "output_desc": [{"tensor_name": "r", "data_type": ")" + outType + R"(", "shape": [4]}]}],
  "output_desc": [{"tensor_name": "r", "data_type": ")" + outType + R"(", "shape": [4]}]})";
}

void expectRefused(const std::string& doc, const std::vector<std::string>& mentions) {
  try {
    (void)parseComposite(doc, "bad_complex.json");
    ADD_FAILURE() << "accepted:\n" << doc;
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("bad_complex.json"), std::string::npos) << m;
    for (const std::string& s : mentions) EXPECT_NE(m.find(s), std::string::npos) << "'" << s << "' not in: " << m;
  }
}

TEST(Complex64, WrongDTypesAndUndefinedOpsAreRefusedWithTheOpAndReason) {
  const std::string axis = R"([{"name": "axis", "data_type": "listInt", "value": [1]},
                                {"name": "keep_dims", "data_type": "bool", "value": false}])";
  expectRefused(oneOp("ReduceMax", "complex64", "complex64", axis), {"ReduceMax", "complex64", "not ordered"});
  expectRefused(oneOp("ReduceMin", "complex64", "complex64", axis), {"ReduceMin", "complex64"});
  expectRefused(oneOp("ReduceAll", "complex64", "bool", axis), {"ReduceAll", "complex64"});
  expectRefused(oneOp("ReduceSum", "complex64", "float32", axis), {"ReduceSum", "complex64"});
  // Elementwise: same-shape outputs.
  auto unary = [](const std::string& op, const std::string& in, const std::string& out) {
    std::string d = oneOp(op, in, out);
    for (size_t p; (p = d.find("[4]")) != std::string::npos;) d.replace(p, 3, "[4, 8]");
    return d;
  };
  expectRefused(unary("Floor", "complex64", "complex64"), {"Floor", "complex64", "not defined"});
  expectRefused(unary("Exp", "complex64", "complex64"), {"Exp", "complex64"});
  expectRefused(unary("CReal", "float32", "float32"), {"CReal", "complex64", "float32"});
  expectRefused(unary("Conj", "float32", "float32"), {"Conj", "complex64"});
  expectRefused(unary("Cast", "complex64", "float32"), {"Cast", "complex64", "CReal"});
  expectRefused(unary("CImag", "complex64", "complex64"), {"CImag", "output", "float32"});
}

TEST(Complex64, BuilderRefusesComparisonsAndMaxima) {
  GraphBuilder b("bad");
  Value z = b.input("z", DType::Complex64, {4});
  b.output(b.binary(OpKind::Greater, z, z));
  try {
    (void)b.build();
    ADD_FAILURE() << "complex Greater accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Greater on complex64"), std::string::npos) << e.what();
  }
  GraphBuilder m("bad_max");
  m.output(m.reduceMax(m.input("z", DType::Complex64, {4, 4}), {1}));
  EXPECT_THROW((void)m.build(), Error);
  GraphBuilder c("bad_complex");
  c.output(c.complex(c.input("a", DType::Float64, {4}), c.input("b", DType::Float64, {4})));
  EXPECT_THROW((void)c.build(), Error);
}

}  // namespace
}  // namespace polyred
