#include "ir/tuple_program.h"

#include <unordered_map>

#include "ir/ops.h"
#include "support/error.h"

namespace polyred {

// Appends the steps of one phase (the lift, or the combine) to the program. Each phase
// has its own memo: the tree evaluation shares values within one evaluation only.
struct TupleProgram::Builder {
  TupleProgram& p;
  bool liftPhase = true;
  std::vector<DType> slotType;
  std::vector<uint32_t> lifted;  // Fold: the combine's side 1, the lifted field values
  std::unordered_map<const ScalarExpr*, uint32_t> memo;

  uint32_t newSlot(DType t) {
    slotType.push_back(t);
    p.slots_.emplace_back();
    return static_cast<uint32_t>(slotType.size() - 1);
  }

  uint32_t step(Step s) {
    s.out = newSlot(s.result);
    p.steps_.push_back(s);
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
    const int side = e.arg;
    POLYRED_CHECK(liftPhase ? side == 2 : side == 0 || side == 1,
                  "tuple " << p.t_.name << ": operand of side " << side << " in its " << (liftPhase ? "lift" : "combine"));
    if (side == 1 && p.kind_ == Kind::Fold) return convert(lifted.at(field), widenedTupleType(slotType[lifted.at(field)], p.widen_));
    Step s;
    s.kind = side == 0 ? Step::Kind::A : Step::Kind::Other;
    s.result = widenedTupleType(side == 0 ? p.aTypes_.at(field) : p.otherTypes_.at(field), p.widen_);
    s.in[0] = static_cast<uint32_t>(field);
    return step(s);
  }

  uint32_t emit(const ScalarExpr& e) {
    if (auto it = memo.find(&e); it != memo.end()) return it->second;
    uint32_t slot = 0;
    switch (e.kind) {
      case ScalarExpr::Kind::Arg: slot = arg(e); break;
      case ScalarExpr::Kind::Const:
        slot = newSlot(widenedTupleType(e.value.type, p.widen_));
        p.slots_[slot] = e.value.castTo(slotType[slot]);
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
        const TupleOpTyping typing = tupleOpTyping(e.op, std::span<const DType>(types.data(), s.arity), p.widen_);
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

  // Each field's expression (lift, combine or later-combine), converted to the field's
  // (widened) dtype as liftTuple and combineTuples convert it.
  std::vector<uint32_t> fields(ScalarExprPtr TupleField::*expr) {
    memo.clear();
    std::vector<uint32_t> out;
    for (const TupleField& x : p.t_.fields) out.push_back(convert(emit(*(x.*expr)), widenedTupleType(x.dtype, p.widen_)));
    return out;
  }
};

TupleProgram::TupleProgram(const TupleReduction& t, Kind kind, bool widen) : t_(t), kind_(kind), widen_(widen) {
  POLYRED_CHECK(kind != Kind::CombineLater || t.hasCombineLater(), "tuple " << t.name << " has no later-combine");
}

bool TupleProgram::builtFor(const TupleValue& a, std::span<const Scalar> other) const {
  if (other.size() != otherTypes_.size()) return false;
  for (size_t m = 0; m < other.size(); ++m)
    if (other[m].type != otherTypes_[m]) return false;
  if (kind_ == Kind::Lift) return true;
  if (a.size() != aTypes_.size()) return false;
  for (size_t k = 0; k < a.size(); ++k)
    if (a[k].type != aTypes_[k]) return false;
  return true;
}

void TupleProgram::build(const TupleValue& a, std::span<const Scalar> other) {
  built_ = false;  // until the whole program is there
  POLYRED_CHECK(kind_ == Kind::Lift || a.size() == t_.fields.size(),
                "tuple " << t_.name << ": " << a.size() << " values for " << t_.fields.size() << " fields");
  aTypes_.clear();
  otherTypes_.clear();
  if (kind_ != Kind::Lift)
    for (const Scalar& v : a) aTypes_.push_back(v.type);
  for (const Scalar& v : other) otherTypes_.push_back(v.type);
  steps_.clear();
  slots_.clear();
  Builder b{*this, true, {}, {}, {}};
  if (kind_ == Kind::Lift || kind_ == Kind::Fold) b.lifted = b.fields(&TupleField::lift);
  b.liftPhase = false;
  switch (kind_) {
    case Kind::Lift: resultSlots_ = b.lifted; break;
    case Kind::Fold:
    case Kind::Combine: resultSlots_ = b.fields(&TupleField::combine); break;
    case Kind::CombineLater: resultSlots_ = b.fields(&TupleField::combineLater); break;
  }
  built_ = true;
}

void TupleProgram::run(TupleValue& a, std::span<const Scalar> other) {
  if (!built_ || !builtFor(a, other)) build(a, other);
  for (const Step& s : steps_) {
    Scalar& out = slots_[s.out];
    switch (s.kind) {
      case Step::Kind::A: out = a[s.in[0]].castTo(s.result); break;
      case Step::Kind::Other: out = other[s.in[0]].castTo(s.result); break;
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
  a.resize(resultSlots_.size());
  for (size_t k = 0; k < resultSlots_.size(); ++k) a[k] = slots_[resultSlots_[k]];
}

}  // namespace polyred
