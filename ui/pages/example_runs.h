#pragma once

#include <functional>

#include <QList>
#include <QString>
#include <QStringList>

class QMenu;

namespace stepscope::ui {

// One of the example runs shipped in resources/examples (installed to
// <prefix>/share/stepscope/examples), as its examples.json lists it.
struct ExampleRun {
    QString title;        // "A train step with operators and memory"
    QString description;  // one or two sentences: what was run, where to look
    QString path;         // absolute: a run or attention file, a dtype-flow file, a sweep folder
    QString tab;          // the tab that shows it first ("Step timing", "Sweep", …)
};

// Where the examples are: $STEPSCOPE_EXAMPLES when set, else the installed
// <dir of this program>/../share/stepscope/examples, else the source tree's
// resources/examples (a build run from its build folder). The first that
// holds examples.json wins; empty when none does. `searched`, when given,
// receives every place looked at, in order.
QString examplesDirectory(QStringList* searched = nullptr);

// The examples `directory`'s examples.json lists, in its order, with their
// paths made absolute; entries whose file is missing are left out. Empty for
// an empty `directory` or one without a readable index.
QList<ExampleRun> readExampleRuns(const QString& directory);

// Fills Help → Examples afresh: an entry per example (its description as the
// tooltip) calling `open` with it, or "No examples found".
void fillExamplesMenu(QMenu* menu, const QList<ExampleRun>& examples,
                      const std::function<void(const ExampleRun&)>& open);

}  // namespace stepscope::ui
