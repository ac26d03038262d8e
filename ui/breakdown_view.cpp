#include "breakdown_view.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>
#include <map>
#include <set>

#include "format.h"
#include "plot_style.h"
#include "read_only_table.h"
#include "run_document.h"

namespace stepscope::ui {

namespace {

const char* kPhases[] = {"forward", "backward", "optimizer"};

QStandardItem* numberItem(double value, const QString& text) {
    auto* item = new QStandardItem(text);
    item->setData(value, Qt::UserRole);  // sorts by value, not by text
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
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

}  // namespace

BreakdownView::BreakdownView(QWidget* parent) : RunView(parent) {
    by_ = new QComboBox;
    by_->addItems({"kernel", "op", "category"});
    by_->setCurrentText("op");
    phase_ = new QComboBox;
    phase_->addItems({"all", "forward", "backward", "optimizer"});
    empty_ =
        new QLabel(tr("This run has no operator or kernel records. Tick “Trace operators” "
                      "(or “Trace CUDA kernels” on a GPU) before running, or make it with "
                      "stepscope-cli run --ops / --kernels."));
    empty_->setWordWrap(true);

    model_ = new QStandardItemModel(this);
    sorted_ = new QSortFilterProxyModel(this);
    sorted_->setSourceModel(model_);
    sorted_->setSortRole(Qt::UserRole);
    table_ = readOnlyTable(sorted_);
    table_->setSortingEnabled(true);

    top_ = new QCustomPlot;
    stylePlot(top_, tr("total time (ms)"), QString());
    removeLegend(top_);  // one series; its labels are the rows
    shares_ = new QCustomPlot;
    stylePlot(shares_, QString(), tr("share of traced time (%)"));
    flops_ = new QStandardItemModel(this);
    QTableView* flopTable = readOnlyTable(flops_);

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
    auto* tables = new QSplitter(Qt::Horizontal);
    tables->addWidget(table_);
    tables->addWidget(flopTable);
    auto* splitter = new QSplitter(Qt::Vertical);
    splitter->addWidget(tables);
    splitter->addWidget(charts);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(empty_);
    layout->addWidget(splitter, 1);

    connect(by_, &QComboBox::currentIndexChanged, this, &BreakdownView::refresh);
    connect(phase_, &QComboBox::currentIndexChanged, this, &BreakdownView::refresh);
}

void BreakdownView::setGrouping(const QString& by, const QString& phase) {
    by_->setCurrentText(by);
    phase_->setCurrentText(phase);
    refresh();
}

QAbstractItemModel* BreakdownView::tableModel() const {
    return sorted_;
}

void BreakdownView::showRun(const RunDocument* document) {
    document_ = document;
    const bool kernels = document && !document->result.kernels.empty();
    auto* items = qobject_cast<QStandardItemModel*>(by_->model());
    items->item(0)->setEnabled(kernels);
    const bool operators = document && !document->result.operators.empty();
    {
        const QSignalBlocker blocker(by_);
        if (!kernels && by_->currentText() == "kernel") {
            by_->setCurrentText("op");
        } else if (kernels && !operators && by_->currentText() == "op") {
            by_->setCurrentText("kernel");
        }
    }
    refresh();
}

void BreakdownView::refresh() {
    rows_.clear();
    model_->clear();
    flops_->clear();
    const RunResult* run = document_ ? &document_->result : nullptr;
    const bool traced = run && (!run->operators.empty() || !run->kernels.empty());
    empty_->setVisible(!traced);
    if (traced) {
        try {
            rows_ = breakdown(*run, phase_->currentText().toStdString(),
                              by_->currentText().toStdString());
        } catch (const std::invalid_argument&) {
            rows_.clear();  // a grouping the run has no records for
        }
    }
    model_->setHorizontalHeaderLabels({tr("name"), tr("category"), tr("phase"), tr("calls"),
                                       tr("total ms"), tr("mean ms"), tr("share")});
    for (const auto& row : rows_) {
        auto* name = new QStandardItem(QString::fromStdString(row.name));
        name->setData(QString::fromStdString(row.name), Qt::UserRole);
        name->setToolTip(QString::fromStdString(row.name));
        auto* category = new QStandardItem(QString::fromStdString(row.category));
        category->setData(category->text(), Qt::UserRole);
        auto* phase = new QStandardItem(QString::fromStdString(row.phase));
        phase->setData(phase->text(), Qt::UserRole);
        const double mean = row.calls ? row.totalMs / double(row.calls) : 0;
        model_->appendRow({name, category, phase,
                           numberItem(double(row.calls), QString::number(row.calls)),
                           numberItem(row.totalMs, formatMs(row.totalMs)),
                           numberItem(mean, QString::number(mean, 'f', 4)),
                           numberItem(row.share, formatPercent(row.share))});
    }
    table_->sortByColumn(4, Qt::DescendingOrder);
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
    auto* bars = new QCPBars(top_->yAxis, top_->xAxis);  // horizontal bars
    bars->setBrush(phaseColor("forward"));
    bars->setPen(Qt::NoPen);
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    double largest = 0;
    for (int i = 0; i < count; ++i) {
        const auto& row = rows_[size_t(i)];
        const double y = count - i;  // largest on top
        bars->addData(y, row.totalMs);
        QString label = shortSymbol(QString::fromStdString(row.name));
        if (phase_->currentText() == "all") {
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

void BreakdownView::plotShares() {
    shares_->clearPlottables();
    const RunResult* run = document_ ? &document_->result : nullptr;
    if (!run || (run->operators.empty() && run->kernels.empty())) {
        shares_->replot();
        return;
    }
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
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    for (size_t i = 0; i < columns.size(); ++i) {
        ticker->addTick(double(i + 1), columns[i].first);
    }
    QCPBars* below = nullptr;
    for (const auto& category : categories) {
        auto* bars = new QCPBars(shares_->xAxis, shares_->yAxis);
        bars->setName(QString::fromStdString(category));
        bars->setBrush(categoryColor(QString::fromStdString(category)));
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

QList<ExportTarget> BreakdownView::exportTargets() {
    return {{"breakdown-top", top_, nullptr},
            {"breakdown-category-shares", shares_, nullptr},
            {"breakdown", nullptr, sorted_},
            {"flop-groups", nullptr, flops_}};
}

}  // namespace stepscope::ui
