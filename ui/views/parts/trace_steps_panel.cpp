#include "views/parts/trace_steps_panel.h"

#include <QHeaderView>
#include <QLabel>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>

#include "models/run_document.h"
#include "widgets/read_only_table.h"
#include "widgets/table_items.h"

namespace stepscope::ui {

TraceStepsPanel::TraceStepsPanel(QWidget* parent) : QWidget(parent) {
    steps_ = new QStandardItemModel(this);
    steps_->setHorizontalHeaderLabels(
        {tr("step"), tr("µs"), tr("kernels"), tr("kernel µs"), tr("note")});
    steps_->horizontalHeaderItem(StepColumn)->setToolTip(tr("ProfilerStep#N"));
    steps_->horizontalHeaderItem(KernelsColumn)
        ->setToolTip(tr("Kernels, memcpys and memsets launched within the step (HTA's iteration)"));
    steps_->horizontalHeaderItem(KernelTimeColumn)->setToolTip(tr("Their device time"));
    steps_->horizontalHeaderItem(NoteColumn)
        ->setToolTip(tr("Slowest rank: no other rank took longer over this step. Left out: "
                        "the last step, which HTA's analyses leave out (its kernels may be cut "
                        "off by the end of the recording)."));
    QTableView* table = readOnlyTable(steps_);
    table->verticalHeader()->hide();
    table->setWordWrap(false);
    table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(table);
    hide();
}

void TraceStepsPanel::showRun(const RunDocument* document) {
    steps_->removeRows(0, steps_->rowCount());
    const TraceRank* trace = document ? document->trace() : nullptr;
    setVisible(trace != nullptr);
    if (!trace) {
        return;
    }
    const bool severalRanks = trace->rankCount() > 1;
    for (const RankAnalysis& rank : trace->all()) {
        if (rank.rank != trace->rank) {
            continue;
        }
        for (const StepTime& step : rank.steps) {
            QStringList notes;
            if (severalRanks && step.slowest) {
                notes << tr("slowest rank");
            }
            if (!step.analysed) {
                notes << tr("left out");
            }
            steps_->appendRow(
                {numberItem(qlonglong(step.step)),
                 numberItem(step.durationUs, QString::number(step.durationUs, 'f', 1)),
                 numberItem(qlonglong(step.kernels)),
                 numberItem(step.kernelUs, QString::number(step.kernelUs, 'f', 1)),
                 new QStandardItem(notes.join("; "))});
        }
    }
}

}  // namespace stepscope::ui
