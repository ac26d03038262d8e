#include "views/parts/rank_compare_page.h"

#include <QHeaderView>
#include <QLabel>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>

#include <optional>
#include <set>

#include "analysis/trace_ranks.h"
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

namespace {

QList<QStandardItem*> rankRow(const QString& name, const RankRecord& rank) {
    const RankStepFigures f = perMeasuredStep(rank);
    QList<QStandardItem*> row{new QStandardItem(name), numberItem(qlonglong(f.rank))};
    row << (f.stepMs ? numberItem(*f.stepMs, formatMs(*f.stepMs)) : new QStandardItem("–"));
    row << numberItem(f.communicationMs, formatMs(f.communicationMs));
    row << numberItem(f.exposedMs, formatMs(f.exposedMs));
    row << numberItem(f.overlapPercent, formatPercent(f.overlapPercent / 100));
    row << numberItem(f.waitMs, formatMs(f.waitMs));
    row << (f.peakBytes ? bytesItem(*f.peakBytes) : new QStandardItem("–"));
    return row;
}

// A run of one process: its step, nothing across ranks.
QList<QStandardItem*> processRow(const QString& name, const RunResult& result) {
    const auto step = result.summary.total.count
                          ? std::optional<double>(result.summary.total.median)
                          : std::nullopt;
    QList<QStandardItem*> row{new QStandardItem(name), numberItem(qlonglong(0)),
                              step ? numberItem(*step, formatMs(*step)) : new QStandardItem("–")};
    for (int column = RankComparePage::CommunicationColumn; column < RankComparePage::ColumnCount;
         ++column) {
        row << new QStandardItem("–");
    }
    return row;
}

}  // namespace

bool RankComparePage::showRuns(const QList<const RunDocument*>& runs, const QStringList& names) {
    model_->setRowCount(0);
    bool distributed = false;
    std::set<const void*> recordings;  // a trace's ranks once, whichever of its ranks is ticked
    for (qsizetype i = 0; i < runs.size(); ++i) {
        std::optional<DistributedRun> fromTrace;
        const DistributedRun* ranks = nullptr;
        if (const TraceRank* trace = runs[i]->trace()) {
            if (!recordings.insert(&trace->all()).second) {
                continue;
            }
            fromTrace = distributedRunOfTrace(trace->all());
            ranks = &*fromTrace;
        } else if (runs[i]->result.distributed) {
            ranks = &*runs[i]->result.distributed;
        }
        if (!ranks || ranks->ranks.empty()) {
            model_->appendRow(processRow(names.value(i), runs[i]->result));
            continue;
        }
        distributed = true;
        for (const RankRecord& rank : ranks->ranks) {
            model_->appendRow(rankRow(names.value(i), rank));
        }
    }
    return distributed;
}

}  // namespace stepscope::ui
