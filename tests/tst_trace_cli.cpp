// `stepscope-cli breakdown` on PyTorch profiler traces (issue 30, item 6): a
// folder of rank traces and a single .json.gz give HTA's figures, which the
// hand count of tst_kineto_trace holds; what is not a trace is refused with
// its own message and exit 2, and a run file still gets the run's breakdown.
#include <QtTest/QtTest>

#include <QProcess>
#include <QTemporaryDir>

#include <nlohmann/json.hpp>

#include <fstream>
#include <map>

#include "test_support.h"

namespace {

QString traces(const QString& relative) {
    return stepscope::test::sourcePath("tests/data/traces/" + relative);
}

nlohmann::json breakdownJson(const QStringList& arguments) {
    const stepscope::test::CliResult result =
        stepscope::test::runCli(QStringList{"breakdown"} + arguments + QStringList{"--json"});
    if (result.exitCode != 0) {
        qWarning("%s", qPrintable(result.err));
        return {};
    }
    return nlohmann::json::parse(result.out.toStdString());
}

// Rank traces recorded here, as a user's job writes them: 2 gloo ranks
// (torchrun) training the reference LM with our naive or overlapped DDP.
QString recordRankTraces(const QString& strategy, const QString& folder) {
    QProcess torchrun;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert("PYTHONPATH", stepscope::test::sourcePath("python"));
    environment.insert("OMP_NUM_THREADS", "1");
    torchrun.setProcessEnvironment(environment);
    torchrun.start(
        stepscope::test::pythonExecutable(),
        {"-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2",
         stepscope::test::sourcePath("tests/data/record_rank_traces.py"), strategy, folder});
    if (!torchrun.waitForFinished(240000) || torchrun.exitCode() != 0) {
        return "torchrun failed: " + QString::fromUtf8(torchrun.readAllStandardError().right(3000));
    }
    return {};
}

}  // namespace

class TestTraceCli : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // Issue 42: communication on gloo's threads, where HTA gives NaN. Naive
    // DDP all-reduces after backward, blocking: nothing computes under it.
    // The overlapped one starts each all-reduce during backward.
    void recordedGlooTracesShowTheOverlappedDdpOverlapping() {
        QTemporaryDir dir;
        std::map<std::string, nlohmann::json> out;
        for (const QString strategy : {"naive", "overlap"}) {
            const QString folder = dir.filePath(strategy);
            const QString error = recordRankTraces(strategy, folder);
            QVERIFY2(error.isEmpty(), qPrintable(error));
            out[strategy.toStdString()] = breakdownJson({folder});
            QCOMPARE(out[strategy.toStdString()].at("ranks").size(), size_t(2));
        }
        // The LM's parameters: an embedding, per layer 4 attention and 3 SwiGLU
        // weights and 2 norms, a final norm and the head; one all-reduce each
        // per step, over the 2 steps HTA's rule keeps of the 3 recorded.
        const int64_t allReduces = (1 + 2 * (4 + 3 + 2) + 1 + 1) * 2;
        double meanOverlap[2] = {0, 0};
        int which = 0;
        for (const std::string strategy : {"naive", "overlap"}) {
            const nlohmann::json& result = out[strategy];
            for (const nlohmann::json& rank : result.at("ranks")) {
                const nlohmann::json& communication = rank.at("communication");
                QCOMPARE(communication.at("source").get<std::string>(),
                         std::string("gloo threads"));
                QCOMPARE(communication.at("collectives").get<int64_t>(), allReduces);
                meanOverlap[which] += communication.at("overlap_pct").get<double>() / 2;
            }
            const nlohmann::json& across = result.at("across_ranks");
            QCOMPARE(across.at("collectives").size(), size_t(allReduces));
            QCOMPARE(across.at("unmatched").get<int64_t>(), int64_t(0));
            ++which;
        }
        QVERIFY2(meanOverlap[0] < 1.0, qPrintable(QString::number(meanOverlap[0])));
        QVERIFY2(meanOverlap[1] > meanOverlap[0],
                 qPrintable(QString("%1 vs naive %2").arg(meanOverlap[1]).arg(meanOverlap[0])));
    }

    // The hand-counted timeline of gpu_two_ranks/rank0.json (tst_kineto_trace.cpp).
    void aFolderGivesOneEntryPerRank() {
        const nlohmann::json out = breakdownJson({traces("gpu_two_ranks")});
        QCOMPARE(out.at("source").get<std::string>(), std::string("kineto"));
        const nlohmann::json& ranks = out.at("ranks");
        QCOMPARE(int(ranks.size()), 2);
        const nlohmann::json& rank0 = ranks[0];
        QCOMPARE(rank0.at("rank").get<int>(), 0);
        QCOMPARE(ranks[1].at("rank").get<int>(), 1);
        QCOMPARE(rank0.at("span_us").get<double>(), 170.0);
        const nlohmann::json& temporal = rank0.at("temporal");
        QCOMPARE(temporal.at("idle_us").get<double>(), 33.0);
        QCOMPARE(temporal.at("compute_us").get<double>(), 81.0);
        QCOMPARE(temporal.at("non_compute_us").get<double>(), 56.0);
        QVERIFY(std::abs(temporal.at("compute_pct").get<double>() - 100.0 * 81 / 170) < 1e-9);
        const nlohmann::json& types = rank0.at("kernel_types");
        QCOMPARE(types.at("COMPUTATION").get<double>(), 30.0);
        QCOMPARE(types.at("COMPUTATION overlapping COMMUNICATION").get<double>(), 34.0);
        QCOMPARE(types.at("MEMORY").get<double>(), 2.0);
        bool memset = false;
        for (const nlohmann::json& kernel : rank0.at("kernels")) {
            if (kernel.at("name") == "Memset (Device)") {
                memset = kernel.at("calls") == 1 && kernel.at("total_us") == 2.0;
            }
        }
        QVERIFY(memset);  // memcpy and memset rows by their own names, as HTA lists them
        // Per stream: stream 20 runs the two analysed allreduces, stream 21 two memcpys.
        std::map<int, std::pair<int, double>> streams;  // rows, µs
        for (const nlohmann::json& kernel : rank0.at("kernels_per_stream")) {
            auto& [rows, us] = streams[kernel.at("stream").get<int>()];
            ++rows;
            us += kernel.at("total_us").get<double>();
        }
        QCOMPARE(int(streams.size()), 3);
        QCOMPARE(streams.at(20), std::make_pair(1, 100.0));
        QCOMPARE(streams.at(21), std::make_pair(2, 22.0));
        QCOMPARE(streams.at(7), std::make_pair(4, 88.0));  // gemm 70, add 11, memset 2, sync 5
        QCOMPARE(rank0.at("launch").at("launches").get<int>(), 10);
        QCOMPARE(rank0.at("launch").at("short_kernels").get<int>(), 3);
        QCOMPARE(int(rank0.at("steps").size()), 3);
        QCOMPARE(rank0.at("steps")[0].at("kernel_us").get<double>(), 119.0);
        QVERIFY(!rank0.at("steps")[2].at("analysed").get<bool>());
    }

    void aSingleGzipTraceAndTheTable() {
        const nlohmann::json out = breakdownJson({traces("gpu_two_ranks/rank1.pt.trace.json.gz")});
        QCOMPARE(int(out.at("ranks").size()), 1);
        QCOMPARE(out.at("ranks")[0].at("rank").get<int>(), 1);
        const stepscope::test::CliResult table =
            stepscope::test::runCli({"breakdown", traces("gpu_two_ranks/rank0.json")});
        QCOMPARE(table.exitCode, 0);
        QVERIFY(table.out.contains("| compute | 81.000 | 47.65 |"));
        QVERIFY(table.out.contains("| COMPUTATION overlapping COMMUNICATION | 34.000 |"));
        QVERIFY(table.out.contains("aten::mm"));
    }

    void whatIsNotATraceIsRefused() {
        QTemporaryDir dir;
        const QString gz = traces("gpu_two_ranks/rank1.pt.trace.json.gz");
        QFile whole(gz);
        QVERIFY(whole.open(QIODevice::ReadOnly));
        const QByteArray bytes = whole.readAll();
        QFile truncated(dir.filePath("cut.json.gz"));
        QVERIFY(truncated.open(QIODevice::WriteOnly));
        truncated.write(bytes.left(bytes.size() / 2));
        truncated.close();
        QFile other(dir.filePath("other.json"));
        QVERIFY(other.open(QIODevice::WriteOnly));
        other.write(R"({"name": "not a trace"})");
        other.close();
        QDir(dir.path()).mkdir("empty");
        const QList<QPair<QStringList, QString>> cases = {
            {{stepscope::test::sourcePath("docs/breakdown-h100.png")}, "a PNG image"},
            {{truncated.fileName()}, "truncated gzip"},
            {{other.fileName()}, "no traceEvents (its keys: name)"},
            {{dir.filePath("empty")}, "no trace files"},
            {{traces("gpu_fractional/trace.json"), "--by", "kernel"},
             "--phase, --by and --flops are for run files"},
        };
        for (const auto& [arguments, says] : cases) {
            const stepscope::test::CliResult result =
                stepscope::test::runCli(QStringList{"breakdown"} + arguments);
            QCOMPARE(result.exitCode, 2);
            QVERIFY2(result.err.contains(says), qPrintable(result.err + " | wanted: " + says));
            QVERIFY(result.out.isEmpty());
        }
    }
};

QTEST_GUILESS_MAIN(TestTraceCli)
#include "tst_trace_cli.moc"
