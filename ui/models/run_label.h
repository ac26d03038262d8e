#pragma once

#include <QList>
#include <QString>
#include <QStringList>

#include "config/run_config.h"

namespace stepscope::ui {

// Labels that tell runs apart. Two runs that differ only in their attention
// backend must not both read "nano · ctx 128 · train-step · fp32 · cpu".

// Every field of a config that decides what a run measures, as
// "name value" pairs in a fixed order, the engine first ("libtorch",
// "pytorch-compile (max-autotune)", "ctx 128", "attention sdpa").
QStringList configFields(const RunConfig& config);

// For each config, the fields whose values differ among `configs`, joined
// with " · " (empty when they all agree, or for a single config).
QStringList differingFields(const QList<RunConfig>& configs);

// For each config, the fields whose values differ among `configs`, then
// those of model, ctx, mode, precision and device that do not (and the
// engine and Python model, where they are not LibTorch's reference model).
// Of the differing fields, first those that tell a run from a run alike in
// all else: runs of a warm-up study start with their warm-up, however many
// other fields differ among the session's runs.
QStringList listLabels(const QList<RunConfig>& configs);

// listLabels in two parts: what tells the run from the runs most like it
// (the list keeps it in view), and the rest (what it may elide).
struct LabelParts {
    QString distinct;
    QString rest;
    QString joined() const;  // as listLabels has it
};
QList<LabelParts> listLabelParts(const QList<RunConfig>& configs);

// The fields (configFields) every one of `configs` has, in that order.
QStringList sharedFields(const QList<RunConfig>& configs);

// The whole config on one line, for tooltips and exported chart titles.
QString configSummary(const RunConfig& config);

}  // namespace stepscope::ui
