// PyTorch profiler traces in the app (issue 30, items 2, 3 and 5): a folder of
// rank traces opens off the UI thread as one recording, a run per rank, into
// the Breakdown (kernels by name with HTA's kernel types, the ranks' table
// with the slowest rank per step) and the Timeline (streams, host threads,
// profiler-step bands, hover); what is not a trace is refused with the
// reader's own message in the dialog.
#include <QtTest/QtTest>

#include <qcustomplot.h>

#include <QMessageBox>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QTemporaryDir>

#include "main_window.h"
#include "views/breakdown_view.h"
#include "views/kernel_timeline_view.h"
#include "views/trace_ranks_panel.h"

using namespace stepscope;
using namespace stepscope::ui;

namespace {

const QString kTraces = QStringLiteral(STEPSCOPE_TRACES);

const BreakdownRow* rowNamed(const BreakdownView& view, const std::string& name) {
    for (const BreakdownRow& row : view.rows()) {
        if (row.name == name) {
            return &row;
        }
    }
    return nullptr;
}

}  // namespace

class TestTraceApp : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    // gpu_two_ranks: the hand-counted figures of tst_kineto_trace.cpp.
    void aFolderOfRankTracesOpensAsOneRecording() {
        MainWindow window;
        window.show();
        QVERIFY(window.openRunFile(kTraces + "/gpu_two_ranks"));
        QCOMPARE(int(window.documents().size()), 2);
        const RunDocument& rank0 = window.documents().front();
        QCOMPARE(rank0.traceRank, int64_t(0));
        QCOMPARE(window.documents().back().traceRank, int64_t(1));
        window.selectDocument(rank0.id);

        BreakdownView* breakdown = window.breakdownView();
        QVERIFY(window.selectTab(breakdown->title()));
        breakdown->setGrouping("kernel", "all");
        const BreakdownRow* gemm = rowNamed(
            *breakdown,
            "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_16x4_tn_align4>(Params)");
        QVERIFY(gemm);
        QCOMPARE(gemm->calls, int64_t(2));
        QVERIFY(std::abs(gemm->totalMs - 0.070) < 1e-12);
        QCOMPARE(gemm->category, std::string("COMPUTATION"));
        QVERIFY(std::abs(gemm->msPerStep - 0.035) < 1e-12);  // two analysed profiler steps
        const BreakdownRow* memset = rowNamed(*breakdown, "Memset (Device)");
        QVERIFY(memset && memset->category == "MEMORY");

        TraceRanksPanel* panel = breakdown->tracePanel();
        QVERIFY(!panel->isHidden());
        QStandardItemModel* ranks = panel->ranksModel();
        QCOMPARE(ranks->rowCount(), 2);
        QCOMPARE(ranks->item(0, TraceRanksPanel::IdleColumn)->text(), QString("33.0 (19.4%)"));
        QCOMPARE(ranks->item(0, TraceRanksPanel::ComputeColumn)->text(), QString("81.0 (47.6%)"));
        QCOMPARE(ranks->item(0, TraceRanksPanel::StepColumn)->text(), QString("100.0"));
        // Each analysed step has one slowest rank, marked on its row.
        QStringList slowest;
        for (int row = 0; row < 2; ++row) {
            slowest << ranks->item(row, TraceRanksPanel::SlowestColumn)->text();
        }
        QVERIFY2(!slowest.join(", ").isEmpty(), qPrintable(slowest.join("|")));
        QStandardItemModel* types = panel->kernelTypesModel();
        QCOMPARE(types->rowCount(), 6);
        QCOMPARE(types->item(0, 1)->text(), QString("COMMUNICATION"));
        QCOMPARE(types->item(0, 0)->text(), QString("44.0"));
        QVERIFY(panel->summaryText().contains("rank 0 of 2"));

        KernelTimelineView* timeline = window.timelineView();
        QVERIFY(window.selectTab(timeline->title()));
        const QStringList tracks = timeline->tracks();
        for (const char* track : {"stream 7", "stream 20", "stream 21"}) {
            QVERIFY2(tracks.contains(track), qPrintable(tracks.join(", ")));
        }
        const int stream7 = int(tracks.indexOf("stream 7"));
        // The first gemm runs [20, 60) µs on the trace's clock; the timeline starts at 0 µs.
        const TimelineSpan* under = timeline->spanAt(30.0, stream7);
        QVERIFY(under);
        QVERIFY(timeline->describe(*under).contains("cutlass"));
        bool band = false;
        for (const TimelineSpan& span : rank0.result.timeline.spans) {
            band |= span.kind == SpanKind::Range && span.name == "ProfilerStep#2";
        }
        QVERIFY(band);
        QVERIFY(timeline->plot()->itemCount() > timeline->drawnSpans());  // the bands, too

        // A run's breakdown hides the panel again.
        breakdown->showRun(nullptr);
        QVERIFY(panel->isHidden());
    }

    void aSingleGzipTraceOpens() {
        MainWindow window;
        QVERIFY(window.openRunFile(kTraces + "/gpu_two_ranks/rank1.pt.trace.json.gz"));
        QCOMPARE(int(window.documents().size()), 1);
        QCOMPARE(window.documents().front().traceRank, int64_t(1));
    }

    void aBrokenTraceSaysWhatTheReaderSays() {
        QTemporaryDir dir;
        QFile whole(kTraces + "/gpu_two_ranks/rank1.pt.trace.json.gz");
        QVERIFY(whole.open(QIODevice::ReadOnly));
        const QByteArray bytes = whole.readAll();
        QFile cut(dir.filePath("cut.pt.trace.json.gz"));
        QVERIFY(cut.open(QIODevice::WriteOnly));
        cut.write(bytes.left(bytes.size() / 2));
        cut.close();
        MainWindow window;
        window.show();
        QVERIFY(!window.openRunFile(cut.fileName()));
        QVERIFY(window.lastErrorDialog() && window.lastErrorDialog()->isVisible());
        const QString text = window.lastErrorDialog()->text();
        QVERIFY2(text.contains("truncated gzip") && text.contains(cut.fileName()),
                 qPrintable(text));
        QVERIFY(window.documents().empty());
    }
};

QTEST_MAIN(TestTraceApp)
#include "tst_trace_app.moc"
