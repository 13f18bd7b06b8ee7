// Graphs whose rows are the size symbol S, shared by the CPU (symbolic_variants_test.cc)
// and GPU (gpu/symbolic_gpu_test.cc) tests of symbolic kernels, so that the GPU runs
// the programs whose row variants the CPU tests check.
#pragma once

#include "frontend/builder.h"

namespace polyred::testgraphs {

// Layer norm of [B, S, H] rows (B * S rows) in `t`, computed in float32, with gamma
// and beta.
inline Graph symbolicLayerNorm(int64_t batch, int64_t hidden, DType t) {
  GraphBuilder b("sym_layer_norm");
  Value x = b.cast(b.symbolicInput("x", t, {batch, "S", hidden}), DType::Float32);
  Value gamma = b.input("gamma", DType::Float32, {hidden});
  Value beta = b.input("beta", DType::Float32, {hidden});
  Value n = b.constant(Scalar::ofFloat(DType::Float32, static_cast<double>(hidden)));
  Value centered = b.sub(x, b.binary(OpKind::Div, b.reduceSum(x, {2}, true), n));
  Value var = b.binary(OpKind::Div, b.reduceSum(b.mul(centered, centered), {2}, true), n);
  Value inv = b.unary(OpKind::Rsqrt, b.add(var, b.constant(Scalar::ofFloat(DType::Float32, 1e-5))));
  b.output(b.cast(b.add(b.mul(b.mul(centered, inv), gamma), beta), t));
  return b.build();
}

// Softmax over `vocab` columns of [S, vocab].
inline Graph symbolicSoftmax(int64_t vocab) {
  GraphBuilder b("sym_softmax");
  Value x = b.symbolicInput("x", DType::Float32, {"S", vocab});
  Value e = b.unary(OpKind::Exp, b.sub(x, b.reduceMax(x, {1}, true)));
  b.output(b.binary(OpKind::Div, e, b.reduceSum(e, {1}, true)));
  return b.build();
}

}  // namespace polyred::testgraphs
