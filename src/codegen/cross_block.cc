#include "codegen/cross_block.h"

#include "codegen/tuple_emitter.h"
#include "support/error.h"

namespace polyred {

void addCrossBlockWorkspaces(const CrossBlockKernel& k, const std::vector<CrossBlockAccumulator>& accs,
                             std::vector<ParamDeclaration>& params, std::vector<WorkspaceSpec>& workspaces) {
  auto add = [&](const std::string& type, const std::string& name, WorkspaceSpec ws) {
    params.push_back({{KernelParam::Kind::Workspace, static_cast<int>(workspaces.size())}, type + name, name});
    workspaces.push_back(std::move(ws));
  };
  for (const CrossBlockAccumulator& a : accs) {
    const Reduction& red = *a.reduction;
    const int64_t bytes = red.isTuple() ? tupleBytes(red) : dtypeBytes(red.accType);
    WorkspaceSpec ws;
    if (k.partials) {
      ws.bytes = k.M * k.GX * bytes;  // partials; contents never read before written
    } else {
      ws.bytes = k.M * bytes;
      ws.initPattern.resize(static_cast<size_t>(bytes));
      storeScalar(ws.initPattern.data(), red.accType, 0, red.identity);
    }
    add(a.pointee + "* __restrict__ ", "ws" + std::to_string(a.number), std::move(ws));
  }
  WorkspaceSpec tickets;
  tickets.bytes = k.tiles * 4;
  add("unsigned* __restrict__ ", "tickets", std::move(tickets));
}

std::string partialIndex(const CrossBlockKernel& k, const std::string& row) {
  if (k.yReduce) return "bx * " + std::to_string(k.M) + " + " + row;
  return "(" + row + ") * " + std::to_string(k.GX) + " + bx";
}

void emitContribute(std::ostream& os, const CrossBlockKernel& k, const std::vector<CrossBlockAccumulator>& accs,
                    const std::vector<std::string>& rowOfLane, const std::string& in) {
  if (k.lanesTogether) return;
  for (const CrossBlockAccumulator& a : accs)
    for (int l = 0; l < k.lanes; ++l) {
      const std::string n = std::to_string(a.number), acc = k.lanes > 1 ? a.name + "[" + std::to_string(l) + "]" : a.name;
      if (k.partials)
        os << in << "ws" << n << "[" << partialIndex(k, rowOfLane.at(l)) << "] = " << acc << ";\n";
      else
        os << in << "polyred_dev::atomic_combine(&ws" << n << "[" << rowOfLane.at(l) << "], " << acc << ", " << a.functor
           << "());\n";
    }
}

void emitContributeLanes(std::ostream& os, const CrossBlockKernel& k, const CrossBlockAccumulator& a,
                         const std::string& tile, const std::string& in) {
  const std::string n = std::to_string(a.number), first = "first_column" + n;
  const std::string policy = a.order == "polyred_dev::AnyOrder" ? "" : ", " + a.order;  // (the library's default)
  os << in << "const " << k.index << " " << first << " = " << k.lanes * k.BX << " * (" << tile
     << ");  // the tile's first column\n"
     << in << "polyred_dev::" << (k.partials ? "block_store_y_lanes<" : "block_contribute_y_lanes<") << a.type << ", "
     << a.functor << ", " << k.BX << ", " << k.BY << ", " << k.lanes << policy << ">(" << a.name << ", " << a.functor
     << "(), smem" << n << ", ws" << n << " + " << (k.partials ? partialIndex(k, first) : first) << ", " << k.M
     << " - " << first << ");\n";
}

namespace {

// A y-reduce: each thread's lanes over the blocks' rows of partials, a chunk of blocks
// per y, then the block reduction over y (combine_block_partials_y).
void emitGatherColumns(std::ostream& os, const CrossBlockKernel& k, const std::vector<CrossBlockAccumulator>& accs,
                       const std::string& tile, const std::string& in) {
  const std::string firstRow = "(" + tile + ") * " + std::to_string(k.BX) + " + tx";
  const std::string rowOfLane0 = k.lanes == 1 ? firstRow : std::to_string(k.lanes) + " * (" + firstRow + ")";
  const std::string shape = std::to_string(k.BX) + ", " + std::to_string(k.BY);
  const std::string args =
      std::to_string(k.M) + ", " + std::to_string(k.GX) + ", " + rowOfLane0 + ", " + std::to_string(k.M);
  for (const CrossBlockAccumulator& a : accs) {
    const std::string n = std::to_string(a.number);
    if (k.lanes == 1)
      os << in << "  " << a.name << " = polyred_dev::combine_block_partials_y<" << a.type << ", " << a.functor << ", "
         << shape << ", " << a.order << ">(ws" << n << ", " << args << ", " << a.identity << ", " << a.functor
         << "(), smem" << n << ");\n";
    else
      os << in << "  polyred_dev::combine_block_partials_y_lanes<" << a.type << ", " << a.functor << ", " << shape
         << ", " << k.lanes << ", " << (k.lanesTogether ? "true" : "false") << ", " << a.order << ">(ws" << n << ", "
         << args << ", " << a.identity << ", " << a.functor << "(), smem" << n << ", " << a.name << ");\n";
  }
}

// An x- or all-reduce: each row's partials by its threads along x -- one warp's where
// GX <= 32, else strided (or, for an ordered tuple, contiguous) shares and the block
// reduction. (One thread folding the partials alone waited on one dependent combine
// per block: var_mean, #13.)
void emitGatherRows(std::ostream& os, const CrossBlockKernel& k, const std::vector<CrossBlockAccumulator>& accs,
                    const std::string& tile, const std::string& in) {
  POLYRED_CHECK(k.lanes == 1, "lanes of their own per thread are a y-reduce's only");
  const std::string gx = std::to_string(k.GX), shape = std::to_string(k.BX) + ", " + std::to_string(k.BY);
  os << in << "  const " << k.index << " tile_row = (" << tile << ") * " << k.BY << " + ty;\n";
  os << in << "  const bool live = tile_row < " << k.M << ";  // rows past M combine nothing\n";
  for (const CrossBlockAccumulator& a : accs)
    os << in << "  " << a.name << " = polyred_dev::combine_partials_fixed_order_x<" << a.type << ", " << a.functor
       << ", " << shape << ", " << a.order << ", " << gx << ">(ws" << a.number << " + (live ? tile_row : 0) * " << gx
       << ", live ? " << gx << " : 0, " << a.identity << ", " << a.functor << "(), smem" << a.number << ");\n";
}

}  // namespace

void emitGatherPartials(std::ostream& os, const CrossBlockKernel& k, const std::vector<CrossBlockAccumulator>& accs,
                        const std::string& tile, const std::string& in) {
  os << in << "if (last_block) {  // the rows' partials, combined by a fixed tree\n";
  if (k.yReduce) emitGatherColumns(os, k, accs, tile, in);
  else emitGatherRows(os, k, accs, tile, in);
  os << in << "}\n";
}

}  // namespace polyred
