#include "driver/outcome.h"

#include <ostream>

#include "runtime/nvrtc.h"
#include "support/error.h"
#include "support/printable.h"

namespace polyred {

namespace {

constexpr size_t kMessageMax = 4096;

// A multi-line message (NVRTC's log) with its line breaks, ending the output's line.
std::string printableLog(const std::string& text) {
  std::string out = printableLines(text, kMessageMax);
  if (out.empty() || out.back() != '\n') out += '\n';
  return out;
}

}  // namespace

Exit runGuarded(const std::string& file, std::ostream& err, const std::function<Exit()>& body) {
  const std::string where = printable(file, 256);
  try {
    return body();
  } catch (const UnsupportedError& e) {
    err << "polyred: out of scope: " << (e.file().empty() ? e.inFile(file).what() : e.what()) << "\n";
  } catch (const Error& e) {
    err << "polyred: error: " << (e.file().empty() ? e.inFile(file).what() : e.what()) << "\n";
  } catch (const InternalError& e) {
    err << "polyred: " << where << ": " << printable(e.what(), kMessageMax) << "\n";
    return Exit::Internal;
  } catch (const CompileError& e) {
    err << "polyred: " << where << ": NVRTC rejected the generated code (a polyred bug):\n" << printableLog(e.what());
    return Exit::Internal;
  } catch (const std::bad_alloc&) {
    err << "polyred: " << where << ": out of memory (a polyred bug: memory is planned before it is allocated)\n";
    return Exit::Internal;
  } catch (const std::exception& e) {
    err << "polyred: " << where << ": " << printable(e.what(), kMessageMax) << "\n";
    return Exit::Internal;
  }
  return Exit::BadInput;
}

}  // namespace polyred
