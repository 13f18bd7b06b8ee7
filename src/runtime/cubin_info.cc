#include "runtime/cubin_info.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

#include "support/sm_occupancy.h"

namespace polyred {

namespace {

// ELF64 field offsets (System V ABI) and NVIDIA's .nv.info encoding: records of a
// format byte and an attribute byte, then a 16-bit value (format 3) or a 16-bit size
// and that many bytes (format 4, the only one NVRTC 13's .nv.info holds);
// EIATTR_REGCOUNT's and EIATTR_FRAME_SIZE's payloads are (symbol index, value). The
// walk stops at any other format rather than guess its length.
constexpr size_t kSectionTableOffset = 0x28, kSectionEntrySize = 0x3A, kSectionCount = 0x3C, kNamesIndex = 0x3E;
constexpr size_t kSectionHeaderBytes = 64;
constexpr uint32_t kSymbolTableType = 2;
constexpr size_t kSymbolBytes = 24;
constexpr uint8_t kFormatHalf = 3, kFormatSized = 4;
constexpr uint8_t kRegisterCount = 0x2f, kFrameSize = 0x11;
// A kernel's static shared memory is the size of its section .nv.shared.<kernel>.
constexpr std::string_view kSharedPrefix = ".nv.shared.";
constexpr uint64_t kMostSharedBytes = 1 << 30;  // caps a corrupt size

class Reader {
 public:
  explicit Reader(const std::vector<char>& bytes) : bytes_(bytes) {}

  template <typename T>
  std::optional<T> at(uint64_t offset) const {
    if (offset > bytes_.size() || bytes_.size() - offset < sizeof(T)) return std::nullopt;
    T value;
    std::memcpy(&value, bytes_.data() + offset, sizeof(T));
    return value;
  }

  std::optional<std::string> cString(uint64_t offset) const {
    if (offset >= bytes_.size()) return std::nullopt;
    const auto begin = bytes_.begin() + static_cast<std::ptrdiff_t>(offset);
    const auto end = std::find(begin, bytes_.end(), '\0');
    if (end == bytes_.end()) return std::nullopt;
    return std::string(begin, end);
  }

 private:
  const std::vector<char>& bytes_;
};

struct Section {
  uint32_t nameOffset = 0, type = 0, link = 0;
  uint64_t offset = 0, size = 0;
  std::string name;
};

std::optional<std::vector<Section>> sectionsOf(const Reader& r) {
  const auto table = r.at<uint64_t>(kSectionTableOffset);
  const auto entry = r.at<uint16_t>(kSectionEntrySize), count = r.at<uint16_t>(kSectionCount),
             names = r.at<uint16_t>(kNamesIndex);
  if (!table || !entry || !count || !names || *entry < kSectionHeaderBytes || *names >= *count) return std::nullopt;
  std::vector<Section> sections(*count);
  for (uint16_t k = 0; k < *count; ++k) {
    const uint64_t h = *table + uint64_t{k} * *entry;
    const auto name = r.at<uint32_t>(h), type = r.at<uint32_t>(h + 4), link = r.at<uint32_t>(h + 40);
    const auto offset = r.at<uint64_t>(h + 24), size = r.at<uint64_t>(h + 32);
    if (!type || !offset || !size || !link || !name) return std::nullopt;
    sections[k] = {*name, *type, *link, *offset, *size, ""};
  }
  for (Section& s : sections) {
    const auto name = r.cString(sections[*names].offset + s.nameOffset);
    if (!name) return std::nullopt;
    s.name = *name;
  }
  return sections;
}

// The name of symbol `index` of the symbol table, if it has one.
std::optional<std::string> symbolName(const Reader& r, const std::vector<Section>& sections, uint32_t index) {
  for (const Section& s : sections) {
    if (s.type != kSymbolTableType || s.link >= sections.size()) continue;
    if (uint64_t{index + 1} * kSymbolBytes > s.size) return std::nullopt;
    const auto name = r.at<uint32_t>(s.offset + uint64_t{index} * kSymbolBytes);
    if (!name) return std::nullopt;
    return r.cString(sections[s.link].offset + *name);
  }
  return std::nullopt;
}

}  // namespace

std::map<std::string, KernelResources> cubinKernelResources(const std::vector<char>& cubin) {
  std::map<std::string, KernelResources> kernels;
  const Reader r(cubin);
  if (cubin.size() < kSectionHeaderBytes || std::memcmp(cubin.data(), "\x7f" "ELF\x02\x01", 6) != 0) return kernels;
  const auto sections = sectionsOf(r);
  if (!sections) return kernels;
  for (const Section& s : *sections) {
    if (s.name != ".nv.info") continue;
    for (uint64_t p = s.offset; p + 2 <= s.offset + s.size;) {
      const auto format = r.at<uint8_t>(p), attribute = r.at<uint8_t>(p + 1);
      if (!format || !attribute) break;
      if (*format == kFormatHalf) {
        p += 4;
      } else if (*format == kFormatSized) {
        const auto size = r.at<uint16_t>(p + 2);
        if (!size) break;
        if ((*attribute == kRegisterCount || *attribute == kFrameSize) && *size == 8) {
          const auto symbol = r.at<uint32_t>(p + 4), value = r.at<uint32_t>(p + 8);
          const auto name = symbol ? symbolName(r, *sections, *symbol) : std::nullopt;
          if (name && value && *attribute == kRegisterCount && *value >= 1 &&
              *value <= static_cast<uint32_t>(kMostRegistersPerThread))
            kernels[*name].registers = static_cast<int>(*value);
          if (name && value && *attribute == kFrameSize) kernels[*name].stackBytes = *value;
        }
        p += 4 + uint64_t{*size};
      } else {
        break;  // an encoding this reader does not know: stop rather than guess
      }
    }
  }
  std::erase_if(kernels, [](const auto& entry) { return entry.second.registers == 0; });  // a frame without a count
  for (const Section& s : *sections) {
    if (!s.name.starts_with(kSharedPrefix) || s.size < kSharedBytesReservedPerBlock) continue;
    const auto kernel = kernels.find(s.name.substr(kSharedPrefix.size()));
    if (kernel != kernels.end())
      kernel->second.staticSharedBytes =
          static_cast<int64_t>(std::min<uint64_t>(s.size, kMostSharedBytes)) - kSharedBytesReservedPerBlock;
  }
  return kernels;
}

std::optional<KernelResources> cubinKernelResources(const std::vector<char>& cubin, const std::string& name) {
  const auto kernels = cubinKernelResources(cubin);
  const auto found = kernels.find(name);
  if (found == kernels.end()) return std::nullopt;
  return found->second;
}

}  // namespace polyred
