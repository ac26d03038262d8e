#pragma once

#include <QWidget>

class QStandardItemModel;

namespace stepscope::ui {

struct RunDocument;

// Beside the Breakdown of a PyTorch profiler trace: the shown rank's
// ProfilerStep#N ranges (host time, the device events their launches started
// and those events' time), the step HTA leaves out and the steps where this
// rank was the slowest marked; the figures of `stepscope-cli breakdown
// TRACE --json`'s "steps". Hidden for a run.
class TraceStepsPanel final : public QWidget {
    Q_OBJECT

public:
    enum Column { StepColumn, DurationColumn, KernelsColumn, KernelTimeColumn, NoteColumn };

    explicit TraceStepsPanel(QWidget* parent = nullptr);
    void showRun(const RunDocument* document);
    QStandardItemModel* stepsModel() const { return steps_; }

private:
    QStandardItemModel* steps_;
};

}  // namespace stepscope::ui
