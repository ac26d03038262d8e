#pragma once

#include <QList>
#include <QString>
#include <QStringList>

#include "config/run_config.h"
#include "results/run_comparison.h"

namespace stepscope::ui {

// Whether a comparison of step times compares like with like, for the
// Compare tab: the fields and the rule are the CLI's `compare`
// (configFieldDifferences and unlikeIn, results/run_comparison.h), read
// over two runs or more.

// A field whose value is not the same in all the compared configs: "ctx"
// and {"32", "64", "64"}, one value per config, with the first pair that
// differs in it (which says whether it changes the work of a step).
struct ComparedField {
    ConfigDifference first;
    QStringList values;
};

// The fields whose values differ among `configs`, each against the first:
// in the config table's order for two, in the order the pairs first show
// them for more.
QList<ComparedField> comparedFields(const QList<RunConfig>& configs);

// The fields of `fields` that make the steps of `phase` unlike, as
// "ctx 32 vs 64".
QStringList unlikeFields(const QList<ComparedField>& fields, StepPhase phase);

// "ctx 32 vs 64", "mode train-step vs forward vs inference".
QString differenceText(const ComparedField& field);

}  // namespace stepscope::ui
