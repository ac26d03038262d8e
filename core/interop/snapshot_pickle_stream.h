#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "interop/memory_snapshot_types.h"

namespace stepscope {

// A snapshot pickle read straight into MemorySnapshot's columns, with no
// tree of values in between: a million events cost their columns, not the
// five million values and their entries a tree holds (the tree reader spends
// three fifths of a large snapshot's open building and walking those).
//
// It follows the layout Python's pickler writes (and StepScope's exporter):
// each value in prefix order, so a value's meaning is known from the key
// before it, and every step has the stack machine's own effect on the stack
// and memo. A file that leaves that layout (another opcode, a value where
// the layout has none, a memo index out of order, a duplicate key, anything
// the tree reader would refuse) is not read here: nullopt, and the caller
// reads it with the tree reader, which words what is wrong if anything is.
// What it returns equals the tree reader's snapshot id for id.
//
// Progress is told as the fraction of bytes read, about every MiB; a false
// from it throws SnapshotError (Kind::Stopped).
std::optional<MemorySnapshot> streamSnapshotPickle(std::string_view bytes,
                                                   const std::string& source,
                                                   const SnapshotLimits& limits = {},
                                                   const SnapshotProgress& progress = {});

}  // namespace stepscope
