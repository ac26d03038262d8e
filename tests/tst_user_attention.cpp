// The user's own attention (--py-attention), as a student brings it: a
// module written here, run by the CLI in the attention grid and in the
// model. Held against independent references: the gate's tolerance for a
// kernel that is right and one off by a scale, Python's own exception text,
// and the loss of the same run with naive attention.
#include <QtTest/QtTest>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include "results/attention_file.h"
#include "results/run_file.h"
#include "test_support.h"

using namespace stepscope;
using test::CliResult;
using test::runCli;

namespace {

// A FlashAttention-shaped autograd Function (saves O, Q, K, V and one
// logsumexp, recomputes in backward), with the softmax scale as a parameter
// so that the wrong one differs from the right one only there; a function
// that raises; and a module that raises when imported.
const char* kUserModule = R"(import torch


def _scores(q, k, scale, is_causal):
    s = (q @ k.transpose(-1, -2)) * scale
    if is_causal:
        n, m = q.shape[-2], k.shape[-2]
        keep = torch.ones(n, m, dtype=torch.bool, device=q.device).tril()
        s = s.masked_fill(~keep, float("-inf"))
    return s


def _function(scale_of):
    class Attention(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, is_causal=False):
            scale = scale_of(q.shape[-1])
            s = _scores(q, k, scale, is_causal)
            lse = torch.logsumexp(s, dim=-1)
            o = torch.exp(s - lse[..., None]) @ v
            ctx.save_for_backward(q, k, v, o, lse)
            ctx.is_causal, ctx.scale = is_causal, scale
            return o

        @staticmethod
        def backward(ctx, do):
            q, k, v, o, lse = ctx.saved_tensors
            p = torch.exp(_scores(q, k, ctx.scale, ctx.is_causal) - lse[..., None])
            dv = p.transpose(-1, -2) @ do
            dp = do @ v.transpose(-1, -2)
            ds = p * (dp - (o * do).sum(-1, keepdim=True)) * ctx.scale
            return ds @ k, ds.transpose(-1, -2) @ q, dv, None

    return Attention


Flash = _function(lambda d: d ** -0.5)
OffByAScale = _function(lambda d: 1.0 / d)


def unfinished(q, k, v, is_causal):
    raise NotImplementedError("the backward pass is next week")


def counted(q, k, v, is_causal):
    """Flash, noting each call in calls.txt beside this module."""
    import os
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "calls.txt"), "a") as f:
        f.write("x")
    return Flash.apply(q, k, v, is_causal)
)";

class UserAttentionTest : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

    QString userDir() const { return dir_.filePath("my attention"); }

    // The attention grid in the worker: naive beside the user's `target`.
    CliResult grid(const QString& target, const QStringList& extra = {}) const {
        return runCli(QStringList{"attention",
                                  "--engine",
                                  "pytorch",
                                  "--backends",
                                  "naive",
                                  "--py-attention",
                                  target,
                                  "--py-path",
                                  userDir(),
                                  "--d",
                                  "16",
                                  "--seq",
                                  "32",
                                  "--batch",
                                  "1",
                                  "--heads",
                                  "2",
                                  "--repeats",
                                  "1",
                                  "--warmup",
                                  "0",
                                  "--python",
                                  test::pythonExecutable()} +
                      extra);
    }

    // A nano run on the CPU with the worker; its run file's steps' losses.
    QList<double> losses(const QString& file, const QStringList& attention) const {
        const CliResult r =
            runCli(QStringList{"run", "--engine", "pytorch", "--model", "nano", "--ctx", "32",
                               "--batch", "2", "--warmup", "0", "--steps", "2", "--seed", "3",
                               "--python", test::pythonExecutable(), "--out", file} +
                   attention);
        if (r.exitCode != 0) {
            qWarning("%s", qPrintable(r.err));
            return {};
        }
        QList<double> values;
        for (const auto& step : readRunFile(file.toStdString()).steps) {
            values << step.loss.value_or(-1);
        }
        return values;
    }

    static QJsonObject pointOf(const QJsonArray& points, const QString& backend) {
        for (const auto& point : points) {
            if (point.toObject()["backend"].toString() == backend) {
                return point.toObject();
            }
        }
        return {};
    }

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        QVERIFY(QDir().mkpath(userDir()));
        QFile module(userDir() + "/my_flash.py");
        QVERIFY(module.open(QIODevice::WriteOnly));
        module.write(kUserModule);
        module.close();
        QFile broken(userDir() + "/broken_flash.py");
        QVERIFY(broken.open(QIODevice::WriteOnly));
        broken.write("import torch\nraise ImportError('half-written')\n");
    }

    void aCorrectAttentionIsGatedThenTimed() {
        const QString out = dir_.filePath("correct");
        const CliResult r = grid("my_flash:Flash", {"--json", "--out", out});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonArray points = QJsonDocument::fromJson(r.out).array();
        QCOMPARE(points.size(), 2);
        const QJsonObject mine = pointOf(points, "Flash");
        QCOMPARE(mine["status"].toString(), QString("ok"));
        QCOMPARE(mine["kernel"].toString(), QString("my_flash:Flash"));
        QVERIFY(mine["forward_ms"].toDouble() > 0 && mine["backward_ms"].toDouble() > 0);
        const QJsonObject gate = mine["gate"].toObject();
        QVERIFY(gate["ok"].toBool());
        QCOMPARE(gate["tolerance"].toDouble(), 1e-4);
        QVERIFY(gate["max_rel_error"].toDouble() < 1e-4);
        // Ours has no gate: it is the reference the kernels are held to.
        QVERIFY(pointOf(points, "naive")["gate"].isNull());
        // The file keeps the gate and reads it back.
        const AttentionFile file = readAttentionFile((out + "/attention.json").toStdString());
        QCOMPARE(file.points.size(), size_t(2));
        QVERIFY(file.points[1].gate && file.points[1].gate->ok);
        QVERIFY(QString::fromStdString(formatAttentionTable(file.points))
                    .contains("| Flash | fp32 | ok |"));
    }

    void anAttentionOffByAScaleIsIncorrectAndNotTimed() {
        const CliResult r = grid("my_flash:OffByAScale", {"--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonArray points = QJsonDocument::fromJson(r.out).array();
        const QJsonObject mine = pointOf(points, "OffByAScale");
        QCOMPARE(mine["status"].toString(), QString("incorrect"));
        QVERIFY(mine["forward_ms"].isNull() && mine["backward_ms"].isNull());
        const QJsonObject gate = mine["gate"].toObject();
        QVERIFY(!gate["ok"].toBool());
        QVERIFY2(gate["max_rel_error"].toDouble() > 1e-2,
                 qPrintable(QString::number(gate["max_rel_error"].toDouble())));
        // The grid goes on: naive is measured beside it.
        QCOMPARE(pointOf(points, "naive")["status"].toString(), QString("ok"));

        // The table says so and strikes its times out.
        const CliResult table = grid("my_flash:OffByAScale");
        QVERIFY2(table.exitCode == 0, qPrintable(table.err));
        const QString text = QString::fromUtf8(table.out);
        QVERIFY2(text.contains("| OffByAScale (my_flash:OffByAScale) | fp32 | 16 | 32 | "
                               "**incorrect** | incorrect "),
                 qPrintable(text));
        QVERIFY(text.contains("~~not timed~~"));
    }

    void anAttentionThatRaisesIsAResultWithItsMessage() {
        const CliResult r = grid("my_flash:unfinished", {"--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonObject mine = pointOf(QJsonDocument::fromJson(r.out).array(), "unfinished");
        QCOMPARE(mine["status"].toString(), QString("failed"));
        QVERIFY2(mine["message"].toString().contains(
                     "NotImplementedError: the backward pass is next week"),
                 qPrintable(mine["message"].toString()));
        QVERIFY(mine["forward_ms"].isNull());
    }

    void anAttentionThatCannotBeImportedIsBadInput_data() {
        QTest::addColumn<QString>("target");
        QTest::addColumn<QString>("why");
        QTest::newRow("no such module") << "no_such_flash:Flash"
                                        << "no_such_flash";
        QTest::newRow("no such name") << "my_flash:Flahs"
                                      << "Flahs";
        QTest::newRow("raises on import") << "broken_flash:Flash"
                                          << "half-written";
        QTest::newRow("not a module name") << "my-flash:Flash"
                                           << "MODULE:NAME";
    }

    void anAttentionThatCannotBeImportedIsBadInput() {
        QFETCH(QString, target);
        QFETCH(QString, why);
        const QString out = dir_.filePath("never");
        const CliResult r = grid(target, {"--out", out});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("py-attention") && r.err.contains(why), qPrintable(r.err));
        QVERIFY(!QFile::exists(out + "/attention.json"));
    }

    void theModelCallingTheUsersAttentionHasNaivesLoss() {
        const QString naiveFile = dir_.filePath("naive.json");
        const QString userFile = dir_.filePath("user.json");
        const QList<double> naive = losses(naiveFile, {"--attention", "naive"});
        const QList<double> user =
            losses(userFile, {"--py-attention", "my_flash:Flash", "--py-path", userDir()});
        QCOMPARE(naive.size(), 2);
        QCOMPARE(user.size(), 2);
        for (int i = 0; i < 2; ++i) {
            QVERIFY2(std::abs(naive[i] - user[i]) < 1e-4,
                     qPrintable(QString("%1 vs %2").arg(naive[i]).arg(user[i])));
        }
        // It is really called: by the gate (d 16, causal and not), then by
        // each of nano's 2 blocks in each of the 2 steps.
        QFile calls(userDir() + "/calls.txt");
        calls.remove();
        QCOMPARE(losses(dir_.filePath("counted.json"),
                        {"--py-attention", "my_flash:counted", "--py-path", userDir()})
                     .size(),
                 2);
        QCOMPARE(calls.size(), qint64(2 + 2 * 2));
        // The run file names it; a run without it has no such key.
        const RunResult run = readRunFile(userFile.toStdString());
        QCOMPARE(run.config.pyAttention, std::string("my_flash:Flash"));
        QCOMPARE(run.config.attention, std::string("Flash"));
        QFile plain(naiveFile);
        QVERIFY(plain.open(QIODevice::ReadOnly));
        QVERIFY(!plain.readAll().contains("py_attention"));
        // A run the worker cannot load writes no file.
        const QString never = dir_.filePath("never.json");
        QCOMPARE(losses(never, {"--py-attention", "my_flash:Flahs", "--py-path", userDir()}),
                 QList<double>{});
        QVERIFY(!QFile::exists(never));
    }

    // A run checks the user's attention before it times it, as the grid
    // does: one off by a scale is refused, naming the field, and no run file
    // is written.
    void aRunGatesTheUsersAttentionFirst() {
        const QString out = dir_.filePath("off.json");
        const CliResult r = runCli({"run",
                                    "--engine",
                                    "pytorch",
                                    "--model",
                                    "nano",
                                    "--ctx",
                                    "32",
                                    "--batch",
                                    "2",
                                    "--warmup",
                                    "0",
                                    "--steps",
                                    "2",
                                    "--python",
                                    test::pythonExecutable(),
                                    "--out",
                                    out,
                                    "--py-attention",
                                    "my_flash:OffByAScale",
                                    "--py-path",
                                    userDir()});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("py-attention") && r.err.contains("correctness gate") &&
                     r.err.contains("1e-04"),
                 qPrintable(r.err));
        QVERIFY(!QFile::exists(out));
    }

    void theLibTorchEngineRefusesTheUsersAttention() {
        const CliResult r = runCli({"run", "--py-attention", "my_flash:Flash"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("py-attention") && r.err.contains("--engine pytorch"),
                 qPrintable(r.err));
        const CliResult both =
            runCli({"run", "--engine", "pytorch", "--attention", "sdpa", "--py-attention", "m:F"});
        QCOMPARE(both.exitCode, 2);
        QVERIFY2(both.err.contains("attention"), qPrintable(both.err));
    }

    void filesBeforeTheGateReadWithoutOne() {
        // A point as files held it before the gate: no such key.
        const std::string before = R"({"format": "stepscope-attention", "version": 1,
            "environment": {}, "points": [{"backend": "naive", "kernel": "naive", "d": 16,
            "seq": 32, "batch": 1, "heads": 1, "precision": "fp32", "causal": true,
            "status": "ok", "message": "", "forward_ms": 1.5, "backward_ms": 2.5}]})";
        const AttentionFile file = attentionFileFromJson(before);
        QCOMPARE(file.points.size(), size_t(1));
        QVERIFY(!file.points[0].gate);
        QCOMPARE(file.points[0].forwardMs, std::optional<double>(1.5));
        const QString table = QString::fromStdString(formatAttentionTable(file.points));
        QVERIFY(!table.contains("Correctness gate"));
        QVERIFY(table.contains("| naive | fp32 | 16 | 32 | ok | – | 1.500 | 2.500 |"));
        // Written again, it has `gate: null`: what the reader skips.
        const QJsonObject again =
            QJsonDocument::fromJson(QByteArray::fromStdString(attentionPointsToJson(file.points)))
                .array()[0]
                .toObject();
        QVERIFY(again.contains("gate") && again["gate"].isNull());
    }
};

}  // namespace

QTEST_GUILESS_MAIN(UserAttentionTest)
#include "tst_user_attention.moc"
