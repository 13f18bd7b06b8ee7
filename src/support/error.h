// Error reporting shared by every stage.
//
// Bad input is reported by throwing polyred::Error, which names where the problem is
// (file, op) and why. Tools map it to exit code 2. Internal invariants use
// POLYRED_CHECK, which throws InternalError (exit code 3): a bug in polyred, never
// the user's fault. The message (what()) is always one printable line: file, op and
// reason go through printable(), so a hostile name can neither truncate it (NUL) nor
// put control bytes on the user's terminal; the parts keep the raw text.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

#include "support/printable.h"

namespace polyred {

class Error : public std::runtime_error {
 public:
  Error(std::string file, std::string op, std::string reason)
      : std::runtime_error(format(file, op, reason)),
        file_(std::move(file)), op_(std::move(op)), reason_(std::move(reason)) {}
  explicit Error(std::string reason) : Error("", "", std::move(reason)) {}

  const std::string& file() const { return file_; }
  const std::string& op() const { return op_; }
  const std::string& reason() const { return reason_; }

  // The same error, attributed to a file (used when a frontend knows the path but a
  // deeper stage raised the error).
  Error inFile(const std::string& file) const { return Error(file, op_, reason_); }

 private:
  static std::string format(const std::string& file, const std::string& op,
                            const std::string& reason) {
    std::string s;
    if (!file.empty()) s += printable(file, 256) + ": ";
    if (!op.empty()) s += "op " + quotedName(op, 128) + ": ";
    return s + printable(reason, 4096);
  }
  std::string file_, op_, reason_;
};

// Valid input that polyred does not handle (yet): e.g. MatMul, Gather, complex
// numbers. Kept apart from Error so corpus summaries can count "out of scope" by reason.
class UnsupportedError : public Error {
 public:
  using Error::Error;
};

// A broken internal invariant (a polyred bug).
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Thrown when an operation needs a GPU and none is usable.
class NoGpuError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace polyred

#define POLYRED_CHECK(cond, msg)                                                    \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::ostringstream polyred_check_os_;                                         \
      polyred_check_os_ << __FILE__ << ":" << __LINE__ << ": internal error: " << msg; \
      throw ::polyred::InternalError(polyred_check_os_.str());                      \
    }                                                                               \
  } while (0)
