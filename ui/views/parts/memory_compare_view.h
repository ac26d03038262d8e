#pragma once

#include <QList>
#include <QStringList>
#include <QWidget>

class QComboBox;
class QCustomPlot;
class QLabel;
class QSpinBox;
class QTableWidget;

namespace stepscope::ui {

struct RunDocument;

// Compare memory: two recordings (runs with a memory trace, PyTorch
// snapshots) on one time axis, each aligned at its first event (or, where
// both are our runs, at the start of a step they both have), both peaks
// marked, and the table of what was alive at each one's peak by site (B − A,
// largest difference first: core's diffRecordings). memory_viz cannot put
// two files side by side. The first two ticked recordings with a memory
// trace are compared.
class MemoryCompareView final : public QWidget {
    Q_OBJECT

public:
    explicit MemoryCompareView(QWidget* parent = nullptr);
    void showRuns(const QList<const RunDocument*>& runs, const QStringList& labels);
    QCustomPlot* plot() const { return plot_; }
    QTableWidget* table() const { return table_; }
    QString caption() const;
    // Where each recording's time starts: at its first event, or at the
    // start of step N (the first phase range of that step its memory trace
    // recorded), offered only when both recordings are runs with steps.
    enum class Align { FirstEvent, StepStart };
    void setAlignment(Align align, int step = 1);
    Align alignment() const { return align_; }
    int alignStep() const;
    bool stepAlignmentOffered() const;
    QComboBox* alignBox() const { return alignBox_; }
    QSpinBox* stepBox() const { return stepBox_; }
    enum Column { Site, ABytes, BBytes, Delta, ColumnCount };
    // The most points one curve draws: each bucket keeps its highest value, so
    // a decimated curve still reaches its peak.
    static constexpr int kMaxPoints = 4000;

private:
    void draw();
    void offerSteps(const QList<int>& traced);

    QList<const RunDocument*> runs_;  // as CompareView gave them, refreshed on each change
    QStringList labels_;
    Align align_ = Align::FirstEvent;
    QComboBox* alignBox_;
    QSpinBox* stepBox_;
    QLabel* caption_;
    QCustomPlot* plot_;
    QTableWidget* table_;
};

}  // namespace stepscope::ui
