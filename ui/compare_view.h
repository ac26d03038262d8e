#pragma once

#include <QList>
#include <QWidget>

#include "run_view.h"

class QCustomPlot;
class QTableWidget;

namespace stepscope::ui {

struct RunDocument;

// Two or more runs side by side: per-phase mean times with each run's ratio
// to the first (a speed-up above 1 means the first is slower), and their step
// series overlaid.
class CompareView final : public QWidget {
    Q_OBJECT

public:
    explicit CompareView(QWidget* parent = nullptr);
    void showRuns(const QList<const RunDocument*>& runs);
    QList<ExportTarget> exportTargets();
    QTableWidget* table() const { return table_; }

private:
    QTableWidget* table_;
    QCustomPlot* plot_;
};

}  // namespace stepscope::ui
