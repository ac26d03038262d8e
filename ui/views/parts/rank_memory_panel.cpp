#include "views/parts/rank_memory_panel.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>

#include <optional>

#include "models/format.h"
#include "models/run_document.h"
#include "widgets/column_fit.h"
#include "widgets/plot_style.h"
#include "widgets/read_only_table.h"
#include "widgets/table_items.h"

namespace stepscope::ui {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// The marks in the order a step passes them, then the peak.
std::optional<int64_t> markOf(const RankMemoryMarks& memory, int mark) {
    switch (mark) {
        case 0:
            return memory.afterInitBytes;
        case 1:
            return memory.beforeOptimizerBytes;
        case 2:
            return memory.afterOptimizerBytes;
        default:
            return memory.peakBytes;
    }
}

}  // namespace

RankMemoryPanel::RankMemoryPanel(QWidget* parent) : QWidget(parent) {
    caption_ = new QLabel;
    caption_->setWordWrap(true);
    caption_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    rankBox_ = new QComboBox;
    rankBox_->setToolTip(tr("The rank whose memory is shown, or every rank side by side"));
    connect(rankBox_, &QComboBox::currentIndexChanged, this, [this] { draw(); });
    plot_ = new QCustomPlot;
    stylePlot(plot_, QString(), tr("memory (MiB)"));
    keepSaneSize(plot_);
    plot_->setMinimumHeight(180);
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    ticker->addTick(0, tr("after\ninit"));
    ticker->addTick(1, tr("before\nopt. step"));
    ticker->addTick(2, tr("after\nopt. step"));
    ticker->addTick(3, tr("peak"));
    plot_->xAxis->setTicker(ticker);
    plot_->xAxis->setRange(-0.6, 3.6);
    categories_ = new QStandardItemModel(this);
    auto* table = readOnlyTable(categories_);
    table->verticalHeader()->hide();
    new ColumnFit(table);

    auto* row = new QHBoxLayout;
    row->addWidget(new QLabel(tr("Rank")));
    row->addWidget(rankBox_);
    row->addStretch(1);
    auto* splitter = new QSplitter(Qt::Horizontal);
    splitter->addWidget(plot_);
    splitter->addWidget(table);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(caption_);
    layout->addLayout(row);
    layout->addWidget(splitter, 1);
}

bool RankMemoryPanel::showRun(const RunDocument* document) {
    const bool ranks =
        document && document->result.distributed && !document->result.distributed->ranks.empty();
    document_ = ranks ? document : nullptr;
    const QSignalBlocker quiet(rankBox_);
    const int chosen = rankBox_->currentIndex();
    rankBox_->clear();
    if (ranks) {
        rankBox_->addItem(tr("every rank"), -1);
        for (const RankRecord& rank : document->result.distributed->ranks) {
            rankBox_->addItem(tr("rank %1").arg(rank.rank), rank.rank);
        }
        rankBox_->setCurrentIndex(chosen >= 0 && chosen < rankBox_->count() ? chosen : 0);
        caption_->setText(
            tr("Each rank's memory after init, before the optimizer step and after it, and its "
               "peak; by category after its last step. On a GPU the allocator's bytes; on the "
               "CPU the bytes of the tensors it holds (parameters, gradients, optimizer state). "
               "“Not known”: what cannot be measured there (activations on the CPU, "
               "communication buffers)."));
    }
    draw();
    return ranks;
}

int RankMemoryPanel::barsShown() const {
    return plot_->plottableCount();
}

void RankMemoryPanel::draw() {
    plot_->clearPlottables();
    categories_->clear();
    if (!document_) {
        plot_->replot();
        return;
    }
    const int wanted = rankBox_->currentData().toInt();
    std::vector<const RankRecord*> shown;
    for (const RankRecord& rank : document_->result.distributed->ranks) {
        if (wanted < 0 || rank.rank == wanted) {
            shown.push_back(&rank);
        }
    }
    auto* group = new QCPBarsGroup(plot_);
    QStringList headers{tr("category")};
    double top = 0;
    for (size_t i = 0; i < shown.size(); ++i) {
        auto* bars = new QCPBars(plot_->xAxis, plot_->yAxis);
        bars->setName(tr("rank %1").arg(shown[i]->rank));
        bars->setBrush(seriesColor(int(i)));
        bars->setPen(Qt::NoPen);
        bars->setWidth(0.8 / double(shown.size()));
        bars->setBarsGroup(group);
        for (int mark = 0; mark < 4; ++mark) {
            if (const auto bytes = markOf(shown[i]->memory, mark)) {
                bars->addData(mark, double(*bytes) / kMiB);
                top = std::max(top, double(*bytes) / kMiB);
            }
        }
        headers << tr("rank %1").arg(shown[i]->rank);
    }
    plot_->legend->setVisible(shown.size() > 1);
    plot_->yAxis->setRange(0, top > 0 ? top * 1.15 : 1);
    categories_->setHorizontalHeaderLabels(headers);
    if (!shown.empty()) {
        for (const auto& [category, unused] : shown.front()->memory.byCategory) {
            QList<QStandardItem*> row{
                new QStandardItem(QString::fromStdString(category).replace('_', ' '))};
            for (const RankRecord* rank : shown) {
                std::optional<int64_t> bytes;
                for (const auto& [name, value] : rank->memory.byCategory) {
                    if (name == category) {
                        bytes = value;
                    }
                }
                row << (bytes ? bytesItem(*bytes) : new QStandardItem(tr("not known")));
            }
            categories_->appendRow(row);
        }
    }
    plot_->replot();
}

}  // namespace stepscope::ui
