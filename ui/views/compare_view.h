#pragma once

#include <QList>
#include <QWidget>

#include "models/unlike_steps.h"
#include "widgets/run_view.h"

class QCustomPlot;
class QLabel;
class QTabWidget;
class QTableWidget;

namespace stepscope::ui {

struct RunDocument;
class MemoryCompareView;
class RankComparePage;

// Two or more runs side by side: per phase and run the spread of the
// measured steps (median, mean, std, CV), each run's median ratio to the
// first (above 1, that run is faster) with a verdict that says when the
// difference lies within the noise or the steps are too few to tell
// (compareTimes, the CLI's `compare` too), and their measured steps overlaid. One
// row per phase and run, so that three or more runs fit the width. Which
// fields differ is said above the table; where they change the work a step
// does, the verdicts of the phases concerned say they compare unlike steps.
class CompareView final : public QWidget {
    Q_OBJECT

public:
    explicit CompareView(QWidget* parent = nullptr);
    // `labels` name the runs (by what differs among them), one per run.
    void showRuns(const QList<const RunDocument*>& runs, const QStringList& labels);
    QList<ExportTarget> exportTargets();
    QTableWidget* table() const { return table_; }
    // The "Memory" page beside the step times: two recordings on one axis.
    MemoryCompareView* memoryCompare() const { return memory_; }
    QTabWidget* pages() const { return pages_; }
    // The "Ranks" page: distributed runs' ranks side by side.
    RankComparePage* rankCompare() const { return ranks_; }
    enum Column { Phase, Run, Median, Mean, Std, Cv, Ratio, Verdict, ColumnCount };

    QLabel* differencesLabel() const { return differences_; }

private:
    // Which fields the runs StepScope made (`configuredRuns` of them) differ
    // in, and whether that makes the steps unlike.
    void describeDifferences(qsizetype configuredRuns);
    void fillTable(const QList<const RunDocument*>& runs, const QStringList& names);
    void addRow(int phase, const RunDocument& run, const QString& name,
                const RunDocument* reference, const QString& referenceName);
    void drawSteps(const QList<const RunDocument*>& runs, const QStringList& names);

    QLabel* differences_;
    QTableWidget* table_;
    QCustomPlot* plot_;
    QTabWidget* pages_;
    MemoryCompareView* memory_;
    RankComparePage* ranks_;
    QList<ComparedField> differenceList_;
};

}  // namespace stepscope::ui
