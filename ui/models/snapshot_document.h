#pragma once

#include <QString>

#include <memory>
#include <vector>

#include "analysis/snapshot_stacks.h"
#include "interop/memory_snapshot.h"

namespace stepscope::ui {

struct RunDocument;

// One device of a snapshot as a document: the memory trace the views draw,
// categorised by the user's `rules` first (Settings → Memory category rules),
// what the memory views draw of it prepared, a title naming the file and the
// device, and the recording. The snapshot is kept whole, so that another
// device or new rules need no second read. Throws what buildTimeline throws.
// `progress` hears how far it is (0 to 1) after each stage; a false from it
// before the last stage stops the work, and the document is null.
std::shared_ptr<RunDocument> snapshotDocument(std::shared_ptr<const MemorySnapshot> snapshot,
                                              const QString& path, int device,
                                              const std::vector<CategoryRule>& rules,
                                              const SnapshotProgress& progress = {});

}  // namespace stepscope::ui
