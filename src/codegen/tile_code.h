// The CUDA of a tiled transpose's shared tiles (poly/transpose_tiling.h): the tiles'
// declarations and the Stage statement. Elem reads the tiles where the 1-D loop would
// load (codegen/lane_values); Sync and Sync_1 are the emitter's barriers.
//
// Takes: a tiled kernel (PolyKernel::tiling not empty) and, for Stage, one instance
// (its offsets: each staged load's, then the slot of each of the Vb lanes). Gives: the
// source text.
#pragma once

#include <ostream>
#include <string>

#include "poly/poly_kernel.h"

namespace polyred {

// `__shared__ T tile<v>[slots]` per staged load (in its compute type), one per line,
// each line starting with `indent`.
std::string tileDeclarations(const PolyKernel& k, const std::string& indent);

// Each staged load's element at the instance's point into its slot; with Vb lanes one
// vector load (element by element where `vectorCondition` is false) and its lanes into
// their slots.
void emitTileStage(std::ostream& os, const PolyKernel& k, const AstUser& instance, const std::string& indent,
                   const std::string& vectorCondition);

}  // namespace polyred
