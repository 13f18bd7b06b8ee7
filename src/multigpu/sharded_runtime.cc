// The NCCL runtime of sharded programs (sharded_runtime.h).
#include "multigpu/sharded_runtime.h"

#include "multigpu/nccl_library.h"
#include "runtime/cuda_driver.h"
#include "support/error.h"

namespace polyred::multigpu {
namespace {

// Whole shape of original output `o`: the ranks' local shapes joined along its axis.
Shape wholeOutputShape(const ShardedLowering& L, size_t o) {
  const Graph& g0 = L.finalPerRank[0].graph;
  Shape s = g0.tensor(g0.outputs[o].tensor).shape;
  const int axis = L.outputAxis[o];
  if (axis < 0) return s;
  s[static_cast<size_t>(axis)] = 0;
  for (const LocalGraph& lg : L.finalPerRank)
    s[static_cast<size_t>(axis)] += lg.graph.tensor(lg.graph.outputs[o].tensor).shape[static_cast<size_t>(axis)];
  return s;
}

char* bytePtr(void* p) { return static_cast<char*>(p); }

}  // namespace

CUcontext primaryContext(int ordinal) {
  const cuda::Driver& api = cuda::driver();
  CUdevice dev = 0;
  cuda::check(api.cuDeviceGet(&dev, ordinal), "cuDeviceGet");
  CUcontext ctx = nullptr;
  cuda::check(api.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  return ctx;
}

ncclUniqueId Communicator::newUniqueId() {
  ncclUniqueId id;
  ncclCheck(nccl().ncclGetUniqueId(&id), "ncclGetUniqueId");
  return id;
}

Communicator Communicator::initRank(const ncclUniqueId& id, int ranks, int rank, int device) {
  Communicator c;
  c.rank_ = rank;
  c.ranks_ = ranks;
  c.device_ = device;
  c.context_ = primaryContext(device);
  cuda::ContextGuard guard(c.context_);  // NCCL uses the current device
  ncclCheck(nccl().ncclCommInitRank(&c.comm_, ranks, id, rank), "ncclCommInitRank");
  return c;
}

std::vector<Communicator> Communicator::initAll(const std::vector<int>& devices) {
  std::vector<ncclComm_t> comms(devices.size());
  ncclCheck(nccl().ncclCommInitAll(comms.data(), static_cast<int>(devices.size()), devices.data()), "ncclCommInitAll");
  std::vector<Communicator> out;
  for (size_t k = 0; k < devices.size(); ++k) {
    Communicator c;
    c.comm_ = comms[k];
    c.rank_ = static_cast<int>(k);
    c.ranks_ = static_cast<int>(devices.size());
    c.device_ = devices[k];
    c.context_ = primaryContext(devices[k]);
    out.push_back(std::move(c));
  }
  return out;
}

Communicator::~Communicator() {
  if (comm_) nccl().ncclCommDestroy(comm_);
}

Communicator::Communicator(Communicator&& o) noexcept
    : comm_(o.comm_), rank_(o.rank_), ranks_(o.ranks_), device_(o.device_), context_(o.context_) {
  o.comm_ = nullptr;
}

struct ShardedExecutor::Local {
  const Communicator* comm = nullptr;
  std::vector<std::optional<CompiledProgram>> rounds;
  std::optional<CompiledProgram> final;
  std::vector<std::optional<CompiledProgram>> combines;
  std::vector<DeviceBuffer> partial, gathered, combined;  // per combine
  std::vector<DeviceBuffer> staging, joined;              // per output (split ones)
};

ShardedExecutor::ShardedExecutor(const ShardedProgram& program, std::vector<const Communicator*> local)
    : program_(program) {
  const ShardedLowering& L = program.lowering;
  const int ranks = L.shard.ranks;
  for (const Communicator* c : local) {
    if (c->ranks() != ranks)
      throw Error("the communicator has " + std::to_string(c->ranks()) + " ranks but the program was sharded over " +
                  std::to_string(ranks));
    auto l = std::make_unique<Local>();
    l->comm = c;
    cuda::ContextGuard guard(c->context());
    DeviceInfo device = currentDevice();
    const RankPrograms& rp = program.ranks.at(static_cast<size_t>(c->rank()));
    for (const Program& p : rp.rounds) l->rounds.emplace_back(CompiledProgram::load(p, device));
    l->final.emplace(CompiledProgram::load(rp.final, device));
    for (size_t k = 0; k < L.combines.size(); ++k) {
      const CombineStep& step = L.combines[k];
      const size_t bytes = static_cast<size_t>(numElements(step.shape) * dtypeBytes(step.reduction.accType));
      l->partial.emplace_back(bytes);
      l->combined.emplace_back(bytes);
      const bool gather = step.choice.collective == Collective::AllGatherCombine;
      l->gathered.emplace_back(gather ? bytes * static_cast<size_t>(ranks) : 0);
      l->combines.emplace_back();
      if (gather) l->combines.back().emplace(CompiledProgram::load(*program.combines.at(k), device));
    }
    const Graph& fg = L.finalPerRank[static_cast<size_t>(c->rank())].graph;
    for (size_t o = 0; o < L.outputAxis.size(); ++o) {
      const bool split = L.outputAxis[o] >= 0;
      const Tensor& t = fg.tensor(fg.outputs[o].tensor);
      const size_t bytes = static_cast<size_t>(numElements(t.shape) * dtypeBytes(t.dtype));
      l->staging.emplace_back(split ? bytes : 0);
      const size_t whole = static_cast<size_t>(numElements(wholeOutputShape(L, o)) * dtypeBytes(t.dtype));
      l->joined.emplace_back(split ? whole : 0);
    }
    locals_.push_back(std::move(l));
  }
}

ShardedExecutor::~ShardedExecutor() = default;

void ShardedExecutor::launch(const std::vector<RankIo>& io) {
  const ShardedLowering& L = program_.lowering;
  const cuda::Driver& api = cuda::driver();
  const Nccl& nc = nccl();
  POLYRED_CHECK(io.size() == locals_.size(), "one RankIo per local rank");
  auto bind = [&](size_t l, const LocalGraph& lg) {
    std::vector<void*> v;
    for (const LocalInput& in : lg.inputs)
      v.push_back(in.kind == LocalInput::Kind::GraphInput ? io[l].inputs.at(static_cast<size_t>(in.index))
                                                          : locals_[l]->combined.at(static_cast<size_t>(in.index)).data());
    return v;
  };
  for (size_t k = 0; k < L.rounds.size(); ++k) {
    const ShardRound& round = L.rounds[k];
    for (size_t l = 0; l < locals_.size(); ++l) {
      Local& loc = *locals_[l];
      cuda::ContextGuard guard(loc.comm->context());
      std::vector<void*> outs;
      for (int c : round.combines) outs.push_back(loc.partial[static_cast<size_t>(c)].data());
      loc.rounds[k]->launch(bind(l, round.perRank[static_cast<size_t>(loc.comm->rank())]), outs, io[l].stream);
    }
    ncclCheck(nc.ncclGroupStart(), "ncclGroupStart");
    for (int c : round.combines) {
      const CombineStep& step = L.combines[static_cast<size_t>(c)];
      const size_t count = static_cast<size_t>(numElements(step.shape));
      for (size_t l = 0; l < locals_.size(); ++l) {
        Local& loc = *locals_[l];
        const size_t ci = static_cast<size_t>(c);
        if (step.choice.collective == Collective::AllReduce)
          ncclCheck(nc.ncclAllReduce(loc.partial[ci].data(), loc.combined[ci].data(), count,
                                     ncclTypeOf(step.reduction.accType), ncclOpOf(step.choice.op), loc.comm->comm(),
                                     io[l].stream),
                    "ncclAllReduce");
        else  // rank-major: rank r's partials at r * count elements
          ncclCheck(nc.ncclAllGather(loc.partial[ci].data(), loc.gathered[ci].data(),
                                     count * static_cast<size_t>(dtypeBytes(step.reduction.accType)), ncclInt8,
                                     loc.comm->comm(), io[l].stream),
                    "ncclAllGather");
      }
    }
    ncclCheck(nc.ncclGroupEnd(), "ncclGroupEnd");
    for (int c : round.combines) {
      if (L.combines[static_cast<size_t>(c)].choice.collective != Collective::AllGatherCombine) continue;
      for (size_t l = 0; l < locals_.size(); ++l) {
        Local& loc = *locals_[l];
        cuda::ContextGuard guard(loc.comm->context());
        const size_t ci = static_cast<size_t>(c);
        loc.combines[ci]->launch({loc.gathered[ci].data()}, {loc.combined[ci].data()}, io[l].stream);
      }
    }
  }
  for (size_t l = 0; l < locals_.size(); ++l) {
    Local& loc = *locals_[l];
    cuda::ContextGuard guard(loc.comm->context());
    std::vector<void*> outs;
    for (size_t o = 0; o < L.outputAxis.size(); ++o)
      outs.push_back(L.outputAxis[o] >= 0 ? loc.staging[o].data() : io[l].outputs.at(o));
    loc.final->launch(bind(l, L.finalPerRank[static_cast<size_t>(loc.comm->rank())]), outs, io[l].stream);
  }
  // Split outputs: every rank broadcasts its slice; rank q's bytes land at its place.
  struct Piece {
    size_t outer = 1, bytesPerRow = 0, wholeRowBytes = 0, offsetInRow = 0, joinedOffset = 0;
  };
  std::vector<std::vector<Piece>> pieces(L.outputAxis.size());  // [output][rank]
  bool anySplit = false;
  for (size_t o = 0; o < L.outputAxis.size(); ++o) {
    const int axis = L.outputAxis[o];
    if (axis < 0) continue;
    anySplit = true;
    const Shape whole = wholeOutputShape(L, o);
    const Graph& g0 = L.finalPerRank[0].graph;
    const size_t elem = static_cast<size_t>(dtypeBytes(g0.tensor(g0.outputs[o].tensor).dtype));
    size_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= static_cast<size_t>(whole[static_cast<size_t>(d)]);
    for (size_t d = static_cast<size_t>(axis) + 1; d < whole.size(); ++d) inner *= static_cast<size_t>(whole[d]);
    size_t offset = 0, joined = 0;
    for (size_t q = 0; q < L.finalPerRank.size(); ++q) {
      const Graph& gq = L.finalPerRank[q].graph;
      const size_t size = static_cast<size_t>(gq.tensor(gq.outputs[o].tensor).shape[static_cast<size_t>(axis)]);
      Piece p;
      p.outer = outer;
      p.bytesPerRow = size * inner * elem;
      p.wholeRowBytes = static_cast<size_t>(whole[static_cast<size_t>(axis)]) * inner * elem;
      p.offsetInRow = offset * inner * elem;
      p.joinedOffset = joined;
      pieces[o].push_back(p);
      offset += size;
      joined += p.bytesPerRow * outer;
    }
  }
  if (!anySplit) return;
  ncclCheck(nc.ncclGroupStart(), "ncclGroupStart");
  for (size_t o = 0; o < L.outputAxis.size(); ++o) {
    if (L.outputAxis[o] < 0) continue;
    for (size_t l = 0; l < locals_.size(); ++l) {
      Local& loc = *locals_[l];
      for (size_t q = 0; q < pieces[o].size(); ++q) {
        const Piece& p = pieces[o][q];
        // Outermost split axis: the slices are contiguous in the output, broadcast in place.
        char* dest = p.outer == 1 ? bytePtr(io[l].outputs.at(o)) + p.offsetInRow
                                  : bytePtr(loc.joined[o].data()) + p.joinedOffset;
        ncclCheck(nc.ncclBroadcast(loc.staging[o].data(), dest, p.bytesPerRow * p.outer, ncclInt8, static_cast<int>(q),
                                   loc.comm->comm(), io[l].stream),
                  "ncclBroadcast");
      }
    }
  }
  ncclCheck(nc.ncclGroupEnd(), "ncclGroupEnd");
  for (size_t o = 0; o < L.outputAxis.size(); ++o) {
    if (L.outputAxis[o] < 0 || pieces[o][0].outer == 1) continue;
    for (size_t l = 0; l < locals_.size(); ++l) {
      Local& loc = *locals_[l];
      cuda::ContextGuard guard(loc.comm->context());
      for (const Piece& p : pieces[o]) {
        CUDA_MEMCPY2D copy{};
        copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
        copy.srcDevice = reinterpret_cast<CUdeviceptr>(bytePtr(loc.joined[o].data()) + p.joinedOffset);
        copy.srcPitch = p.bytesPerRow;
        copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
        copy.dstDevice = reinterpret_cast<CUdeviceptr>(bytePtr(io[l].outputs.at(o)) + p.offsetInRow);
        copy.dstPitch = p.wholeRowBytes;
        copy.WidthInBytes = p.bytesPerRow;
        copy.Height = p.outer;
        cuda::check(api.cuMemcpy2DAsync(&copy, io[l].stream), "cuMemcpy2DAsync");
      }
    }
  }
}

}  // namespace polyred::multigpu
