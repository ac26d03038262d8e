#pragma once

#include <QList>
#include <QWidget>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "experiments/study.h"
#include "experiments/sweep.h"
#include "widgets/run_view.h"

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QFormLayout;
class QHBoxLayout;
class QLabel;
class QLayout;
class QLineEdit;
class QPushButton;
class QTableWidget;

namespace stepscope::ui {

// Launch a sweep over any config fields (models × context lengths × modes ×
// precisions × any other axis), or one of the named studies, and watch its
// table and chart fill in. The chart pivots the points: any field that
// varies can be the x axis, each other one a line per value or held at one.
class SweepPage final : public QWidget {
    Q_OBJECT

public:
    explicit SweepPage(QWidget* parent = nullptr);

    enum class Study { Sweep, Warmup, Precision, Attention };
    Study study() const;
    void setStudy(Study study);
    bool isolated() const;  // each point in a fresh process

    // Throws InvalidConfigError (from the engine) for bad lists.
    SweepSpec spec(const RunConfig& base, const QString& outDir) const;
    WarmupStudySpec warmupSpec(const RunConfig& base, const QString& outDir) const;
    // The configuration panel's values, shown as what an empty axis field means.
    void setBaseConfig(const RunConfig& base);

    // Lists every point of a new sweep before it runs, with its estimated
    // peak; on the CPU, points whose estimate (plus the pre-flight margin)
    // exceeds `availableBytes` are marked "will not fit".
    void begin(const SweepSpec& spec, std::optional<int64_t> availableBytes = std::nullopt);
    void addPoint(int index, const RunResult& result);  // index in the sweep's order
    // A sweep read from its directory, a finished one or one still filling
    // there (`watching`): its points in the order given, the table and chart
    // as a finished sweep's, and the lists they span in the form. A row
    // without a result is a point still to come (a Slurm array's).
    struct Row {
        RunConfig config;
        const RunResult* result = nullptr;
    };
    void showPoints(const QString& directory, const std::vector<Row>& rows, bool watching);
    void finish(const QString& message);
    void setRunning(bool running);

    // The table's columns: the config fields that vary sit between
    // Precision and Status, and the study's own columns (first and second
    // measured step, speed-up over fp32, measured peak) after Total.
    enum Column { Model, Context, Mode, Precision, Status, Estimate, Forward, Backward, Total };
    int column(Column column) const;
    int column(const QString& header) const;  // -1 when not shown

    QList<ExportTarget> exportTargets();
    QTableWidget* table() const { return table_; }
    QCustomPlot* plot() const { return plot_; }
    QString statusText() const;
    QLineEdit* modelsEdit() const { return models_; }
    QLineEdit* contextsEdit() const { return contexts_; }
    QLineEdit* modesEdit() const { return modes_; }
    QLineEdit* precisionsEdit() const { return precisions_; }
    QLineEdit* warmupsEdit() const { return warmups_; }
    QLineEdit* axisEdit(const std::string& field) const;  // nullptr for an unknown field
    QComboBox* studyBox() const { return study_; }
    QCheckBox* isolateBox() const { return isolate_; }
    QComboBox* xAxisBox() const { return xAxis_; }
    QComboBox* heldBox(const std::string& field) const;  // nullptr unless it is a pivot

Q_SIGNALS:
    void startRequested();
    void stopRequested();

private:
    // The study columns the table shows beside every sweep's.
    struct StudyColumns {
        bool warmup = false;   // first and second step
        bool speedup = false;  // against fp32
        bool peak = false;     // measured peak memory
        std::vector<PrecisionStudyRow> precision;
    };

    void createFields();
    QWidget* createOtherAxes();
    void createForm();
    QLayout* createButtons();
    void createTable();
    QWidget* createChart();
    void onStudyChanged();
    void rebuildTable();
    StudyColumns studyColumns(const std::vector<std::string>& varying) const;
    void addTableRow(size_t i, const StudyColumns& study);
    void rebuildChartControls();
    void redrawChart();
    std::vector<const RunResult*> finishedPoints() const;
    void keepResult(size_t row, const RunResult& result);

    QComboBox* study_;
    QLabel* studyHelp_;
    QFormLayout* form_;
    QLineEdit *models_, *contexts_, *modes_, *precisions_, *warmups_;
    QPushButton* axesToggle_;
    QHBoxLayout* axesToggleRow_;
    QWidget* axesBox_;
    std::map<std::string, QLineEdit*> axisEdits_;
    QCheckBox* isolate_;
    QPushButton *start_, *stop_;
    QLabel* status_;
    QTableWidget* table_;
    std::vector<std::string> axisColumns_;  // the varying fields beyond the first four
    QComboBox* xAxis_;
    QHBoxLayout* pivots_;
    std::map<std::string, QComboBox*> heldBoxes_;
    std::vector<std::string> chartFields_;  // the varying fields the controls were built for
    QCustomPlot* plot_;

    // One row per point: its config, and its result once it has one
    // (without its traces) with the measured peak where memory was traced.
    std::vector<RunConfig> configs_;
    std::vector<std::optional<RunResult>> results_;
    std::vector<std::optional<int64_t>> peaks_;
    std::vector<bool> fits_;
    std::optional<int64_t> availableBytes_;
    QString outDir_;  // where the sweep being run writes
    int done_ = 0;
};

}  // namespace stepscope::ui
