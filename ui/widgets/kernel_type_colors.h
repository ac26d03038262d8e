#pragma once

#include <QColor>
#include <QString>
#include <optional>

namespace stepscope::ui {

// The colours of a profiler trace's categories: HTA's kernel types
// (COMPUTATION, COMMUNICATION, MEMORY, OTHER) and each overlap of them
// ("COMPUTATION overlapping COMMUNICATION"), and the host's runtime calls
// (cuda_runtime, cuda_driver). One table, so the Breakdown's tables and
// charts and the Timeline give a type the same colour. nullopt for a name
// that is none of these.
std::optional<QColor> traceCategoryColor(const QString& name);

// A trace's colour where the name is one of its categories, else
// categoryColor()'s (matmul, softmax, ... of our runs).
QColor categoryOrKernelTypeColor(const QString& name);

}  // namespace stepscope::ui
