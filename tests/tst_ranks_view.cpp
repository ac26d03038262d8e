// A distributed run in the app, on hand-made ranks whose answers are worked
// out here: the Ranks view's lanes (steps aligned to rank 0's, exposed
// stretches, hover naming a collective and outlining it on every rank, the
// per-rank table against perMeasuredStep's sums), the Memory tab per rank,
// Compare's ranks page and its comm wait row, Step timing's comm wait row;
// the collective benchmark's page on a hand-made file.
#include <QtTest/QtTest>

#include <qcustomplot.h>

#include <QComboBox>
#include <QLabel>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTableWidget>

#include "models/format.h"
#include "models/rank_timeline.h"
#include "models/run_document.h"
#include "pages/collective_page.h"
#include "results/collective_file.h"
#include "results/rank_figures.h"
#include "views/compare_view.h"
#include "views/memory_view.h"
#include "views/parts/rank_bars.h"
#include "views/parts/rank_compare_page.h"
#include "views/parts/rank_memory_panel.h"
#include "views/ranks_view.h"
#include "views/step_timing_view.h"
#include "widgets/plot_style.h"

using namespace stepscope;
using namespace stepscope::ui;

namespace {

CollectiveSpan allReduce(int64_t sequence, int step, double start, double end) {
    CollectiveSpan span;
    span.op = "all_reduce";
    span.group = "0";
    span.sequence = sequence;
    span.bytes = 1024;
    span.dtype = "float32";
    span.phase = "backward";
    span.step = step;
    span.startUs = start;
    span.endUs = end;
    return span;
}

// Two ranks, a warm-up step 0 and measured steps 1 and 2, each 1000 µs
// apart. Rank 1's clock runs 500 µs ahead of rank 0's. Each step: forward
// [0,200], backward [200,600], comm_wait [600,700], optimizer [700,800] (from
// the step's start); one async all-reduce from 400: rank 0 comes early (it
// runs to 700), rank 1 late (from 550 on its clock, to 700): its transfer
// 150, rank 0's wait 150.
RunResult twoRankRun() {
    RunResult run;
    run.config.engine = Engine::PyTorch;
    run.config.ranks = 2;
    run.config.parallel = "overlap";
    run.config.backend = "gloo";
    run.config.warmupSteps = 1;
    run.config.measuredSteps = 2;
    DistributedRun distributed;
    for (int rank = 0; rank < 2; ++rank) {
        const double clock = rank == 0 ? 0 : 500;
        for (int index = 0; index < 3; ++index) {
            RankStep step;
            step.rank = rank;
            step.step.index = index;
            step.step.warmup = index == 0;
            step.step.totalMs = 0.8 + 0.1 * rank;
            step.step.communicationWaitMs = 0.1;
            const double at = clock + 1000.0 * index;
            step.phases = {{index, "forward", at, at + 200},
                           {index, "backward", at + 200, at + 600},
                           {index, "comm_wait", at + 600, at + 700},
                           {index, "optimizer", at + 700, at + 800}};
            step.collectives = {allReduce(index, index, at + (rank == 0 ? 400 : 550), at + 700)};
            addRankStep(distributed, step);
        }
        RankMemoryMarks& memory = rankRecordOf(distributed, rank).memory;
        memory.afterInitBytes = 1 << 20;
        memory.beforeOptimizerBytes = 3 << 20;
        memory.afterOptimizerBytes = (4 + rank) << 20;
        memory.peakBytes = (4 + rank) << 20;
        memory.byCategory = {{"parameters", 1 << 20}, {"activations", std::nullopt}};
    }
    analyzeRanks(distributed);
    run.steps = distributed.ranks[0].steps;
    run.summary = summarizeSteps(run.steps, run.config, std::nullopt);
    run.distributed = distributed;
    return run;
}

RunDocument documentOf(RunResult result, int id) {
    RunDocument document;
    document.id = id;
    document.result = std::move(result);
    document.title = QString("run %1").arg(id);
    return document;
}

// The widget pixel of a time (ms) and a value-axis coordinate on the chart.
QPointF pixelOf(QCustomPlot* plot, double ms, double value) {
    return {plot->xAxis->coordToPixel(ms), plot->yAxis->coordToPixel(value)};
}

}  // namespace

class TestRanksView : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // Aligned: rank 1's steps start where rank 0's do; on the ranks' own
    // clock it runs 0.5 ms later. The exposed stretch: the all-reduce after
    // backward, [600,700] of each step.
    void theTimelineAlignsStepsAndShadesExposedCommunication() {
        const RunResult run = twoRankRun();
        const RankTimeline aligned(*run.distributed, true);
        QCOMPARE(int(aligned.lanes().size()), 2);
        QCOMPARE(int(aligned.steps().size()), 3);
        QVERIFY(aligned.steps()[0].warmup);
        QCOMPARE(aligned.steps()[2].startMs, 2.0);
        const auto& second = aligned.lanes()[1];
        QCOMPARE(second.phases.front().startMs, 0.0);
        QCOMPARE(second.collectives.front().startMs, 0.55);
        const RankTimeline ownClock(*run.distributed, false);
        QCOMPARE(ownClock.lanes()[1].phases.front().startMs, 0.5);
        QCOMPARE(ownClock.lanes()[1].collectives.front().startMs, 1.05);
        // Exposed: each step's [600,700], on both ranks (backward hides the rest).
        for (const auto& lane : aligned.lanes()) {
            QCOMPARE(int(lane.exposed.size()), 3);
            QCOMPARE(lane.exposed[1].first, 1.6);
            QCOMPARE(lane.exposed[1].second, 1.7);
        }
        // Hover's lookups: the collective at 1.45 ms on rank 0 is step 1's;
        // the same on rank 1; matched (measured), with rank 0's wait.
        const int found = aligned.collectiveAt(0, 1.45);
        QCOMPARE(found, 1);
        QCOMPARE(aligned.collectiveAt(0, 1.2), -1);
        QCOMPARE(aligned.collectiveAt(0, 1.2, 0.25), 1);  // within the slack
        const auto same = aligned.sameCollective({0, found});
        QCOMPARE(int(same.size()), 2);
        QCOMPARE(same[1].first, 1);
        QVERIFY(aligned.matched({0, found}));
        QCOMPARE(aligned.matched({0, found})->transferUs, 150.0);
        QCOMPARE(aligned.waitUs({0, found}), 150.0);
        QCOMPARE(aligned.waitUs({1, same[1].second}), 0.0);
        // The warm-up's collective is drawn but not in the figures: unmatched.
        QVERIFY(!aligned.matched({0, 0}));
    }

    // The view: a row per rank of figures per measured step; hover over a
    // collective names it and outlines it on both ranks; over nothing, nothing.
    void theRanksViewShowsEachRankAndFindsACollectiveOnEveryRank() {
        const RunDocument document = documentOf(twoRankRun(), 1);
        RanksView view;
        view.resize(1000, 700);
        view.show();
        view.showRun(&document);
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QStandardItemModel* table = view.ranksModel();
        QCOMPARE(table->rowCount(), 2);
        for (int row = 0; row < 2; ++row) {
            const RankStepFigures f =
                perMeasuredStep(document.result.distributed->ranks[size_t(row)]);
            QCOMPARE(table->item(row, RanksView::RankColumn)->text(), QString::number(row));
            // Per measured step: 250 µs of all-reduce on rank 0, 150 on rank 1, 100 exposed.
            QCOMPARE(f.communicationMs, row == 0 ? 0.3 : 0.15);
            QCOMPARE(f.exposedMs, 0.1);
            QCOMPARE(table->item(row, RanksView::ExposedColumn)->text(), formatMs(0.1));
            QCOMPARE(table->item(row, RanksView::WaitColumn)->data(Qt::UserRole).toDouble(),
                     row == 0 ? 0.15 : 0.0);
        }
        QVERIFY(view.captionText().contains("Straggler: rank 1"));
        QVERIFY(!view.captionText().contains("upper bound"));
        // torch's DDP waits inside autograd: its overlap is said to be a bound.
        RunDocument torchDdp = documentOf(twoRankRun(), 9);
        torchDdp.result.config.parallel = "torch-ddp";
        RanksView other;
        other.showRun(&torchDdp);
        QVERIFY2(other.captionText().contains("torch-ddp waits for its collectives inside "
                                              "autograd") &&
                     other.captionText().contains("overlap is an upper bound"),
                 qPrintable(other.captionText()));
        QCustomPlot* plot = view.plot();
        plot->replot();
        const double row = RankBars::collectiveRow(0).first + 0.1;
        const QString text = view.hoverAt(pixelOf(plot, 1.5, row));
        QVERIFY2(text.contains("all_reduce #1 of group 0"), qPrintable(text));
        QVERIFY2(text.contains("transfer 0.15 ms") || text.contains("transfer " + formatMs(0.15)),
                 qPrintable(text));
        QCOMPARE(view.highlighted(), 2);
        QVERIFY(view.hoverAt(pixelOf(plot, 1.9, RankBars::collectiveRow(0).first + 0.1)).isEmpty());
        QCOMPARE(view.highlighted(), 0);
        // Over a phase: which one, of which step.
        QVERIFY(view.hoverAt(pixelOf(plot, 1.1, RankBars::phaseRow(1).first + 0.1))
                    .contains("step 1: forward"));
        // Turning alignment off draws rank 1 on its own clock.
        view.alignBox()->setChecked(false);
        QCOMPARE(view.timeline().lanes()[1].phases.front().startMs, 0.5);
        QCOMPARE(view.exportTargets().size(), 2);
    }

    // A run of one process, and nothing selected: said, not drawn.
    void aRunOfOneProcessSaysHowToGetRanks() {
        RunResult single;
        single.config.measuredSteps = 1;
        const RunDocument document = documentOf(single, 2);
        RanksView view;
        view.showRun(&document);
        QVERIFY(view.captionText().contains("one process"));
        QCOMPARE(noDataText(view.plot()), QString("Not a distributed run"));
        QCOMPARE(view.ranksModel()->rowCount(), 0);
        view.showRun(nullptr);
        QCOMPARE(noDataText(view.plot()), QString("No run selected"));
    }

    // The Memory tab per rank: the four marks a bar per rank, by category
    // beside them; the rank box narrows it to one.
    void theMemoryTabShowsEachRanksMarks() {
        const RunDocument document = documentOf(twoRankRun(), 3);
        MemoryView view;
        view.showRun(&document);
        RankMemoryPanel* panel = view.rankMemory();
        QVERIFY(panel->isVisibleTo(&view) || !view.isVisible());
        QCOMPARE(panel->rankBox()->count(), 3);  // every rank, rank 0, rank 1
        QCOMPARE(panel->barsShown(), 2);
        auto* rankOne = qobject_cast<QCPBars*>(panel->plot()->plottable(1));
        QVERIFY(rankOne);
        QCOMPARE(rankOne->data()->size(), 4);
        QCOMPARE(rankOne->data()->at(2)->value, 5.0);  // after the optimizer: 5 MiB
        QStandardItemModel* categories = panel->categoriesModel();
        QCOMPARE(categories->rowCount(), 2);
        QCOMPARE(categories->item(1, 0)->text(), QString("activations"));
        QCOMPARE(categories->item(1, 1)->text(), QString("not known"));
        panel->rankBox()->setCurrentIndex(2);
        QCOMPARE(panel->barsShown(), 1);
        QCOMPARE(categories->columnCount(), 2);
        QCOMPARE(view.exportTargets().front().name, QString("memory-per-rank"));
    }

    // Compare: strategies side by side by rank; the comm wait a row of its own.
    void compareSetsStrategiesSideBySide() {
        RunResult naive = twoRankRun();
        naive.config.parallel = "naive";
        const RunDocument first = documentOf(twoRankRun(), 4);
        const RunDocument second = documentOf(naive, 5);
        CompareView view;
        view.showRuns({&first, &second}, {"overlap", "naive"});
        QStandardItemModel* ranks = view.rankCompare()->model();
        QCOMPARE(ranks->rowCount(), 4);
        QCOMPARE(ranks->item(2, RankComparePage::RunColumn)->text(), QString("naive"));
        QCOMPARE(ranks->item(3, RankComparePage::RankColumn)->text(), QString("1"));
        QCOMPARE(ranks->item(0, RankComparePage::PeakColumn)->text(), bytesText(4 << 20));
        QVERIFY(view.pages()->isTabEnabled(view.pages()->indexOf(view.rankCompare())));
        QStringList phases;
        for (int row = 0; row < view.table()->rowCount(); row += 2) {
            phases << view.table()->item(row, CompareView::Phase)->text();
        }
        QCOMPARE(phases, QStringList({"total", "forward", "backward", "comm wait", "optimizer"}));

        RunResult single;
        single.config.measuredSteps = 1;
        single.steps = {StepRecord{0, false, 5.0, 1.0, 2.0, 2.0, std::nullopt, std::nullopt}};
        single.summary = summarizeSteps(single.steps, single.config, std::nullopt);
        const RunDocument one = documentOf(single, 6);
        view.showRuns({&one, &one}, {"a", "b"});
        QVERIFY(!view.pages()->isTabEnabled(view.pages()->indexOf(view.rankCompare())));
        QCOMPARE(view.table()->rowCount(), 8);  // no comm wait rows
    }

    // A line per rank count of the chosen op, its points the rows' figures;
    // a row that did not run is in the table, not on the chart.
    void theCollectivePageDrawsALinePerRankCount() {
        const CollectiveFile file = collectiveFileFromJson(R"({"format":"stepscope-collective",
            "version":1,"torch":"2.11.0","cores":2,"rows":[
            {"op":"all_reduce","size_bytes":1000,"ranks":2,"status":"ok","times_us":[[2,4],[3,1]]},
            {"op":"all_reduce","size_bytes":8000,"ranks":2,"status":"ok","times_us":[[10],[8]]},
            {"op":"all_reduce","size_bytes":1000,"ranks":4,"status":"ok",
             "times_us":[[5],[5],[5],[5]]},
            {"op":"all_reduce","size_bytes":99000,"ranks":4,"status":"oom","message":"not run"},
            {"op":"broadcast","size_bytes":1000,"ranks":2,"status":"ok","times_us":[[1],[1]]}]})");
        CollectivePage page;
        page.showFile(file, "/tmp/c.json");
        QCOMPARE(page.opBox()->count(), 2);
        QCOMPARE(page.opBox()->currentText(), QString("all_reduce"));
        QCOMPARE(page.plot()->graphCount(), 2);  // 2 ranks, 4 ranks
        QCOMPARE(page.plot()->graph(0)->data()->size(), 2);
        QCOMPARE(page.plot()->graph(1)->data()->size(), 1);  // the oom row is not a point
        // Time: each call's slowest rank (3, 4), their median 3.5 µs.
        QCOMPARE(page.plot()->graph(0)->data()->at(0)->value, 3.5);
        page.metricBox()->setCurrentIndex(CollectivePage::BusBandwidth);
        // busbw = 1000 B / 3.5 µs / 1e3 × 2(2−1)/2 GB/s
        QCOMPARE(page.plot()->graph(0)->data()->at(0)->value, 1000 / 3.5 / 1e3);
        QCOMPARE(page.plot()->graph(1)->data()->at(0)->value, 1000 / 5.0 / 1e3 * 1.5);
        QCOMPARE(page.rowsModel()->rowCount(), 5);
        QCOMPARE(page.rowsModel()->item(3, CollectivePage::NotesColumn)->text(),
                 QString("not run"));
        page.opBox()->setCurrentIndex(1);
        QCOMPARE(page.plot()->graphCount(), 1);
        QVERIFY(page.captionText().startsWith("c.json: 5 rows"));
    }

    void stepTimingSummarisesTheWaitForCommunication() {
        const RunDocument document = documentOf(twoRankRun(), 7);
        StepTimingView view;
        view.showRun(&document);
        QTableWidget* summary = view.summaryTable();
        QCOMPARE(summary->verticalHeaderItem(3)->text(), QString("comm wait"));
        QVERIFY(!summary->isRowHidden(3));
        QCOMPARE(summary->item(3, 2)->text(), formatMs(0.1));
        RunResult single;
        single.config.measuredSteps = 1;
        single.steps = {StepRecord{0, false, 5.0, 1.0, 2.0, 2.0, std::nullopt, std::nullopt}};
        single.summary = summarizeSteps(single.steps, single.config, std::nullopt);
        const RunDocument one = documentOf(single, 8);
        view.showRun(&one);
        QVERIFY(summary->isRowHidden(3));
    }
};

QTEST_MAIN(TestRanksView)
#include "tst_ranks_view.moc"
