// The command line of the polyred tool: commands, their options, validation, help.
//
// Takes argv; gives Args (command, files, option values) already checked against the
// command's option table, or throws UsageError: an unknown command or option (with
// a "did you mean" suggestion), a value where none is taken or none where one is
// needed, a malformed value (--arch, --sms, --seed, --dump, sizes, counts). The
// tool prints a UsageError as one line and exits 2.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "support/error.h"

namespace polyred::cli {

class UsageError : public Error {
 public:
  explicit UsageError(std::string reason) : Error(std::move(reason)) {}
};

struct Args {
  std::string command;                        // "" with --help / --version alone
  std::vector<std::string> files;             // "-" means standard input
  std::map<std::string, std::string> values;  // option name (no dashes) -> value ("" for flags)

  bool has(const std::string& name) const { return values.count(name) > 0; }
  std::string get(const std::string& name, const std::string& fallback) const;
  int64_t integer(const std::string& name, int64_t fallback) const;  // validated by parse()
};

Args parse(int argc, char** argv);

// `command` empty: the overview; otherwise that command's options, environment
// variables and exit codes. Throws UsageError for an unknown command.
std::string helpText(const std::string& command);


}  // namespace polyred::cli
