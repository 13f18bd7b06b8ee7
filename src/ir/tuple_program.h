// A tuple reduction's lift and combine as straight-line programs, for the host
// evaluators (the reference interpreter and the CPU executor).
//
// Takes: a TupleReduction, what to compute (Kind) and whether float32 computes in
// float64 (`widen`, as the reference does). Gives: TupleProgram::run(a, other), which
// sets `a` to
//   Lift          liftTuple(t, other)                    other: the element's inputs
//   Fold          combineTuples(t, a, liftTuple(t, other))
//   Combine       combineTuples(t, a, other)             other: b's fields
//   CombineLater  combineLaterTuples(t, a, other)
// -- the same values, bit for bit -- without walking the expression trees on every
// call. On its first call it flattens the expressions into one program over numbered
// slots: every node's operand and result types fixed from the types of that call's
// values (the tree evaluation derives them again at every node of every call), each
// subexpression evaluated once however many parents share it, constants converted
// once, no allocation per call. The ops are evaluated by the same evalElementwise on
// the same converted operands; of the tree evaluation's conversions only those of a
// value to its own type are left out (they change nothing: every intermediate value is
// already rounded to its type), and the values of `a` and `other` are converted as they
// come. A call whose values have other types than those the program was built for
// builds it again. (The tree evaluation cost about 2.7 us per element of argmax in the
// reference; docs/design/pipeline-and-ir.md. tests/tuple_program_test.cc holds the two together.)
// Not thread-safe: one program per thread.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "ir/tuple_reduction.h"

namespace polyred {

class TupleProgram {
 public:
  enum class Kind : uint8_t { Lift, Fold, Combine, CombineLater };

  TupleProgram(const TupleReduction& t, Kind kind, bool widen);
  // `a`: one value per field (Lift: resized to that, its values unread).
  void run(TupleValue& a, std::span<const Scalar> other);

 private:
  struct Step {
    enum class Kind : uint8_t { A, Other, Convert, Op };
    Kind kind = Kind::Op;
    OpKind op = OpKind::Add;
    uint8_t arity = 0;
    // A / Other: in[0] is the field or input number; Convert: in[0] is the slot
    // converted; Op: the operand slots.
    std::array<uint32_t, 3> in{};
    std::array<DType, 3> operandType{};  // Op: what each operand is converted to first
    uint8_t convertOperand = 0;          // Op: bit k set where operand k's slot is of another type
    DType result = DType::Float32;       // the slot's type
    uint32_t out = 0;
  };
  struct Builder;

  bool builtFor(const TupleValue& a, std::span<const Scalar> other) const;
  void build(const TupleValue& a, std::span<const Scalar> other);

  const TupleReduction& t_;
  Kind kind_;
  bool widen_;
  bool built_ = false;
  std::vector<DType> aTypes_, otherTypes_;  // the types the program was built for
  std::vector<Step> steps_;
  std::vector<Scalar> slots_;               // constants are filled in by build()
  std::vector<uint32_t> resultSlots_;       // the new value of each field
};

// Every program of one tuple: what an evaluator of the kernels' lanes, blocks and
// folds runs (codegen/cpu_executor).
struct TuplePrograms {
  TuplePrograms(const TupleReduction& t, bool widen)
      : lift(t, TupleProgram::Kind::Lift, widen), fold(t, TupleProgram::Kind::Fold, widen),
        combine(t, TupleProgram::Kind::Combine, widen) {
    if (t.hasCombineLater()) later.emplace(t, TupleProgram::Kind::CombineLater, widen);
  }
  TupleProgram lift, fold, combine;
  std::optional<TupleProgram> later;  // where the tuple has a later-combine
};

}  // namespace polyred
