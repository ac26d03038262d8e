#pragma once

// core/interop: other tools' files, read and written. PyTorch's memory
// snapshots (here), Kineto traces, torch.save files, memory_viz pickles and
// Chrome traces; what a recording means is analysis/'s. Includes results/.

#include <string>

#include "interop/memory_snapshot_types.h"

namespace stepscope {

// Reads a snapshot file: a pickle (what _dump_snapshot writes) or JSON of the
// same structure, told apart by their first byte. Throws SnapshotError.
MemorySnapshot readMemorySnapshot(const std::string& path, const SnapshotLimits& limits = {},
                                  const SnapshotProgress& progress = {});
// The same from bytes already in memory; `source` names them in messages.
MemorySnapshot parseMemorySnapshot(std::string bytes, const std::string& source,
                                   const SnapshotLimits& limits = {},
                                   const SnapshotProgress& progress = {});
// A pickle read by the tree reader alone (PickleDocument, then its values
// walked), never streamed: what parseMemorySnapshot falls back to for a file
// off Python's layout, and what tests hold the streaming reader to.
MemorySnapshot parseSnapshotPickleTree(std::string bytes, const std::string& source,
                                       const SnapshotLimits& limits = {},
                                       const SnapshotProgress& progress = {});

}  // namespace stepscope
