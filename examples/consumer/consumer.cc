// consumer_cpp FILE: the same through the C++ wrapper (polyred.hpp).
#include <polyred/polyred.hpp>

#include <iostream>

int main(int argc, char** argv) try {
  polyred::Program p = polyred::Program::loadFile(argc > 1 ? argv[1] : "");
  bool ok = p.checkCpu();
  std::cout << p.numInputs() << " input(s), " << p.numOutputs() << " output(s), CPU check " << (ok ? "ok" : "MISMATCH") << "\n";
  return ok ? 0 : 1;
} catch (const polyred::Failure& e) {
  std::cerr << e.what() << "\n";
  return e.status();
}
