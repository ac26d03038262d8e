#pragma once

#include <QWidget>
#include <functional>
#include <vector>

#include "experiments/dtype_flow.h"

class QComboBox;
class QLabel;
class QPushButton;
class QSpinBox;
class QStandardItemModel;

namespace stepscope::ui {

// The two mixed-precision tools: what autocast produces for a model (the
// dtype of parameters, each module's output, loss and gradients), and what
// fp32, fp16 and bf16 accumulators make of summing 0.01 many times. Both run
// off the UI thread.
class PrecisionPage final : public QWidget {
    Q_OBJECT

public:
    explicit PrecisionPage(QWidget* parent = nullptr);

    void inspectDtypes(const QString& model, const QString& precision);
    // Shows a dtype flow saved by `stepscope-cli dtypes --json` (a JSON array
    // of {what, kind, dtype}). False, with `error` set and nothing changed,
    // for a file that is not one.
    bool openDtypeFlowFile(const QString& path, QString* error);
    // Shows a dtype flow read from `path` (models/dtype_flow_file.h).
    void showDtypeFlow(const std::vector<DtypeRow>& rows, const QString& path);
    void accumulate(int count);
    QStandardItemModel* dtypeModel() const { return dtypes_; }
    QStandardItemModel* accumulationModel() const { return sums_; }
    // What the accumulation table shows, said under it (accumulationNote).
    QString accumulationText() const;
    bool busy() const { return running_ > 0; }

Q_SIGNALS:
    void finished();  // either tool

private:
    void showDtypeRows(const std::vector<DtypeRow>& rows, const QString& source);
    // Runs `work` on a worker thread and `done` back on this page's thread.
    void runInBackground(std::function<std::function<void()>()> work);

    QComboBox* model_;
    QComboBox* precision_;
    QPushButton* inspect_;
    QSpinBox* count_;
    QPushButton* sum_;
    QLabel* status_;
    QLabel* sumNote_;  // under the accumulation table, from its rows
    QStandardItemModel* dtypes_;
    QStandardItemModel* sums_;
    int running_ = 0;
};

}  // namespace stepscope::ui
