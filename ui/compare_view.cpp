#include "compare_view.h"

#include <qcustomplot.h>

#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include "format.h"
#include "plot_style.h"
#include "run_document.h"

namespace stepscope::ui {

namespace {

std::optional<double> phaseMean(const RunSummary& s, int phase) {
    switch (phase) {
        case 0:
            return s.total.count ? std::optional<double>(s.total.mean) : std::nullopt;
        case 1:
            return s.forward ? std::optional<double>(s.forward->mean) : std::nullopt;
        case 2:
            return s.backward ? std::optional<double>(s.backward->mean) : std::nullopt;
        default:
            return s.optimizer ? std::optional<double>(s.optimizer->mean) : std::nullopt;
    }
}

}  // namespace

CompareView::CompareView(QWidget* parent) : QWidget(parent) {
    auto* hint =
        new QLabel(tr("Tick two or more runs in the run list to compare them. The "
                      "ratio columns are first run ÷ that run: above 1, that run is "
                      "faster."));
    hint->setWordWrap(true);
    table_ = new QTableWidget;
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    plot_ = new QCustomPlot;
    useIntegerTicks(plot_->xAxis);
    stylePlot(plot_, tr("step"), tr("total time per step (ms)"));
    auto* splitter = new QSplitter(Qt::Vertical);
    splitter->addWidget(table_);
    splitter->addWidget(plot_);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(hint);
    layout->addWidget(splitter);
}

void CompareView::showRuns(const QList<const RunDocument*>& runs) {
    table_->clear();
    plot_->clearGraphs();
    const QStringList phases = {tr("total"), tr("forward"), tr("backward"), tr("optimizer")};
    table_->setRowCount(int(phases.size()));
    table_->setVerticalHeaderLabels(phases);
    QStringList headers;
    for (int i = 0; i < runs.size(); ++i) {
        headers << tr("%1 mean ms").arg(runs[i]->title);
    }
    for (int i = 1; i < runs.size(); ++i) {
        headers << tr("ratio 1 ÷ %1").arg(i + 1);
    }
    table_->setColumnCount(int(headers.size()));
    table_->setHorizontalHeaderLabels(headers);
    for (int phase = 0; phase < 4; ++phase) {
        const auto first =
            runs.isEmpty() ? std::nullopt : phaseMean(runs[0]->result.summary, phase);
        for (int i = 0; i < runs.size(); ++i) {
            const auto mean = phaseMean(runs[i]->result.summary, phase);
            table_->setItem(phase, i, new QTableWidgetItem(mean ? formatMs(*mean) : "–"));
            if (i > 0) {
                const bool ratio = first && mean && *mean > 0;
                auto* item = new QTableWidgetItem(
                    ratio ? QString::number(*first / *mean, 'f', 3) + "×" : "–");
                if (ratio) {
                    item->setData(Qt::UserRole, *first / *mean);  // exact, for tests and tools
                }
                table_->setItem(phase, int(runs.size()) + i - 1, item);
            }
        }
    }
    for (int i = 0; i < runs.size(); ++i) {
        QVector<double> keys, values;
        for (const auto& step : runs[i]->result.steps) {
            keys << step.index;
            values << step.totalMs;
        }
        auto* graph = plot_->addGraph();
        graph->setName(runs[i]->title);
        graph->setPen(QPen(seriesColor(i), 2));
        graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 4));
        graph->setAdaptiveSampling(true);
        graph->setData(keys, values, true);
    }
    plot_->rescaleAxes();
    plot_->yAxis->setRangeLower(0);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

QList<ExportTarget> CompareView::exportTargets() {
    return {{"compare", plot_, nullptr}, {"compare-table", nullptr, table_->model()}};
}

}  // namespace stepscope::ui
