#pragma once

#include <QString>

#include <cstdint>
#include <optional>

#include "config/run_config.h"

class QWidget;

namespace stepscope::ui {

// "Will this fit?", answered before anything runs: the estimate the
// configuration panel shows as the user edits, and the question asked before
// a CPU run that may not fit. `available`: the free bytes to assume (nullopt:
// what the system reports).

struct MemoryEstimateText {
    QString text;              // one line: the peak, its phase, the largest category
    QString details;           // the formula's parts, one per line
    std::optional<bool> fits;  // unknown where the device's memory is
};
MemoryEstimateText memoryEstimateText(const RunConfig& config, bool configValid,
                                      std::optional<int64_t> available);

// "batch 8 → 3, context 1024 → 512": what shrinking changed.
QString shrinkChanges(const RunConfig& from, const RunConfig& to);

// On the CPU a run that does not fit ends the whole program: offers (modal on
// `parent`) to shrink it to what the estimate says fits, or to run anyway.
// False: do not start. Shrinking changes `config` and says how in
// `shrunkNote`; running anyway sets config.force.
bool askPreflight(QWidget* parent, RunConfig& config, std::optional<int64_t> available,
                  QString* shrunkNote);

}  // namespace stepscope::ui
