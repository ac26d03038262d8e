#pragma once

#include <QList>
#include <QString>
#include <QStringList>

#include "models/run_label.h"

namespace stepscope::ui {

// Whether a comparison of step times compares like with like. Runs that
// differ in the work a step does (the model, its vocabulary, the context,
// the batch, a Python model) measure different steps in every phase; runs of
// different modes (a forward against a train step) differ in the whole step
// but not in the forward. What a comparison is usually about (engine,
// attention, precision, optimizer, memory levers, threads, device) keeps the
// steps alike.

// The fields of `differences` that make phase `phase` (0 the whole step,
// 1 forward, 2 backward, 3 optimizer) unlike, as "ctx 32 vs 64".
QStringList unlikeFields(const QList<FieldDifference>& differences, int phase);

// "ctx 32 vs 64", "mode train-step vs forward vs inference".
QString differenceText(const FieldDifference& difference);

}  // namespace stepscope::ui
