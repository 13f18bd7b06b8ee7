#include "ir/tuple_fold.h"

#include <unordered_map>

#include "ir/ops.h"
#include "support/error.h"

namespace polyred {

namespace {
DType widened(DType t, bool widen) { return widen && t == DType::Float32 ? DType::Float64 : t; }
}  // namespace

// Appends the steps of one phase (the lift, or the combine) to the program. Each phase
// has its own memo: the tree evaluation shares values within one evaluation only.
struct TupleFolder::Builder {
  TupleFolder& f;
  std::vector<DType> slotType;
  std::vector<uint32_t> lifted;  // the combine's side 1: the lifted field values
  std::unordered_map<const ScalarExpr*, uint32_t> memo;

  uint32_t newSlot(DType t) {
    slotType.push_back(t);
    f.slots_.emplace_back();
    return static_cast<uint32_t>(slotType.size() - 1);
  }

  uint32_t step(Step s) {
    s.out = newSlot(s.result);
    f.steps_.push_back(s);
    return s.out;
  }

  // A slot of the type asked for is already that conversion's result: every value a
  // slot holds was made by a conversion to its type or by evalElementwise, which rounds
  // to its result type, and converting such a value to its own type changes nothing.
  uint32_t convert(uint32_t slot, DType to) {
    if (slotType[slot] == to) return slot;
    Step s;
    s.kind = Step::Kind::Convert;
    s.in[0] = slot;
    s.result = to;
    return step(s);
  }

  // An operand as the tree evaluation reads it: converted to its widened type.
  uint32_t arg(const ScalarExpr& e) {
    const size_t field = static_cast<size_t>(e.field);
    Step s;
    switch (e.arg) {
      case 0:
        s.kind = Step::Kind::Accumulator;
        s.result = widened(f.accTypes_.at(field), f.widen_);
        break;
      case 1: return convert(lifted.at(field), widened(slotType[lifted.at(field)], f.widen_));
      default:
        s.kind = Step::Kind::Element;
        s.result = widened(f.elementTypes_.at(field), f.widen_);
        break;
    }
    s.in[0] = static_cast<uint32_t>(field);
    return step(s);
  }

  uint32_t emit(const ScalarExpr& e) {
    if (auto it = memo.find(&e); it != memo.end()) return it->second;
    uint32_t slot = 0;
    switch (e.kind) {
      case ScalarExpr::Kind::Arg: slot = arg(e); break;
      case ScalarExpr::Kind::Const:
        slot = newSlot(widened(e.value.type, f.widen_));
        f.slots_[slot] = e.value.castTo(slotType[slot]);
        break;
      case ScalarExpr::Kind::Op: {
        POLYRED_CHECK(e.operands.size() <= 3, "tuple expression op with " << e.operands.size() << " operands");
        Step s;
        s.op = e.op;
        s.arity = static_cast<uint8_t>(e.operands.size());
        std::array<DType, 3> types{};
        for (size_t k = 0; k < e.operands.size(); ++k) {
          s.in[k] = emit(*e.operands[k]);
          types[k] = slotType[s.in[k]];
        }
        const TupleOpTyping typing = tupleOpTyping(e.op, std::span<const DType>(types.data(), s.arity), f.widen_);
        for (size_t k = 0; k < s.arity; ++k) {
          s.operandType[k] = e.op == OpKind::Select && k == 0 ? DType::Bool : typing.operand;
          if (types[k] != s.operandType[k]) s.convertOperand |= static_cast<uint8_t>(1u << k);  // (see convert())
        }
        s.result = typing.result;
        slot = step(s);
        break;
      }
    }
    memo.emplace(&e, slot);
    return slot;
  }
};

TupleFolder::TupleFolder(const TupleReduction& t, bool widen) : t_(t), widen_(widen) {}

bool TupleFolder::builtFor(const TupleValue& acc, std::span<const Scalar> element) const {
  if (acc.size() != accTypes_.size() || element.size() != elementTypes_.size()) return false;
  for (size_t k = 0; k < acc.size(); ++k)
    if (acc[k].type != accTypes_[k]) return false;
  for (size_t m = 0; m < element.size(); ++m)
    if (element[m].type != elementTypes_[m]) return false;
  return true;
}

void TupleFolder::build(const TupleValue& acc, std::span<const Scalar> element) {
  POLYRED_CHECK(acc.size() == t_.fields.size(), "tuple " << t_.name << ": an accumulator of " << acc.size()
                                                          << " values for " << t_.fields.size() << " fields");
  accTypes_.clear();
  elementTypes_.clear();
  for (const Scalar& v : acc) accTypes_.push_back(v.type);
  for (const Scalar& v : element) elementTypes_.push_back(v.type);
  steps_.clear();
  slots_.clear();
  resultSlots_.clear();
  Builder b{*this, {}, {}, {}};
  // liftTuple: each field's lift, converted to the field's (widened) dtype.
  for (const TupleField& x : t_.fields) b.lifted.push_back(b.convert(b.emit(*x.lift), widened(x.dtype, widen_)));
  // combineTuples(acc, lifted): each field's combine, converted likewise.
  b.memo.clear();
  for (const TupleField& x : t_.fields) resultSlots_.push_back(b.convert(b.emit(*x.combine), widened(x.dtype, widen_)));
  built_ = true;
}

void TupleFolder::fold(TupleValue& acc, std::span<const Scalar> element) {
  if (!built_ || !builtFor(acc, element)) build(acc, element);
  for (const Step& s : steps_) {
    Scalar& out = slots_[s.out];
    switch (s.kind) {
      case Step::Kind::Accumulator: out = acc[s.in[0]].castTo(s.result); break;
      case Step::Kind::Element: out = element[s.in[0]].castTo(s.result); break;
      case Step::Kind::Convert: out = slots_[s.in[0]].castTo(s.result); break;
      case Step::Kind::Op: {
        std::array<Scalar, 3> operands;
        for (size_t k = 0; k < s.arity; ++k) {
          const Scalar& v = slots_[s.in[k]];
          operands[k] = s.convertOperand & (1u << k) ? v.castTo(s.operandType[k]) : v;
        }
        out = evalElementwise(s.op, std::span<const Scalar>(operands.data(), s.arity), s.result);
        // The types of later steps were fixed on this one's.
        POLYRED_CHECK(out.type == s.result, "tuple " << t_.name << ": " << opName(s.op) << " gave "
                                                     << dtypeName(out.type) << ", not " << dtypeName(s.result));
        break;
      }
    }
  }
  for (size_t k = 0; k < resultSlots_.size(); ++k) acc[k] = slots_[resultSlots_[k]];
}

}  // namespace polyred
