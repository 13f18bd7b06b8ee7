#include "codegen/symbolic_launch.h"

#include <algorithm>

#include "support/error.h"

namespace polyred {

std::array<uint32_t, 3> LaunchConfig::gridAt(const std::vector<int64_t>& sizes) const {
  std::array<uint32_t, 3> g = grid;
  if (rows.symbol < 0) return g;
  POLYRED_CHECK(rows.symbol < static_cast<int>(sizes.size()), "no value for size symbol " << rows.symbol);
  const int64_t n = rows.coefficient * sizes[static_cast<size_t>(rows.symbol)];
  const int64_t blocks = (n + rows.rowsPerBlock - 1) / rows.rowsPerBlock;
  uint32_t& d = g[static_cast<size_t>(rows.axis)];
  d = static_cast<uint32_t>(std::min<int64_t>(d, blocks));
  return g;
}

bool GridRule::serves(const std::vector<int64_t>& sizes) const {
  if (symbol < 0) return true;
  POLYRED_CHECK(symbol < static_cast<int>(sizes.size()), "no value for size symbol " << symbol);
  const int64_t rows = coefficient * sizes[static_cast<size_t>(symbol)];
  return rows >= fewestRows && rows <= mostRows;
}

const PolyKernel& kernelForRows(const PolyKernel& k, const std::vector<int64_t>& sizes) {
  if (k.rowVariants.empty() || sizes.empty()) return k;
  const SymbolicRows& rows = *k.plan.symbolicRows;
  const int64_t count = rows.coefficient * sizes.at(static_cast<size_t>(rows.symbol));
  for (const PolyKernel& v : k.rowVariants)
    if (v.plan.symbolicRows->serves(count)) return v;
  return k;
}

std::vector<ParamDeclaration> sizeParams(const KernelPlan& p) {
  if (!p.symbolicRows) return {};
  const SymbolicRows& r = *p.symbolicRows;
  return {{{KernelParam::Kind::Size, r.symbol}, "const long long " + r.param(), r.param()}};
}

GridRule gridRuleOf(const PolyKernel& k) {
  if (!k.plan.symbolicRows) return {};
  const bool elementwise = k.plan.form == CanonicalForm::Elementwise;
  POLYRED_CHECK(elementwise || k.plan.form == CanonicalForm::XReduce, "symbolic rows in a " << formName(k.plan.form));
  return {.symbol = k.plan.symbolicRows->symbol,
          .coefficient = k.plan.symbolicRows->coefficient,
          .rowsPerBlock = elementwise ? k.binding.BX : k.binding.BY,
          .axis = elementwise ? 0 : 1,
          .fewestRows = k.plan.symbolicRows->fewestRows,
          .mostRows = k.plan.symbolicRows->mostRows};
}

SizedKernel sizedKernel(const PolyKernel& k, const std::vector<int64_t>& sizes) {
  SizedKernel s{k.plan, k.binding};
  if (!k.plan.symbolicRows) return s;
  const SymbolicRows& rows = *k.plan.symbolicRows;
  POLYRED_CHECK(rows.symbol < static_cast<int>(sizes.size()), "no value for size symbol " << rows.name);
  s.size = sizes[static_cast<size_t>(rows.symbol)];
  s.plan.M = rows.coefficient * s.size;
  POLYRED_CHECK(rows.serves(s.plan.M), k.plan.name << " launched at " << s.plan.M << " rows, which it does not serve");
  const GridRule rule = gridRuleOf(k);
  s.binding.tiles = (s.plan.M + rule.rowsPerBlock - 1) / rule.rowsPerBlock;
  int64_t& grid = rule.axis == 0 ? s.binding.GX : s.binding.GY;
  grid = std::min(grid, s.binding.tiles);
  return s;
}

}  // namespace polyred
