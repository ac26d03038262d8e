#pragma once

#include <vector>

#include "results/memory_trace.h"
#include "run_view.h"

class QCustomPlot;
class QLabel;
class QStandardItemModel;
class QTimer;

namespace stepscope::ui {

// The active-memory timeline of a run made with --memory: bytes alive over
// time stacked by category (a decimated series keeps a million events
// smooth; every event stays for queries), phase bands, the peak marked, the
// allocation under the cursor on hover; the largest allocations alive in
// the visible time range (zoom or pan to narrow it); estimator vs measured.
class MemoryView final : public RunView {
    Q_OBJECT

public:
    static constexpr int kMaxPoints = 4000;  // per category series
    static constexpr int kTopRows = 20;

    explicit MemoryView(QWidget* parent = nullptr);
    QString title() const override { return tr("Memory"); }
    void showRun(const RunDocument* document) override;
    QList<ExportTarget> exportTargets() override;

    // The allocation drawn at a time and height (bytes), or nullptr.
    const MemoryAllocation* allocationAt(double timeUs, double bytes) const;
    QString describe(const MemoryAllocation& allocation) const;
    void setTimeRange(double startUs, double endUs);  // narrows the table too
    QStandardItemModel* topModel() const { return top_; }
    QStandardItemModel* estimateModel() const { return estimate_; }
    QCustomPlot* plot() const { return plot_; }
    int plottedPoints() const;  // per series

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void fillTopTable();

    int shownId_ = -2;
    size_t shownEvents_ = 0;
    const MemoryTrace* trace_ = nullptr;
    std::vector<MemoryAllocation> allocations_;  // by start time
    QLabel* caption_;
    QCustomPlot* plot_;
    QStandardItemModel* top_;
    QStandardItemModel* estimate_;
    QTimer* narrow_;
};

}  // namespace stepscope::ui
