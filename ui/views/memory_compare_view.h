#pragma once

#include <QList>
#include <QStringList>
#include <QWidget>

class QCustomPlot;
class QLabel;
class QTableWidget;

namespace stepscope::ui {

struct RunDocument;

// Compare memory: two recordings (runs with a memory trace, PyTorch
// snapshots) on one time axis, each aligned at its first event, both peaks
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
    enum Column { Site, ABytes, BBytes, Delta, ColumnCount };
    // The most points one curve draws: each bucket keeps its highest value, so
    // a decimated curve still reaches its peak.
    static constexpr int kMaxPoints = 4000;

private:
    QLabel* caption_;
    QCustomPlot* plot_;
    QTableWidget* table_;
};

}  // namespace stepscope::ui
