// Parsing and validation of the sharding description (shard_spec.h).
#include "shard/shard_spec.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#include "interp/host_tensor.h"
#include "support/error.h"
#include "support/printable.h"
#include "support/suggest.h"

namespace polyred {
namespace {

std::vector<std::string> splitOn(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    size_t k = s.find(sep, start);
    parts.push_back(s.substr(start, k == std::string::npos ? std::string::npos : k - start));
    if (k == std::string::npos) return parts;
    start = k + 1;
  }
}

int64_t parseInteger(const std::string& word, const std::string& what, const std::string& text) {
  int64_t v = 0;
  const char* end = word.data() + word.size();
  auto [p, ec] = std::from_chars(word.data(), end, v);
  if (word.empty() || ec != std::errc() || p != end)
    throw Error("--shard " + quotedName(text) + ": " + what + " " + quotedName(word) + " is not an integer");
  return v;
}

}  // namespace

std::vector<InputShard> parseShardText(const std::string& text) {
  std::vector<InputShard> out;
  for (const std::string& one : splitOn(text, ';')) {
    std::vector<std::string> parts = splitOn(one, ':');
    if (parts.size() < 2 || parts.size() > 3 || parts[0].empty())
      throw Error("--shard " + quotedName(text) + ": expected INPUT:AXIS or INPUT:AXIS:SIZES (sizes a comma list)");
    InputShard s;
    s.input = parts[0];
    s.axis = parseInteger(parts[1], "axis", text);
    if (parts.size() == 3)
      for (const std::string& w : splitOn(parts[2], ',')) s.sizes.push_back(parseInteger(w, "size", text));
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<int64_t> evenSplit(int64_t extent, int ranks) {
  std::vector<int64_t> sizes(static_cast<size_t>(ranks), extent / ranks);
  for (int64_t r = 0; r < extent % ranks; ++r) ++sizes[static_cast<size_t>(r)];
  return sizes;
}

int64_t ResolvedShard::extent() const {
  int64_t n = 0;
  for (int64_t s : sizes) n += s;
  return n;
}

ResolvedShard resolveShard(const Graph& g, const ShardSpec& spec) {
  auto fail = [&](const std::string& input, const std::string& why) {
    throw Error(g.sourceFile, "", (input.empty() ? "" : "input " + quotedName(input) + ": ") + why);
  };
  if (spec.ranks < 1) fail("", "the number of ranks must be at least 1, got " + std::to_string(spec.ranks));
  if (spec.inputs.empty()) fail("", "no input is sharded (give INPUT:AXIS)");
  ResolvedShard r;
  r.ranks = spec.ranks;
  r.inputAxis.assign(g.inputs.size(), -1);
  std::string firstInput;
  for (const InputShard& s : spec.inputs) {
    std::optional<TensorId> t = g.findTensor(s.input);
    int index = t ? g.inputIndex(*t) : -1;
    if (index < 0) {
      std::vector<std::string> names;
      for (TensorId in : g.inputs) names.push_back(g.tensor(in).name);
      std::string near = closestName(s.input, names);
      fail(s.input, "no graph input of that name" + (near.empty() ? "" : "; did you mean " + quotedName(near) + "?"));
    }
    const Shape& shape = g.tensor(*t).shape;
    const int64_t rank = static_cast<int64_t>(shape.size());
    int64_t axis = s.axis < 0 ? s.axis + rank : s.axis;
    if (axis < 0 || axis >= rank)
      fail(s.input, "axis " + std::to_string(s.axis) + " is out of range for its shape " + toString(shape));
    const int64_t extent = shape[static_cast<size_t>(axis)];
    if (extent < spec.ranks)
      fail(s.input, "cannot split axis " + std::to_string(axis) + " of extent " + std::to_string(extent) + " over " +
                        std::to_string(spec.ranks) + " ranks: more ranks than elements");
    std::vector<int64_t> sizes = s.sizes.empty() ? evenSplit(extent, spec.ranks) : s.sizes;
    if (static_cast<int>(sizes.size()) != spec.ranks)
      fail(s.input, "gives " + std::to_string(sizes.size()) + " sizes for " + std::to_string(spec.ranks) + " ranks");
    int64_t sum = 0;
    for (size_t k = 0; k < sizes.size(); ++k) {
      if (sizes[k] < 1) fail(s.input, "rank " + std::to_string(k) + " would hold " + std::to_string(sizes[k]) +
                                          " elements (every rank needs at least 1)");
      sum += sizes[k];
    }
    if (sum != extent)
      fail(s.input, "sizes sum to " + std::to_string(sum) + " but axis " + std::to_string(axis) + " has extent " +
                        std::to_string(extent));
    if (r.inputAxis[static_cast<size_t>(index)] >= 0) fail(s.input, "is sharded twice");
    if (!r.sizes.empty() && r.sizes != sizes)
      fail(s.input, "is split into other sizes than " + quotedName(firstInput) +
                        " (all sharded inputs split one axis the same way)");
    if (r.sizes.empty()) firstInput = s.input;
    r.sizes = sizes;
    r.inputAxis[static_cast<size_t>(index)] = static_cast<int>(axis);
  }
  int64_t off = 0;
  for (int64_t s : r.sizes) {
    r.offsets.push_back(off);
    off += s;
  }
  return r;
}

HostTensor sliceForRank(const HostTensor& t, int axis, int64_t offset, int64_t size) {
  if (axis < 0) return t;
  Shape shape = t.shape;
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= shape[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t extent = shape[static_cast<size_t>(axis)];
  shape[static_cast<size_t>(axis)] = size;
  HostTensor out = HostTensor::zeros(t.dtype, shape);
  const int64_t bytes = dtypeBytes(t.dtype);
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(out.bytes.data() + o * size * inner * bytes, t.bytes.data() + (o * extent + offset) * inner * bytes,
                static_cast<size_t>(size * inner * bytes));
  return out;
}

HostTensor joinRanks(const std::vector<HostTensor>& slices, int axis) {
  Shape shape = slices.at(0).shape;
  const size_t a = static_cast<size_t>(axis);
  int64_t extent = 0;
  for (const HostTensor& t : slices) extent += t.shape.at(a);
  shape[a] = extent;
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < a; ++d) outer *= shape[d];
  for (size_t d = a + 1; d < shape.size(); ++d) inner *= shape[d];
  HostTensor out = HostTensor::zeros(slices[0].dtype, shape);
  const int64_t bytes = dtypeBytes(out.dtype);
  int64_t offset = 0;
  for (const HostTensor& t : slices) {
    const int64_t size = t.shape[a];
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(out.bytes.data() + (o * extent + offset) * inner * bytes, t.bytes.data() + o * size * inner * bytes,
                  static_cast<size_t>(size * inner * bytes));
    offset += size;
  }
  return out;
}

}  // namespace polyred
