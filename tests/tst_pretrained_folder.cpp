// The course's own files: the from_pretrained folder (model_config.json +
// model.pt, written here by the Python reference model) gives the model's
// shape and weights with no shape flags; a bare state dict gives its shape
// from its tensors, and --heads or an error naming it; a directory or a file
// of another kind gets a message saying what was expected.
#include <QtTest/QtTest>

#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include "model/checkpoint.h"
#include "model/pretrained_folder.h"
#include "test_support.h"

using namespace stepscope;
using test::CliResult;
using test::runCli;

namespace {

// A shape no preset has, so nothing but the files can give it.
const char* kWriteFolder = R"(
import json, os, sys, torch
sys.path.insert(0, sys.argv[2])
from stepscope import model as reference
out = sys.argv[1]
torch.manual_seed(5)
m = reference.TransformerLM(53, 32, 80, 3, 4, max_context=24)
folder = os.path.join(out, "pretrained")
os.makedirs(folder)
with open(os.path.join(folder, "model_config.json"), "w") as f:
    json.dump({"vocab_size": 53, "context_length": 24, "d_model": 32, "num_layers": 3,
               "num_heads": 4, "d_ff": 80, "rope_theta": 10000.0}, f)
torch.save(m.state_dict(), os.path.join(folder, "model.pt"))
tokens = torch.randint(0, 53, (2, 13))
torch.save(tokens, os.path.join(out, "tokens.pt"))
with torch.no_grad():
    loss = reference.next_token_loss(m, tokens).item()
with open(os.path.join(out, "expected.json"), "w") as f:
    json.dump({"loss": loss}, f)
os.makedirs(os.path.join(out, "empty"))
)";

}  // namespace

class TestPretrainedFolder : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    double expectedLoss_ = 0;

    QString path(const QString& name) const { return dir_.filePath(name); }

    double evalLoss(const QStringList& extra) {
        const CliResult r =
            runCli(QStringList{"eval", "--tokens", path("tokens.pt"), "--json"} + extra);
        if (r.exitCode != 0) {
            qWarning("%s", qPrintable(r.err));
            return -1;
        }
        return QJsonDocument::fromJson(r.out).object()["loss"].toDouble();
    }

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        const QString error =
            test::runPython({"-c", kWriteFolder, dir_.path(), test::sourcePath("python")});
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QFile expected(path("expected.json"));
        QVERIFY(expected.open(QIODevice::ReadOnly));
        expectedLoss_ = QJsonDocument::fromJson(expected.readAll()).object()["loss"].toDouble();
        QVERIFY(expectedLoss_ > 0);
    }

    void folderGivesShape() {
        const ModelDims dims = weightsShape(path("pretrained").toStdString(), 0);
        QCOMPARE(dims.dModel, int64_t(32));
        QCOMPARE(dims.dFf, int64_t(80));
        QCOMPARE(dims.layers, int64_t(3));
        QCOMPARE(dims.heads, int64_t(4));
        QCOMPARE(dims.vocabSize, int64_t(53));
        QCOMPARE(dims.maxContext, int64_t(24));
    }

    void folderEvaluatesWithoutShapeFlags() {
        const double loss = evalLoss({"--weights", path("pretrained")});
        QVERIFY2(std::abs(loss - expectedLoss_) < 1e-5,
                 qPrintable(QString("%1 vs %2").arg(loss).arg(expectedLoss_)));
    }

    void bareStateDictNeedsOnlyHeads() {
        const QString file = path("pretrained/model.pt");
        const CliResult missing =
            runCli({"eval", "--weights", file, "--tokens", path("tokens.pt")});
        QCOMPARE(missing.exitCode, 2);
        QVERIFY2(missing.err.contains("give --heads") && missing.err.contains("d_model 32"),
                 qPrintable(missing.err));
        const double loss = evalLoss({"--weights", file, "--heads", "4"});
        QVERIFY2(std::abs(loss - expectedLoss_) < 1e-5,
                 qPrintable(QString("%1 vs %2").arg(loss).arg(expectedLoss_)));
    }

    void runTakesTheFolder() {
        const CliResult r =
            runCli({"run", "--weights", path("pretrained"), "--ctx", "12", "--batch", "2",
                    "--warmup", "0", "--steps", "1", "--mode", "forward", "--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonObject model =
            QJsonDocument::fromJson(r.out).object()["config"].toObject()["model"].toObject();
        QCOMPARE(model["d_model"].toInteger(), 32);
        QCOMPARE(model["vocab"].toInteger(), 53);
        QCOMPARE(model["max_context"].toInteger(), 24);
    }

    void wrongPathsSayWhatWasExpected() {
        const CliResult empty =
            runCli({"eval", "--weights", path("empty"), "--tokens", path("tokens.pt")});
        QCOMPARE(empty.exitCode, 2);
        QVERIFY2(empty.err.contains("is a directory without model_config.json and model.pt"),
                 qPrintable(empty.err));
        // With a shape given, the weights are only read when loading.
        const CliResult json = runCli({"eval", "--model", "nano", "--weights",
                                       path("expected.json"), "--tokens", path("tokens.pt")});
        QCOMPARE(json.exitCode, 2);
        QVERIFY2(json.err.contains("is not a torch.save file"), qPrintable(json.err));
        QVERIFY2(!json.err.contains("PytorchStreamReader"), qPrintable(json.err));
        const CliResult absent =
            runCli({"eval", "--weights", path("nothing.pt"), "--tokens", path("tokens.pt")});
        QCOMPARE(absent.exitCode, 2);
        QVERIFY2(absent.err.contains("does not exist"), qPrintable(absent.err));
    }

    // Hostile model_config.json files: each a message naming the field and
    // what it allows, exit 2, never a crash.
    void hostileConfigsAreRefusedByName() {
        const auto refusal = [&](const QString& name, const QByteArray& config) {
            const QString folder = path(name);
            QDir().mkpath(folder);
            QFile::copy(path("pretrained/model.pt"), folder + "/model.pt");
            QFile file(folder + "/model_config.json");
            if (!file.open(QIODevice::WriteOnly)) {
                return QString("cannot write %1").arg(file.fileName());
            }
            file.write(config);
            file.close();
            const CliResult r =
                runCli({"eval", "--weights", folder, "--tokens", path("tokens.pt")});
            return r.exitCode == 2 ? r.err : QString("exit %1: %2").arg(r.exitCode).arg(r.err);
        };
        const QByteArray fields = R"("vocab_size": 53, "context_length": 24, "d_model": 32,
            "num_layers": 3, "num_heads": 4, "d_ff": 80)";
        QString err = refusal("negative-theta", "{" + fields + R"(, "rope_theta": -1})");
        QVERIFY2(err.contains("\"rope_theta\" must be a positive number") && err.contains("got -1"),
                 qPrintable(err));
        err = refusal("text-theta", "{" + fields + R"(, "rope_theta": "10000"})");
        QVERIFY2(err.contains("\"rope_theta\" must be a number"), qPrintable(err));
        err = refusal("huge-layers", R"({"vocab_size": 53, "context_length": 24, "d_model": 32,
            "num_layers": 18446744073709551615, "num_heads": 4, "d_ff": 80})");
        QVERIFY2(err.contains("\"num_layers\""), qPrintable(err));
        err = refusal("deep", QByteArray(100000, '[') + QByteArray(100000, ']'));
        QVERIFY2(err.contains("holds no JSON object"), qPrintable(err));
        err = refusal("big", "{" + fields + ", \"pad\": \"" + QByteArray(2 << 20, 'x') + "\"}");
        QVERIFY2(err.contains("bytes; a model's keyword arguments fit in 1048576 bytes"),
                 qPrintable(err));
        // Issue 45: the parser's own messages leaked ("[json.exception.out_of_range.406]
        // number overflow parsing '1e309'"), and 1.5 was "no whole-number".
        const struct {
            const char* name;
            QByteArray config;
            const char* says;
        } leaks[] = {
            {"overflow", "{" + fields + R"(, "rope_theta": 1e309})", "a number is out of range"},
            {"fraction",
             R"({"vocab_size": 53, "context_length": 24, "d_model": 32, "num_layers": 1.5,
                 "num_heads": 4, "d_ff": 80})",
             "\"num_layers\" expected an integer, got 1.5"},
            {"past-int64",
             R"({"vocab_size": 53, "context_length": 24, "d_model": 1e300, "num_layers": 3,
                 "num_heads": 4, "d_ff": 80})",
             "\"d_model\" must be ≤ 9223372036854775807, got 1e+300"},
            {"broken", "{" + fields, "not valid JSON"},
            {"empty", "", "empty, not JSON"},
        };
        for (const auto& leak : leaks) {
            err = refusal(leak.name, leak.config);
            QVERIFY2(err.contains("model_config.json") && err.contains(leak.says) &&
                         !err.contains("json.exception"),
                     qPrintable(QString(leak.name) + ": " + err));
        }
        // A whole number with an exponent is that number.
        err = refusal("exponent", R"({"vocab_size": 53, "context_length": 24, "d_model": 32,
            "num_layers": 3, "num_heads": 4, "d_ff": 8e1, "rope_theta": -1})");
        QVERIFY2(err.contains("rope_theta"), qPrintable(err));
    }
};

QTEST_GUILESS_MAIN(TestPretrainedFolder)
#include "tst_pretrained_folder.moc"
