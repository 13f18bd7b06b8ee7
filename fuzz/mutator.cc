#include "fuzz/mutator.h"

#include <cctype>
#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

namespace polyred::fuzz {

namespace {

using Json = nlohmann::json;

void collect(Json& j, std::vector<Json*>& objects) {
  if (j.is_object()) objects.push_back(&j);
  if (j.is_structured())
    for (Json& child : j) collect(child, objects);
}

std::vector<Json*> objectsWith(Json& doc, const char* key) {
  std::vector<Json*> all, with;
  collect(doc, all);
  for (Json* o : all)
    if (o->contains(key)) with.push_back(o);
  return with;
}

}  // namespace

const std::vector<std::string>& CompositeMutator::hostileNames() {
  static const std::vector<std::string> names = {
      "a*/\n#error injected\n/*",
      "x\n}\n__global__ void evil() {}\n//",
      std::string("cut\0here", 8),
      "trailing backslash \\",
      "line\r\nbreak",
      "\x1b[31mred\x1b[0m",
      "quote\"and'apostrophe",
      "percent%0Aescape",
      "\xff\xfe not utf-8",
      "unicode \xe2\x80\xa8 separator",
      std::string(10000, 'n'),
      "#include \"/etc/passwd\"",
      "../../../../tmp/overwritten",
  };
  return names;
}

std::string CompositeMutator::mutate(std::string text) {
  int rounds = 1 + static_cast<int>(pick(3));
  for (int r = 0; r < rounds && !text.empty(); ++r) {
    uint64_t kind = pick(10);
    if (kind < 4) text = byteEdit(std::move(text));
    else if (kind == 4) text = replaceNumber(text);
    else text = structuralEdit(text, static_cast<int>(kind - 5));
  }
  return text;
}

std::string CompositeMutator::byteEdit(std::string text) {
  static constexpr char kInsertable[] = "{}[],:\"-.0123456789eE tfn\\\x80\xff";
  switch (pick(4)) {
    case 0: text.resize(pick(text.size())); break;
    case 1: text[pick(text.size())] ^= static_cast<char>(1 << pick(8)); break;
    case 2: text.erase(pick(text.size()), 1 + pick(8)); break;
    default: text.insert(pick(text.size() + 1), 1, kInsertable[pick(sizeof(kInsertable) - 1)]); break;
  }
  return text;
}

std::string CompositeMutator::replaceNumber(const std::string& text) {
  static const char* kNumbers[] = {"-1", "0", "-0", "65", "2.5", "1e308", "65537", "2147483648",
                                   "4294967296", "1099511627776", "9223372036854775807",
                                   "-9223372036854775808", "99999999999999999999"};
  std::vector<size_t> starts;
  for (size_t i = 0; i < text.size(); ++i)
    if (std::isdigit(static_cast<unsigned char>(text[i])) &&
        (i == 0 || !std::isdigit(static_cast<unsigned char>(text[i - 1]))))
      starts.push_back(i);
  if (starts.empty()) return text;
  size_t at = starts[pick(starts.size())];
  size_t end = at;
  while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
  return text.substr(0, at) + kNumbers[pick(std::size(kNumbers))] + text.substr(end);
}

// Structural edits need a parseable document; earlier byte edits may have broken it.
std::string CompositeMutator::structuralEdit(const std::string& text, int kind) {
  Json doc = Json::parse(text, nullptr, false);
  if (doc.is_discarded()) return text;
  switch (kind) {
    case 0: {  // swap two tensor names
      std::vector<Json*> named = objectsWith(doc, "tensor_name");
      size_t a = pick(named.size()), b = pick(named.size());
      if (a != b) std::swap((*named[a])["tensor_name"], (*named[b])["tensor_name"]);
      break;
    }
    case 1: {  // rename every occurrence of one tensor (keeps the graph valid) or an op
      std::vector<Json*> named = objectsWith(doc, "tensor_name");
      const std::string& hostile = hostileNames()[pick(hostileNames().size())];
      if (pick(4) == 0) {
        std::vector<Json*> ops = objectsWith(doc, "name");
        if (!ops.empty()) (*ops[pick(ops.size())])["name"] = hostile;
        if (pick(2)) doc["op"] = hostile;
        break;
      }
      if (named.empty()) break;
      Json old = (*named[pick(named.size())])["tensor_name"];
      for (Json* o : named)
        if ((*o)["tensor_name"] == old) (*o)["tensor_name"] = hostile;
      break;
    }
    case 2: {  // inflate one dimension of one tensor everywhere it is declared
      static const int64_t kDims[] = {65537, int64_t{1} << 31, int64_t{1} << 40, int64_t{1} << 62};
      std::vector<Json*> named = objectsWith(doc, "shape");
      if (named.empty()) break;
      Json* victim = named[pick(named.size())];
      if (!victim->contains("tensor_name") || !(*victim)["shape"].is_array() || (*victim)["shape"].empty()) break;
      Json name = (*victim)["tensor_name"];
      size_t dim = pick((*victim)["shape"].size());
      int64_t size = kDims[pick(std::size(kDims))];
      for (Json* o : named)
        if (o->contains("tensor_name") && (*o)["tensor_name"] == name && (*o)["shape"].is_array() &&
            dim < (*o)["shape"].size())
          (*o)["shape"][dim] = size;
      break;
    }
    case 3: {  // an extreme constant
      std::vector<Json*> values = objectsWith(doc, "value");
      static const Json kValues[] = {9.223372036854775807e18, -9.223372036854775808e18, 1e308, "nan", "inf", 0};
      if (!values.empty()) (*values[pick(values.size())])["value"] = kValues[pick(std::size(kValues))];
      break;
    }
    default: {  // delete a key
      std::vector<Json*> objects;
      collect(doc, objects);
      Json& o = *objects[pick(objects.size())];
      if (o.empty()) break;
      auto it = o.begin();
      std::advance(it, static_cast<std::ptrdiff_t>(pick(o.size())));
      o.erase(it);
      break;
    }
  }
  return doc.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace polyred::fuzz
