#pragma once

#include <QList>
#include <QWidget>

#include <map>
#include <tuple>

#include "bench/sweep.h"
#include "run_view.h"

class QCustomPlot;
class QLabel;
class QLineEdit;
class QPushButton;
class QTableWidget;

namespace stepscope::ui {

// Launch a sweep (sizes × context lengths × modes × precisions) with the
// configuration panel's other fields, and watch its table and chart fill in.
class SweepPage final : public QWidget {
    Q_OBJECT

public:
    explicit SweepPage(QWidget* parent = nullptr);

    // Throws InvalidConfigError (from the engine) for bad lists.
    SweepSpec spec(const RunConfig& base, const QString& outDir) const;
    // Lists every point of a new sweep before it runs, with its estimated
    // peak; on the CPU, points whose estimate (plus the pre-flight margin)
    // exceeds `availableBytes` are marked "will not fit".
    void begin(const SweepSpec& spec, std::optional<int64_t> availableBytes = std::nullopt);
    void addPoint(int index, const RunResult& result);  // index in the sweep's order
    // A sweep read from its directory, a finished one or one still filling
    // there (`watching`): its points in the order given, the table and chart
    // as a finished sweep's, and the lists they span in the form.
    void showPoints(const QString& directory, const QList<const RunResult*>& points, bool watching);
    enum Column { Model, Context, Mode, Precision, Status, Estimate, Forward, Backward, Total };
    void finish(const QString& message);
    void setRunning(bool running);

    QList<ExportTarget> exportTargets();
    QTableWidget* table() const { return table_; }
    QCustomPlot* plot() const { return plot_; }
    QString statusText() const;
    QLineEdit* modelsEdit() const { return models_; }
    QLineEdit* contextsEdit() const { return contexts_; }

Q_SIGNALS:
    void startRequested();
    void stopRequested();

private:
    void redrawChart();
    void setRow(int row, const RunResult& result);

    QLineEdit *models_, *contexts_, *modes_, *precisions_;
    QPushButton *start_, *stop_;
    QLabel* status_;
    QTableWidget* table_;
    QCustomPlot* plot_;
    // (model, mode, precision) → context → mean total ms
    std::map<std::tuple<std::string, std::string, std::string>, std::map<int64_t, double>> series_;
    int expected_ = 0;
    int done_ = 0;
};

}  // namespace stepscope::ui
