#pragma once

#include <QString>
#include <QStringList>

#include <vector>

#include "analysis/snapshot_stacks.h"

namespace stepscope::ui {

// The user's own category rules for PyTorch memory snapshots, kept in the
// settings (QSettings "memory/categoryRules", in order: each a map of
// target "name" or "file", pattern and category). They are tried before
// Mosaic's rules, the first that matches a frame of the allocation's stack
// wins (docs/memory-snapshots.md).
std::vector<CategoryRule> loadCategoryRules();
void saveCategoryRules(const std::vector<CategoryRule>& rules);

// The categories a rule may name: the Memory view's own (parameters,
// gradients, ...), which its chart, table and hover show.
QStringList ruleCategoryNames();

// Why `rule` cannot be kept, in words for beside its row ("not a regular
// expression: ..."), or empty when it can.
QString categoryRuleError(const CategoryRule& rule);

}  // namespace stepscope::ui
