#include "views/parts/trace_ranks_panel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>

#include "models/run_document.h"
#include "views/parts/trace_steps_panel.h"
#include "widgets/kernel_type_colors.h"
#include "widgets/read_only_table.h"
#include "widgets/table_items.h"

namespace stepscope::ui {

namespace {

QStandardItem* microseconds(double us, double percent = -1) {
    const QString text = percent < 0
                             ? QString::number(us, 'f', 1)
                             : QString("%1 (%2%)").arg(us, 0, 'f', 1).arg(percent, 0, 'f', 1);
    return numberItem(us, text);
}

QList<QStandardItem*> rankRow(const RankAnalysis& rank, bool shown) {
    QStringList slowest;
    for (const StepTime& step : rank.steps) {
        if (step.slowest && step.analysed) {
            slowest << QString::number(step.step);
        }
    }
    auto* rankItem = numberItem(qlonglong(rank.rank));
    if (shown) {
        QFont bold = rankItem->font();
        bold.setBold(true);
        rankItem->setFont(bold);
    }
    QList<QStandardItem*> row{rankItem, microseconds(rank.meanStepUs)};
    if (rank.temporal) {
        const TemporalBreakdown& t = *rank.temporal;
        row << microseconds(t.idleUs, t.percentOf(t.idleUs))
            << microseconds(t.computeUs, t.percentOf(t.computeUs))
            << microseconds(t.nonComputeUs, t.percentOf(t.nonComputeUs));
    } else {
        row << new QStandardItem("–") << new QStandardItem("–") << new QStandardItem("–");
    }
    row << microseconds(rank.communication.communicationUs)
        << new QStandardItem(slowest.isEmpty() ? QString() : slowest.join(", "));
    return row;
}

}  // namespace

TraceRanksPanel::TraceRanksPanel(QWidget* parent) : QWidget(parent) {
    summary_ = new QLabel;
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    ranks_ = new QStandardItemModel(this);
    // One figure a step beside four over the whole trace: each header says which.
    ranks_->setHorizontalHeaderLabels({tr("rank"), tr("µs per step (mean)"), tr("idle µs (total)"),
                                       tr("compute µs (total)"), tr("non-compute µs (total)"),
                                       tr("communication µs (total)"), tr("slowest in steps")});
    ranks_->horizontalHeaderItem(1)->setToolTip(
        tr("The mean of the rank's analysed profiler steps (ProfilerStep#N on the host)"));
    for (int column = 2; column <= 5; ++column) {
        ranks_->horizontalHeaderItem(column)->setToolTip(
            tr("Summed over the whole trace, from its first device event to its last, every "
               "stream merged (HTA's temporal breakdown); the share is of that span"));
    }
    ranks_->horizontalHeaderItem(6)->setToolTip(
        tr("The profiler steps in which this rank was the slowest of the recording"));
    types_ = new QStandardItemModel(this);
    types_->setHorizontalHeaderLabels({tr("µs"), tr("kernel type (HTA)")});
    QTableView* ranks = readOnlyTable(ranks_);
    ranks->verticalHeader()->hide();
    ranks->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    QTableView* types = readOnlyTable(types_);
    types->verticalHeader()->hide();
    types->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    steps_ = new TraceStepsPanel;
    // The ranks over the shown rank's steps: a table each, the split movable.
    auto* left = new QSplitter(Qt::Vertical);
    left->addWidget(ranks);
    left->addWidget(steps_);
    left->setChildrenCollapsible(false);
    auto* tables = new QHBoxLayout;
    tables->addWidget(left, 3);
    tables->addWidget(types, 2);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(summary_);
    layout->addLayout(tables);
    setMaximumHeight(300);
    hide();
}

QString TraceRanksPanel::summaryText() const {
    return summary_->text();
}

void TraceRanksPanel::showRun(const RunDocument* document) {
    ranks_->removeRows(0, ranks_->rowCount());
    types_->removeRows(0, types_->rowCount());
    steps_->showRun(document);
    const TraceRank* trace = document ? document->trace() : nullptr;
    setVisible(trace != nullptr);
    if (!trace) {
        return;
    }
    const RankAnalysis* shown = nullptr;
    for (const RankAnalysis& rank : trace->all()) {
        ranks_->appendRow(rankRow(rank, rank.rank == trace->rank));
        if (rank.rank == trace->rank) {
            shown = &rank;
        }
    }
    if (!shown) {
        return;
    }
    for (const KernelTypeTime& type : shown->kernelTypes) {
        auto* name = new QStandardItem(QString::fromStdString(type.name));
        name->setData(categoryOrKernelTypeColor(name->text()), Qt::DecorationRole);
        types_->appendRow({microseconds(type.us), name});  // µs first: the names run long
    }
    const LaunchStatistics& l = shown->launch;
    summary_->setText(
        tr("PyTorch profiler trace, rank %1 of %2 (%3), analysed as Holistic Trace Analysis "
           "does: %4 launches, mean launch delay %5 µs; %6 kernels shorter than their launch "
           "(launch-bound), %7 started over %8 µs late.")
            .arg(shown->rank)
            .arg(trace->rankCount())
            .arg(QString::fromStdString(shown->file))
            .arg(l.launches.size())
            .arg(l.launches.empty() ? 0.0 : l.delayTotalUs / double(l.launches.size()), 0, 'f', 1)
            .arg(l.shortKernels)
            .arg(l.delayOutliers)
            .arg(l.launchDelayCutoffUs, 0, 'f', 0));
}

}  // namespace stepscope::ui
