#include "sweep_page.h"

#include <qcustomplot.h>

#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include "bench/cost_model.h"
#include "bench/memory_estimate.h"
#include "bench/runner.h"
#include "format.h"
#include "list_input.h"
#include "plot_style.h"

namespace stepscope::ui {

namespace {

QString meanStd(const std::optional<Stats>& stats) {
    return stats ? QString("%1 ± %2").arg(formatMs(stats->mean), formatMs(stats->std)) : "–";
}

}  // namespace

SweepPage::SweepPage(QWidget* parent) : QWidget(parent) {
    models_ = new QLineEdit("nano,tiny");
    contexts_ = new QLineEdit("32,64,128");
    modes_ = new QLineEdit("forward,train-step");
    precisions_ = new QLineEdit("fp32");
    start_ = new QPushButton(tr("Run sweep"));
    stop_ = new QPushButton(tr("Stop"));
    stop_->setEnabled(false);
    status_ =
        new QLabel(tr("Other fields (batch, steps, device, …) come from the "
                      "configuration panel."));
    status_->setWordWrap(true);

    auto* form = new QFormLayout;
    form->addRow(tr("Models"), models_);
    form->addRow(tr("Context lengths"), contexts_);
    form->addRow(tr("Modes"), modes_);
    form->addRow(tr("Precisions"), precisions_);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(start_);
    buttons->addWidget(stop_);
    buttons->addStretch();

    table_ = new QTableWidget(0, 9);
    table_->setHorizontalHeaderLabels({tr("model"), tr("ctx"), tr("mode"), tr("precision"),
                                       tr("status"), tr("est. peak"), tr("forward ms"),
                                       tr("backward ms"), tr("total ms")});
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    // Values whole on one line ("1430.30 ± 522.53"); the last column takes the rest.
    table_->setWordWrap(false);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->verticalHeader()->hide();
    plot_ = new QCustomPlot;
    stylePlot(plot_, tr("context length (tokens)"), tr("mean time per step (ms)"));
    plot_->xAxis->setScaleType(QCPAxis::stLogarithmic);
    plot_->xAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    plot_->xAxis->ticker().staticCast<QCPAxisTickerLog>()->setLogBase(2);

    keepSaneSize(plot_);
    auto* splitter = new QSplitter(Qt::Vertical);
    splitter->addWidget(table_);
    splitter->addWidget(plot_);
    splitter->setSizes({240, 400});  // the chart gets the larger share
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addLayout(buttons);
    layout->addWidget(status_);
    layout->addWidget(splitter, 1);

    connect(start_, &QPushButton::clicked, this, &SweepPage::startRequested);
    connect(stop_, &QPushButton::clicked, this, &SweepPage::stopRequested);
    redrawChart();
}

SweepSpec SweepPage::spec(const RunConfig& base, const QString& outDir) const {
    std::vector<ConfigError> errors;
    const std::vector<int64_t> contexts = positiveList(contexts_->text(), "ctx", errors);
    if (!errors.empty()) {
        throw InvalidConfigError(errors);
    }
    return makeSweepSpec(base, splitList(models_->text()), contexts, splitList(modes_->text()),
                         splitList(precisions_->text()), outDir.toStdString());
}

void SweepPage::begin(const SweepSpec& spec, std::optional<int64_t> availableBytes) {
    table_->setRowCount(0);
    series_.clear();
    done_ = 0;
    const std::vector<RunConfig> points = expandSweep(spec);
    expected_ = int(points.size());
    int misfits = 0;
    for (const RunConfig& c : points) {
        const int row = table_->rowCount();
        table_->insertRow(row);
        const bool fits =
            c.device != DeviceKind::Cpu || !availableBytes || preflightBytes(c) <= *availableBytes;
        misfits += !fits;
        const QStringList cells = {QString::fromStdString(c.model.name),
                                   QString::number(c.contextLength),
                                   QString::fromStdString(toString(c.mode)),
                                   QString::fromStdString(toString(c.precision)),
                                   fits ? tr("pending") : tr("will not fit"),
                                   bytesText(predictMemory(c).peakBytes),
                                   "–",
                                   "–",
                                   "–"};
        for (int column = 0; column < cells.size(); ++column) {
            auto* item = new QTableWidgetItem(cells[column]);
            if (!fits) {
                item->setBackground(QColor(250, 210, 210));
                item->setToolTip(
                    tr("The estimate plus its margin (%1) exceeds the %2 free; "
                       "the runner will refuse this point.")
                        .arg(bytesText(preflightBytes(c)), bytesText(*availableBytes)));
            }
            table_->setItem(row, column, item);
        }
    }
    status_->setText(
        tr("Running %1 points into %2").arg(expected_).arg(QString::fromStdString(spec.outDir)) +
        (misfits ? tr("; %1 will not fit and will be refused").arg(misfits) : QString()));
    redrawChart();
}

void SweepPage::addPoint(int index, const RunResult& r) {
    int row = index;
    if (row < 0 || row >= table_->rowCount()) {
        row = table_->rowCount();  // not listed by begin()
        table_->insertRow(row);
    }
    setRow(row, r);
    status_->setText(tr("%1 of %2 points").arg(++done_).arg(expected_));
    redrawChart();
}

void SweepPage::setRow(int row, const RunResult& r) {
    const RunConfig& c = r.config;
    const QString status = QString::fromStdString(toString(r.status));
    const QStringList cells = {QString::fromStdString(c.model.name),
                               QString::number(c.contextLength),
                               QString::fromStdString(toString(c.mode)),
                               QString::fromStdString(toString(c.precision)),
                               status,
                               bytesText(predictMemory(c).peakBytes),
                               meanStd(r.summary.forward),
                               meanStd(r.summary.backward),
                               r.summary.total.count ? meanStd(r.summary.total) : "–"};
    for (int column = 0; column < cells.size(); ++column) {
        auto* item = new QTableWidgetItem(cells[column]);
        if (r.status != RunStatus::Ok) {
            item->setBackground(r.status == RunStatus::Oom ? QColor(250, 210, 210)
                                                           : QColor(240, 230, 200));
            item->setToolTip(QString::fromStdString(r.message));
        }
        table_->setItem(row, column, item);
    }
    if (r.status == RunStatus::Ok && r.summary.total.count) {
        series_[{c.model.name, toString(c.mode), toString(c.precision)}][c.contextLength] =
            r.summary.total.mean;
    }
}

void SweepPage::showPoints(const QString& directory, const QList<const RunResult*>& points,
                           bool watching) {
    table_->setRowCount(0);
    series_.clear();
    QStringList models, contexts, modes, precisions;
    const auto addOnce = [](QStringList& list, const std::string& value) {
        if (!list.contains(QString::fromStdString(value))) {
            list << QString::fromStdString(value);
        }
    };
    for (const RunResult* point : points) {
        const int row = table_->rowCount();
        table_->insertRow(row);
        setRow(row, *point);
        addOnce(models, point->config.model.name);
        addOnce(contexts, std::to_string(point->config.contextLength));
        addOnce(modes, toString(point->config.mode));
        addOnce(precisions, toString(point->config.precision));
    }
    if (!points.isEmpty()) {
        models_->setText(models.join(','));
        contexts_->setText(contexts.join(','));
        modes_->setText(modes.join(','));
        precisions_->setText(precisions.join(','));
    }
    expected_ = done_ = int(points.size());
    status_->setText(
        (watching ? tr("%1 from %2; watched: points appear as their run files arrive there.")
                  : tr("%1 from %2."))
            .arg(countText(points.size(), "point"), directory));
    redrawChart();
}

QString SweepPage::statusText() const {
    return status_->text();
}

void SweepPage::finish(const QString& message) {
    status_->setText(message.isEmpty()
                         ? tr("Sweep done: %1 of %2 points").arg(table_->rowCount()).arg(expected_)
                         : message);
}

void SweepPage::setRunning(bool running) {
    start_->setEnabled(!running);
    stop_->setEnabled(running);
}

void SweepPage::redrawChart() {
    plot_->clearGraphs();
    setNoData(plot_, series_.empty() ? tr("No finished points yet: run a sweep, or open a "
                                          "sweep's folder (File → Open folder…).")
                                     : QString());
    int index = 0;
    for (const auto& [key, points] : series_) {
        const auto& [model, mode, precision] = key;
        auto* graph = plot_->addGraph();
        graph->setName(QString::fromStdString(model + " · " + mode + " · " + precision));
        graph->setPen(QPen(seriesColor(index++), 2));
        graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 6));
        for (const auto& [context, ms] : points) {
            graph->addData(double(context), ms);
        }
    }
    if (!series_.empty()) {
        fitAxesWithRoom(plot_, 1.3, true);
    }
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

QList<ExportTarget> SweepPage::exportTargets() {
    return {{"sweep", plot_, nullptr}, {"sweep-table", nullptr, table_->model()}};
}

}  // namespace stepscope::ui
