#pragma once

#include <QWidget>

#include <set>
#include <vector>

#include "experiments/attention_benchmark.h"
#include "widgets/run_view.h"

class QCheckBox;
class QCustomPlot;
class QGridLayout;
class QScrollArea;
class QLabel;
class QLayout;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace stepscope::ui {

// The attention benchmark in the app: backends × head dims × sequence
// lengths × precisions, one time chart per head dim (log axes, out-of-memory
// points marked), peak memory against sequence length, and the grid as a table.
class AttentionPage final : public QWidget {
    Q_OBJECT

public:
    explicit AttentionPage(QWidget* parent = nullptr);

    // The grid from the form; the device comes from the configuration panel.
    // Throws InvalidConfigError naming the field for bad lists.
    AttentionBenchSpec spec(DeviceKind device) const;
    // Fills the form with a grid (an empty sequence list: the device's default).
    void setForm(const AttentionBenchSpec& spec);
    void begin(int points);
    void addPoints(const std::vector<AttentionPoint>& points);
    // An opened file's points (`source` names it): the table and charts as a
    // finished grid's, and the grid they span in the form.
    void setPoints(const std::vector<AttentionPoint>& points, const QString& source = QString());
    void finish(const QString& message);
    void setRunning(bool running);

    const std::vector<AttentionPoint>& points() const { return points_; }
    QTableWidget* table() const { return table_; }
    QList<QCustomPlot*> timePlots() const;  // the charts shown, one per head dim
    QCustomPlot* memoryPlot() const { return memoryPlot_; }
    QString statusText() const;
    QList<ExportTarget> exportTargets();
    QLineEdit* seqEdit() const { return seqs_; }
    QLineEdit* backendsEdit() const { return backends_; }
    QLineEdit* dimsEdit() const { return dims_; }
    QLineEdit* precisionsEdit() const { return precisions_; }

Q_SIGNALS:
    void startRequested();
    void stopRequested();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void createFields();
    QLayout* createForm();
    QWidget* createCharts();
    void createTable();
    void redraw();
    std::set<int64_t> placeCharts();
    void drawTimes(QCustomPlot* plot, int64_t d);
    void drawMemory();
    void addTableRow(const AttentionPoint& point);

    QLineEdit *backends_, *dims_, *seqs_, *precisions_;
    QSpinBox *batch_, *heads_, *repeats_;
    QCheckBox* causal_;
    QPushButton *start_, *stop_;
    QLabel* status_;
    QGridLayout* chartGrid_;
    QScrollArea* chartsArea_;
    int chartColumns_ = 2;
    QList<QCustomPlot*> timePlots_;
    QCustomPlot* memoryPlot_;
    QTableWidget* table_;
    std::vector<AttentionPoint> points_;
    std::vector<int64_t> plotDims_;  // the head dim of each shown time chart
    int expected_ = 0;
};

}  // namespace stepscope::ui
