// Vector lanes (poly/vectorize): which kernels get them, how isl classifies each load
// along the lanes, and that vectorized kernels match the reference on the CPU and
// compile through NVRTC. Shapes are above the 2^16-element threshold.
#include <gtest/gtest.h>

#include "driver/cpu_check.h"
#include "driver/pipeline.h"
#include "frontend/builder.h"
#include "runtime/nvrtc.h"
#include "row_resident_graphs.h"

namespace polyred {
namespace {

// The policy the tests' target (Target{}: sm_90) reads.
const LaunchPolicy& kSm90 = launchPolicyFor(9, 0);

CompiledGraph compileAndCheck(const Graph& g, bool deterministic = false, KernelConfig config = {}) {
  CompileOptions o;
  o.deterministic = deterministic;
  o.config = config;
  CompiledGraph c = compileGraph(g, o);
  CpuCheckReport r = checkOnCpu(c, 7, 1 << 20, deterministic);
  EXPECT_TRUE(r.ok) << r.message;
  for (const KernelSpec& k : c.program.kernels) EXPECT_NO_THROW(compileCuda(k.source, k.name, 9, 0));
  return c;
}

TEST(Vectorize, ElementwiseBiasAddClassifiesEveryLoad) {
  GraphBuilder b("bias");
  Value x = b.input("x", DType::Float16, {512, 768});
  Value bias = b.input("bias", DType::Float16, {768});
  Value scale = b.input("scale", DType::Float16, {512, 1});
  Value xt = b.input("xt", DType::Float16, {768, 512});
  b.output(b.add(b.mul(b.add(x, bias), scale), b.transpose(xt, {1, 0})));
  KernelConfig loop;  // (tiles would stage xt: poly/transpose_tiling.h)
  loop.transposeTiles = TransposeTileMode::Off;
  CompiledGraph c = compileAndCheck(b.build(), false, loop);
  const Vectorization& v = c.kernels.at(0).vector;
  ASSERT_EQ(v.width, 8);  // 8 halves: 16-byte stores
  ASSERT_EQ(v.accesses.size(), 4u);
  EXPECT_EQ(v.accesses[0], LaneAccess::Contiguous);  // x[i]
  EXPECT_EQ(v.accesses[1], LaneAccess::Contiguous);  // bias[i mod 768]: 768 is a multiple of 8
  EXPECT_EQ(v.accesses[2], LaneAccess::Invariant);   // scale[i / 768]
  EXPECT_EQ(v.accesses[3], LaneAccess::Gather);      // xt transposed
  // x and bias feed a half-pair sum (codegen/lane_values.h): their pairs load as such.
  EXPECT_NE(c.program.kernels[0].source.find("pr_load_pairs<8>(in0"), std::string::npos);
  EXPECT_NE(c.program.kernels[0].source.find("pr_load_pairs<8>(in1"), std::string::npos);
}

// An elementwise kernel's lanes are 16 bytes of its widest store: a narrowing cast
// loads two 16-byte accesses a vector (f32 -> f16: 8 lanes, f64 -> f32: 4), a widening
// one keeps its stores' width (f16 -> f32: 4 lanes, 8-byte loads); a reduction's lanes
// stay at 16 bytes of its widest load (f32: 4 lanes).
TEST(Vectorize, ElementwiseLanesAreSetByTheStores) {
  struct Case {
    DType from, to;
    int width;
  };
  for (const Case& k : {Case{DType::Float32, DType::Float16, 8}, Case{DType::Float32, DType::Bool, 8},
                        Case{DType::Float64, DType::Float32, 4}, Case{DType::Float16, DType::Float32, 4},
                        Case{DType::Float32, DType::Float32, 4}}) {
    SCOPED_TRACE(std::string(dtypeName(k.from)) + " -> " + std::string(dtypeName(k.to)));
    GraphBuilder b("cast");
    Value x = b.input("x", k.from, {512, 1000});
    b.output(b.cast(b.add(x, x), k.to));
    const CompiledGraph c = compileAndCheck(b.build());
    EXPECT_EQ(c.kernels.at(0).vector.width, k.width);
    EXPECT_NE(c.program.kernels[0].source.find("pr_aligned<" + std::to_string(k.width) + ">(in0)"), std::string::npos)
        << c.program.kernels[0].source;
  }
  GraphBuilder r("row_sums");
  r.output(r.reduceSum(r.input("x", DType::Float32, {512, 1000}), {1}, false));
  EXPECT_EQ(compileAndCheck(r.build()).kernels.at(0).vector.width, 4);
}

TEST(Vectorize, XReduceLanesRunAlongTheReducedAxis) {
  for (DType t : {DType::Float16, DType::Bool, DType::Float32}) {
    GraphBuilder b("rows");
    Value x = b.input("x", t, {300, 1024});
    b.output(t == DType::Bool ? b.reduce(x, Reduction::logicalAnd(t), {1}) : b.reduceSum(x, {1}));
    CompiledGraph c = compileAndCheck(b.build());
    const Vectorization& v = c.kernels.at(0).vector;
    EXPECT_EQ(v.axis, 'j') << dtypeName(t);
    EXPECT_EQ(v.width, t == DType::Float32 ? 4 : 8) << dtypeName(t);
  }
}

// The graph with its tuples' later-combines taken away (argmax's combine is then only
// compares and selects).
Graph withoutLaterCombine(Graph g) {
  for (Node& n : g.nodes)
    if (n.reduction && n.reduction->isTuple()) {
      auto plain = std::make_shared<TupleReduction>(*n.reduction->tuple);
      for (TupleField& f : plain->fields) f.combineLater = nullptr;
      n.reduction->tuple = plain;
    }
  return g;
}

TEST(Vectorize, NoLanesWhereTheyCannotApply) {
  auto width = [](const Graph& g) { return compileAndCheck(g).kernels.at(0).vector.width; };
  GraphBuilder column("column");  // y-reduce: 301 kept columns, not a multiple of 2
  column.output(column.reduceSum(column.input("x", DType::Float32, {1024, 301}), {0}));
  EXPECT_EQ(width(column.build()), 1);
  // A tuple whose combine is only compares and selects, without a later-combine: argmax
  // with its later-combine taken away.
  GraphBuilder arg("argmax");
  arg.output(arg.argmax(arg.input("x", DType::Float16, {64, 4096}), 1));
  EXPECT_EQ(width(withoutLaterCombine(arg.build())), 1);
  EXPECT_EQ(width(arg.build()), 8);  // with it: lanes
  GraphBuilder tiny("tiny");  // launch-bound size
  tiny.output(tiny.reduceSum(tiny.input("x", DType::Float32, {4096}), {0}));
  EXPECT_EQ(width(tiny.build()), 1);
}

// Rows whose length is not a multiple of V start anywhere inside a vector: the lanes run
// over the flat buffer's aligned vectors, shifted per row, and lanes outside the row are
// masked (no load, the identity). Covers plain and tuple reductions, an odd all-reduce,
// rows shorter than a vector, a row-invariant load (Invariant), a load whose rows start
// elsewhere (bias[j]: Gather), and the deterministic combine across blocks. (A tuple
// gets lanes where its combine is long or it has a later-combine: logsumexp here;
// argmax in tuple_codegen_test.cc.)
TEST(Vectorize, RowsOffTheVectorBoundaryGetMaskedLanes) {
  struct Case {
    std::string name;
    DType t;
    std::vector<int64_t> shape;
    int width;
  };
  for (const Case& k : {Case{"sum", DType::Float32, {300, 1023}, 4}, Case{"sum", DType::Float16, {37, 5003}, 8},
                        Case{"max", DType::Int32, {41, 4097}, 4}, Case{"logsumexp", DType::Float16, {23, 5003}, 8},
                        Case{"logsumexp", DType::BFloat16, {9, 30011}, 8}, Case{"sum", DType::Float32, {70001}, 4},
                        Case{"sum", DType::Float16, {30000, 3}, 8}, Case{"bias", DType::Float16, {300, 1023}, 8}})
    for (bool deterministic : {false, true}) {
      SCOPED_TRACE(k.name + " " + std::string(dtypeName(k.t)) + " " + std::to_string(k.shape.back()) +
                   (deterministic ? " deterministic" : ""));
      GraphBuilder b("masked");
      Value x = b.input("x", k.t, k.shape);
      const int axis = static_cast<int>(k.shape.size()) - 1;
      if (k.name == "sum") b.output(b.reduceSum(x, {axis}));
      if (k.name == "max") b.output(b.reduceMax(x, {axis}));
      if (k.name == "logsumexp") b.output(b.logSumExp(x, {axis}));
      if (k.name == "bias") {
        Value bias = b.input("bias", k.t, {k.shape[1]});
        Value scale = b.input("scale", k.t, {k.shape[0], 1});
        b.output(b.reduceSum(b.mul(b.add(x, bias), scale), {1}));
      }
      CompiledGraph c = compileAndCheck(b.build(), deterministic);
      ASSERT_EQ(c.kernels.size(), 1u);
      const Vectorization& v = c.kernels[0].vector;
      EXPECT_EQ(v.axis, 'j');
      EXPECT_EQ(v.width, k.width);
      EXPECT_TRUE(v.masked());
      EXPECT_EQ(v.accesses.front(), LaneAccess::Contiguous);  // x, aligned after the shift
      if (k.name == "bias") {
        ASSERT_EQ(v.accesses.size(), 3u);
        EXPECT_EQ(v.accesses[1], LaneAccess::Gather);     // bias[j]: its rows start at 0, not at the shift
        EXPECT_EQ(v.accesses[2], LaneAccess::Invariant);  // scale[i]
      }
      // Vectors move as one access, the rest lane by lane: those inside the tensor where
      // the folds mask the lanes off the row (pr_load_lanes_flat: no tuple, and lanes
      // loaded as floats, not as the half pairs of bias's f16 Add), else those whole in
      // their row; where the pass loop is versioned on alignment, its aligned copy asks
      // that alone, the other `false`.
      const std::string& source = c.program.kernels[0].source;
      const bool acrossRows = k.name != "logsumexp", flatLoads = acrossRows && k.name != "bias";
      const std::string oneAccess = flatLoads ? "pr_in_buffer<" + std::to_string(k.width) + ">(" : "whole, lo, hi);";
      if (source.find("if (vector_ok) {") != std::string::npos) {
        EXPECT_NE(source.find(", " + oneAccess), std::string::npos) << source;
        EXPECT_NE(source.find(", false, lo, hi);"), std::string::npos) << source;
      } else {
        EXPECT_NE(source.find(", vector_ok && " + oneAccess), std::string::npos) << source;
      }
      EXPECT_EQ(source.find("l >= lo && l < hi ? ") != std::string::npos, acrossRows) << source;
    }
}

// An elementwise output whose flat size V does not divide keeps its lanes: vector i
// covers V*i .. V*i + V - 1 (shift 0), every vector whole but the last, whose lanes
// past the output load and store nothing. Each dtype's 16-byte width (8 at most), a
// row-broadcast bias (bias[i mod 1001]: gathered), a column-broadcast scale (scale[i /
// 1001]: gathered too, a row boundary falls inside vectors), a cast to a narrower
// output, an in-place output and a flat size one short of a vector.
TEST(Vectorize, ElementwiseOutputsOffTheVectorBoundaryGetMaskedLanes) {
  struct Case {
    DType t;
    std::vector<int64_t> shape;
    int width;
  };
  for (const Case& k : {Case{DType::Float32, {999, 1001}, 4}, Case{DType::Float16, {999, 1001}, 8},
                        Case{DType::BFloat16, {333, 1001}, 8}, Case{DType::Int8, {257, 1001}, 8},
                        Case{DType::Bool, {257, 1001}, 8}, Case{DType::Float64, {999, 1001}, 2},
                        Case{DType::Int64, {333, 1001}, 2}, Case{DType::Int32, {65539}, 4}}) {
    SCOPED_TRACE(std::string(dtypeName(k.t)) + " " + std::to_string(k.shape.front()));
    GraphBuilder b("masked_elementwise");
    Value x = b.input("x", k.t, k.shape);
    if (k.shape.size() == 2) {
      Value bias = b.input("bias", k.t, {k.shape[1]});
      Value scale = b.input("scale", k.t, {k.shape[0], 1});
      b.output(k.t == DType::Bool ? b.binary(OpKind::LogicalAnd, b.binary(OpKind::LogicalOr, x, bias), scale)
                                   : b.mul(b.add(x, bias), scale));
    } else {
      b.output(b.neg(x));
    }
    const CompiledGraph c = compileAndCheck(b.build());
    ASSERT_EQ(c.kernels.size(), 1u);
    const Vectorization& v = c.kernels[0].vector;
    EXPECT_EQ(v.axis, 'i');
    EXPECT_EQ(v.width, k.width);
    EXPECT_TRUE(v.masked());
    EXPECT_EQ(v.shift, Vectorization::kUnshifted);
    EXPECT_EQ(v.accesses.front(), LaneAccess::Contiguous);
    const std::string& source = c.program.kernels[0].source;
    const int64_t elements = k.shape.size() == 2 ? k.shape[0] * k.shape[1] : k.shape[0];
    EXPECT_NE(source.find("pos + " + std::to_string(k.width) + " > " + std::to_string(elements)), std::string::npos)
        << source;
    EXPECT_NE(source.find(", whole, lo, hi);"), std::string::npos) << source;
    EXPECT_NE(source.find(", false, lo, hi);"), std::string::npos) << source;
  }
  // A cast to f16 from f32 (the stores' 2 bytes set 8 lanes, the loads take two 16-byte
  // accesses a vector) and an output written in place.
  GraphBuilder cast("masked_cast");
  Value x = cast.input("x", DType::Float32, {999, 1001});
  cast.output(cast.cast(cast.mul(x, x), DType::Float16));
  EXPECT_EQ(compileAndCheck(cast.build()).kernels.at(0).vector.width, 8);
  GraphBuilder inPlace("masked_in_place");
  Value acc = inPlace.input("acc", DType::Float32, {65537});
  inPlace.outputInto(inPlace.add(acc, inPlace.input("g", DType::Float32, {65537})), acc);
  const CompiledGraph assigned = compileAndCheck(inPlace.build());
  EXPECT_TRUE(assigned.kernels.at(0).vector.masked());
  // Sizes V divides keep whole vectors without masks.
  GraphBuilder even("even");
  Value e = even.input("x", DType::Float32, {1000, 1000});
  even.output(even.add(e, e));
  EXPECT_FALSE(compileAndCheck(even.build()).kernels.at(0).vector.masked());
}

// Row-resident kernels (several passes over each row, the last one storing points):
// every pass takes the lanes, evaluates its own values with the earlier passes' totals
// and stores whole vectors, masked at the row's ends when the rows are off the vector
// boundary. Softmax (3 passes) and layer norm, aligned and odd rows.
TEST(Vectorize, RowResidentPassesTakeLanes) {
  struct Case {
    Graph g;
    int width;
    bool masked;
  };
  for (const Case& k : {Case{testgraphs::softmax(DType::Float16, {300, 1000}, 1), 8, false},
                        Case{testgraphs::softmax(DType::Float16, {333, 1001}, 1), 8, true},
                        Case{testgraphs::softmax(DType::Float32, {300, 1001}, 1), 4, true},
                        Case{testgraphs::layerNorm(DType::Float32, {512, 777}), 4, true}})
    for (bool deterministic : {false, true}) {
      SCOPED_TRACE(toString(k.g.tensor(k.g.inputs[0]).shape));
      CompiledGraph c = compileAndCheck(k.g, deterministic);
      ASSERT_EQ(c.kernels.size(), 1u);
      EXPECT_GT(c.kernels[0].plan.passes(), 1);
      EXPECT_EQ(c.kernels[0].vector.width, k.width);
      EXPECT_EQ(c.kernels[0].vector.masked(), k.masked);
      // (the last pass's stores evict first by default: poly/cache_hints.h)
      EXPECT_NE(c.program.kernels[0].source.find("pr_store_lanes<" + std::to_string(k.width) + ", true>"), std::string::npos);
      // The pass loops of masked row-resident kernels are not unrolled (loopUnrollFor)...
      EXPECT_EQ(loopUnrollFor(c.kernels[0].plan, c.kernels[0].vector, KernelConfig::kAuto, kSm90), k.masked ? 1 : 4);
      // ...except where their rows are kept in registers (three passes: the default),
      // whose slots need the loops unrolled whole (codegen/row_cache.h).
      const std::string& source = c.program.kernels[0].source;
      EXPECT_NE(source.find("in registers"), std::string::npos) << source;
      EXPECT_EQ(source.find("#pragma unroll 1\n"), std::string::npos) << source;
      EXPECT_EQ(source.find("#pragma unroll 4\n"), std::string::npos) << source;
      CompileOptions noCache;
      noCache.config.rowCache = RowCacheMode::Off;
      const std::string plain = compileGraph(k.g, noCache).program.kernels[0].source;
      EXPECT_NE(plain.find(k.masked ? "#pragma unroll 1\n" : "#pragma unroll 4\n"), std::string::npos) << plain;
    }
}

// The unroll policy of row-resident pass loops: long aligned rows unroll by 2, masked
// rows not at all, short rows by the default 4 (loopUnrollFor; the policy reads only
// the plan and the lanes, so no CPU check of the 2^27-element graph is needed).
TEST(Vectorize, LongRowResidentRowsUnrollByTwo) {
  CompileOptions o;
  CompiledGraph c = compileGraph(testgraphs::softmax(DType::Float16, {4096, 32768}, 1), o);
  ASSERT_EQ(c.kernels.size(), 1u);
  EXPECT_GT(c.kernels[0].plan.passes(), 1);
  EXPECT_FALSE(c.kernels[0].vector.masked());
  EXPECT_EQ(loopUnrollFor(c.kernels[0].plan, c.kernels[0].vector, KernelConfig::kAuto, kSm90), 2);
  EXPECT_NE(c.program.kernels[0].source.find("#pragma unroll 2\n"), std::string::npos);
  EXPECT_EQ(c.program.kernels[0].source.find("#pragma unroll 4\n"), std::string::npos);
  EXPECT_EQ(loopUnrollFor(c.kernels[0].plan, c.kernels[0].vector, 8, kSm90), 8);  // a knob wins
}

// ...but only where each pass folds one accumulator: cross-entropy's first pass folds
// the row's max and the target logit's sum, and is not unrolled (registers, occupancy).
TEST(Vectorize, LongRowsWithTwoAccumulatorsInAPassAreNotUnrolled) {
  GraphBuilder b("cross_entropy");
  const Shape shape = {8192, 32000};  // lse=split: the rewrite of canon/logsumexp_rows
  Value x = b.cast(b.input("x", DType::Float16, shape), DType::Float32);
  Value target = b.input("target", DType::Float32, shape);  // one-hot rows
  Value picked = b.reduceSum(b.mul(x, target), {1}, true);
  Value lse = b.logSumExp(x, {1}, true);
  b.output(b.cast(b.sub(lse, picked), DType::Float16));
  CompileOptions o;
  o.config = KernelConfig::parse("lse=split", "test");
  CompiledGraph c = compileGraph(b.build(), o);
  ASSERT_EQ(c.kernels.size(), 1u);
  EXPECT_EQ(c.kernels[0].plan.passes(), 2);
  EXPECT_FALSE(c.kernels[0].vector.masked());
  EXPECT_EQ(loopUnrollFor(c.kernels[0].plan, c.kernels[0].vector, KernelConfig::kAuto, kSm90), 1);
  EXPECT_EQ(c.program.kernels[0].source.find("#pragma unroll 2\n"), std::string::npos);
}

// Tuples with a short combine and no later-combine take no lanes, so their one-pass
// x-reduce loops unroll by 16 (16 scalar loads in flight per thread); argmax folds lanes
// with its later-combine and unrolls by 2; tuples with lanes and a long combine
// (var_mean) and y-reduces keep the default 4.
TEST(Vectorize, TupleRowsUnrollByHowTheyFold) {
  auto unrollOf = [](Graph g) {
    CompiledGraph c = compileGraph(g, CompileOptions{});
    EXPECT_EQ(c.kernels.size(), 1u);
    const PolyKernel& k = c.kernels[0];
    return std::pair(k.vector.width, loopUnrollFor(k.plan, k.vector, KernelConfig::kAuto, kSm90));
  };
  GraphBuilder rows("argmax_rows");
  rows.output(rows.argmax(rows.input("x", DType::Float16, {64, 50257}), 1));
  EXPECT_EQ(unrollOf(rows.build()), std::pair(8, 2));
  EXPECT_EQ(unrollOf(withoutLaterCombine(rows.build())), std::pair(1, 16));
  GraphBuilder columns("argmax_columns");
  columns.output(columns.argmax(columns.input("x", DType::Float32, {4096, 64}), 0));
  EXPECT_EQ(unrollOf(columns.build()), std::pair(1, 4));
  GraphBuilder moments("var");
  moments.output(moments.varMean(moments.input("x", DType::Float32, {64, 65536}), {1}).first);
  EXPECT_EQ(unrollOf(moments.build()), std::pair(4, 4));
}

// Whether a y-reduce's lanes reduce over the block together: in one block reduction
// (a single block) or column by column into the cross-block combine (several).
bool lanesReduceTogether(const std::string& source) {
  for (const char* f : {"block_reduce_y_lanes<", "block_contribute_y_lanes<", "block_store_y_lanes<"})
    if (source.find(f) != std::string::npos) return true;
  return false;
}

// y-reduce: the lanes (a variant: the analytic policy keeps y-reduces scalar, tuning
// picks lanes where they win) run along the kept, contiguous axis and each is a column
// with its own accumulator, block reduction, cross-block combine and epilogue (here a
// per-column scale read at the column: the epilogue offsets are per lane). Single- and
// multi-block grids, atomics and the deterministic combine, 16-byte loads of every width.
TEST(Vectorize, YReduceLanesAreColumnsOfTheirOwn) {
  KernelConfig lanes;
  lanes.maxVectorWidth = 16;
  struct Case {
    DType t;
    int64_t rows, cols;
    int width;
  };
  for (Case k : {Case{DType::Float32, 8192, 768, 4}, Case{DType::Float16, 4096, 256, 8}, Case{DType::Float32, 8192, 1024, 4},
                 Case{DType::BFloat16, 64, 2048, 8}, Case{DType::Int32, 2000, 96, 4}, Case{DType::Float64, 512, 130, 2}})
    for (bool deterministic : {false, true}) {
      GraphBuilder b("columns");
      Value x = b.input("x", k.t, {k.rows, k.cols});
      Value scale = b.input("scale", k.t, {k.cols});
      b.output(b.mul(b.reduceSum(x, {0}), scale));
      b.output(b.reduceMax(x, {0}));
      const Graph g = b.build();
      // The default (poly/vectorize.cc, laneLimitFor): scalar below 1024 kept columns or
      // 8192 rows, unless 4-byte data over 768 columns or more holds 6 Mi elements; 4
      // lanes from there to 8192 columns, reduced over the block together.
      const CompiledGraph byDefault = compileGraph(g, CompileOptions{});
      const bool wordLanes = k.cols >= 768 && dtypeBytes(k.t) == 4 && k.rows * k.cols >= (int64_t{6} << 20);
      const bool narrowLanes = (k.cols >= 1024 && k.rows >= 8192) || wordLanes;
      EXPECT_EQ(byDefault.kernels.at(0).vector.width, narrowLanes ? std::min(4, k.width) : 1) << dtypeName(k.t);
      EXPECT_EQ(lanesReduceTogether(byDefault.program.kernels.at(0).source), narrowLanes) << dtypeName(k.t);
      CompiledGraph c = compileAndCheck(g, deterministic, lanes);
      ASSERT_EQ(c.kernels.size(), 1u);
      const Vectorization& v = c.kernels[0].vector;
      EXPECT_EQ(v.axis, 'i') << dtypeName(k.t);
      EXPECT_EQ(v.width, k.width) << dtypeName(k.t);
      EXPECT_EQ(v.accumulatorLanes, k.width) << dtypeName(k.t);
      // "pr_load_lanes<4>(" or, reading a quarter of the L2 or more, "pr_load_lanes<4, PrLoadHint::Streaming>("
      EXPECT_NE(c.program.kernels[0].source.find("pr_load_lanes<" + std::to_string(k.width)), std::string::npos);
    }
}

// The policy's column pairs (poly/vectorize.cc, laneLimitFor): sums and logical
// reductions of 8- and 16-bit data over columns of at least 8192 rows, 512 to 1023 of
// them, take 2 lanes, reduced together, and so do maxima of
// 16-bit floats (their blocks combine through partials); shorter columns and narrower
// axes keep scalar code; 1024 columns or more take 4 lanes (maxima of floats 2), and so
// do sums of 32-bit data from 768 columns and 6 Mi elements (f32 [8192,768]; a maximum
// of floats there, and 64-bit data, keep scalar code). Pairs take the cache hints of any single-pass kernel: loads that stream
// where the kernel reads a quarter of the L2 or more (poly/cache_hints.cc).
TEST(Vectorize, NarrowColumnsOfSmallDataTakePairs) {
  struct Case {
    DType t;
    int64_t rows, cols;
    char op;  // 's'um (or for bools), 'm'ax, 'p'roduct
    int width;
  };
  // Products combine their blocks through partials (no atomic): pairs from 1024 columns
  // too, scalar below; float maxima take integer atomics and the sums' lanes.
  for (Case k : {Case{DType::Float16, 8192, 768, 's', 2}, Case{DType::Bool, 8192, 512, 's', 2},
                 Case{DType::Int8, 9000, 640, 's', 2}, Case{DType::Float16, 8192, 768, 'm', 2},
                 Case{DType::Float32, 8192, 768, 'm', 4}, Case{DType::Float32, 8192, 1024, 'm', 4},
                 Case{DType::Float32, 8192, 768, 'p', 1}, Case{DType::Float32, 8192, 1024, 'p', 2},
                 Case{DType::Float32, 8192, 768, 's', 4}, Case{DType::Float16, 4096, 768, 's', 1},
                 Case{DType::Float32, 8000, 768, 's', 1}, Case{DType::Float16, 8000, 1024, 's', 4},
                 Case{DType::Float32, 4096, 1024, 's', 1}, Case{DType::Float32, 16384, 512, 's', 1},
                 Case{DType::Float64, 8192, 768, 's', 1},
                 Case{DType::Float16, 8192, 256, 's', 1}, Case{DType::Float16, 8192, 1024, 's', 4},
                 Case{DType::Float16, 8192, 767, 's', 1}, Case{DType::Float16, 21128, 768, 's', 2}}) {
    GraphBuilder b("columns");
    Value x = b.input("x", k.t, {k.rows, k.cols});
    if (k.op == 'm') b.output(b.reduceMax(x, {0}));
    else if (k.op == 'p') b.output(b.reduce(x, Reduction::prod(k.t), {0}));
    else if (k.t == DType::Bool) b.output(b.reduce(x, Reduction::logicalOr(DType::Bool), {0}));
    else b.output(b.reduceSum(x, {0}));
    const std::string what = std::string(dtypeName(k.t)) + " [" + std::to_string(k.rows) + "," + std::to_string(k.cols) + "]";
    CompiledGraph c = compileAndCheck(b.build());
    ASSERT_EQ(c.kernels.size(), 1u) << what;
    EXPECT_EQ(c.kernels[0].vector.width, k.width) << what;
    const std::string& source = c.program.kernels[0].source;
    EXPECT_EQ(lanesReduceTogether(source), k.width > 1) << what;
    if (k.width == 2 && k.cols < 1024) {  // streams from a quarter of the (default target's) L2
      const bool streams = k.rows * k.cols * dtypeBytes(k.t) >= Target{}.l2Bytes / 4;
      EXPECT_EQ(c.kernels[0].hints.any(), streams) << what;
      EXPECT_EQ(source.find("PrLoadHint::Streaming") != std::string::npos, streams) << what;
    }
  }
}

}  // namespace
}  // namespace polyred
