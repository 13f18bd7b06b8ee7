// How the command-line tools turn what happened to one file into an exit code and
// one message line: the contract of every polyred command (and of the fuzzing batch
// that holds the project to it).
//
//   0 success, 1 a result did not match, 2 bad input, out of scope or over a budget
//   (the message names the file, the op where there is one, and the reason),
//   3 internal error (a polyred bug).
// Every message is printable (support/printable.h): one line per error, except
// NVRTC's log, whose lines are each made printable.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>

namespace polyred {

enum class Exit : int { Ok = 0, Mismatch = 1, BadInput = 2, Internal = 3 };

// Runs `body` for `file`, catching what it throws: the exit code it maps to, with
// the message written to `err`.
Exit runGuarded(const std::string& file, std::ostream& err, const std::function<Exit()>& body);

}  // namespace polyred
