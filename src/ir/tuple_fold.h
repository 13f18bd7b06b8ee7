// Folding elements into a tuple accumulator, for the reference interpreter.
//
// Takes: a TupleReduction and whether float32 computes in float64 (`widen`, as the
// reference does). Gives: TupleFolder::fold(acc, element), which sets `acc` to
// combineTuples(t, acc, liftTuple(t, element)) -- the same values, bit for bit --
// without walking the expression trees for every element. On its first call it
// flattens the lift and the combine into one straight-line program over numbered
// slots: every node's operand and result types fixed from the types of that call's
// accumulator fields and element inputs (the tree evaluation derives them again at
// every node of every element), each subexpression evaluated once per element however
// many parents share it, constants converted once, no allocation per element. The ops
// are evaluated by the same evalElementwise on the same converted operands; of the
// tree evaluation's conversions only those of a value to its own type are left out
// (they change nothing: every intermediate value is already rounded to its type), and
// the accumulator's and the element's values are converted as they come. A call whose types differ from those the
// program was built for builds it again. (The tree evaluation cost about 2.7 us per
// element of argmax, docs/design.md; tests/tuple_fold_test.cc holds the two together.)
// Not thread-safe: one folder per thread.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "ir/tuple_reduction.h"

namespace polyred {

class TupleFolder {
 public:
  TupleFolder(const TupleReduction& t, bool widen);
  // acc = combine(acc, lift(element)); `acc` holds one value per field.
  void fold(TupleValue& acc, std::span<const Scalar> element);

 private:
  struct Step {
    enum class Kind : uint8_t { Accumulator, Element, Convert, Op };
    Kind kind = Kind::Op;
    OpKind op = OpKind::Add;
    uint8_t arity = 0;
    // Accumulator / Element: in[0] is the field or input number; Convert: in[0] is
    // the slot converted; Op: the operand slots.
    std::array<uint32_t, 3> in{};
    std::array<DType, 3> operandType{};  // Op: what each operand is converted to first
    uint8_t convertOperand = 0;          // Op: bit k set where operand k's slot is of another type
    DType result = DType::Float32;       // the slot's type
    uint32_t out = 0;
  };
  struct Builder;

  bool builtFor(const TupleValue& acc, std::span<const Scalar> element) const;
  void build(const TupleValue& acc, std::span<const Scalar> element);

  const TupleReduction& t_;
  bool widen_;
  bool built_ = false;
  std::vector<DType> accTypes_, elementTypes_;  // the types the program was built for
  std::vector<Step> steps_;
  std::vector<Scalar> slots_;            // constants are filled in by build()
  std::vector<uint32_t> resultSlots_;   // the new value of each field
};

}  // namespace polyred
