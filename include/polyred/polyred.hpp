// polyred C++ API for users of the installed library: a header-only RAII wrapper over
// the C API (polyred.h), so the ABI stays C. Errors become polyred::Failure with the
// library's message and status.
//
//   polyred::Program p = polyred::Program::loadFile("sum.json");
//   p.launch({x}, {y}, stream);        // device pointers
//
// (Inside polyred's own build, the graph IR and the builder of src/frontend/builder.h
// are the C++ API for constructing graphs; installed users write composite JSON.)
#ifndef POLYRED_POLYRED_HPP
#define POLYRED_POLYRED_HPP

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "polyred/polyred.h"

namespace polyred {

class Failure : public std::runtime_error {
 public:
  Failure(polyred_status status, const std::string& message) : std::runtime_error(message), status_(status) {}
  polyred_status status() const { return status_; }

 private:
  polyred_status status_;
};

inline void check(polyred_status s) {
  if (s != POLYRED_OK) throw Failure(s, polyred_last_error());
}

struct Options : polyred_options {
  Options() { polyred_default_options(this); }
};

class Program {
 public:
  static Program loadFile(const std::string& path, const Options& o = Options()) {
    polyred_program* p = nullptr;
    check(polyred_load_file(path.c_str(), &o, &p));
    return Program(p);
  }
  static Program loadJson(const std::string& json, const std::string& label = "<memory>", const Options& o = Options()) {
    polyred_program* p = nullptr;
    check(polyred_load_json(json.data(), json.size(), label.c_str(), &o, &p));
    return Program(p);
  }
  Program(Program&& other) noexcept : p_(std::exchange(other.p_, nullptr)) {}
  Program& operator=(Program&& other) noexcept {
    std::swap(p_, other.p_);
    return *this;
  }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  ~Program() { polyred_program_free(p_); }

  int numInputs() const { return polyred_num_inputs(p_); }
  int numOutputs() const { return polyred_num_outputs(p_); }
  polyred_tensor_info input(int k) const {
    polyred_tensor_info i;
    check(polyred_input_info(p_, k, &i));
    return i;
  }
  polyred_tensor_info output(int k) const {
    polyred_tensor_info i;
    check(polyred_output_info(p_, k, &i));
    return i;
  }
  int numLaunches() const { return polyred_num_launches(p_); }
  // Device pointers, in input / output order; `stream` is a CUstream (nullptr: default).
  void launch(const std::vector<void*>& inputs, const std::vector<void*>& outputs, void* stream = nullptr) {
    check(polyred_launch(p_, inputs.data(), outputs.data(), stream));
  }
  // True when the lowered kernels match the reference on the CPU (no GPU needed).
  bool checkCpu(uint64_t seed = 1, int64_t maxPoints = 1 << 20) const {
    polyred_status s = polyred_check_cpu(p_, seed, maxPoints);
    if (s == POLYRED_MISMATCH) return false;
    check(s);
    return true;
  }
  polyred_program* get() const { return p_; }

 private:
  explicit Program(polyred_program* p) : p_(p) {}
  polyred_program* p_;
};

}  // namespace polyred

#endif  // POLYRED_POLYRED_HPP
