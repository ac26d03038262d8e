#include "views/parts/rank_compare_page.h"

#include <QHeaderView>
#include <QLabel>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>

#include "models/format.h"
#include "models/run_document.h"
#include "results/rank_figures.h"
#include "widgets/column_fit.h"
#include "widgets/read_only_table.h"
#include "widgets/table_items.h"

namespace stepscope::ui {

RankComparePage::RankComparePage(QWidget* parent) : QWidget(parent) {
    auto* hint = new QLabel(
        tr("Each run's ranks, per measured step: its step (the median), the communication, "
           "what of it no compute hid (exposed), HTA's overlap, its wait on the other ranks, and "
           "its peak memory over the run."));
    hint->setWordWrap(true);
    model_ = new QStandardItemModel(0, ColumnCount, this);
    model_->setHorizontalHeaderLabels({tr("run"), tr("rank"), tr("step\nms"), tr("comm\nms"),
                                       tr("exposed\nms"), tr("overlap"), tr("wait\nms"),
                                       tr("peak\nmemory")});
    view_ = readOnlyTable(model_);
    view_->verticalHeader()->hide();
    new ColumnFit(view_, {RunColumn});
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(hint);
    layout->addWidget(view_, 1);
}

bool RankComparePage::showRuns(const QList<const RunDocument*>& runs, const QStringList& names) {
    model_->setRowCount(0);
    bool distributed = false;
    for (qsizetype i = 0; i < runs.size(); ++i) {
        const RunResult& result = runs[i]->result;
        if (!result.distributed || result.distributed->ranks.empty()) {
            auto* name = new QStandardItem(names.value(i));
            const auto step = result.summary.total.count
                                  ? std::optional<double>(result.summary.total.median)
                                  : std::nullopt;
            QList<QStandardItem*> row{
                name, numberItem(qlonglong(0)),
                step ? numberItem(*step, formatMs(*step)) : new QStandardItem("–")};
            for (int column = CommunicationColumn; column < ColumnCount; ++column) {
                row << new QStandardItem("–");
            }
            model_->appendRow(row);
            continue;
        }
        distributed = true;
        for (const RankRecord& rank : result.distributed->ranks) {
            const RankStepFigures f = perMeasuredStep(rank);
            QList<QStandardItem*> row{new QStandardItem(names.value(i)),
                                      numberItem(qlonglong(f.rank))};
            row << (f.stepMs ? numberItem(*f.stepMs, formatMs(*f.stepMs)) : new QStandardItem("–"));
            row << numberItem(f.communicationMs, formatMs(f.communicationMs));
            row << numberItem(f.exposedMs, formatMs(f.exposedMs));
            row << numberItem(f.overlapPercent, formatPercent(f.overlapPercent / 100));
            row << numberItem(f.waitMs, formatMs(f.waitMs));
            row << (f.peakBytes ? bytesItem(*f.peakBytes) : new QStandardItem("–"));
            model_->appendRow(row);
        }
    }
    return distributed;
}

}  // namespace stepscope::ui
