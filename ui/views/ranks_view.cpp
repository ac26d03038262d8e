#include "views/ranks_view.h"

#include <qcustomplot.h>

#include <QCheckBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QHelpEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTableView>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>

#include "analysis/trace_ranks.h"
#include "models/format.h"
#include "models/missing_records.h"
#include "models/run_document.h"
#include "results/rank_figures.h"
#include "views/parts/rank_bars.h"
#include "widgets/column_fit.h"
#include "widgets/plot_style.h"
#include "widgets/read_only_table.h"
#include "widgets/table_items.h"

namespace stepscope::ui {

namespace {

// A legend row for a colour drawn by RankBars: an empty series carries the swatch.
void addSwatch(QCustomPlot* plot, const QString& name, const QColor& color) {
    auto* swatch = new QCPBars(plot->xAxis, plot->yAxis);
    swatch->setName(name);
    swatch->setBrush(color);
    swatch->setPen(Qt::NoPen);
}

QString msText(double us) {
    return QCoreApplication::translate("RanksView", "%1 ms").arg(formatMs(us / 1e3));
}

// What of a document's ranks has arrived: each rank's steps, and its memory
// (which comes with the result). A live run's view redraws when it grows.
int rankRecordsArrived(const RunDocument* document) {
    if (!document || !document->result.distributed) {
        return 0;
    }
    int arrived = 0;
    for (const RankRecord& rank : document->result.distributed->ranks) {
        arrived += int(rank.steps.size() + rank.memory.peakBytes.has_value());
    }
    return arrived;
}

}  // namespace

RanksView::RanksView(QWidget* parent) : RunView(parent) {
    caption_ = new QLabel;
    caption_->setWordWrap(true);
    caption_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    caption_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    align_ = new QCheckBox(tr("Align each step to rank 0's start"));
    align_->setChecked(true);
    align_->setToolTip(
        tr("On: each rank's step k is moved to start where rank 0's does, as ranks on other "
           "machines keep other clocks. Off: every rank on the clock the ranks share."));
    connect(align_, &QCheckBox::toggled, this, [this] { draw(); });

    plot_ = new QCustomPlot;
    stylePlot(plot_, tr("time from rank 0's first step (ms)"), QString());
    plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot_->axisRect()->setRangeDrag(Qt::Horizontal);
    plot_->axisRect()->setRangeZoom(Qt::Horizontal);
    keepSaneSize(plot_);
    plot_->setMinimumHeight(200);
    plot_->legend->setWrap(6);
    plot_->setMouseTracking(true);
    plot_->installEventFilter(this);
    setNoData(plot_, tr("No run selected"));

    table_ = new QStandardItemModel(0, ColumnCount, this);
    table_->setHorizontalHeaderLabels(
        {tr("rank"), tr("step\nms"), tr("compute\nms"), tr("comm\nms"), tr("exposed\nms"),
         tr("overlap"), tr("wait\nms"), tr("collec-\ntives"), tr("bytes"), tr("peak\nmemory")});
    for (int column = 1; column < ColumnCount; ++column) {
        table_->horizontalHeaderItem(column)->setToolTip(
            column == OverlapColumn ? tr("The share of communication time that ran under compute "
                                         "(HTA's overlap), over the measured steps")
            : column == PeakColumn  ? tr("The rank's peak over the whole run")
                                    : tr("Per measured step: the total over the measured steps "
                                          "÷ their number (step: the median)"));
    }
    tableView_ = readOnlyTable(table_);
    tableView_->verticalHeader()->hide();
    tableView_->setSortingEnabled(true);
    new ColumnFit(tableView_);

    auto* top = new QWidget;
    auto* topLayout = new QVBoxLayout(top);
    topLayout->setContentsMargins(0, 0, 0, 0);
    auto* controls = new QHBoxLayout;
    controls->addWidget(align_);
    controls->addStretch(1);
    topLayout->addLayout(controls);
    topLayout->addWidget(plot_, 1);
    auto* splitter = new QSplitter(Qt::Vertical);
    splitter->addWidget(top);
    splitter->addWidget(tableView_);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 1);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(caption_);
    layout->addWidget(splitter, 1);
}

RanksView::~RanksView() = default;

void RanksView::showRun(const RunDocument* document) {
    const int id = document ? document->id : -1;
    const size_t steps = size_t(rankRecordsArrived(document));
    const bool same = id == shownId_;
    if (same && steps == shownSteps_ && document_ == document) {
        return;  // nothing new; a live run's other views grow, not its ranks
    }
    // A range the user zoomed or panned to stays as the run grows; the
    // whole run otherwise, its new steps in view.
    const QCPRange kept = plot_->xAxis->range();
    const bool keepRange = same && shownSteps_ > 0 &&
                           (kept.lower != fullRange_.first || kept.upper != fullRange_.second);
    shownId_ = id;
    shownSteps_ = steps;
    document_ = document;
    draw();
    if (keepRange) {
        plot_->xAxis->setRange(kept);  // what the user zoomed into stays in view
        plot_->replot();
    }
}

QString RanksView::captionText() const {
    return caption_->text();
}

void RanksView::draw() {
    clearHighlight();
    plot_->clearItems();
    plot_->clearPlottables();
    outlines_.clear();
    table_->setRowCount(0);
    const DistributedRun* run = shownRun();
    if (!run) {
        timeline_ = RankTimeline();
        caption_->setText(missingRecordsText(document_, Records::Ranks));
        plot_->legend->setVisible(false);
        plot_->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
        plot_->yAxis->setRangeReversed(false);
        setNoData(plot_, missingRecordsNote(document_, Records::Ranks));
        plot_->replot();
        return;
    }
    setNoData(plot_, QString());
    timeline_ = RankTimeline(*run, align_->isChecked());
    new RankBars(plot_, timeline_);
    addLegend();
    drawStepMarks();
    const int lanes = int(timeline_.lanes().size());
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    for (int lane = 0; lane < lanes; ++lane) {
        ticker->addTick(lane, tr("rank %1").arg(timeline_.lanes()[size_t(lane)].rank));
    }
    plot_->yAxis->setTicker(ticker);
    plot_->yAxis->setRangeReversed(true);
    plot_->yAxis->setRange(-0.6, lanes - 0.4);
    fullRange_ = {0, timeline_.endMs() > 0 ? timeline_.endMs() * 1.02 : 1};
    plot_->xAxis->setRange(fullRange_.first, fullRange_.second);
    fillTable(*run);
    caption_->setText(caption(*run) +
                      tr(" Wheel zooms, drag pans; hover a collective to see it on every rank."));
    plot_->replot();
}

// A distributed run's ranks, or a profiler trace's (its ranks with
// communication, as the trace analysis found it); nullptr for neither.
const DistributedRun* RanksView::shownRun() {
    if (!document_) {
        return nullptr;
    }
    if (const TraceRank* trace = document_->trace()) {
        if (!traceRun_ || traceOf_ != &trace->all()) {
            traceRun_ = distributedRunOfTrace(trace->all());
            traceOf_ = &trace->all();
        }
        return traceRun_->ranks.empty() ? nullptr : &*traceRun_;
    }
    const auto& distributed = document_->result.distributed;
    return distributed && !distributed->ranks.empty() ? &*distributed : nullptr;
}

// A swatch for each phase the lanes hold, in a step's order, then the collectives.
void RanksView::addLegend() {
    for (const char* phase : {"forward", "backward", "comm_wait", "optimizer", "compute"}) {
        const bool present =
            std::any_of(timeline_.lanes().begin(), timeline_.lanes().end(), [&](const auto& lane) {
                return std::any_of(lane.phases.begin(), lane.phases.end(),
                                   [&](const auto& bar) { return bar.phase == phase; });
            });
        if (present) {
            const QString name = QString(phase).replace('_', ' ');
            addSwatch(plot_, tr(qPrintable(name)), phaseColor(name));
        }
    }
    addSwatch(plot_, tr("collective"), RankBars::collectiveColor());
    addSwatch(plot_, tr("exposed communication"), RankBars::exposedColor());
    plot_->legend->setVisible(true);
}

QString RanksView::caption(const DistributedRun& run) const {
    if (const TraceRank* trace = document_->trace()) {
        const RankAnalysis* any = trace->all().empty() ? nullptr : &trace->all().front();
        QString text =
            tr("%1 of the profiler trace's %2 ranks with collectives (aligned: each trace moved "
               "to start with rank 0's); communication from %3, matched across the ranks by "
               "order.")
                .arg(run.ranks.size())
                .arg(trace->rankCount())
                .arg(any ? QString::fromStdString(std::string(toString(any->communicationSource)))
                         : QString());
        if (run.straggler) {
            text += tr(" Straggler: rank %1.").arg(run.straggler->rank);
        }
        return text;
    }
    const RunConfig& config = document_->result.config;
    QString text =
        tr("%1 ranks, %2 over %3.")
            .arg(config.ranks)
            .arg(QString::fromStdString(config.parallel), QString::fromStdString(config.backend));
    if (const std::string nodes = rankNodesText(run); config.nodes > 1 && !nodes.empty()) {
        text += tr(" On %1 nodes: %2.").arg(config.nodes).arg(QString::fromStdString(nodes));
    }
    if (run.gate) {
        text += run.gate->ok ? tr(" Checked against one process: passed.")
                             : tr(" Checked against one process: FAILED.");
    }
    if (run.straggler) {
        text += tr(" Straggler: rank %1 (the others waited %2 a step more for it).")
                    .arg(run.straggler->rank)
                    .arg(msText(run.straggler->othersWaitUs /
                                std::max<double>(1, document_->result.summary.total.count)));
    }
    if (const std::string caveat = overlapCaveat(config); !caveat.empty()) {
        text += " " + QString::fromStdString(caveat) + ".";
    }
    return text;
}

// A dashed line where each of rank 0's steps starts, named at the top.
void RanksView::drawStepMarks() {
    for (const RankTimeline::StepMark& step : timeline_.steps()) {
        auto* line = new QCPItemStraightLine(plot_);
        line->setLayer("background");
        line->point1->setCoords(step.startMs, 0);
        line->point2->setCoords(step.startMs, 1);
        line->setPen(QPen(QColor(150, 150, 150), 1, Qt::DashLine));
        auto* label = new QCPItemText(plot_);
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
        label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
        label->position->setCoords(step.startMs, 0);
        label->setText(step.warmup ? tr(" warm-up %1").arg(step.step)
                                   : tr(" step %1").arg(step.step));
        label->setColor(step.warmup ? QColor(150, 150, 150) : QColor(60, 60, 60));
        label->setClipToAxisRect(true);
    }
}

void RanksView::fillTable(const DistributedRun& run) {
    tableView_->setSortingEnabled(false);
    for (const RankRecord& rank : run.ranks) {
        const RankStepFigures f = perMeasuredStep(rank);
        QList<QStandardItem*> row;
        row << numberItem(qlonglong(f.rank));
        row << (f.stepMs ? numberItem(*f.stepMs, formatMs(*f.stepMs)) : new QStandardItem("–"));
        for (double ms : {f.computeMs, f.communicationMs, f.exposedMs}) {
            row << numberItem(ms, formatMs(ms));
        }
        row << numberItem(f.overlapPercent, formatPercent(f.overlapPercent / 100));
        row << numberItem(f.waitMs, formatMs(f.waitMs));
        row << numberItem(f.collectives, QString::number(f.collectives, 'g', 4));
        row << numberItem(f.bytes, bytesText(int64_t(f.bytes)));
        row << (f.peakBytes ? bytesItem(*f.peakBytes) : new QStandardItem("–"));
        table_->appendRow(row);
    }
    tableView_->setSortingEnabled(true);
    tableView_->sortByColumn(RankColumn, Qt::AscendingOrder);
}

void RanksView::clearHighlight() {
    for (QCPItemRect* outline : outlines_) {
        plot_->removeItem(outline);
    }
    outlines_.clear();
}

QString RanksView::describePhase(int lane, double ms) const {
    for (const auto& phase : timeline_.lanes()[size_t(lane)].phases) {
        if (phase.startMs <= ms && ms <= phase.endMs) {
            return tr("rank %1, step %2: %3, %4")
                .arg(timeline_.lanes()[size_t(lane)].rank)
                .arg(phase.step)
                .arg(QString::fromStdString(phase.phase).replace('_', ' '),
                     msText((phase.endMs - phase.startMs) * 1e3));
        }
    }
    return QString();
}

QString RanksView::describe(RankTimeline::Place place) const {
    const CollectiveSpan& span = timeline_.span(place);
    QString text = tr("rank %1: %2 #%3 of group %4\n%5")
                       .arg(timeline_.lanes()[size_t(place.first)].rank)
                       .arg(QString::fromStdString(span.op))
                       .arg(span.sequence)
                       .arg(QString::fromStdString(span.group), bytesText(span.bytes));
    if (!span.dtype.empty()) {
        text += " " + QString::fromStdString(span.dtype);
    }
    if (!span.phase.empty()) {
        text += tr(", issued in %1 of step %2")
                    .arg(QString::fromStdString(span.phase).replace('_', ' '))
                    .arg(span.step);
    }
    text += span.blocking ? tr(" (blocking)") : tr(" (async)");
    text += tr("\nran %1").arg(msText(span.endUs - span.startUs));
    if (const MatchedCollective* matched = timeline_.matched(place)) {
        text += tr(": transfer %1 (the shortest across the ranks), this rank waited %2")
                    .arg(msText(matched->transferUs), msText(timeline_.waitUs(place)));
    } else {
        text += tr(": not matched (a warm-up step's, or not on every rank)");
    }
    return text;
}

QString RanksView::hoverAt(const QPointF& pixel) {
    clearHighlight();
    if (timeline_.empty()) {
        return QString();
    }
    const double ms = plot_->xAxis->pixelToCoord(pixel.x());
    const double y = plot_->yAxis->pixelToCoord(pixel.y());
    const int lane = int(std::lround(y));
    if (lane < 0 || lane >= int(timeline_.lanes().size())) {
        return QString();
    }
    const double slackMs = std::abs(plot_->xAxis->pixelToCoord(3) - plot_->xAxis->pixelToCoord(0));
    const bool inPhases = y < lane - 0.02;
    const int index = inPhases ? -1 : timeline_.collectiveAt(lane, ms, slackMs);
    if (index < 0) {
        return describePhase(lane, ms);
    }
    for (const RankTimeline::Place& same : timeline_.sameCollective({lane, index})) {
        const auto& bar = timeline_.lanes()[size_t(same.first)].collectives[size_t(same.second)];
        auto* outline = new QCPItemRect(plot_);
        outline->topLeft->setCoords(bar.startMs, RankBars::collectiveRow(same.first).first - 0.04);
        outline->bottomRight->setCoords(bar.endMs,
                                        RankBars::collectiveRow(same.first).second + 0.04);
        outline->setPen(QPen(Qt::black, 2));
        outline->setBrush(Qt::NoBrush);
        outlines_.push_back(outline);
    }
    return describe({lane, index});
}

bool RanksView::eventFilter(QObject* watched, QEvent* event) {
    if (watched == plot_ && event->type() == QEvent::MouseMove) {
        const auto* move = static_cast<QMouseEvent*>(event);
        const bool had = !outlines_.empty();
        const QString text = hoverAt(move->position());
        if (text.isEmpty()) {
            QToolTip::hideText();
        } else {
            QToolTip::showText(move->globalPosition().toPoint(), text, plot_);
        }
        if (had || !outlines_.empty()) {
            plot_->replot(QCustomPlot::rpQueuedReplot);
        }
    } else if (watched == plot_ && event->type() == QEvent::Leave && !outlines_.empty()) {
        clearHighlight();
        plot_->replot(QCustomPlot::rpQueuedReplot);
    }
    return RunView::eventFilter(watched, event);
}

QList<ExportTarget> RanksView::exportTargets() {
    return {{"ranks", plot_, nullptr}, {"ranks-table", nullptr, table_}};
}

}  // namespace stepscope::ui
