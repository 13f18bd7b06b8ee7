// How a generated kernel names and spells its reductions' accumulators.
//
// Takes: a KernelPlan and its accumulator lanes (Vectorization::accumulatorLanes).
// Gives: C++ expressions as strings -- an accumulator and its type, its identity, the
// combiner functor and block-reduction tree order, what a body value contributes, the
// result as the Reduce node's type -- for KernelEmitter (codegen/kernel_emitter.h), which
// writes them into kernels. Tuples spell theirs through codegen/tuple_emitter.
#pragma once

#include <cstddef>
#include <string>

#include "canon/kernel_plan.h"

namespace polyred {

class AccumulatorNames {
 public:
  AccumulatorNames(const KernelPlan& plan, int lanes) : p_(plan), lanes_(lanes) {}

  bool tuple(size_t r) const { return p_.reductions[r].reduction.isTuple(); }
  // Whether reduction r has an accumulator of its own (else it reads its holder's).
  bool owns(size_t r) const { return p_.reductions[r].sharesAccumulatorOf < 0; }
  size_t holder(size_t r) const { return static_cast<size_t>(p_.reductions[r].holder(static_cast<int>(r))); }
  std::string accType(size_t r) const;
  std::string identity(size_t r) const;
  // The accumulator's value as the Reduce node's result type (before its cast).
  std::string result(size_t r, const std::string& total) const;
  // Reduction r's total as the later passes and the epilogue read it.
  std::string total(size_t r) const { return result(r, "acc" + std::to_string(holder(r))); }
  // What element (value) contributes: the lifted tuple, or the value in accType.
  // Values are named prefix<number>suffix (suffix "[l]": lane l of a vectorized body).
  std::string element(size_t r, const std::string& prefix, const std::string& suffix = "") const;
  // How tuple r's V lifted lanes (values v<k>[l]) join the thread's accumulator:
  // codegen/lane_folds.h's fold for the tuple, spelled by tuple_emitter's tupleLaneTree.
  std::string laneFold(size_t r, int width, bool masked, const std::string& indent) const;
  std::string functor(size_t r) const;
  std::string op(size_t r) const { return functor(r) + "()"; }
  // The block reduction's tree policy: InOrder for an ordered tuple (whose threads hold
  // contiguous chunks of j), else AnyOrder, the library's default (butterflies).
  // treePolicy is the trailing template argument, empty for the default.
  std::string treeOrder(size_t r) const { return orderedTree(r) ? "polyred_dev::InOrder" : "polyred_dev::AnyOrder"; }
  std::string treePolicy(size_t r) const { return orderedTree(r) ? ", polyred_dev::InOrder" : ""; }
  // Accumulator r of lane `lane` (a y-reduce thread owns lanes_ consecutive columns).
  std::string acc(size_t r, const std::string& lane) const {
    return "acc" + std::to_string(r) + (lanes_ > 1 ? "[" + lane + "]" : "");
  }
  std::string acc(size_t r, int lane) const { return acc(r, std::to_string(lane)); }
  // The row (column) a Store/Contribute/Final of lane `lane` handles: i counts groups of
  // lanes_ columns.
  std::string row(const std::string& i, int lane) const;

 protected:
  const KernelPlan& p_;
  const int lanes_;  // accumulator lanes (Vectorization::accumulatorLanes)

 private:
  bool orderedTree(size_t r) const;
};

}  // namespace polyred
