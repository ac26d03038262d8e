#include "pages/attention_page.h"

#include <qcustomplot.h>

#include <QCheckBox>
#include <QEvent>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <map>
#include <set>

#include "config/limits.h"
#include "engines/runner.h"
#include "estimate/cost_model.h"
#include "experiments/attention_benchmark.h"
#include "models/format.h"
#include "results/attention_file.h"
#include "util/strings.h"
#include "widgets/column_fit.h"
#include "widgets/list_input.h"
#include "widgets/plot_style.h"

namespace stepscope::ui {

namespace {

// The charts scroll: each keeps a height its legend and axis titles leave room in.
constexpr int kChartHeight = 280;
constexpr int kChartWidth = 320;

// Where a chart has many lines, its legend names colours and line styles
// instead of every line: a key per colour (a series), then one per style.
// The chart's graphs so far leave the legend; the keys are empty graphs.
struct StyleKey {
    QString name;
    Qt::PenStyle pen;
    QCPScatterStyle::ScatterShape shape;
};
void legendByKeys(QCustomPlot* plot, const std::map<std::string, int>& colours,
                  const std::vector<StyleKey>& styles) {
    for (int g = 0; g < plot->graphCount(); ++g) {
        plot->graph(g)->removeFromLegend();
    }
    for (const auto& [series, colour] : colours) {
        QCPGraph* key = plot->addGraph();
        key->setName(QString::fromStdString(series));
        key->setPen(QPen(seriesColor(colour), 2));
    }
    for (const StyleKey& style : styles) {
        QCPGraph* key = plot->addGraph();
        key->setName(style.name);
        key->setPen(QPen(QColor(90, 90, 90), 2, style.pen));
        key->setScatterStyle(QCPScatterStyle(style.shape, 5));
    }
}

// Two charts a row where each is wide enough for its legend's eight series
// three a row; narrower, five rows of legend left the data a strip.
int chartColumnsFor(int width) {
    constexpr int kSideBySideWidth = 600;
    constexpr int kSpacing = 12;  // the grid's, about
    return width >= 2 * kSideBySideWidth + kSpacing ? 2 : 1;
}

QString optionalText(const std::optional<double>& value, int decimals) {
    return value ? QString::number(*value, 'f', decimals) : QString("–");
}

QString optionalBytesText(const std::optional<int64_t>& value) {
    return value ? bytesText(*value) : QString("–");
}

}  // namespace

AttentionPage::AttentionPage(QWidget* parent) : QWidget(parent) {
    createFields();
    createTable();
    auto* splitter = new QSplitter(Qt::Vertical);
    splitter->addWidget(createCharts());
    splitter->addWidget(table_);
    splitter->setStretchFactor(0, 3);
    splitter->setChildrenCollapsible(false);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(createForm());
    layout->addWidget(status_);
    layout->addWidget(splitter, 1);

    connect(start_, &QPushButton::clicked, this, &AttentionPage::startRequested);
    connect(stop_, &QPushButton::clicked, this, &AttentionPage::stopRequested);
    redraw();
}

// The grid's form: its fields, Run and Stop, and what the status line says first.
void AttentionPage::createFields() {
    backends_ = new QLineEdit("naive,tiled,sdpa");
    backends_->setToolTip(
        tr("Comma list of: %1. compiled is torch.compile of naive attention, measured in the "
           "Python worker (its compile time stays out of the medians); flash-pytorch and "
           "flash-triton are our FlashAttention-2 in PyTorch ops and in Triton, and \"your "
           "own…\" in the configuration panel's attention adds yours: each of these is checked "
           "against float64 before it is timed (the gate column).")
            .arg(QString::fromStdString(joinNames(attentionGridBackendNames()))));
    dims_ = new QLineEdit("16,32,64,128");
    seqs_ = new QLineEdit("256,512,1024,2048");
    precisions_ = new QLineEdit("fp32");
    batch_ = new QSpinBox;
    batch_->setRange(1, int(kBatchLimit.max));
    batch_->setValue(8);
    heads_ = new QSpinBox;
    heads_->setRange(1, int(kHeadsLimit.max));
    heads_->setValue(1);
    repeats_ = new QSpinBox;
    repeats_->setRange(1, 1000);
    repeats_->setValue(5);
    causal_ = new QCheckBox(tr("causal"));
    causal_->setChecked(true);
    start_ = new QPushButton(tr("Run attention grid"));
    stop_ = new QPushButton(tr("Stop"));
    stop_->setEnabled(false);
    status_ =
        new QLabel(tr("The device comes from the configuration panel. Out-of-memory "
                      "points are results, marked × at the top of their chart."));
    status_->setWordWrap(true);
}

// The fields in a form, the numbers on one row; Run and Stop under them.
QLayout* AttentionPage::createForm() {
    auto* form = new QFormLayout;
    form->addRow(tr("Backends"), backends_);
    form->addRow(tr("Head dims"), dims_);
    form->addRow(tr("Sequence lengths"), seqs_);
    form->addRow(tr("Precisions"), precisions_);
    auto* numbersRow = new QHBoxLayout;
    numbersRow->addWidget(new QLabel(tr("Batch")));
    numbersRow->addWidget(batch_);
    numbersRow->addWidget(new QLabel(tr("Heads")));
    numbersRow->addWidget(heads_);
    numbersRow->addWidget(new QLabel(tr("Repeats")));
    numbersRow->addWidget(repeats_);
    numbersRow->addWidget(causal_);
    numbersRow->addStretch();
    form->addRow(numbersRow);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(start_);
    buttons->addWidget(stop_);
    buttons->addStretch();
    auto* layout = new QVBoxLayout;
    layout->addLayout(form);
    layout->addLayout(buttons);
    return layout;
}

// A chart per head dim goes into the grid as points arrive; peak memory beside them.
QWidget* AttentionPage::createCharts() {
    auto* charts = new QWidget;
    chartGrid_ = new QGridLayout(charts);
    memoryPlot_ = new QCustomPlot;
    memoryPlot_->setMinimumSize(kChartWidth, kChartHeight);
    stylePlot(memoryPlot_, tr("sequence length (tokens)"), tr("peak memory (MiB)"));
    useLogAxis(memoryPlot_->xAxis, 2);
    useLogAxis(memoryPlot_->yAxis, 10);
    chartsArea_ = new QScrollArea;
    chartsArea_->setWidgetResizable(true);
    chartsArea_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    chartsArea_->setWidget(charts);
    // A whole chart always in view: the table below gives way, not the charts.
    chartsArea_->setMinimumHeight(kChartHeight + 2 * chartsArea_->frameWidth());
    // As many charts a row as the width holds; the rest go below.
    chartsArea_->viewport()->installEventFilter(this);
    return chartsArea_;
}

// Every point, as the attention file has it.
void AttentionPage::createTable() {
    table_ = new QTableWidget(0, 13);
    table_->setHorizontalHeaderLabels({tr("backend"), tr("kernel"), tr("precision"), tr("d"),
                                       tr("seq"), tr("status"), tr("gate"), tr("fwd\nms"),
                                       tr("bwd\nms"), tr("mem before\nbwd"), tr("peak"),
                                       tr("fwd\nTFLOP/s"), tr("bwd\nTFLOP/s")});
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    new ColumnFit(table_, {0, 1}, 70);  // the backend's and kernel's names give way first
    table_->verticalHeader()->hide();
    // Short headers keep the thirteen columns on a laptop's width; they say it in full on hover.
    const QStringList whole = {tr("forward time (ms)"), tr("backward time (ms)"),
                               tr("memory allocated before backward")};
    for (int column = 7; column <= 9; ++column) {
        table_->horizontalHeaderItem(column)->setToolTip(whole[column - 7]);
    }
}

AttentionBenchSpec AttentionPage::spec(DeviceKind device) const {
    std::vector<ConfigError> errors;
    AttentionBenchSpec spec;
    spec.backends = splitList(backends_->text());
    spec.headDims = positiveList(dims_->text(), "d", errors);
    spec.seqLens = positiveList(seqs_->text(), "seq", errors);
    if (!errors.empty()) {
        throw InvalidConfigError(errors);
    }
    spec.precisions = parsePrecisionNames(splitList(precisions_->text()));
    spec.batch = batch_->value();
    spec.heads = heads_->value();
    spec.repeats = repeats_->value();
    spec.causal = causal_->isChecked();
    spec.device = device;
    return spec;
}

void AttentionPage::begin(int points) {
    points_.clear();
    table_->setRowCount(0);
    expected_ = points;
    status_->setText(tr("Running %1 points").arg(points));
    redraw();
}

void AttentionPage::addTableRow(const AttentionPoint& p) {
    const int row = table_->rowCount();
    table_->insertRow(row);
    // An incorrect backend is never timed: its time cells say so, struck out.
    const bool incorrect = p.status == "incorrect";
    const QStringList cells = {QString::fromStdString(p.backend),
                               QString::fromStdString(p.kernel),
                               QString::fromStdString(toString(p.precision)),
                               QString::number(p.d),
                               QString::number(p.seq),
                               QString::fromStdString(p.status),
                               QString::fromStdString(gateText(p.gate)),
                               incorrect ? tr("not timed") : optionalText(p.forwardMs, 3),
                               incorrect ? tr("not timed") : optionalText(p.backwardMs, 3),
                               optionalBytesText(p.memBeforeBackwardBytes),
                               optionalBytesText(p.peakBytes),
                               optionalText(p.forwardTflops, 4),
                               optionalText(p.backwardTflops, 4)};
    for (int column = 0; column < cells.size(); ++column) {
        auto* item = new QTableWidgetItem(cells[column]);
        if (p.status != "ok") {
            item->setBackground(p.status == "oom" ? QColor(250, 210, 210) : QColor(235, 235, 235));
            item->setToolTip(QString::fromStdString(p.message));
        }
        if (incorrect && (column == 7 || column == 8)) {
            QFont font = item->font();
            font.setStrikeOut(true);
            item->setFont(font);
        }
        if (column == 6 && p.gate) {
            item->setToolTip(QString::fromStdString(p.gate->message));
            item->setForeground(p.gate->ok ? QColor(30, 120, 50) : QColor(170, 30, 20));
        }
        table_->setItem(row, column, item);
    }
}

void AttentionPage::addPoints(const std::vector<AttentionPoint>& points) {
    for (const auto& point : points) {
        points_.push_back(point);
        addTableRow(point);
    }
    status_->setText(tr("%1 of %2 points").arg(points_.size()).arg(expected_));
    redraw();
}

void AttentionPage::setPoints(const std::vector<AttentionPoint>& points, const QString& source) {
    begin(int(points.size()));
    addPoints(points);
    // The form says which grid is shown (and runs it again on Run).
    if (!points.empty()) {
        AttentionBenchSpec shown;
        std::set<int64_t> dims, seqs;
        const auto addOnce = [](auto& list, const auto& value) {
            if (std::find(list.begin(), list.end(), value) == list.end()) {
                list.push_back(value);
            }
        };
        shown.backends.clear();
        shown.precisions.clear();
        const auto ours = attentionGridBackendNames();
        for (const auto& p : points) {
            // The user's backend comes back from the configuration panel's "your own…".
            if (std::find(ours.begin(), ours.end(), p.backend) != ours.end()) {
                addOnce(shown.backends, p.backend);
            }
            addOnce(shown.precisions, p.precision);
            dims.insert(p.d);
            seqs.insert(p.seq);
        }
        shown.headDims.assign(dims.begin(), dims.end());
        shown.seqLens.assign(seqs.begin(), seqs.end());
        shown.batch = points.front().batch;
        shown.heads = points.front().heads;
        shown.causal = points.front().causal;
        shown.repeats = repeats_->value();
        setForm(shown);
    }
    finish(source.isEmpty()
               ? QString()
               : tr("%1 from %2").arg(countText(qsizetype(points.size()), "point"), source));
}

void AttentionPage::setForm(const AttentionBenchSpec& spec) {
    const auto joined = [](const auto& values, const auto& text) {
        QStringList list;
        for (const auto& value : values) {
            list << text(value);
        }
        return list.join(',');
    };
    const auto number = [](int64_t value) { return QString::number(value); };
    backends_->setText(joined(spec.backends, QString::fromStdString));
    dims_->setText(joined(spec.headDims, number));
    seqs_->setText(
        joined(spec.seqLens.empty() ? defaultSeqLens(spec.device) : spec.seqLens, number));
    precisions_->setText(
        joined(spec.precisions, [](Precision p) { return QString::fromStdString(toString(p)); }));
    batch_->setValue(int(spec.batch));
    heads_->setValue(int(spec.heads));
    repeats_->setValue(spec.repeats);
    causal_->setChecked(spec.causal);
}

QString AttentionPage::statusText() const {
    return status_->text();
}

QList<QCustomPlot*> AttentionPage::timePlots() const {
    return timePlots_.mid(0, qsizetype(plotDims_.size()));
}

void AttentionPage::finish(const QString& message) {
    status_->setText(message.isEmpty() ? tr("%1 points").arg(points_.size()) : message);
}

void AttentionPage::setRunning(bool running) {
    start_->setEnabled(!running);
    stop_->setEnabled(running);
}

bool AttentionPage::eventFilter(QObject* watched, QEvent* event) {
    if (watched == chartsArea_->viewport() && event->type() == QEvent::Resize &&
        chartColumnsFor(chartsArea_->viewport()->width()) != chartColumns_) {
        redraw();
    }
    return QWidget::eventFilter(watched, event);
}

void AttentionPage::redraw() {
    const std::set<int64_t> dims = placeCharts();
    plotDims_.assign(dims.begin(), dims.end());
    int plotIndex = 0;
    for (int64_t d : dims) {
        drawTimes(timePlots_[plotIndex++], d);
    }
    drawMemory();
}

// A time chart per head dim of the points, two charts a row, then the memory chart.
std::set<int64_t> AttentionPage::placeCharts() {
    std::set<int64_t> dims;
    for (const auto& p : points_) {
        dims.insert(p.d);
    }
    while (timePlots_.size() < qsizetype(dims.size())) {
        auto* plot = new QCustomPlot;
        plot->setMinimumSize(kChartWidth, kChartHeight);
        stylePlot(plot, tr("sequence length (tokens)"), tr("time (ms)"));
        plot->legend->setWrap(2);
        useLogAxis(plot->xAxis, 2);
        useLogAxis(plot->yAxis, 10);
        timePlots_ << plot;
    }
    // A time chart per head dim shown, then the memory chart in the next
    // cell (charts of head dims no longer shown leave no gap), as many a row
    // as the area's width holds whole, at most two.
    chartColumns_ = chartColumnsFor(chartsArea_->viewport()->width());
    for (QCustomPlot* plot : timePlots_) {
        chartGrid_->removeWidget(plot);
    }
    chartGrid_->removeWidget(memoryPlot_);
    const int shown = int(dims.size());
    for (int i = 0; i < timePlots_.size(); ++i) {
        timePlots_[i]->setVisible(i < shown);
        timePlots_[i]->clearGraphs();
        if (i < shown) {
            chartGrid_->addWidget(timePlots_[i], i / chartColumns_, i % chartColumns_);
        }
    }
    chartGrid_->addWidget(memoryPlot_, shown / chartColumns_, shown % chartColumns_);
    memoryPlot_->clearGraphs();
    return dims;
}

// Head dim `d`'s forward and backward times per backend and precision; its
// out-of-memory points as crosses along the top.
void AttentionPage::drawTimes(QCustomPlot* plot, int64_t d) {
    std::map<std::string, int> colors;
    double top = 1;
    QVector<double> oomSeq;
    for (const auto& p : points_) {
        if (p.d == d && p.forwardMs && p.backwardMs) {
            top = std::max(top, *p.forwardMs + *p.backwardMs);
        }
    }
    std::map<std::string, std::pair<QCPGraph*, QCPGraph*>> series;
    for (const auto& p : points_) {
        if (p.d != d) {
            continue;
        }
        const std::string key = p.backend + " " + toString(p.precision);
        if (p.status == "oom") {
            oomSeq << double(p.seq);
            continue;
        }
        if (p.status != "ok") {
            continue;
        }
        auto& [forward, backward] = series[key];
        if (!forward) {
            const int color = int(colors.size());
            colors[key] = color;
            forward = plot->addGraph();
            forward->setName(QString::fromStdString(key + " forward"));
            forward->setPen(QPen(seriesColor(color), 2));
            forward->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
            backward = plot->addGraph();
            backward->setName(QString::fromStdString(key + " backward"));
            backward->setPen(QPen(seriesColor(color), 2, Qt::DashLine));
            backward->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssSquare, 5));
        }
        forward->addData(double(p.seq), *p.forwardMs);
        backward->addData(double(p.seq), *p.backwardMs);
    }
    // Eight series made sixteen entries, squeezed into a column.
    if (series.size() > 2) {
        legendByKeys(plot, colors,
                     {{tr("forward"), Qt::SolidLine, QCPScatterStyle::ssDisc},
                      {tr("backward"), Qt::DashLine, QCPScatterStyle::ssSquare}});
    }
    if (!oomSeq.isEmpty()) {
        auto* oom = plot->addGraph();
        oom->setName(tr("out of memory"));
        oom->setLineStyle(QCPGraph::lsNone);
        oom->setScatterStyle(
            QCPScatterStyle(QCPScatterStyle::ssCross, QPen(Qt::red, 2), Qt::NoBrush, 10));
        for (double seq : oomSeq) {
            oom->addData(seq, top);
        }
    }
    plot->xAxis->setLabel(tr("sequence length (tokens), head dim %1").arg(d));
    fitAxesWithRoom(plot);
    plot->replot(QCustomPlot::rpQueuedReplot);
}

// Peak memory per backend and precision (a colour each), a line style per head dim.
void AttentionPage::drawMemory() {
    const bool anyPeak = std::any_of(points_.begin(), points_.end(), [](const AttentionPoint& p) {
        return p.status == "ok" && p.peakBytes && *p.peakBytes > 0;
    });
    setNoData(memoryPlot_, anyPeak ? QString()
                           : points_.empty()
                               ? tr("No points yet: run the grid, or open an attention file "
                                    "(attention.json from stepscope-cli attention --out DIR).")
                               : tr("No point measured its peak memory."));
    // A colour per backend and precision, a line style per head dim: with
    // a colour per line, 20 lines repeated the six colours there were.
    std::map<std::string, int> colourOf;
    std::map<int64_t, int> styleOf;
    for (const auto& p : points_) {
        if (p.status == "ok" && p.peakBytes && *p.peakBytes > 0) {
            colourOf.emplace(p.backend + " " + toString(p.precision), int(colourOf.size()));
            styleOf.emplace(p.d, 0);
        }
    }
    int nextStyle = 0;
    for (auto& [d, style] : styleOf) {
        style = nextStyle++;
    }
    static const Qt::PenStyle dimStyles[] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine,
                                             Qt::DashDotLine, Qt::DashDotDotLine};
    const auto dimStyle = [&](int64_t d) {
        return dimStyles[size_t(styleOf[d]) % std::size(dimStyles)];
    };
    const bool severalDims = styleOf.size() > 1;
    std::map<std::string, QCPGraph*> memory;
    for (const auto& p : points_) {
        if (p.status != "ok" || !p.peakBytes || *p.peakBytes <= 0) {
            continue;
        }
        const std::string series = p.backend + " " + toString(p.precision);
        const std::string key = series + " d" + std::to_string(p.d);
        QCPGraph*& graph = memory[key];
        if (!graph) {
            graph = memoryPlot_->addGraph();
            graph->setName(QString::fromStdString(key));
            graph->setPen(QPen(seriesColor(colourOf[series]), 2, dimStyle(p.d)));
            graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
        }
        graph->addData(double(p.seq), double(*p.peakBytes) / (1024.0 * 1024.0));
    }
    if (severalDims) {
        std::vector<StyleKey> dimKeys;
        for (const auto& [d, style] : styleOf) {
            dimKeys.push_back({tr("head dim %1").arg(d), dimStyle(d), QCPScatterStyle::ssDisc});
        }
        legendByKeys(memoryPlot_, colourOf, dimKeys);
    }
    if (anyPeak) {
        fitAxesWithRoom(memoryPlot_);
    }
    memoryPlot_->replot(QCustomPlot::rpQueuedReplot);
}

QList<ExportTarget> AttentionPage::exportTargets() {
    QList<ExportTarget> targets;
    for (size_t i = 0; i < plotDims_.size(); ++i) {
        targets.append(
            {QString("attention-time-d%1").arg(plotDims_[i]), timePlots_[int(i)], nullptr});
    }
    targets.append({"attention-memory", memoryPlot_, nullptr});
    targets.append({"attention-table", nullptr, table_->model()});
    return targets;
}

}  // namespace stepscope::ui
