#include "canon/kernel_plan.h"

#include <sstream>

namespace polyred {

std::string_view formName(CanonicalForm f) {
  switch (f) {
    case CanonicalForm::Elementwise: return "elementwise";
    case CanonicalForm::AllReduce: return "all-reduce";
    case CanonicalForm::XReduce: return "x-reduce";
    case CanonicalForm::YReduce: return "y-reduce";
  }
  return "?";
}

std::string KernelPlan::toString(const Graph& g) const {
  std::ostringstream os;
  os << "kernel " << name << ": " << formName(form) << ", i < " << M << ", j < " << N << "\n";
  os << "  // " << why << "\n";
  for (size_t v = 0; v < body.size(); ++v) {
    const BodyValue& b = body[v];
    os << "  v" << v << ":" << dtypeName(b.dtype) << " = ";
    switch (b.kind) {
      case BodyValue::Kind::Load:
        os << "load %" << g.tensor(g.inputs[static_cast<size_t>(b.input)]).name << "[" << b.offset << "]";
        break;
      case BodyValue::Kind::Constant: os << "const " << b.value.toString(); break;
      case BodyValue::Kind::Op:
        os << opName(b.op) << "(";
        for (size_t k = 0; k < b.operands.size(); ++k) os << (k ? ", " : "") << "v" << b.operands[k];
        os << ")";
        break;
    }
    os << "    // %" << b.label << "\n";
  }
  for (const ReductionOutput& r : reductions)
    os << "  out %" << g.tensor(g.outputs[static_cast<size_t>(r.output)].tensor).name << "[i]:" << dtypeName(r.outType)
       << " = reduce." << r.reduction.name << "<acc " << dtypeName(r.reduction.accType) << ", identity "
       << r.reduction.identity.toString() << ", combiner " << polyred::toString(*r.reduction.combiner)
       << "> over j of v" << r.value << "\n";
  for (const ElementwiseOutput& s : stores)
    os << "  out %" << g.tensor(g.outputs[static_cast<size_t>(s.output)].tensor).name << "[i] = v" << s.value << "\n";
  return os.str();
}

std::string KernelPartition::toString(const Graph& g) const {
  std::string s;
  for (const auto& k : kernels) s += k.toString(g);
  return s;
}

}  // namespace polyred
