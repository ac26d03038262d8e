#pragma once

#include <QWidget>

class QLabel;
class QStandardItemModel;
class QTableView;

namespace stepscope::ui {

struct RunDocument;
class TraceStepsPanel;

// Above the Breakdown of a PyTorch profiler trace: HTA's analyses of the
// recording, a row per rank (mean profiler step, idle, compute and
// non-compute time and %, communication, the steps where it was the slowest
// rank), under it the shown rank's profiler steps, and beside them its kernel
// types (HTA's names, overlaps counted once per combination) and launch
// statistics. Hidden for a run.
class TraceRanksPanel final : public QWidget {
    Q_OBJECT

public:
    enum Column {
        RankColumn,
        StepColumn,
        IdleColumn,
        ComputeColumn,
        NonComputeColumn,
        CommunicationColumn,
        SlowestColumn,
        ColumnCount
    };

    explicit TraceRanksPanel(QWidget* parent = nullptr);
    void showRun(const RunDocument* document);

    QStandardItemModel* ranksModel() const { return ranks_; }
    QStandardItemModel* kernelTypesModel() const { return types_; }
    TraceStepsPanel* stepsPanel() const { return steps_; }
    QString summaryText() const;

private:
    QLabel* summary_;
    QStandardItemModel* ranks_;
    QStandardItemModel* types_;
    TraceStepsPanel* steps_;
};

}  // namespace stepscope::ui
