#pragma once

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
    void begin(const SweepSpec& spec);  // clears the table for a new sweep
    void addPoint(const RunResult& result);
    void finish(const QString& message);
    void setRunning(bool running);

    QList<ExportTarget> exportTargets();
    QTableWidget* table() const { return table_; }
    QLineEdit* modelsEdit() const { return models_; }
    QLineEdit* contextsEdit() const { return contexts_; }

Q_SIGNALS:
    void startRequested();
    void stopRequested();

private:
    void redrawChart();

    QLineEdit *models_, *contexts_, *modes_, *precisions_;
    QPushButton *start_, *stop_;
    QLabel* status_;
    QTableWidget* table_;
    QCustomPlot* plot_;
    // (model, mode, precision) → context → mean total ms
    std::map<std::tuple<std::string, std::string, std::string>, std::map<int64_t, double>> series_;
    int expected_ = 0;
};

}  // namespace stepscope::ui
