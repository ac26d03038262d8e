#pragma once

#include <QString>

namespace stepscope::ui {

struct RunDocument;

// What a view of one run draws from: its steps, its operator and kernel
// records, its traced step, its memory trace, its ranks (a distributed run).
enum class Records { Steps, Operators, Timeline, Memory, Ranks };

// Why `document` shows none of `records`, and what would give them, in
// words that match its state: nothing selected; a run under way that
// traces them (they arrive with its result when it ends) or does not; a
// finished run of ours that traced them but ended first, or never traced
// them (tick the option, or the CLI's flag); a recording PyTorch made,
// which holds other things (a snapshot has no operators, a trace no memory).
QString missingRecordsText(const RunDocument* document, Records records);

// The same in a few words, for the middle of an empty chart.
QString missingRecordsNote(const RunDocument* document, Records records);

}  // namespace stepscope::ui
