#include "views/breakdown_view.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMouseEvent>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTableView>
#include <QToolTip>
#include <QVBoxLayout>
#include <functional>
#include <map>
#include <set>

#include "models/format.h"
#include "models/missing_records.h"
#include "models/run_document.h"
#include "views/parts/trace_ranks_panel.h"
#include "widgets/column_fit.h"
#include "widgets/kernel_type_colors.h"
#include "widgets/plot_style.h"
#include "widgets/read_only_table.h"
#include "widgets/table_items.h"
#include "widgets/thinned_ticker.h"

namespace stepscope::ui {

namespace {

const char* kPhases[] = {"forward", "backward", "optimizer"};

QStandardItem* textItem(const std::string& value) {
    auto* item = new QStandardItem(QString::fromStdString(value));
    item->setData(item->text(), Qt::UserRole);
    return item;
}

// A category's cell with the colour the charts give it.
QStandardItem* categoryItem(const std::string& category) {
    QStandardItem* item = textItem(category);
    if (!category.empty()) {
        item->setData(categoryOrKernelTypeColor(item->text()), Qt::DecorationRole);
    }
    return item;
}

// The analyses of the rank a trace's document shows; nullptr for a run.
const RankAnalysis* shownRank(const RunDocument* document) {
    const TraceRank* trace = document ? document->trace() : nullptr;
    return trace ? trace->shown() : nullptr;
}

// A trace's kernels per stream, as the kernel rows are: the stream in the
// phase column, the share of the rank's device time.
std::vector<BreakdownRow> streamRows(const RankAnalysis& rank, size_t measuredSteps) {
    std::vector<BreakdownRow> rows;
    for (const KernelStats& kernel : rank.kernelsPerStream) {
        BreakdownRow row;
        row.name = kernel.name;
        row.category = std::string(toString(kernel.type));
        row.phase = "stream " + std::to_string(kernel.stream);
        row.calls = kernel.calls;
        row.totalMs = kernel.totalUs / 1e3;
        row.msPerStep = measuredSteps ? row.totalMs / double(measuredSteps) : row.totalMs;
        row.share = kernel.share;
        rows.push_back(std::move(row));
    }
    return rows;
}

// Share of each category in the rows of one phase ("all": every phase).
std::map<std::string, double> categoryShares(const std::vector<TimeRow>& rows,
                                             const std::string& phase) {
    std::map<std::string, double> shares;
    double total = 0;
    for (const auto& row : rows) {
        if (phase == "all" || row.phase == phase) {
            shares[row.category] += row.totalMs;
            total += row.totalMs;
        }
    }
    for (auto& [category, value] : shares) {
        value = total > 0 ? value / total : 0;
    }
    return shares;
}

// The table as the view shows it: the columns it hides stay out of exports.
class ShownColumns final : public QSortFilterProxyModel {
public:
    ShownColumns(std::function<bool(int)> shown, QObject* parent)
        : QSortFilterProxyModel(parent), shown_(std::move(shown)) {}
    void refilter() { invalidateFilter(); }

protected:
    bool filterAcceptsColumn(int column, const QModelIndex&) const override {
        return shown_(column);
    }

private:
    std::function<bool(int)> shown_;
};

}  // namespace

BreakdownView::BreakdownView(QWidget* parent) : RunView(parent) {
    by_ = new QComboBox;
    by_->addItems({"kernel", "op", "category", "stream"});
    by_->setCurrentText("op");
    phase_ = new QComboBox;
    phase_->addItems({"all", "forward", "backward", "optimizer"});
    empty_ = new QLabel;
    empty_->setWordWrap(true);

    createTables();
    createCharts();
    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Group by")));
    controls->addWidget(by_);
    controls->addWidget(new QLabel(tr("Phase")));
    controls->addWidget(phase_);
    controls->addStretch();
    auto* charts = new QSplitter(Qt::Horizontal);
    charts->addWidget(top_);
    charts->addWidget(shares_);
    charts->setStretchFactor(0, 3);  // the top rows' names need the room
    charts->setStretchFactor(1, 2);
    charts->setChildrenCollapsible(false);
    // A tab each: side by side on a laptop's width, the FLOP table's
    // columns ran past its edge and the names beside it were elided.
    tables_ = new QTabWidget;
    tables_->addTab(table_, tr("Where the time went"));
    tables_->addTab(flopTable_, tr("FLOP per forward group"));
    auto* splitter = new QSplitter(Qt::Vertical);
    splitter->addWidget(tables_);
    splitter->addWidget(charts);
    // Short of height, the tables give way first: they scroll, the shares'
    // legend and bars need room a chart cannot scroll to.
    keepDataReadable(top_);
    keepDataReadable(shares_);
    splitter->setChildrenCollapsible(false);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(empty_);
    tracePanel_ = new TraceRanksPanel;
    layout->addWidget(tracePanel_);
    layout->addWidget(splitter, 1);

    connect(by_, &QComboBox::currentIndexChanged, this, &BreakdownView::refresh);
    connect(phase_, &QComboBox::currentIndexChanged, this, &BreakdownView::refresh);
    refresh();
}

// The rows, sortable, the name column elided; the FLOP groups.
void BreakdownView::createTables() {
    model_ = new QStandardItemModel(this);
    sorted_ = new QSortFilterProxyModel(this);
    sorted_->setSourceModel(model_);
    sorted_->setSortRole(Qt::UserRole);
    table_ = readOnlyTable(sorted_);
    table_->setSortingEnabled(true);
    table_->setWordWrap(false);
    table_->setTextElideMode(Qt::ElideMiddle);  // a kernel's name and its arguments' end
    table_->verticalHeader()->hide();           // row numbers say nothing the order does not
    // The figures keep their width; the name takes what is left, elided, whole on hover.
    columns_ = new ColumnFit(table_, {NameColumn}, kMinNameWidth);
    exported_ =
        new ShownColumns([this](int column) { return !table_->isColumnHidden(column); }, this);
    exported_->setSourceModel(sorted_);

    flops_ = new QStandardItemModel(this);
    flopTable_ = readOnlyTable(flops_);
    // Group names and figures whole, on one line each: the rows' order is the model's.
    flopTable_->verticalHeader()->hide();
    flopTable_->setWordWrap(false);
    flopTable_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
}

// The top rows as bars, and the categories' shares per phase.
void BreakdownView::createCharts() {
    top_ = new QCustomPlot;
    stylePlot(top_, tr("total ms over the measured steps"), QString());
    removeLegend(top_);  // one series; its labels are the rows
    keepSaneSize(top_);
    top_->setMouseTracking(true);
    top_->installEventFilter(this);
    shares_ = new QCustomPlot;
    stylePlot(shares_, QString(), tr("share of traced time (%)"));
    keepSaneSize(shares_);
    shares_->setMouseTracking(true);
    shares_->installEventFilter(this);
}

void BreakdownView::setGrouping(const QString& by, const QString& phase) {
    by_->setCurrentText(by);
    phase_->setCurrentText(phase);
    refresh();
}

QAbstractItemModel* BreakdownView::tableModel() const {
    return sorted_;
}

QAbstractItemModel* BreakdownView::exportModel() const {
    return exported_;
}

void BreakdownView::showRun(const RunDocument* document) {
    document_ = document;
    tracePanel_->showRun(document);
    const bool trace = shownRank(document) != nullptr;
    // A trace has no FLOP groups: no tab for them.
    tables_->setTabVisible(tables_->indexOf(flopTable_), !trace);
    if (trace) {
        tables_->setCurrentWidget(table_);
    }
    const bool kernels = document && !document->result.kernels.empty();
    auto* items = qobject_cast<QStandardItemModel*>(by_->model());
    items->item(0)->setEnabled(kernels);
    items->item(3)->setEnabled(trace && kernels);  // streams: a trace's
    const bool operators = document && !document->result.operators.empty();
    {
        const QSignalBlocker blocker(by_);
        const QSignalBlocker phaseBlocker(phase_);
        if (!kernels && by_->currentText() == "kernel") {
            by_->setCurrentText("op");
        } else if (kernels && !operators && by_->currentText() == "op") {
            by_->setCurrentText("kernel");
        } else if ((!trace || !kernels) && by_->currentText() == "stream") {
            by_->setCurrentText(kernels ? "kernel" : "op");
        }
        if (trace) {
            phase_->setCurrentText("all");  // a trace's rows have no phase
        }
        phase_->setEnabled(!trace);
    }
    refresh();
}

void BreakdownView::refresh() {
    rows_.clear();
    model_->clear();
    flops_->clear();
    const RunResult* run = document_ ? &document_->result : nullptr;
    const bool traced = run && (!run->operators.empty() || !run->kernels.empty());
    empty_->setText(missingRecordsText(document_, Records::Operators));
    empty_->setVisible(!traced);
    const QString by = by_->currentText();
    if (traced) {
        if (by == "stream") {
            const RankAnalysis* rank = shownRank(document_);
            rows_ = rank ? streamRows(*rank, run->steps.size()) : std::vector<BreakdownRow>{};
        } else {
            try {
                // The CLI's computation, so both print the same figures.
                rows_ = breakdown(*run, phase_->currentText().toStdString(), by.toStdString());
            } catch (const std::invalid_argument&) {
                rows_.clear();  // a grouping the run has no records for
            }
        }
    }
    const QString noun = by == "kernel" || by == "stream" ? tr("kernel")
                         : by == "op"                     ? tr("operator")
                                                          : tr("category");
    model_->setHorizontalHeaderLabels(
        {noun, tr("category"), by == "stream" ? tr("stream") : tr("phase"), tr("calls"),
         tr("total\nms"), tr("ms /\nstep"), tr("mean ms\n/ call"),
         by == "stream" ? tr("share of\ndevice time") : tr("share of\nphase")});
    model_->horizontalHeaderItem(TotalColumn)->setToolTip(tr("Summed over the measured steps"));
    model_->horizontalHeaderItem(PerStepColumn)
        ->setToolTip(tr("Total over the measured steps, divided by their number"));
    model_->horizontalHeaderItem(ShareColumn)
        ->setToolTip(by == "stream" ? tr("Share of the rank's device time (HTA's)")
                                    : tr("Share of the traced time of the row's phase"));
    for (const auto& row : rows_) {
        auto* name = by == "category" ? categoryItem(row.name) : textItem(row.name);
        name->setToolTip(name->text());  // the cell elides long kernel names
        model_->appendRow(
            {name, categoryItem(row.category), textItem(row.phase),
             numberItem(double(row.calls), QString::number(row.calls)),
             numberItem(row.totalMs, QString::number(row.totalMs, 'f', 3)),
             numberItem(row.msPerStep, QString::number(row.msPerStep, 'f', 3)),
             numberItem(row.calls ? row.totalMs / double(row.calls) : 0,
                        QString::number(row.calls ? row.totalMs / double(row.calls) : 0, 'f', 4)),
             numberItem(row.share, formatPercent(row.share))});
    }
    // Grouped by category, the name is the category: show it once.
    table_->setColumnHidden(CategoryColumn, by == "category");
    // A trace's rows have no phase; grouped by stream the column names the stream.
    table_->setColumnHidden(PhaseColumn, document_ && document_->trace() && by != "stream");
    static_cast<ShownColumns*>(exported_)->refilter();
    table_->sortByColumn(TotalColumn, Qt::DescendingOrder);
    columns_->fit();
    flops_->setHorizontalHeaderLabels(
        {tr("forward group"), tr("GFLOP / step"), tr("ms / step"), tr("achieved")});
    if (run) {
        for (const auto& group : run->flopGroups) {
            const bool counted = group.flopsPerStep > 0;
            flops_->appendRow(
                {new QStandardItem(QString::fromStdString(group.group)),
                 numberItem(group.flopsPerStep,
                            counted ? QString::number(group.flopsPerStep / 1e9, 'f', 3) : "–"),
                 numberItem(group.msPerStep, formatMs(group.msPerStep)),
                 numberItem(group.achievedFlopsPerSecond,
                            counted ? formatScaled(group.achievedFlopsPerSecond, "FLOP/s") : "–")});
        }
    }
    plotTopRows();
    plotShares();
}

void BreakdownView::plotTopRows() {
    top_->clearPlottables();
    const int count = std::min<int>(kTopBars, int(rows_.size()));
    if (count == 0) {
        top_->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
        const bool traced = document_ && (!document_->result.operators.empty() ||
                                          !document_->result.kernels.empty());
        setNoData(top_, traced ? tr("No traced rows for this grouping and phase")
                               : missingRecordsNote(document_, Records::Operators));
        top_->replot();
        return;
    }
    setNoData(top_, QString());
    // Horizontal bars, each in its category's colour as in the shares chart
    // beside it: a QCPBars per category.
    std::map<std::string, QCPBars*> byCategory;
    // Fifteen names on a short axis overlap: every other one, or fewer, then.
    QSharedPointer<QCPAxisTickerText> ticker(new ThinnedTicker<QCPAxisTickerText>(top_->yAxis));
    double largest = 0;
    for (int i = 0; i < count; ++i) {
        const auto& row = rows_[size_t(i)];
        QCPBars*& bars = byCategory[row.category];
        if (!bars) {
            bars = new QCPBars(top_->yAxis, top_->xAxis);
            bars->setName(QString::fromStdString(row.category));
            bars->setBrush(categoryOrKernelTypeColor(QString::fromStdString(row.category)));
            bars->setPen(Qt::NoPen);
        }
        const double y = count - i;  // largest on top
        bars->addData(y, row.totalMs);
        QString label = shortSymbol(QString::fromStdString(row.name));
        if (phase_->currentText() == "all" && !row.phase.empty()) {  // a trace's have none
            label += " (" + QString::fromStdString(row.phase) + ")";
        }
        ticker->addTick(y, label);
        largest = std::max(largest, row.totalMs);
    }
    top_->yAxis->setTicker(ticker);
    top_->yAxis->setRange(0.3, count + 0.7);
    top_->xAxis->setRange(0, largest > 0 ? largest * 1.05 : 1);
    top_->replot();
}

int BreakdownView::topBarAt(const QPointF& pixel) const {
    const int count = std::min<int>(kTopBars, int(rows_.size()));
    const QRect plotArea = top_->axisRect()->rect();
    if (count == 0 || pixel.y() < plotArea.top() || pixel.y() > plotArea.bottom() ||
        pixel.x() > plotArea.right()) {
        return -1;
    }
    // Over the bar or over its label left of the axis: the row whose key is nearest.
    const double y = top_->yAxis->pixelToCoord(pixel.y());
    const int bar = count - int(std::lround(y));
    return bar >= 0 && bar < count && std::abs(y - (count - bar)) <= 0.5 ? bar : -1;
}

QString BreakdownView::topBarToolTip(int bar) const {
    if (bar < 0 || bar >= std::min<int>(kTopBars, int(rows_.size()))) {
        return {};
    }
    const BreakdownRow& row = rows_[size_t(bar)];
    return tr("%1\n%2 · %3\n%4 calls · %5 ms total · %6 ms / step · %7 of %3")
        .arg(QString::fromStdString(row.name), QString::fromStdString(row.category),
             QString::fromStdString(row.phase))
        .arg(row.calls)
        .arg(row.totalMs, 0, 'f', 3)
        .arg(row.msPerStep, 0, 'f', 3)
        .arg(formatPercent(row.share));
}

void BreakdownView::plotShares() {
    shares_->clearPlottables();
    shareColumns_.clear();
    const RunResult* run = document_ ? &document_->result : nullptr;
    if (!run || (run->operators.empty() && run->kernels.empty())) {
        shares_->xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
        setNoData(shares_, missingRecordsNote(document_, Records::Operators));
        shares_->replot();
        return;
    }
    setNoData(shares_, QString());
    const auto& rows = run->kernels.empty() ? run->operators : run->kernels;
    // One bar per phase, then forward against the whole step side by side.
    std::vector<std::pair<QString, std::map<std::string, double>>> columns;
    for (const char* phase : kPhases) {
        auto shares = categoryShares(rows, phase);
        if (!shares.empty()) {
            columns.emplace_back(QString(phase), std::move(shares));
        }
    }
    columns.emplace_back(tr("whole step"), categoryShares(rows, "all"));
    std::set<std::string> categories;
    for (const auto& [label, shares] : columns) {
        for (const auto& [category, share] : shares) {
            categories.insert(category);
        }
    }
    QSharedPointer<QCPAxisTickerText> ticker(new ThinnedTicker<QCPAxisTickerText>(shares_->xAxis));
    for (size_t i = 0; i < columns.size(); ++i) {
        ticker->addTick(double(i + 1), columns[i].first);
        StackedColumn stacked{columns[i].first, {}};
        for (const auto& category : categories) {  // bottom to top, as stacked below
            const auto found = columns[i].second.find(category);
            stacked.shares.emplace_back(category,
                                        found == columns[i].second.end() ? 0 : found->second);
        }
        shareColumns_.push_back(std::move(stacked));
    }
    QCPBars* below = nullptr;
    for (const auto& category : categories) {
        auto* bars = new QCPBars(shares_->xAxis, shares_->yAxis);
        bars->setName(QString::fromStdString(category));
        bars->setBrush(categoryOrKernelTypeColor(QString::fromStdString(category)));
        bars->setPen(QPen(Qt::white));
        for (size_t i = 0; i < columns.size(); ++i) {
            const auto found = columns[i].second.find(category);
            bars->addData(double(i + 1),
                          found == columns[i].second.end() ? 0 : 100 * found->second);
        }
        if (below) {
            bars->moveAbove(below);
        }
        below = bars;
    }
    shares_->xAxis->setTicker(ticker);
    shares_->xAxis->setRange(0.4, double(columns.size()) + 0.6);
    shares_->yAxis->setRange(0, 100);
    shares_->legend->setVisible(true);
    shares_->replot();
}

QString BreakdownView::sharesToolTipAt(const QPointF& pixel) const {
    const double x = shares_->xAxis->pixelToCoord(pixel.x());
    const int column = int(std::lround(x)) - 1;
    if (column < 0 || column >= int(shareColumns_.size()) || std::abs(x - (column + 1)) > 0.4) {
        return {};
    }
    const double percent = shares_->yAxis->pixelToCoord(pixel.y());
    double top = 0;
    for (const auto& [category, share] : shareColumns_[size_t(column)].shares) {
        top += 100 * share;
        if (share > 0 && percent <= top) {
            return tr("%1 · %2: %3 of traced time")
                .arg(shareColumns_[size_t(column)].label, QString::fromStdString(category),
                     formatPercent(share));
        }
    }
    return {};
}

bool BreakdownView::eventFilter(QObject* watched, QEvent* event) {
    if ((watched == top_ || watched == shares_) && event->type() == QEvent::MouseMove) {
        const auto* mouse = static_cast<QMouseEvent*>(event);
        const QString text = watched == top_ ? topBarToolTip(topBarAt(mouse->position()))
                                             : sharesToolTipAt(mouse->position());
        if (text.isEmpty()) {
            QToolTip::hideText();
        } else {
            QToolTip::showText(mouse->globalPosition().toPoint(), text,
                               static_cast<QWidget*>(watched));
        }
    }
    return RunView::eventFilter(watched, event);
}

QList<ExportTarget> BreakdownView::exportTargets() {
    return {{"breakdown-top", top_, nullptr},
            {"breakdown-category-shares", shares_, nullptr},
            {"breakdown", nullptr, exported_},
            {"flop-groups", nullptr, flops_}};
}

}  // namespace stepscope::ui
