// polyred_loader DIR: runs the kernels `polyred compile FILE -o DIR --test-data` wrote,
// without polyred. It reads DIR/manifest.json (format "polyred-launch-manifest" v1),
// loads each CUBIN with the CUDA driver API, allocates the inputs, outputs, temporaries
// and workspaces the manifest lists (workspaces filled once with their pattern),
// launches the kernels in order on one stream, and compares the outputs with
// DIR/test/expected*.bin within the manifest's tolerances.
//
// Exit: 0 every output matches; 1 a mismatch; 2 bad usage or manifest, or a kernel
// built for another GPU; 77 no usable GPU (ctest reports the test skipped).
#include <cuda.h>
#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using Json = nlohmann::json;

struct Fail : std::runtime_error {
  Fail(int code, const std::string& what) : std::runtime_error(what), code(code) {}
  int code;
};

// The driver entry points, from libcuda.so.1 at run time (the binary starts anywhere).
struct Driver {
  decltype(&cuInit) init;
  decltype(&cuDeviceGet) deviceGet;
  decltype(&cuDeviceGetAttribute) attribute;
  decltype(&cuDevicePrimaryCtxRetain) retain;
  decltype(&cuCtxSetCurrent) setCurrent;
  decltype(&cuModuleLoadData) loadModule;
  decltype(&cuModuleGetFunction) getFunction;
  decltype(&cuMemAlloc) alloc;
  decltype(&cuMemcpyHtoD) upload;
  decltype(&cuMemcpyDtoH) download;
  decltype(&cuMemcpyDtoD) copy;
  decltype(&cuMemsetD8) memset;
  decltype(&cuLaunchKernel) launch;
  decltype(&cuCtxSynchronize) synchronize;
  decltype(&cuGetErrorString) errorString;

  static Driver load() {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib) throw Fail(77, std::string("no CUDA driver: ") + dlerror());
    Driver d{};
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      if (!fn) throw Fail(77, std::string("the CUDA driver lacks ") + name);
    };
    sym(d.init, "cuInit");
    sym(d.deviceGet, "cuDeviceGet");
    sym(d.attribute, "cuDeviceGetAttribute");
    sym(d.retain, "cuDevicePrimaryCtxRetain");
    sym(d.setCurrent, "cuCtxSetCurrent");
    sym(d.loadModule, "cuModuleLoadData");
    sym(d.getFunction, "cuModuleGetFunction");
    sym(d.alloc, "cuMemAlloc_v2");
    sym(d.upload, "cuMemcpyHtoD_v2");
    sym(d.download, "cuMemcpyDtoH_v2");
    sym(d.copy, "cuMemcpyDtoD_v2");
    sym(d.memset, "cuMemsetD8_v2");
    sym(d.launch, "cuLaunchKernel");
    sym(d.synchronize, "cuCtxSynchronize");
    sym(d.errorString, "cuGetErrorString");
    return d;
  }
  void check(CUresult r, const std::string& what) const {
    if (r == CUDA_SUCCESS) return;
    const char* s = nullptr;
    errorString(r, &s);
    throw Fail(2, what + ": " + (s ? s : "unknown CUDA error"));
  }
};

std::vector<char> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Fail(2, "cannot read " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int64_t dtypeBytes(const std::string& t) {
  if (t == "bool" || t == "int8" || t == "uint8") return 1;
  if (t == "float16" || t == "bfloat16") return 2;
  if (t == "int32" || t == "float32") return 4;
  if (t == "int64" || t == "float64") return 8;
  throw Fail(2, "unknown dtype " + t);
}

int64_t bytesOf(const Json& tensor) {
  int64_t n = dtypeBytes(tensor.at("dtype"));
  for (int64_t d : tensor.at("shape")) n *= d;
  return n;
}

// Element k of a raw buffer as a double (half and bfloat16 decoded by hand).
double element(const std::vector<char>& raw, const std::string& t, int64_t k) {
  auto get = [&](auto sample) {
    std::memcpy(&sample, raw.data() + k * static_cast<int64_t>(sizeof(sample)), sizeof(sample));
    return sample;
  };
  if (t == "float32") return get(float{});
  if (t == "float64") return get(double{});
  if (t == "int32") return get(int32_t{});
  if (t == "int64") return static_cast<double>(get(int64_t{}));
  if (t == "int8") return get(int8_t{});
  if (t == "uint8" || t == "bool") return get(uint8_t{});
  uint16_t h = get(uint16_t{});
  if (t == "bfloat16") {
    uint32_t bits = uint32_t{h} << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  int exponent = (h >> 10) & 31, mantissa = h & 1023;  // float16
  double sign = (h & 0x8000) ? -1 : 1;
  if (exponent == 31) return mantissa ? NAN : sign * INFINITY;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  return sign * std::ldexp(mantissa + 1024, exponent - 25);
}

int run(const std::string& dir) {
  const std::vector<char> text = readFile(dir + "/manifest.json");
  const Json m = Json::parse(text.begin(), text.end());
  if (m.value("format", "") != "polyred-launch-manifest" || m.value("version", 0) != 1)
    throw Fail(2, dir + "/manifest.json is not a polyred launch manifest, version 1");
  if (!m.contains("test")) throw Fail(2, "no test data: compile with --test-data");
  Driver cu = Driver::load();
  if (cu.init(0) != CUDA_SUCCESS) throw Fail(77, "cuInit failed: no usable GPU");
  CUdevice device;
  if (cu.deviceGet(&device, 0) != CUDA_SUCCESS) throw Fail(77, "no GPU");
  int major = 0, minor = 0;
  cu.attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
  cu.attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
  const std::string arch = "sm_" + std::to_string(major) + std::to_string(minor);
  if (m.at("target").at("arch") != arch)
    throw Fail(2, "the kernels were built for " + m.at("target").at("arch").get<std::string>() + ", this GPU is " + arch);
  CUcontext context;
  cu.check(cu.retain(&context, device), "cuDevicePrimaryCtxRetain");
  cu.check(cu.setCurrent(context), "cuCtxSetCurrent");

  auto allocate = [&](int64_t bytes, const void* data) {
    CUdeviceptr p = 0;
    cu.check(cu.alloc(&p, static_cast<size_t>(bytes > 0 ? bytes : 1)), "cuMemAlloc");
    if (data && bytes > 0) cu.check(cu.upload(p, data, static_cast<size_t>(bytes)), "cuMemcpyHtoD");
    return p;
  };
  std::vector<CUdeviceptr> inputs, outputs, temporaries;
  for (size_t k = 0; k < m.at("inputs").size(); ++k) {
    std::vector<char> data = readFile(dir + "/" + m.at("test").at("inputs").at(k).get<std::string>());
    if (static_cast<int64_t>(data.size()) != bytesOf(m.at("inputs")[k])) throw Fail(2, "test input " + std::to_string(k) + " has the wrong size");
    inputs.push_back(allocate(static_cast<int64_t>(data.size()), data.data()));
  }
  for (const Json& o : m.at("outputs"))
    outputs.push_back(o.at("in_place_of_input").is_null() ? allocate(bytesOf(o), nullptr)
                                                           : inputs.at(o.at("in_place_of_input").get<size_t>()));
  for (const Json& t : m.at("temporaries")) temporaries.push_back(allocate(t.at("bytes"), nullptr));

  for (const Json& k : m.at("launches")) {
    std::vector<char> cubin = readFile(dir + "/" + k.at("cubin").get<std::string>());
    CUmodule module;
    CUfunction function;
    cu.check(cu.loadModule(&module, cubin.data()), "cuModuleLoadData " + k.at("cubin").get<std::string>());
    cu.check(cu.getFunction(&function, module, k.at("name").get<std::string>().c_str()), "cuModuleGetFunction");
    std::vector<CUdeviceptr> workspaces;
    for (const Json& w : k.at("workspaces")) {  // filled with the pattern once
      std::vector<uint8_t> fill(w.at("bytes").get<size_t>(), 0);
      const std::string hex = w.at("fill_pattern_hex");
      std::vector<uint8_t> pattern;
      for (size_t c = 0; c + 1 < hex.size(); c += 2) pattern.push_back(static_cast<uint8_t>(std::stoi(hex.substr(c, 2), nullptr, 16)));
      for (size_t b = 0; !pattern.empty() && b < fill.size(); ++b) fill[b] = pattern[b % pattern.size()];
      workspaces.push_back(allocate(static_cast<int64_t>(fill.size()), fill.data()));
    }
    std::vector<CUdeviceptr> args;
    for (const Json& p : k.at("params")) {
      const std::string kind = p.at("kind");
      const size_t index = p.at("index");
      args.push_back(kind == "input" ? inputs.at(index) : kind == "output" ? outputs.at(index)
                     : kind == "temporary" ? temporaries.at(index) : workspaces.at(index));
    }
    for (const Json& z : k.at("init_outputs_first")) {  // a ScatterAdd adds into it: zeros, or its base
      const int temporary = z.at("temporary"), from = z.at("copy_of_input");
      const CUdeviceptr target = temporary >= 0 ? temporaries.at(static_cast<size_t>(temporary)) : outputs.at(z.at("output").get<size_t>());
      const size_t bytes = z.at("bytes");
      if (from >= 0) cu.check(cu.copy(target, inputs.at(static_cast<size_t>(from)), bytes), "cuMemcpyDtoD");
      else cu.check(cu.memset(target, 0, bytes), "cuMemsetD8");
    }
    std::vector<void*> pointers;
    for (CUdeviceptr& a : args) pointers.push_back(&a);
    const Json& g = k.at("grid");
    const Json& b = k.at("block");
    cu.check(cu.launch(function, g[0], g[1], g[2], b[0], b[1], b[2], k.at("dynamic_shared_bytes"), nullptr,
                       pointers.data(), nullptr),
             "cuLaunchKernel " + k.at("name").get<std::string>());
  }
  for (const Json& c : m.at("copies_after"))  // staged in-place outputs
    cu.check(cu.copy(outputs.at(c.at("output").get<size_t>()), temporaries.at(c.at("temporary").get<size_t>()), c.at("bytes")),
             "cuMemcpyDtoD");
  cu.check(cu.synchronize(), "the kernels");

  int mismatches = 0;
  for (size_t o = 0; o < outputs.size(); ++o) {
    const Json& out = m.at("outputs")[o];
    const Json& want = m.at("test").at("expected").at(o);
    std::vector<char> got(static_cast<size_t>(bytesOf(out)));
    cu.check(cu.download(got.data(), outputs[o], got.size()), "cuMemcpyDtoH");
    std::vector<char> expected = readFile(dir + "/" + want.at("file").get<std::string>());
    const std::string t = out.at("dtype");
    const double rtol = want.at("rtol"), atol = want.at("atol");
    int64_t bad = 0, n = static_cast<int64_t>(got.size()) / dtypeBytes(t);
    for (int64_t e = 0; e < n; ++e) {
      double x = element(got, t, e), y = element(expected, t, e);
      bool same = (std::isnan(x) && std::isnan(y)) || x == y || std::fabs(x - y) <= atol + rtol * std::fabs(y);
      bad += !same;
    }
    std::printf("output %zu (%s): %s (%lld of %lld elements differ)\n", o, out.at("name").get<std::string>().c_str(),
                bad ? "MISMATCH" : "ok", static_cast<long long>(bad), static_cast<long long>(n));
    mismatches += bad > 0;
  }
  return mismatches ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: polyred_loader DIR   (DIR from 'polyred compile FILE -o DIR --test-data')\n");
    return 2;
  }
  try {
    return run(argv[1]);
  } catch (const Fail& f) {
    std::fprintf(stderr, "polyred_loader: %s%s\n", f.what(), f.code == 77 ? " (skipped)" : "");
    return f.code;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "polyred_loader: bad manifest: %s\n", e.what());
    return 2;
  }
}
