#include "codegen/row_loads.h"

namespace polyred {

namespace {
// Staged loads of pass 0 wait for their chunk (polyred_row_stage.cuh); later passes
// read after pass 0's wait for every chunk.
std::string waits(int pass) { return pass == 0 ? "true" : "false"; }
}  // namespace

std::string RowLoads::lanes(int value, int pass, const std::string& pointer, const std::string& offset,
                            const std::string& dest, const std::string& vectorOk, bool masked) const {
  std::string slot;
  const std::string kind = stage.regionOf(value) ? "" : cache.loadKind(value, pass, slot);
  if (!kind.empty())
    return "pr_load_lanes" + kind + "<" + std::to_string(kernel.vector.width) + ">(" + pointer + ", " + offset + ", " +
           dest + ", " + vectorOk + (masked ? ", lo, hi, " : ", 0, " + std::to_string(kernel.vector.width) + ", ") +
           slot + ");\n";
  return vectorCall("pr_load_lanes", value, pass, pointer, offset, dest, vectorOk, masked);
}

std::string RowLoads::flatLanes(int value, int pass, const std::string& pointer, const std::string& offset,
                                const std::string& dest, const std::string& inBuffer) const {
  std::string slot;
  if (stage.regionOf(value) || !cache.loadKind(value, pass, slot).empty()) return "";
  return vectorCall("pr_load_lanes_flat", value, pass, pointer, offset, dest, inBuffer, true);
}

std::string RowLoads::pairs(int value, int pass, const std::string& pointer, const std::string& offset,
                            const std::string& dest, const std::string& vectorOk, bool masked) const {
  std::string slot;
  if (!stage.regionOf(value) && !cache.loadKind(value, pass, slot).empty()) return "";
  return vectorCall("pr_load_pairs", value, pass, pointer, offset, dest, vectorOk, masked);
}

// `function` (pr_load_lanes or pr_load_pairs) from the staged row or from global memory,
// with the cache hint of a last use.
std::string RowLoads::vectorCall(const std::string& function, int value, int pass, const std::string& pointer,
                                 const std::string& offset, const std::string& dest, const std::string& vectorOk,
                                 bool masked) const {
  const std::string V = std::to_string(kernel.vector.width), lanesInRow = masked ? ", lo, hi" : "";
  if (const RowStage::Region* staged = stage.regionOf(value))
    return function + "_staged<" + V + ", " + waits(pass) + ">(" + RowStage::name(*staged) + ", " + pointer + ", " +
           offset + ", " + dest + ", " + vectorOk + lanesInRow + ");\n";
  const auto v = static_cast<size_t>(value);
  const bool lastUse = pass == kernel.plan.passes() - 1 && kernel.hints.lastUse.size() > v && kernel.hints.lastUse[v];
  const std::string hint = kernel.hints.streamingLoads ? ", PrLoadHint::Streaming" : ", PrLoadHint::EvictFirst";
  return function + "<" + V + (lastUse ? hint : "") + ">(" + pointer + ", " + offset + ", " + dest + ", " + vectorOk +
         lanesInRow + ");\n";
}

std::string RowLoads::scalar(int value, int pass, const std::string& pointer, const std::string& offset) const {
  if (const RowStage::Region* staged = stage.regionOf(value))
    return "pr_load_staged<" + waits(pass) + ">(" + RowStage::name(*staged) + ", " + pointer + ", " + offset + ")";
  std::string slot;
  const std::string kind = cache.loadKind(value, pass, slot);
  return "pr_load" + kind + "(" + pointer + ", " + offset + (kind.empty() ? "" : ", " + slot) + ")";
}

}  // namespace polyred
