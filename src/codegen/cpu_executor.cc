#include "codegen/cpu_executor.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <optional>
#include <random>

#include "codegen/cpu_block_sample.h"
#include "codegen/symbolic_launch.h"
#include "codegen/cpu_scan.h"
#include "codegen/cpu_shared_tiles.h"
#include "codegen/cpu_stores.h"
#include "codegen/exec_ast.h"
#include "codegen/lane_folds.h"
#include "codegen/order_witness.h"
#include "ir/tuple_program.h"
#include "ir/tuple_reduction.h"
#include "poly/vectorize.h"
#include "support/error.h"

namespace polyred {

namespace {

enum Slot { kBx = 0, kBy = 1, kTx = 2, kTy = 3 };

class BlockMachine {
 public:
  BlockMachine(const Graph& g, const PolyKernel& k, const SizedKernel& sized, const std::vector<HostTensor>& inputs,
               CpuStores& stores, const CpuExecOptions& o, int slots)
      : g_(g), k_(k), p_(sized.plan), b_(sized.binding), inputs_(inputs), stores_(stores), o_(o), slots_(slots),
        sizeSlot_(sized.sizeSlot), size_(sized.size), tiles_(k.tiling) {
    // Tuples and complex products combine their blocks through the partials, in block
    // order, as do kernels whose binding chose them (as the emitter).
    det_ = o.deterministic || p_.needsBlockOrderCombine() || b_.partials;
    // An ordered tuple is right only if each thread's elements are one contiguous chunk
    // of j, in thread then block order (poly/schedule); lanes and blocks are then
    // combined in order below, as the device's InOrder trees do.
    POLYRED_CHECK(!p_.hasOrderedReduction() || b_.chunk > 0,
                  p_.name << ": an ordered tuple reduction bound with interleaved iterations");
    if (p_.hasOrderedReduction()) witness_.emplace(b_.BX * b_.BY, p_.M, b_.GX, p_.N);
    threads_ = b_.BX * b_.BY;
    lanes_ = k.vector.accumulatorLanes;
    vars_.assign(static_cast<size_t>(threads_ * slots_), 0);
    acc_.assign(static_cast<size_t>(threads_) * p_.reductions.size() * static_cast<size_t>(lanes_), Scalar{});
    holdsTotal_.assign(acc_.size(), false);
    for (const auto& r : p_.reductions) {
      workspace_.emplace_back(static_cast<size_t>(p_.M), r.reduction.identity);
      partials_.emplace_back(det_ && !r.reduction.isTuple() ? static_cast<size_t>(p_.M * b_.GX) : 0, r.reduction.identity);
      tuplePartials_.emplace_back(r.reduction.isTuple() ? static_cast<size_t>(p_.M * b_.GX) : 0);
      tuplePrograms_.emplace_back();
      if (r.reduction.isTuple()) tuplePrograms_.back().emplace(*r.reduction.tuple, /*widen=*/false);
    }
    if (p_.hasTupleReduction()) tupleAcc_.assign(acc_.size(), TupleValue{});
    tickets_.assign(static_cast<size_t>(b_.tiles), 0);
    if (b_.multiBlockScan()) lookBack_.emplace(p_.form == CanonicalForm::YReduce ? b_.BX : b_.BY, b_.GX);
    for (int pass = 0; pass < p_.passes(); ++pass) {
      passValues_.push_back(p_.valuesOfPass(pass));
      passLoads_.push_back(p_.loadsOfPass(pass));
      passStores_.push_back(static_cast<size_t>(std::count_if(
          p_.stores.begin(), p_.stores.end(), [&](const ElementwiseOutput& s) { return s.pass == pass; })));
    }
    if (p_.hasScan()) {  // the same for every instance: computed once
      scanRows_ = scanRowThreads(b_.BX, b_.BY, p_.form == CanonicalForm::YReduce);
      scanInput_ = p_.valuesBeforeScan(0);
    }
  }

  void runBlock(int64_t bx, int64_t by, const ExecNode& root) {
    std::vector<int> all(static_cast<size_t>(threads_));
    std::iota(all.begin(), all.end(), 0);
    for (int t : all) {
      int64_t* v = vars(t);
      v[kBx] = bx;
      v[kBy] = by;
      v[kTx] = t % b_.BX;
      v[kTy] = t / b_.BX;
      if (sizeSlot_ >= 0) v[sizeSlot_] = size_;
    }
    lastBlock_ = false;
    tiles_.clear();
    exec(root, all);
  }

  // After all blocks: the workspace must be back in its initial state.
  void checkWorkspaceRestored() const {
    for (unsigned t : tickets_) POLYRED_CHECK(t == 0, "a ticket counter was not reset");
    POLYRED_CHECK(!lookBack_ || lookBack_->restored(), "a scan's chunk counters and flags were not reset");
    if (det_) return;
    for (size_t r = 0; r < workspace_.size(); ++r)
      for (const Scalar& s : workspace_[r])
        POLYRED_CHECK(s.identical(p_.reductions[r].reduction.identity), "workspace not restored to the identity");
  }

 private:
  int64_t* vars(int t) { return &vars_[static_cast<size_t>(t * slots_)]; }
  // Accumulator r of thread t for accumulator lane `lane` (a y-reduce thread owns
  // lanes_ consecutive columns, each with its own accumulator).
  size_t accIndex(int t, size_t r, int lane) const {
    return (static_cast<size_t>(t) * p_.reductions.size() + r) * static_cast<size_t>(lanes_) + static_cast<size_t>(lane);
  }
  Scalar& acc(int t, size_t r, int lane = 0) { return acc_[accIndex(t, r, lane)]; }
  // A tuple reduction's accumulator (ir/tuple_reduction.h), evaluated in its field types.
  TupleValue& tupleAcc(int t, size_t r, int lane = 0) { return tupleAcc_[accIndex(t, r, lane)]; }
  bool isTuple(size_t r) const { return p_.reductions[r].reduction.isTuple(); }
  const TupleReduction& tupleOf(size_t r) const { return *p_.reductions[r].reduction.tuple; }
  // Tuple reduction r's lift and combines, as the kernel computes them (not widened).
  TuplePrograms& programsOf(size_t r) { return *tuplePrograms_[r]; }
  // a = combine(a, b) of tuple reduction r.
  void combineInto(size_t r, TupleValue& a, const TupleValue& b) { programsOf(r).combine.run(a, b); }
  // Thread t's accumulator r as the Reduce node's result (a tuple is finalized; the
  // caller casts to the output type).
  Scalar total(int t, size_t r, int lane = 0) {
    if (!isTuple(r)) return acc(t, r, lane);
    return finalizeTuple(tupleOf(r), tupleAcc(t, holder(r), lane), p_.reductions[r].reduction.result);
  }
  // Whether reduction r accumulates (else it reads the tuple of its holder).
  bool owns(size_t r) const { return p_.reductions[r].sharesAccumulatorOf < 0; }
  size_t holder(size_t r) const { return static_cast<size_t>(p_.reductions[r].holder(static_cast<int>(r))); }
  // Whether thread t's accumulator r holds the row's total (after a block reduction).
  std::vector<bool>::reference holdsTotal(int t, size_t r, int lane = 0) { return holdsTotal_[accIndex(t, r, lane)]; }
  // The row (column) that lane `lane` of a Store/Contribute/Final at i handles.
  int64_t rowOf(int64_t i, int lane) const { return lanes_ == 1 ? i : i * lanes_ + lane; }

  void exec(const ExecNode& n, const std::vector<int>& active) {
    if (active.empty()) return;
    switch (n.kind) {
      case AstNode::Kind::Block:
      case AstNode::Kind::Mark:
        for (const auto& c : n.children) exec(c, active);
        return;
      case AstNode::Kind::If: {
        std::vector<int> yes, no;
        for (int t : active) (eval(n.cond, vars(t)) ? yes : no).push_back(t);
        exec(n.children[0], yes);
        if (n.children.size() > 1) exec(n.children[1], no);
        return;
      }
      case AstNode::Kind::For: {
        for (int t : active) vars(t)[n.slot] = eval(n.init, vars(t));
        for (;;) {
          std::vector<int> running;
          for (int t : active)
            if (eval(n.cond, vars(t))) running.push_back(t);
          if (running.empty()) return;
          exec(n.children[0], running);
          for (int t : running) vars(t)[n.slot] += eval(n.inc, vars(t));
        }
      }
      case AstNode::Kind::User: statement(n, active); return;
    }
  }

  void requireWholeBlock(const ExecNode& n, const std::vector<int>& active) const {
    POLYRED_CHECK(static_cast<int>(active.size()) == threads_,
                  "barrier statement " << n.statement << " reached by " << active.size() << " of " << threads_
                                       << " threads (would deadlock or race on the GPU)");
  }

  void statement(const ExecNode& n, const std::vector<int>& active) {
    const std::string& s = n.statement;
    if (s == "BlockReduce") return blockReduce(n, active);
    if (s == "Red" && p_.hasScan()) return scanTile(n, active);
    if (s == "Fold") return scanFold(n, active);
    if (s == "LookBack") return scanLookBack(n, active);
    if (s == "Init" && lookBack_) takeScanChunk(n, active);  // then the carries, as every Init
    if (s == "Arrive") return arrive(n, active);
    if (s == "Stage") return stage(n, active);
    if (s == "Sync") {  // a tiled transpose's barriers (poly/transpose_tiling.h): Sync, then Sync_1 (pass 1)
      requireWholeBlock(n, active);
      return n.pass == 0 ? tiles_.publish() : tiles_.clear();
    }
    for (int t : active) {
      int64_t* v = vars(t);
      if (s == "Init") {
        for (size_t r = 0; r < p_.reductions.size(); ++r)
          for (int l = 0; l < lanes_; ++l) {
            acc(t, r, l) = p_.reductions[r].reduction.identity;
            if (isTuple(r)) tupleAcc(t, r, l) = tupleIdentity(tupleOf(r));
            holdsTotal(t, r, l) = false;
          }
        if (witness_) witness_->reset(t);
      } else if ((s == "Elem" || s == "Red" || s == "Apply") && k_.vector.width > 1) {
        lanes(n, t);
      } else if (s == "Red" || s == "Apply" || s == "Elem") {
        point(n, t);
      } else if (s == "Store") {
        for (int l = 0; l < lanes_; ++l) {
          std::vector<Scalar> totals;
          for (size_t r = 0; r < p_.reductions.size(); ++r) totals.push_back(total(t, r, l));
          if (witness_) witness_->requireWholeRow(t, rowOf(eval(n.coords[0], v), l));
          finish(n, t, totals, l);
        }
      } else if (s == "Contribute") {
        for (int l = 0; l < lanes_; ++l) contribute(rowOf(eval(n.coords[0], v), l), t, l);
      } else if (s == "Final") {
        if (lastBlock_)
          for (int l = 0; l < lanes_; ++l) finalize(n, t, l);
      } else {
        POLYRED_CHECK(false, "unknown statement " << s);
      }
    }
  }

  // Evaluates a value DAG (body or epilogue) for one statement instance: the values
  // `evaluated` marks (all if null); `lane` >= 0 selects one lane of a vectorized
  // instance (loads per Vectorization). Offsets are read from number `firstOffset` on.
  // The values live in a buffer per DAG, reused from point to point (valid until the
  // next evaluation of the same DAG).
  const std::vector<Scalar>& evaluate(const std::vector<BodyValue>& dag, const ExecNode& n, int t,
                                      const std::vector<Scalar>& reduced, int lane = -1,
                                      const std::vector<bool>* evaluated = nullptr, size_t firstOffset = 0) {
    const int64_t* v = vars(t);
    std::vector<Scalar>& values = &dag == &p_.epilogue ? epilogueValues_ : bodyValues_;
    values.resize(dag.size());
    size_t load = 0, offset = firstOffset;
    for (size_t k = 0; k < dag.size(); ++k) {
      const BodyValue& b = dag[k];
      if (evaluated && !(*evaluated)[k]) {
        if (b.hasOffset()) ++load;  // another pass's access: Vectorization::accesses counts it
        continue;
      }
      switch (b.kind) {
        case BodyValue::Kind::Load: {
          if (&dag == &p_.body && k_.tiling.stages(k)) {  // its tile, at lane 0's slot
            const int64_t slot = eval(n.offsets.at(offset++), v) + (lane < 0 ? 0 : lane * k_.tiling.elemLaneStride());
            if (lane >= 0) ++load;
            values[k] = tiles_.read(k, slot);
            break;
          }
          const HostTensor& in = source(b);
          int64_t off = lane < 0 ? eval(n.offsets.at(offset++), v) : laneOffset(n, v, load++, offset, lane, true);
          if (b.gathers()) {  // + index * stride, or 0 where the index is out of range
            const int64_t at = values[static_cast<size_t>(b.operands[0])].i;
            if (at < 0 || at >= b.gatherExtent) {
              values[k] = Scalar::convert(0.0, b.dtype);
              break;
            }
            off += at * b.gatherStride;
          }
          POLYRED_CHECK(off >= 0 && off < in.size(), "load of '" << b.label << "' at offset " << off
                                                                 << " outside [0, " << in.size() << ")");
          values[k] = in.get(off);
          break;
        }
        case BodyValue::Kind::Constant: values[k] = b.value; break;
        case BodyValue::Kind::Reduced:
        case BodyValue::Kind::Scanned: values[k] = reduced.at(static_cast<size_t>(b.reduction)); break;
        case BodyValue::Kind::Index:
          values[k] = Scalar::ofInt(b.dtype, lane < 0 ? eval(n.offsets.at(offset++), v) : laneOffset(n, v, load++, offset, lane, false));
          break;
        case BodyValue::Kind::Op: values[k] = evalOp(b, values); break;
      }
    }
    return values;
  }

  const HostTensor& source(const BodyValue& b) const {
    return b.temporary >= 0 ? stores_.temporary(b.temporary) : inputs_[static_cast<size_t>(b.input)];
  }

  // A tiled transpose's Stage: each thread's staged loads into their slots (the
  // statement's offsets: the loads', then the slot of each lane), Vb lanes each: a
  // vector that starts on a multiple of Vb.
  void stage(const ExecNode& n, const std::vector<int>& active) {
    const int Vb = k_.tiling.Vb;
    const size_t firstSlot = n.offsets.size() - static_cast<size_t>(Vb);
    for (int t : active) {
      size_t load = 0;
      for (size_t v = 0; v < p_.body.size(); ++v) {
        if (!k_.tiling.stages(v)) continue;
        const HostTensor& in = source(p_.body[v]);
        const int64_t off = eval(n.offsets.at(load++), vars(t));
        POLYRED_CHECK(off >= 0 && off + Vb <= in.size() && off % Vb == 0,
                      "staged load of '" << p_.body[v].label << "' at offset " << off << " (" << Vb
                                         << " lanes) outside [0, " << in.size() << ") or not aligned");
        for (int l = 0; l < Vb; ++l)
          tiles_.write(v, eval(n.offsets.at(firstSlot + static_cast<size_t>(l)), vars(t)), in.get(off + l));
      }
    }
  }

  // The offset (or coordinate) of one lane of access number `load` (Vectorization::
  // accesses), advancing `offset` past its annotations (one per lane for a gather, else one).
  int64_t laneOffset(const ExecNode& n, const int64_t* v, size_t load, size_t& offset, int lane, bool isLoad) {
    const int V = k_.vector.width;
    switch (k_.vector.accesses.at(load)) {
      case LaneAccess::Gather: {
        int64_t off = eval(n.offsets.at(offset + static_cast<size_t>(lane)), v);
        offset += static_cast<size_t>(V);
        return off;
      }
      case LaneAccess::Invariant: return eval(n.offsets.at(offset++), v);
      case LaneAccess::Contiguous: {
        int64_t base = eval(n.offsets.at(offset++), v);
        POLYRED_CHECK(!isLoad || base % V == 0, "contiguous lanes start at " << base << ", not a multiple of " << V);
        return base + lane;
      }
    }
    return 0;
  }

  // A vectorized instance: every lane evaluated on its own, then folded into the
  // accumulators (Red: the thread's one, or the lane's own in a y-reduce) or stored at
  // base + lane (Elem).
  // A tuple's lanes are lifted and join the thread's accumulator as the kernel's do
  // (codegen/lane_folds.h: a tree of combines, or a tuple's closed form).
  // Masked lanes outside the row are not evaluated (their tuples are the identity).
  // In a row-resident kernel only the statement's pass is evaluated, folded and stored,
  // with the totals of the earlier passes (as point()).
  void lanes(const ExecNode& n, int t) {
    const int V = k_.vector.width;
    const bool masked = k_.vector.masked();
    const auto inPass = [&](size_t r) { return p_.reductions[r].stage == n.pass && owns(r); };
    const size_t storeOffsets = n.offsets.size() - passStores_.at(static_cast<size_t>(n.pass)) - (masked ? 1 : 0);
    const int64_t position = masked ? eval(n.offsets.back(), vars(t)) : 0;
    const std::vector<Scalar>& totals = earlierTotals(n.pass, t);
    const std::vector<bool>& evaluated = passValues_.at(static_cast<size_t>(n.pass));
    laneTuples_.resize(p_.reductions.size() * static_cast<size_t>(V));
    for (int lane = 0; lane < V; ++lane) {
      if (masked && (position + lane < 0 || position + lane >= k_.vector.extentAlongAxis(p_))) {
        for (size_t r = 0; r < p_.reductions.size(); ++r)
          if (isTuple(r) && inPass(r)) laneTuples_[r * static_cast<size_t>(V) + static_cast<size_t>(lane)] = tupleIdentity(tupleOf(r));
        continue;
      }
      const std::vector<Scalar>& values = evaluate(p_.body, n, t, totals, lane, &evaluated);
      for (size_t r = 0; r < p_.reductions.size(); ++r) {
        if (!inPass(r)) continue;
        const auto& ro = p_.reductions[r];
        if (isTuple(r)) {
          programsOf(r).lift.run(laneTuples_[r * static_cast<size_t>(V) + static_cast<size_t>(lane)], elementInputs(r, values));
          continue;
        }
        Scalar& a = acc(t, r, lanes_ > 1 ? lane : 0);
        a = ro.reduction.combine(a, values[static_cast<size_t>(ro.value)].castTo(ro.reduction.accType));
      }
      size_t next = storeOffsets;
      for (const ElementwiseOutput& out : p_.stores) {
        if (out.pass != n.pass) continue;
        int64_t base = eval(n.offsets.at(next++), vars(t));
        POLYRED_CHECK(base % V == 0, "vector store at " << base << ", not a multiple of " << V);
        stores_.storeValue(out, base + lane, values[static_cast<size_t>(out.value)]);
      }
    }
    const bool whole = !masked || (position >= 0 && position + V <= p_.N);
    for (size_t r = 0; r < p_.reductions.size(); ++r) {
      if (!isTuple(r) || !inPass(r)) continue;
      std::span<TupleValue> lanes(&laneTuples_[r * static_cast<size_t>(V)], static_cast<size_t>(V));
      foldLanesOnHost(laneFoldFor(p_, r), tupleOf(r), programsOf(r), lanes, whole, tupleAcc(t, r));
    }
  }

  // A multi-block scan's Init: the block takes the next chunk of its i-tile's rows (its bx).
  void takeScanChunk(const ExecNode& n, const std::vector<int>& active) {
    requireWholeBlock(n, active);
    const int64_t chunk = lookBack_->takeChunk(eval(n.coords.at(0), vars(active[0])));
    for (int t : active) vars(t)[kBx] = chunk;
  }

  // Lanes of thread t's scan instance inside its row (codegen/scan_emitter.h).
  LaneRange scanLanesOf(const ExecNode& n, int t) {
    return scanLanes(eval(n.offsets.back(), vars(t)), eval(n.coords.at(0), vars(t)) < p_.M, k_.vector.width, p_.N);
  }

  // A multi-block scan's Fold: each thread folds its lanes of the chunk into its accumulator.
  void scanFold(const ExecNode& n, const std::vector<int>& active) {
    const ReductionOutput& ro = p_.reductions.at(0);
    for (int t : active) {
      const LaneRange lanes = scanLanesOf(n, t);
      for (int64_t l = lanes.lo; l < lanes.hi; ++l)
        acc(t, 0) = ro.reduction.combine(acc(t, 0), evaluate(p_.body, n, t, {}, static_cast<int>(l), &scanInput_)
                                                        [static_cast<size_t>(ro.value)].castTo(ro.reduction.accType));
    }
  }

  // LookBack: per row, the chunk's aggregate (its threads' folds, combined), then the
  // carry into the chunk from the one before; the tile's last block resets.
  void scanLookBack(const ExecNode& n, const std::vector<int>& active) {
    requireWholeBlock(n, active);
    const Reduction& red = p_.reductions.at(0).reduction;
    const int64_t tile = eval(n.coords.at(0), vars(active[0])), chunk = vars(active[0])[kBx];
    const std::vector<std::vector<int>>& rows = scanRows_;
    for (size_t r = 0; r < rows.size(); ++r) {
      Scalar aggregate = red.identity.castTo(red.accType);
      for (int t : rows[r]) aggregate = red.combine(aggregate, acc(t, 0));
      const Scalar carry = lookBack_->lookBack(tile, static_cast<int64_t>(r), chunk, aggregate, red);
      for (int t : rows[r]) acc(t, 0) = carry;
    }
    lookBack_->arrive(tile);
  }

  // A scan's Red instance, every thread of the block at once as the block scan runs
  // them (codegen/scan_emitter.h): each thread folds its lanes inside the row in
  // order, the row's threads then combine in order (x along x, y down a column) from
  // the carry, which moves past the tile, and every lane's stores are issued with the
  // running value (the body's Scanned values, the output type's).
  void scanTile(const ExecNode& n, const std::vector<int>& active) {
    requireWholeBlock(n, active);
    const ReductionOutput& ro = p_.reductions.at(0);
    const Reduction& red = ro.reduction;
    const int V = k_.vector.width;
    const Scalar identity = red.identity.castTo(red.accType);
    const std::vector<bool>& evaluated = passValues_.at(0);
    std::vector<std::vector<Scalar>> fold(static_cast<size_t>(threads_), std::vector<Scalar>(static_cast<size_t>(V), identity));
    std::vector<LaneRange> lanes(static_cast<size_t>(threads_));
    for (int t : active) {
      const auto u = static_cast<size_t>(t);
      lanes[u] = scanLanesOf(n, t);
      Scalar f = identity;
      for (int l = 0; l < V; ++l) {
        if (l >= lanes[u].lo && l < lanes[u].hi)
          f = red.combine(f, evaluate(p_.body, n, t, {}, l, &scanInput_)[static_cast<size_t>(ro.value)].castTo(red.accType));
        fold[u][static_cast<size_t>(l)] = f;
      }
    }
    std::vector<Scalar> before(static_cast<size_t>(threads_));
    for (const std::vector<int>& row : scanRows_) {
      const Scalar start = acc(row[0], 0);
      Scalar carry = start;
      for (int t : row) {
        POLYRED_CHECK(acc(t, 0).identical(start), "the threads of a scanned row hold different carries");
        before[static_cast<size_t>(t)] = carry;
        carry = red.combine(carry, fold[static_cast<size_t>(t)].back());
      }
      for (int t : row) acc(t, 0) = carry;
    }
    const size_t storeLanes = k_.vector.strided ? static_cast<size_t>(V) : 1;  // offsets per store
    const size_t firstStore = n.offsets.size() - p_.stores.size() * storeLanes - 1;
    for (int t : active) {
      const auto u = static_cast<size_t>(t);
      for (int64_t l = lanes[u].lo; l < lanes[u].hi; ++l) {
        const Scalar& b = before[u];
        const Scalar running = !ro.exclusive ? red.combine(b, fold[u][static_cast<size_t>(l)])
                               : l == 0     ? b
                                            : red.combine(b, fold[u][static_cast<size_t>(l - 1)]);
        const std::vector<Scalar>& values = evaluate(p_.body, n, t, {running.castTo(ro.outType)}, static_cast<int>(l), &evaluated);
        for (size_t k = 0; k < p_.stores.size(); ++k) {
          const ElementwiseOutput& st = p_.stores[k];
          const int64_t at = storeLanes > 1 ? eval(n.offsets.at(firstStore + k * storeLanes + static_cast<size_t>(l)), vars(t))
                                            : eval(n.offsets.at(firstStore + k), vars(t)) + l;
          stores_.storeValue(st, at, values[static_cast<size_t>(st.value)]);
        }
      }
    }
  }

  // The element inputs of tuple reduction r at the point whose body values are
  // `values` (a view valid until the next call).
  std::span<const Scalar> elementInputs(size_t r, const std::vector<Scalar>& values) {
    const auto& ro = p_.reductions[r];
    POLYRED_CHECK(ro.values.size() <= elementInputs_.size(), "a tuple with " << ro.values.size() << " element inputs");
    for (size_t k = 0; k < ro.values.size(); ++k) elementInputs_[k] = values[static_cast<size_t>(ro.values[k])];
    return {elementInputs_.data(), ro.values.size()};
  }

  // Row i is complete: store the reduction outputs and the epilogue's (of accumulator
  // lane `lane`, whose epilogue offsets follow those of the lanes before it).
  void finish(const ExecNode& n, int t, const std::vector<Scalar>& totals, int lane) {
    int64_t i = rowOf(eval(n.coords[0], vars(t)), lane);
    std::vector<Scalar> results;
    for (size_t r = 0; r < p_.reductions.size(); ++r) {
      const auto& ro = p_.reductions[r];
      results.push_back(totals[r].castTo(ro.outType));
      if (ro.output >= 0) stores_.store(ro.output, i, results.back(), ro.outType);
      if (ro.temporary >= 0) stores_.storeTemporary(ro.temporary, i, results.back());
    }
    if (p_.epilogue.empty()) return;
    const size_t offsetsPerLane = n.offsets.size() / static_cast<size_t>(lanes_);
    const std::vector<Scalar>& e = evaluate(p_.epilogue, n, t, results, -1, nullptr, offsetsPerLane * static_cast<size_t>(lane));
    for (const ElementwiseOutput& s : p_.epilogueStores) stores_.storeValue(s, i, e[static_cast<size_t>(s.value)]);
  }

  // The totals of the reductions of passes before `pass`, as thread t holds them (after
  // an allreduce).
  const std::vector<Scalar>& earlierTotals(int pass, int t) {
    std::vector<Scalar>& totals = passTotals_;
    totals.assign(p_.reductions.size(), Scalar{});
    for (size_t r = 0; r < p_.reductions.size(); ++r) {
      if (p_.reductions[r].stage >= pass) continue;
      POLYRED_CHECK(holdsTotal(t, holder(r)), "pass " << pass << " reads the total of reduction " << r
                                              << " in a thread that does not hold it");
      totals[r] = total(t, r).castTo(p_.reductions[r].outType);
    }
    return totals;
  }

  // One point of the iteration space: the fused producers, then the accumulation and
  // the stores of the statement's pass. A later pass of a row-resident kernel reads the
  // totals of earlier stages.
  void point(const ExecNode& n, int t) {
    const int64_t* v = vars(t);
    const std::vector<Scalar>& totals = earlierTotals(n.pass, t);
    if (witness_ && p_.hasStage(n.pass)) witness_->accumulate(t, n.pass, eval(n.coords.at(1), v));
    const std::vector<bool>& evaluated = passValues_.at(static_cast<size_t>(n.pass));
    const std::vector<Scalar>& values = evaluate(p_.body, n, t, totals, -1, &evaluated);
    for (size_t r = 0; r < p_.reductions.size(); ++r) {
      const auto& ro = p_.reductions[r];
      if (ro.stage != n.pass || !owns(r)) continue;
      if (isTuple(r)) {
        programsOf(r).fold.run(tupleAcc(t, r), elementInputs(r, values));
        continue;
      }
      Scalar x = values[static_cast<size_t>(ro.value)].castTo(ro.reduction.accType);
      acc(t, r) = ro.reduction.combine(acc(t, r), x);
    }
    // Store offsets follow the load offsets in the statement's annotation.
    size_t next = static_cast<size_t>(passLoads_.at(static_cast<size_t>(n.pass)));
    for (const ElementwiseOutput& s : p_.stores) {
      if (s.pass != n.pass) continue;
      const int64_t at = eval(n.offsets.at(next++), v);
      if (s.scatters()) stores_.scatterAdd(s, at, values);
      else stores_.storeValue(s, at, values[static_cast<size_t>(s.value)]);
    }
  }

  // Runs for every op at every point: operands gathered without allocating (body ops
  // have at most three: AddN is lowered to Adds).
  static Scalar evalOp(const BodyValue& b, const std::vector<Scalar>& values) {
    std::array<Scalar, 3> args;
    POLYRED_CHECK(b.operands.size() <= args.size(), "op with " << b.operands.size() << " operands");
    for (size_t k = 0; k < b.operands.size(); ++k) args[k] = values[static_cast<size_t>(b.operands[k])];
    if (b.op == OpKind::Cast) return args[0].castTo(b.dtype);
    return evalElementwise(b.op, std::span<const Scalar>(args.data(), b.operands.size()), b.dtype);
  }

  // Combines the accumulators of the statement's stage over threadIdx.x per row
  // (x-reduce) or threadIdx.y per column (y-reduce); the result lands in the thread the
  // device library promises: the first of the group, or every thread of it when a
  // later pass reads the total (block_allreduce_*). Lanes are folded in lane order: for
  // an associative combine this is what the device's InOrder trees compute (and, for a
  // commutative one, what its butterflies compute up to rounding).
  void blockReduce(const ExecNode& n, const std::vector<int>& active) {
    requireWholeBlock(n, active);
    bool y = p_.form == CanonicalForm::YReduce;
    int lanes = y ? b_.BY : b_.BX, groups = y ? b_.BX : b_.BY;
    if (witness_) joinLanesInOrder(lanes, groups, n.pass);
    for (size_t r = 0; r < p_.reductions.size(); ++r) {
      if (p_.reductions[r].stage != n.pass || !owns(r)) continue;
      const Reduction& red = p_.reductions[r].reduction;
      bool everyThread = p_.reductions[r].stage + 1 < p_.passes();
      for (int l = 0; l < lanes_; ++l)
        for (int g = 0; g < groups; ++g) {
          auto thread = [&](int lane) { return y ? lane * b_.BX + g : g * b_.BX + lane; };
          if (isTuple(r)) {
            TupleValue sum = tupleAcc(thread(0), r, l);
            for (int lane = 1; lane < lanes; ++lane) combineInto(r, sum, tupleAcc(thread(lane), r, l));
            for (int lane = 0; lane < (everyThread ? lanes : 1); ++lane) {
              tupleAcc(thread(lane), r, l) = sum;
              holdsTotal(thread(lane), r, l) = true;
            }
            continue;
          }
          Scalar total = acc(thread(0), r, l);
          for (int lane = 1; lane < lanes; ++lane) total = red.combine(total, acc(thread(lane), r, l));
          for (int lane = 0; lane < (everyThread ? lanes : 1); ++lane) {
            acc(thread(lane), r, l) = total;
            holdsTotal(thread(lane), r, l) = true;
          }
        }
    }
  }

  // The witness's view of the block reduction: each group's threads in lane order.
  void joinLanesInOrder(int lanes, int groups, int pass) {
    const bool y = p_.form == CanonicalForm::YReduce;
    std::vector<int> group(static_cast<size_t>(lanes));
    for (int g = 0; g < groups; ++g) {
      for (int lane = 0; lane < lanes; ++lane) group[static_cast<size_t>(lane)] = y ? lane * b_.BX + g : g * b_.BX + lane;
      witness_->joinLanes(group, pass);
    }
  }

  void contribute(int64_t i, int t, int lane) {
    POLYRED_CHECK(i >= 0 && i < p_.M, "Contribute row " << i << " out of range");
    int64_t bx = vars(t)[kBx];
    if (witness_) witness_->contribute(t, i, bx);
    for (size_t r = 0; r < p_.reductions.size(); ++r) {
      const Reduction& red = p_.reductions[r].reduction;
      if (isTuple(r)) {
        if (owns(r)) tuplePartials_[r][static_cast<size_t>(i * b_.GX + bx)] = tupleAcc(t, r, lane);
        continue;
      }
      const Scalar& a = acc(t, r, lane);
      if (det_) partials_[r][static_cast<size_t>(i * b_.GX + bx)] = a;
      else workspace_[r][static_cast<size_t>(i)] = red.combine(workspace_[r][static_cast<size_t>(i)], a);
    }
  }

  void arrive(const ExecNode& n, const std::vector<int>& active) {
    requireWholeBlock(n, active);
    int64_t tile = eval(n.coords[0], vars(active[0]));
    POLYRED_CHECK(tile >= 0 && tile < b_.tiles, "ticket index out of range");
    unsigned& ticket = tickets_[static_cast<size_t>(tile)];
    lastBlock_ = ++ticket == static_cast<unsigned>(b_.GX);
    if (lastBlock_) ticket = 0;
  }

  void finalize(const ExecNode& n, int t, int lane) {
    int64_t i = rowOf(eval(n.coords[0], vars(t)), lane);
    if (witness_) witness_->requireWholeRowFromBlocks(i);
    std::vector<Scalar> totals;
    for (size_t r = 0; r < p_.reductions.size(); ++r) {
      const auto& ro = p_.reductions[r];
      Scalar total;
      // The partials of blocks 0, 1, ... folded in that order; the GPU's last block folds
      // them in that order too but grouped as a tree (codegen's emitGatherPartials): the
      // same value for an exact or associative combine, within tolerance for floats.
      if (isTuple(r)) {
        const std::vector<TupleValue>& parts = tuplePartials_[holder(r)];
        TupleValue sum = parts[static_cast<size_t>(i * b_.GX)];
        for (int64_t b = 1; b < b_.GX; ++b) combineInto(r, sum, parts[static_cast<size_t>(i * b_.GX + b)]);
        totals.push_back(finalizeTuple(tupleOf(r), sum, ro.reduction.result));
        continue;
      }
      if (det_) {
        total = partials_[r][static_cast<size_t>(i * b_.GX)];
        for (int64_t b = 1; b < b_.GX; ++b) total = ro.reduction.combine(total, partials_[r][static_cast<size_t>(i * b_.GX + b)]);
      } else {
        total = workspace_[r][static_cast<size_t>(i)];
        workspace_[r][static_cast<size_t>(i)] = ro.reduction.identity;
      }
      totals.push_back(total);
    }
    finish(n, t, totals, lane);
  }

  const Graph& g_;
  const PolyKernel& k_;
  const KernelPlan& p_;
  const Binding& b_;
  const std::vector<HostTensor>& inputs_;
  CpuStores& stores_;
  const CpuExecOptions& o_;
  int slots_;
  int sizeSlot_;  // a symbolic kernel's size parameter, set to size_ in every thread; -1: none
  int64_t size_;
  int threads_ = 0;
  int lanes_ = 1;  // accumulator lanes (Vectorization::accumulatorLanes)
  std::vector<int64_t> vars_;
  std::vector<Scalar> acc_;
  std::vector<std::vector<Scalar>> workspace_, partials_;
  std::vector<TupleValue> tupleAcc_;                    // like acc_, for tuple reductions
  std::vector<TupleValue> laneTuples_;                  // per reduction: the V lifted lanes of a vector
  std::vector<std::vector<TupleValue>> tuplePartials_;  // per reduction: M * GX partials of tuples
  std::vector<std::optional<TuplePrograms>> tuplePrograms_;  // per reduction (tuples only)
  std::array<Scalar, 8> elementInputs_;                  // elementInputs()' view
  bool det_ = false;  // the partials protocol (asked for, needed, or the binding's choice)
  std::vector<unsigned> tickets_;
  std::optional<ScanLookBackState> lookBack_;  // a scan whose rows span several blocks
  std::vector<std::vector<int>> scanRows_;  // a scan's rows: their threads in scan order
  std::vector<bool> scanInput_;  // the body values up to the scan's input (Fold, and Red before its step)
  std::vector<Scalar> bodyValues_, epilogueValues_, passTotals_;  // reused buffers
  std::vector<std::vector<bool>> passValues_;  // the body values each pass evaluates
  std::vector<int> passLoads_;                 // and how many loads they have
  std::vector<size_t> passStores_;             // and stores
  std::vector<bool> holdsTotal_;
  bool lastBlock_ = false;
  std::optional<OrderWitness> witness_;  // kernels with an ordered tuple (order_witness.h)
  CpuSharedTiles tiles_;  // a tiled transpose's shared tiles (empty otherwise)
};

}  // namespace

CpuExecResult executeOnCpu(const Graph& g, const PolyKernel& kernel, const std::vector<HostTensor>& inputs,
                           std::vector<HostTensor>& temporaries, const CpuExecOptions& options) {
  const PolyKernel& k = kernelForRows(kernel, options.sizes);  // a symbolic kernel's variant, as the GPU picks
  POLYRED_CHECK(inputs.size() == g.inputs.size(), "executeOnCpu: wrong number of inputs");
  CpuExecResult result;
  POLYRED_CHECK(!options.inputBuffers || options.inputBuffers == &inputs,
                "executeOnCpu: in-place stores must land in the inputs the kernel reads");
  CpuStores stores(g, k.plan, inputs, temporaries, result);
  if (options.inputBuffers) stores.writeThrough(*options.inputBuffers, options.writeThrough);

  Resolver resolver;
  ExecNode root = resolver.resolve(*k.ast);
  SizedKernel sized = sizedKernel(k, options.sizes);
  if (sized.plan.symbolicRows) sized.sizeSlot = resolver.slotOf(sized.plan.symbolicRows->param());
  BlockMachine machine(g, k, sized, inputs, stores, options, resolver.count());

  auto blocks = blocksToRun(sized.plan, sized.binding, options.maxPoints, result.sampled);
  std::mt19937_64 rng(options.blockOrderSeed);
  std::shuffle(blocks.begin(), blocks.end(), rng);
  for (size_t done = 0; done < blocks.size(); ++done) {
    if (options.deadline)
      options.deadline->check(std::to_string(done) + " of " + std::to_string(blocks.size()) + " blocks done");
    machine.runBlock(blocks[done].first, blocks[done].second, root);
  }
  machine.checkWorkspaceRestored();  // unsampled tiles were never touched

  if (!result.sampled) stores.checkEveryElementWritten();
  return result;
}

}  // namespace polyred
