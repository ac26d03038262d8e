#pragma once

#include <QList>
#include <QString>
#include <QWidget>

#include "results/collective_file.h"
#include "widgets/run_view.h"

class QComboBox;
class QCustomPlot;
class QLabel;
class QStandardItemModel;

namespace stepscope::ui {

// A collective benchmark's file (`stepscope-cli collective --out`): time or
// bandwidth against size for the chosen op, log axes, a line per rank count
// (rows that did not fit marked at the bottom), and every row in a table with
// nccl-tests' figures and what the backend did (gloo's reduce_scatter is an
// all-reduce of the whole tensor).
class CollectivePage final : public QWidget {
    Q_OBJECT

public:
    enum Metric { Time, AlgBandwidth, BusBandwidth };
    enum Column {
        OpColumn,
        SizeColumn,
        RanksColumn,
        StatusColumn,
        TimeColumn,
        AlgbwColumn,
        BusbwColumn,
        NotesColumn,
        ColumnCount
    };

    explicit CollectivePage(QWidget* parent = nullptr);
    void showFile(const CollectiveFile& file, const QString& source = QString());
    QList<ExportTarget> exportTargets();

    QComboBox* opBox() const { return op_; }
    QComboBox* metricBox() const { return metric_; }
    QCustomPlot* plot() const { return plot_; }
    QStandardItemModel* rowsModel() const { return rows_; }
    QString captionText() const;

private:
    void draw();
    void fillTable();

    QLabel* caption_;
    QComboBox* op_;
    QComboBox* metric_;
    QCustomPlot* plot_;
    QStandardItemModel* rows_;
    CollectiveFile file_;
};

}  // namespace stepscope::ui
