// The memory levers: activation checkpointing (off, K blocks per group,
// nested) and the chunked loss give the same losses and gradients as the plain
// model, keep what they say they keep (counted by the memory tracker against
// the residual stream's size), lower the peak, run every block forward the
// number of times the FLOP count says (counted with a forward tap), and
// refuse what cannot work with a message naming the field.
#include <QtTest/QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>

#include <ATen/ops/empty.h>
#include <ATen/ops/randint.h>
#include <c10/core/GradMode.h>

#include <map>

#include "attention/attention_registry.h"
#include "config/config_field.h"
#include "engines/environment.h"
#include "engines/runner.h"
#include "estimate/cost_model.h"
#include "model/chunked_loss.h"
#include "model/transformer.h"
#include "results/saved_for_backward.h"
#include "test_support.h"

using namespace stepscope;

namespace {

// Six blocks, so that groups of 1, 2 and 4 and nested halving differ.
RunConfig sixBlockConfig() {
    RunConfig config = test::tinyCpuConfig();  // vocab 97, batch 2
    config.model.name = "six-blocks";
    config.model.dModel = 64;
    config.model.dFf = 256;
    config.model.layers = 6;
    config.model.heads = 4;
    config.contextLength = 32;
    return config;
}

CheckpointStrategy strategy(const std::string& text) {
    return *parseCheckpointStrategy(text);
}

struct LossAndGradients {
    double loss = 0;
    std::map<std::string, at::Tensor> gradients;
};

// One forward and backward of a freshly seeded model on a fixed batch.
LossAndGradients lossAndGradients(const RunConfig& config, const CheckpointStrategy& checkpoint,
                                  std::optional<int64_t> lossChunk = std::nullopt) {
    at::manual_seed(7);
    TransformerLM model(config.model, makeAttentionBackend(config.attention),
                        at::TensorOptions().dtype(at::kFloat));
    model->setCheckpointStrategy(checkpoint);
    const at::Tensor tokens =
        at::randint(config.model.vocabSize, {config.batchSize, config.contextLength + 1},
                    at::TensorOptions().dtype(at::kLong));
    const at::Tensor inputs = tokens.narrow(1, 0, config.contextLength);
    const at::Tensor targets = tokens.narrow(1, 1, config.contextLength);
    const at::Tensor loss =
        lossChunk
            ? chunkedCrossEntropyLoss(model->hidden(inputs), *model->lm_head, targets, *lossChunk)
            : crossEntropyLoss(model->forward(inputs), targets);
    loss.backward();
    LossAndGradients out;
    out.loss = loss.item<double>();
    for (const auto& item : model->named_parameters()) {
        out.gradients[item.key()] = item.value().grad().clone();
    }
    return out;
}

// ‖a − b‖ / ‖b‖ for every gradient, and the loss's relative difference.
void compareWithin(const LossAndGradients& got, const LossAndGradients& want, double tolerance,
                   const char* what) {
    QVERIFY2(std::abs(got.loss - want.loss) <= tolerance * std::abs(want.loss),
             qPrintable(QString("%1: loss %2 vs %3").arg(what).arg(got.loss).arg(want.loss)));
    QCOMPARE(got.gradients.size(), want.gradients.size());
    for (const auto& [name, gradient] : want.gradients) {
        const at::Tensor other = got.gradients.at(name);
        QVERIFY2(
            other.defined(),
            qPrintable(QString("%1: no gradient for %2").arg(what, QString::fromStdString(name))));
        const double error =
            (other - gradient).norm().item<double>() / gradient.norm().item<double>();
        QVERIFY2(error <= tolerance, qPrintable(QString("%1: gradient of %2 differs by %3")
                                                    .arg(what, QString::fromStdString(name))
                                                    .arg(error)));
    }
}

RunResult trainRun(RunConfig config, RunMode mode = RunMode::TrainStep) {
    config.mode = mode;
    config.warmupSteps = 1;
    config.measuredSteps = 2;
    config.traceMemory = true;
    return runBenchmark(config);
}

// Bytes of the given category allocated in step `step`'s forward under the blocks' ranges.
int64_t blockBytes(const RunResult& run, MemoryCategory category, int step) {
    int64_t bytes = 0;
    for (const MemoryAllocation& allocation : memoryAllocations(run.memory)) {
        if (allocation.category == category && allocation.step == step &&
            run.memory.name(allocation.path).rfind("layers.", 0) == 0) {
            bytes += allocation.bytes;
        }
    }
    return bytes;
}

int64_t categoryMax(const RunResult& run, MemoryCategory category) {
    return summarizeMemory(run.memory).maxByCategory[size_t(category)];
}

// Counts the blocks' forwards (the tap sees each block's output).
class BlockCounter : public ForwardTap {
public:
    void onOutput(const torch::nn::Module& module, const char*, const at::Tensor&) override {
        if (dynamic_cast<const TransformerBlockImpl*>(&module)) {
            ++blocks;
        }
    }
    int64_t blocks = 0;
};

std::vector<std::string> errorFields(const RunConfig& config) {
    std::vector<std::string> fields;
    for (const auto& error : validate(config, validationContext())) {
        fields.push_back(error.field + ": " + error.message);
    }
    return fields;
}

bool hasErrorFor(const RunConfig& config, const std::string& field, const std::string& words) {
    for (const auto& error : validate(config, validationContext())) {
        if (error.field == field && error.message.find(words) != std::string::npos) {
            return true;
        }
    }
    return false;
}

}  // namespace

class TestMemoryLevers : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void checkpointingKeepsLossesAndGradients() {
        const RunConfig config = sixBlockConfig();
        const LossAndGradients plain = lossAndGradients(config, strategy("off"));
        for (const char* text : {"1", "2", "4", "nested"}) {
            compareWithin(lossAndGradients(config, strategy(text)), plain, 1e-5, text);
        }
    }

    void checkpointedTrainingStepsKeepTheirLosses() {
        // AdamW steps on the runner: the same losses step after step.
        RunConfig config = sixBlockConfig();
        config.traceMemory = false;
        config.mode = RunMode::TrainStep;
        const RunResult plain = runBenchmark(config);
        QCOMPARE(toString(plain.status), std::string("ok"));
        for (const char* text : {"1", "2", "nested"}) {
            config.activationCheckpoint = strategy(text);
            const RunResult run = runBenchmark(config);
            QCOMPARE(toString(run.status), std::string("ok"));
            QCOMPARE(run.steps.size(), plain.steps.size());
            for (size_t i = 0; i < run.steps.size(); ++i) {
                QVERIFY2(std::abs(run.steps[i].loss.value() - plain.steps[i].loss.value()) <=
                             1e-5 * std::abs(plain.steps[i].loss.value()),
                         qPrintable(QString("%1, step %2: %3 vs %4")
                                        .arg(text)
                                        .arg(i)
                                        .arg(run.steps[i].loss.value())
                                        .arg(plain.steps[i].loss.value())));
            }
        }
    }

    void checkpointingKeepsOnlyTheGroupsInputs() {
        // What the blocks keep for backward: without checkpointing, everything
        // each block saves; with groups, only each group's output (the next
        // group's input, or the final norm's); nested, the two top halves'.
        const RunConfig config = sixBlockConfig();
        const int64_t residual = config.batchSize * config.contextLength * config.model.dModel * 4;
        const RunResult plain = trainRun(config);
        QCOMPARE(toString(plain.status), std::string("ok"));
        const int64_t plainKept = blockBytes(plain, MemoryCategory::Activations, 1);
        QVERIFY2(plainKept > 10 * config.model.layers * residual,
                 qPrintable(QString::number(plainKept)));
        QCOMPARE(categoryMax(plain, MemoryCategory::Recomputed), int64_t(0));
        const std::vector<std::pair<const char*, int64_t>> kept = {
            {"1", 6}, {"2", 3}, {"4", 2}, {"nested", 2}};
        for (const auto& [text, tensors] : kept) {
            RunConfig checkpointed = config;
            checkpointed.activationCheckpoint = strategy(text);
            const RunResult run = trainRun(checkpointed);
            QCOMPARE(toString(run.status), std::string("ok"));
            QCOMPARE(blockBytes(run, MemoryCategory::Activations, 1), tensors * residual);
            // Backward made the rest again, and the tracker says so.
            QVERIFY2(blockBytes(run, MemoryCategory::Recomputed, 1) > 0, text);
            QVERIFY2(
                summarizeMemory(run.memory).peakBytes < summarizeMemory(plain.memory).peakBytes,
                text);
        }
    }

    void blocksRunAsOftenAsTheFlopCountSays() {
        RunConfig config = sixBlockConfig();
        const double blockFlops =
            (forwardFlops(config) - 2.0 * double(config.batchSize * config.contextLength) *
                                        double(config.model.vocabSize * config.model.dModel)) /
            double(config.model.layers);
        for (const char* text : {"off", "1", "2", "4", "nested"}) {
            config.activationCheckpoint = strategy(text);
            at::manual_seed(1);
            TransformerLM model(config.model, makeAttentionBackend("naive"),
                                at::TensorOptions().dtype(at::kFloat));
            model->setCheckpointStrategy(config.activationCheckpoint);
            const at::Tensor tokens = at::randint(config.model.vocabSize, {2, 9});
            BlockCounter counter;
            {
                const ForwardTapScope tap(&counter);  // backward runs on this thread on the CPU
                crossEntropyLoss(model->forward(tokens.narrow(1, 0, 8)), tokens.narrow(1, 1, 8))
                    .backward();
            }
            const int64_t recomputed = counter.blocks - config.model.layers;
            QCOMPARE(recomputed,
                     recomputedBlockForwards(config.activationCheckpoint, config.model.layers));
            QCOMPARE(modelFlopsPerStep(config),
                     3 * forwardFlops(config) + double(recomputed) * blockFlops);
        }
        // Nested halving of 6 blocks: 3+3, each 3 as 1+2, each 2 as 1+1.
        QCOMPARE(recomputedBlockForwards(strategy("nested"), 6), int64_t(16));
    }

    void chunkedLossKeepsLossAndGradients() {
        const RunConfig config = sixBlockConfig();
        const LossAndGradients full = lossAndGradients(config, strategy("off"));
        // 64 tokens: chunks that divide them, that do not, one token, all at once.
        for (int64_t chunk : {16, 7, 1, 64, 1000}) {
            compareWithin(lossAndGradients(config, strategy("off"), chunk), full, 1e-5,
                          qPrintable(QString("chunk %1").arg(chunk)));
        }
        compareWithin(lossAndGradients(config, strategy("2"), 10), full, 1e-5,
                      "chunked and checkpointed");
    }

    void chunkedLossLowersThePeakByTheLogits() {
        // A vocabulary large enough that the logits are the largest tensors,
        // and no optimizer, whose own peak would hide the loss's. (Measured:
        // 43.1 MB full, 22.8 MB chunked, logits 8.4 MB: the full loss keeps the
        // logits' log-softmax and makes two logits-sized gradients besides.)
        RunConfig config = sixBlockConfig();
        config.model.vocabSize = 8192;
        config.batchSize = 4;
        config.contextLength = 64;
        const int64_t logits = config.batchSize * config.contextLength * config.model.vocabSize * 4;
        const RunResult full = trainRun(config, RunMode::ForwardBackward);
        config.loss = LossKind::Chunked;
        config.lossChunkTokens = 16;
        const RunResult chunked = trainRun(config, RunMode::ForwardBackward);
        QCOMPARE(toString(full.status), std::string("ok"));
        QCOMPARE(toString(chunked.status), std::string("ok"));
        for (size_t i = 0; i < full.steps.size(); ++i) {
            QVERIFY(std::abs(chunked.steps[i].loss.value() - full.steps[i].loss.value()) <=
                    1e-5 * std::abs(full.steps[i].loss.value()));
        }
        const int64_t saved =
            summarizeMemory(full.memory).peakBytes - summarizeMemory(chunked.memory).peakBytes;
        qInfo("peak full %lld, chunked %lld, logits %lld",
              static_cast<long long>(summarizeMemory(full.memory).peakBytes),
              static_cast<long long>(summarizeMemory(chunked.memory).peakBytes),
              static_cast<long long>(logits));
        QVERIFY2(saved >= logits,
                 qPrintable(QString("saved %1, logits %2").arg(saved).arg(logits)));
        // The logits of one chunk are what the loss makes again in backward.
        QVERIFY(categoryMax(chunked, MemoryCategory::Recomputed) > 0);
    }

    void leversRunInLowPrecision() {
        RunConfig config = sixBlockConfig();
        config.precision = Precision::Bf16;
        config.measuredSteps = 2;
        const RunResult plain = runBenchmark(config);
        config.activationCheckpoint = strategy("nested");
        config.loss = LossKind::Chunked;
        config.lossChunkTokens = 20;
        const RunResult levers = runBenchmark(config);
        QCOMPARE(toString(levers.status), std::string("ok"));
        for (size_t i = 0; i < plain.steps.size(); ++i) {
            QVERIFY(std::abs(levers.steps[i].loss.value() - plain.steps[i].loss.value()) <=
                    1e-2 * std::abs(plain.steps[i].loss.value()));
        }
    }

    void everyAttentionBackendCheckpoints() {
        RunConfig config = sixBlockConfig();
        for (const std::string& backend : validationContext().attentionBackends) {
            const at::Tensor probe =
                at::empty({1, config.model.heads, config.contextLength, config.model.headDim()});
            if (const auto reason = makeAttentionBackend(backend)->unavailableReason(probe)) {
                qInfo("%s: %s", backend.c_str(), reason->c_str());  // as the runner reports it
                continue;
            }
            config.attention = backend;
            const LossAndGradients plain = lossAndGradients(config, strategy("off"));
            compareWithin(lossAndGradients(config, strategy("2")), plain, 1e-5, backend.c_str());
        }
    }

    void savedForBackwardMatchesTheReference() {
        // The tracker's count per block against PyTorch's saved_tensors_hooks
        // on the Python reference model (distinct storages, parameters apart):
        // the same bytes in the same number of tensors. (Each side counts one
        // residual-stream tensor per block: the tracker the block's output, the
        // hooks its input.)
        RunConfig config = sixBlockConfig();
        config.model.dModel = 128;
        config.model.dFf = 512;
        config.model.layers = 3;
        config.contextLength = 64;
        config.mode = RunMode::ForwardBackward;
        config.warmupSteps = 1;
        config.measuredSteps = 1;
        config.traceMemory = true;
        const RunResult run = runBenchmark(config);
        QCOMPARE(toString(run.status), std::string("ok"));
        const SavedForBackward saved = savedForBackward(run);
        QCOMPARE(saved.blocks.size(), size_t(3));

        QProcess python;
        python.start(test::pythonExecutable(),
                     {test::sourcePath("tools/saved_for_backward_reference.py"), "--d-model", "128",
                      "--d-ff", "512", "--layers", "3", "--heads", "4", "--vocab", "97", "--ctx",
                      "64", "--batch", "2"});
        QVERIFY(python.waitForFinished(120000));
        QVERIFY2(python.exitCode() == 0, python.readAllStandardError().constData());
        const QJsonArray reference =
            QJsonDocument::fromJson(python.readAllStandardOutput()).object()["blocks"].toArray();
        QCOMPARE(reference.size(), qsizetype(3));
        for (size_t i = 0; i < saved.blocks.size(); ++i) {
            const BlockSaved& block = saved.blocks[i];
            const QJsonObject want = reference[qsizetype(i)].toObject();
            const double ratio = double(block.bytes) / want["bytes"].toDouble();
            qInfo(
                "%s: tracker %lld bytes in %lld tensors, saved_tensors_hooks %lld in %lld "
                "(%.3f); top %s %.0f%%",
                block.module.c_str(), static_cast<long long>(block.bytes),
                static_cast<long long>(block.tensors),
                static_cast<long long>(want["bytes"].toInteger()),
                static_cast<long long>(want["tensors"].toInteger()), ratio,
                block.top.front().op.c_str(), block.top.front().share * 100);
            QCOMPARE(block.bytes, want["bytes"].toInteger());
            QCOMPARE(block.tensors, want["tensors"].toInteger());
            QCOMPARE(block.gradientBytes, want["parameter_bytes"].toInteger());
            // What a view lists for the block adds up to its figure.
            int64_t listed = 0;
            const auto allocations = savedAllocations(run, saved.step, block.module);
            for (const auto& allocation : allocations) {
                listed += allocation.bytes;
            }
            QCOMPARE(int64_t(allocations.size()), block.tensors);
            QCOMPARE(listed, block.bytes);
            double shares = 0;
            for (const auto& op : block.top) {
                shares += op.share;
            }
            QVERIFY(shares <= 1 + 1e-9 && block.top.size() <= 5);
        }
        const auto json = savedForBackwardJson(saved);
        QCOMPARE(json["saved_for_backward"].size(), size_t(3));
        QVERIFY(json["saved_for_backward"][0]["module"] == "layers.0");
        QVERIFY(json["saved_for_backward"][0]["top"][0].contains("share"));
        QVERIFY(json["saved_for_backward"][0].contains("gradients"));
    }

    void badValuesAreRefusedByName() {
        RunConfig config = sixBlockConfig();
        for (const char* text : {"0", "-1", "two", "", "2x"}) {
            try {
                setConfigField(config, "activation-checkpoint", text);
                QFAIL(text);
            } catch (const InvalidConfigError& error) {
                QCOMPARE(error.errors().front().field, std::string("activation-checkpoint"));
                QVERIFY(std::string(error.what()).find("nested") != std::string::npos);
            }
        }
        QVERIFY_THROWS_EXCEPTION(InvalidConfigError, setConfigField(config, "loss", "half"));
        setConfigField(config, "activation-checkpoint", "nested");
        setConfigField(config, "loss", "chunked");
        setConfigField(config, "loss-chunk", "0");
        QCOMPARE(configFieldText(config, "activation-checkpoint"), std::string("nested"));
        QCOMPARE(configFieldText(config, "loss"), std::string("chunked"));
        QVERIFY(hasErrorFor(config, "loss-chunk", "positive"));

        config.lossChunkTokens = 64;
        QCOMPARE(errorFields(config), std::vector<std::string>{});
        config.mode = RunMode::Inference;
        QVERIFY(hasErrorFor(config, "activation-checkpoint", "nothing to recompute"));
        config.mode = RunMode::TrainStep;
        config.engine = Engine::PyTorch;
        QVERIFY(hasErrorFor(config, "activation-checkpoint", "--engine libtorch"));
        QVERIFY(hasErrorFor(config, "loss", "--engine libtorch"));
    }
};

QTEST_GUILESS_MAIN(TestMemoryLevers)
#include "tst_memory_levers.moc"
