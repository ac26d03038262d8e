// The collective benchmark as a user runs it (`stepscope-cli collective` on 2
// gloo ranks, small sizes), its figures held against nccl-tests' definitions
// worked out here from the times the ranks sent; a size too big for memory
// a row, not a crash; the refusals, each naming its flag; the file read back,
// and a hostile one refused naming its field.
#include <QtTest/QtTest>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include <algorithm>

#include "experiments/collective_benchmark.h"
#include "results/collective_file.h"
#include "results/run_file.h"
#include "test_support.h"

using namespace stepscope;
using test::CliResult;
using test::runCli;

namespace {

// Each call's slowest rank, then their median: what the table's time must be.
double medianOfSlowest(const QJsonArray& timesByRank) {
    std::vector<double> calls;
    for (const QJsonValue& rank : timesByRank) {
        const QJsonArray times = rank.toArray();
        calls.resize(std::max(calls.size(), size_t(times.size())), 0);
        for (qsizetype i = 0; i < times.size(); ++i) {
            calls[size_t(i)] = std::max(calls[size_t(i)], times[i].toDouble());
        }
    }
    std::sort(calls.begin(), calls.end());
    const size_t n = calls.size();
    return n % 2 ? calls[n / 2] : (calls[n / 2 - 1] + calls[n / 2]) / 2;
}

}  // namespace

class TestCollective : public QObject {
    Q_OBJECT

private:
    QTemporaryDir dir_;

private Q_SLOTS:
    void sizesReadAsNcclTestsReadsThem() {
        QCOMPARE(parseByteSize("4096"), std::optional<int64_t>(4096));
        QCOMPARE(parseByteSize("64K"), std::optional<int64_t>(65536));
        QCOMPARE(parseByteSize("1MB"), std::optional<int64_t>(1 << 20));
        QCOMPARE(parseByteSize("1mib"), std::optional<int64_t>(1 << 20));
        QCOMPARE(parseByteSize("2G"), std::optional<int64_t>(int64_t(2) << 30));
        for (const char* bad : {"", "0", "MB", "1.5MB", "1XB", "-1", "2048G", "99999999999999"}) {
            QVERIFY2(!parseByteSize(bad), bad);
        }
        QCOMPARE(busBandwidthFactor("all_reduce", 4), 1.5);
        QCOMPARE(busBandwidthFactor("all_gather", 4), 0.75);
        QCOMPARE(busBandwidthFactor("reduce_scatter", 2), 0.5);
        QCOMPARE(busBandwidthFactor("broadcast", 8), 1.0);
    }

    // Two gloo ranks, every op at two small sizes and one no machine holds.
    void twoGlooRanksGiveNcclTestsFigures() {
        const QString out = dir_.filePath("collective.json");
        const CliResult run =
            runCli({"collective", "--op", "all_reduce,all_gather,reduce_scatter,broadcast",
                    "--sizes", "4K,64K,512G", "--ranks", "2", "--warmup", "1", "--repeats", "3",
                    "--json", "--out", out});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const QJsonObject printed = QJsonDocument::fromJson(run.out).object();
        const QJsonArray rows = printed["rows"].toArray();
        QCOMPARE(rows.size(), 12);
        int oom = 0;
        for (const QJsonValue& value : rows) {
            const QJsonObject row = value.toObject();
            const QString op = row["op"].toString();
            if (row["size_bytes"].toDouble() > 1e9) {
                QCOMPARE(row["status"].toString(), QString("oom"));
                QVERIFY(row["message"].toString().contains("not run"));
                ++oom;
                continue;
            }
            QVERIFY2(row["status"].toString() == "ok", qPrintable(row["message"].toString()));
            QCOMPARE(row["ranks"].toInt(), 2);
            const QJsonArray times = row["times_us"].toArray();
            QCOMPARE(times.size(), 2);
            QCOMPARE(times[0].toArray().size(), 3);
            const double time = medianOfSlowest(times);
            QCOMPARE(row["time_us"].toDouble(), time);
            const double size = row["size_bytes"].toDouble();
            const double algbw = size / time / 1e3;  // GB/s
            QCOMPARE(row["algbw_gbps"].toDouble(), algbw);
            const double factor = op == "all_reduce" ? 2.0 * 1 / 2 : op == "broadcast" ? 1 : 0.5;
            QCOMPARE(row["busbw_gbps"].toDouble(), algbw * factor);
            // gloo has no reduce-scatter of its own: said, not hidden.
            QCOMPARE(row["emulated"].toString(), op == "reduce_scatter" ? "all_reduce" : "");
        }
        QCOMPARE(oom, 4);
        // The file holds the same rows; read back, the same JSON.
        const CollectiveFile file = readCollectiveFile(out.toStdString());
        QCOMPARE(file.rows.size(), size_t(12));
        QCOMPARE(QByteArray::fromStdString(collectiveFileToJson(file)).trimmed(),
                 run.out.trimmed());
        // The table says what gloo did and how the figures are defined.
        const CliResult table = runCli({"collective", "--op", "reduce_scatter", "--sizes", "4K",
                                        "--repeats", "2", "--warmup", "0"});
        QVERIFY2(table.exitCode == 0, qPrintable(table.err));
        QVERIFY(table.out.contains("gloo runs it as an all_reduce of the whole size"));
        QVERIFY(table.out.contains("busbw = algbw × 2(n-1)/n for all_reduce"));
    }

    void badFlagsAreNamedAndRunNothing() {
        const QString out = dir_.filePath("never.json");
        const std::pair<QStringList, QString> cases[] = {
            {{"--op", "alltoall"}, "--op: 'alltoall' is not one of all_reduce"},
            {{"--sizes", "1.5MB"}, "--sizes: '1.5MB' is not a size"},
            {{"--ranks", "1"}, "--ranks: 1 is outside 2..256"},
            {{"--backend", "nccl"}, "--backend: nccl runs on CUDA tensors only"},
            {{"--dtype", "fp64"}, "--dtype: 'fp64' is not one of fp32, bf16, fp16"},
            {{"--repeats", "0"}, "--repeats: 0 is outside 1..10000"},
        };
        for (const auto& [flags, message] : cases) {
            const CliResult run = runCli(QStringList{"collective", "--out", out} + flags);
            QCOMPARE(run.exitCode, 2);
            QVERIFY2(run.err.contains(message), qPrintable(run.err));
            QVERIFY(!QFile::exists(out));
        }
        const CliResult device = runCli({"collective", "--out", "/dev/null"});
        QCOMPARE(device.exitCode, 2);
        QVERIFY2(device.err.contains("--out: '/dev/null' is a character device"),
                 qPrintable(device.err));
    }

    // A file built to break the reader: each refused, naming the field.
    void aHostileFileIsRefusedNamingTheField() {
        const std::pair<const char*, const char*> cases[] = {
            {R"({"format":"stepscope-run"})", "not a StepScope collective file"},
            {R"({"format":"stepscope-collective","version":9,"rows":[]})", "version 9"},
            {R"({"format":"stepscope-collective","version":1,"rows":[{"op":"alltoall"}]})",
             "rows[0].op: 'alltoall'"},
            {R"({"format":"stepscope-collective","version":1,"rows":[{"op":"all_reduce",
               "size_bytes":-4,"ranks":2,"status":"ok"}]})",
             "rows[0].size_bytes"},
            {R"({"format":"stepscope-collective","version":1,"rows":[{"op":"all_reduce",
               "size_bytes":4,"ranks":1,"status":"ok","times_us":[[1],[2]]}]})",
             "rows[0].times_us: expected an array of at most ranks (1)"},
            {R"({"format":"stepscope-collective","version":1,"rows":[{"op":"all_reduce",
               "size_bytes":4,"ranks":2,"status":"ok","times_us":[[1,"x"]]}]})",
             "rows[0].times_us[0]: expected times"},
            {R"({"format":"stepscope-collective","version":1,"rows":[{"op":"all_reduce",
               "size_bytes":1e300,"ranks":2,"status":"ok"}]})",
             "rows[0].size_bytes"},
        };
        for (const auto& [text, message] : cases) {
            try {
                collectiveFileFromJson(text);
                QFAIL(text);
            } catch (const RunFileError& error) {
                QVERIFY2(QString(error.what()).contains(message), error.what());
            }
        }
        // The figures come from the times, whatever the file claims.
        const CollectiveFile file = collectiveFileFromJson(
            R"({"format":"stepscope-collective","version":1,"rows":[{"op":"all_gather",
            "size_bytes":2000,"ranks":2,"status":"ok","time_us":1,"algbw_gbps":99,
            "times_us":[[1,4,2],[3,1,1]]}]})");
        QCOMPARE(file.rows[0].timeUs, 3.0);  // calls: max(1,3)=3, max(4,1)=4, max(2,1)=2
        QCOMPARE(file.rows[0].algbwGbps, 2000.0 / 3 / 1e3);
        QCOMPARE(file.rows[0].busbwGbps, 2000.0 / 3 / 1e3 / 2);
    }
};

QTEST_GUILESS_MAIN(TestCollective)
#include "tst_collective.moc"
