#include "views/parts/saved_view.h"

#include <qcustomplot.h>

#include <QLabel>
#include <QMouseEvent>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>
#include <stdexcept>

#include "models/format.h"
#include "models/memory_index.h"
#include "widgets/plot_style.h"
#include "widgets/read_only_table.h"
#include "widgets/table_items.h"

namespace stepscope::ui {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// "aten::mm 41%, aten::_softmax 25%, …"
QString producersText(const BlockSaved& block) {
    QStringList parts;
    for (const SavedByOp& op : block.top) {
        parts << QString("%1 %2").arg(QString::fromStdString(op.op), formatPercent(op.share));
    }
    return parts.join(", ");
}

}  // namespace

SavedView::SavedView(QWidget* parent) : QWidget(parent) {
    caption_ = new QLabel;
    caption_->setWordWrap(true);
    caption_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    plot_ = new QCustomPlot;
    stylePlot(plot_, tr("block (layers.N)"), tr("MiB"));
    auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
    ticker->setTickStep(1);  // whole blocks; multiples of them when crowded
    ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    plot_->xAxis->setTicker(ticker);
    savedBars_ = new QCPBars(plot_->xAxis, plot_->yAxis);
    savedBars_->setName(tr("saved for backward"));
    gradientBars_ = new QCPBars(plot_->xAxis, plot_->yAxis);
    gradientBars_->setName(tr("gradients its backward makes"));
    // In this order the saved bar, the view's figure, is the left one of each pair.
    const std::pair<QCPBars*, MemoryCategory> colours[] = {
        {savedBars_, MemoryCategory::Activations}, {gradientBars_, MemoryCategory::Gradients}};
    auto* group = new QCPBarsGroup(plot_);
    for (const auto& [bars, category] : colours) {
        QColor fill = memoryColor(category);
        bars->setPen(QPen(fill.darker(130)));
        fill.setAlpha(190);
        bars->setBrush(fill);
        bars->setWidth(0.4);
        bars->setBarsGroup(group);
        // Selected by selectBlock only: a click picks a block, not a bar.
        bars->setSelectable(QCP::stSingleData);
        bars->selectionDecorator()->setPen(QPen(QColor(20, 20, 20), 2));
        bars->selectionDecorator()->setBrush(fill.darker(115));
    }
    connect(plot_, &QCustomPlot::mousePress, this, [this](QMouseEvent* event) {
        if (const int block = blockAt(event->position()); block >= 0) {
            selectBlock(block);
        }
    });

    blocks_ = new QStandardItemModel(this);
    tensors_ = new QStandardItemModel(this);
    picked_ = new QLabel;
    picked_->setWordWrap(true);
    picked_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    tensorTable_ = readOnlyTable(tensors_);
    tensorTable_->setWordWrap(false);
    auto* list = new QWidget;
    auto* listLayout = new QVBoxLayout(list);
    listLayout->setContentsMargins(0, 0, 0, 0);
    listLayout->addWidget(picked_);
    listLayout->addWidget(tensorTable_, 1);
    auto* splitter = new QSplitter(Qt::Horizontal);
    splitter->addWidget(plot_);
    splitter->addWidget(list);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(caption_);
    layout->addWidget(splitter, 1);
    showRun(nullptr, nullptr);
}

QString SavedView::caption() const {
    return caption_->text();
}

void SavedView::showRun(const RunResult* run, const MemoryIndex* index,
                        const SavedBlocks* prepared) {
    index_ = index;
    saved_ = SavedForBackward{};
    members_.clear();
    selected_ = -1;
    QString why;
    if (!run || !index) {
        why = tr("Needs a run with a memory trace (“Trace memory”) and a backward.");
    } else {
        // The tensors behind each bar, by their place in the memory view's index.
        SavedBlocks blocks = prepared ? *prepared : savedBlocks(*run, *index);
        if (!blocks.error.empty()) {
            why = tr("Nothing to show: %1.").arg(QString::fromStdString(blocks.error));
        }
        saved_ = std::move(blocks.saved);
        members_ = std::move(blocks.members);
        if (why.isEmpty() && saved_.blocks.empty()) {
            // Not the last run's axes under no bars: they would read as this one's.
            why =
                tr("Nothing to show: no block (layers.N) of this recording kept tensors for "
                   "backward; a run of ours with “Trace memory” and a backward names them.");
        }
    }
    members_.resize(saved_.blocks.size());
    caption_->setText(
        why.isEmpty()
            ? tr("What each block keeps for backward in step %1: the tensors its forward made "
                 "that were still alive when backward began, each storage once (a block's "
                 "output counts with it; a checkpointed group keeps only its input). Beside "
                 "each, the gradients its backward makes for its parameters. Click a bar to "
                 "list the block's tensors and see them on the timeline.")
                  .arg(saved_.step)
            : why);
    setNoData(plot_, why.isEmpty() ? QString() : tr("Nothing saved for backward to show"));
    fillBlocks();
    fillTensors();
    plot_->replot();
}

void SavedView::fillBlocks() {
    blocks_->clear();
    blocks_->setHorizontalHeaderLabels(
        {tr("block"), tr("saved"), tr("tensors"), tr("largest producers"), tr("gradients")});
    QVector<double> keys, saved, gradients;
    double highest = 0;
    for (size_t b = 0; b < saved_.blocks.size(); ++b) {
        const BlockSaved& block = saved_.blocks[b];
        keys << double(b);
        saved << double(block.bytes) / kMiB;
        gradients << double(block.gradientBytes) / kMiB;
        highest = std::max({highest, saved.back(), gradients.back()});
        blocks_->appendRow({new QStandardItem(QString::fromStdString(block.module)),
                            bytesItem(block.bytes), numberItem(qlonglong(block.tensors)),
                            new QStandardItem(producersText(block)),
                            bytesItem(block.gradientBytes)});
    }
    savedBars_->setData(keys, saved, true);
    gradientBars_->setData(keys, gradients, true);
    savedBars_->setSelection(QCPDataSelection());
    gradientBars_->setSelection(QCPDataSelection());
    if (!keys.isEmpty()) {
        plot_->xAxis->setRange(-0.6, double(keys.size()) - 0.4);
        plot_->yAxis->setRange(0, highest > 0 ? highest * 1.15 : 1);
    }
}

void SavedView::fillTensors() {
    tensors_->clear();
    tensors_->setHorizontalHeaderLabels(
        {tr("size"), tr("op"), tr("module"), tr("made at ms"), tr("alive ms")});
    if (selected_ < 0) {
        picked_->setText(saved_.blocks.empty() ? QString()
                                               : tr("Click a block's bar to list its tensors."));
        return;
    }
    const BlockSaved& block = saved_.blocks[size_t(selected_)];
    picked_->setText(tr("%1 keeps %2 in %3 for backward; made by %4. Its backward makes %5 of "
                        "gradients.")
                         .arg(QString::fromStdString(block.module), bytesText(block.bytes),
                              countText(block.tensors, tr("tensor")),
                              block.top.empty() ? tr("nothing") : producersText(block),
                              bytesText(block.gradientBytes)));
    for (const uint32_t a : members_[size_t(selected_)]) {
        const MemoryAllocation& allocation = index_->allocations()[a];
        const double lifeMs = (index_->endOf(a) - allocation.startUs) / 1e3;
        tensors_->appendRow(
            {bytesItem(allocation.bytes),
             new QStandardItem(index_->op(a).empty() ? tr("(not recorded)")
                                                     : QString::fromStdString(index_->op(a))),
             new QStandardItem(QString::fromStdString(index_->path(a))),
             numberItem(allocation.startUs / 1e3,
                        QString::number(allocation.startUs / 1e3, 'f', 3)),
             numberItem(lifeMs, QString::number(lifeMs, 'f', 3))});
    }
    tensorTable_->resizeColumnsToContents();
}

void SavedView::selectBlock(int block) {
    selected_ = block >= 0 && size_t(block) < saved_.blocks.size() ? block : -1;
    const QCPDataSelection selection =
        selected_ >= 0 ? QCPDataSelection(QCPDataRange(selected_, selected_ + 1))
                       : QCPDataSelection();
    savedBars_->setSelection(selection);
    gradientBars_->setSelection(selection);
    fillTensors();
    plot_->replot();
    Q_EMIT blockPicked(selected_ >= 0 ? members_[size_t(selected_)] : std::vector<uint32_t>{});
}

int SavedView::blockAt(const QPointF& position) const {
    int dataIndex = -1;
    const QCPAbstractPlottable* bars = plot_->plottableAt(position, false, &dataIndex);
    return bars == savedBars_ || bars == gradientBars_ ? dataIndex : -1;
}

}  // namespace stepscope::ui
