// The precision tools: what autocast produced (checked against tensors the
// test makes itself under autocast) and the accumulation lab.
#include <QtTest/QtTest>

#include <ATen/autocast_mode.h>
#include <ATen/ops/randn.h>

#include <map>

#include "attention/attention_registry.h"
#include "engines/autocast_scope.h"
#include "engines/runner.h"
#include "experiments/accumulation_lab.h"
#include "experiments/dtype_flow.h"
#include "model/transformer.h"
#include "test_support.h"

using namespace stepscope;

class TestPrecision : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void dtypeFlowReportsWhatAutocastProduced_data() {
        QTest::addColumn<int>("precision");
        QTest::newRow("bf16") << int(Precision::Bf16);
        QTest::newRow("fp16") << int(Precision::Fp16);
    }

    void dtypeFlowReportsWhatAutocastProduced() {
        QFETCH(int, precision);
        RunConfig config = test::tinyCpuConfig();
        config.precision = Precision(precision);
        std::map<std::string, std::string> reported;
        for (const auto& row : inspectDtypeFlow(config)) {
            reported[row.what] = row.dtype;
        }
        // The same modules, run here under the same autocast.
        TransformerLM model(config.model, makeAttentionBackend("naive"), at::TensorOptions());
        const at::Tensor x = at::randn({2, 16, config.model.dModel});
        std::string linear, norm, ffn;
        {
            const AutocastScope autocast(at::kCPU, config.precision);
            auto block = model->layers->ptr<TransformerBlockImpl>(0);
            linear = c10::toString(block->attn->q_proj(x).scalar_type());
            norm = c10::toString(block->ln1(x).scalar_type());
            ffn = c10::toString(block->ffn(x).scalar_type());
        }
        QCOMPARE(reported.at("model.layers.0.attn.q_proj"), linear);
        QCOMPARE(reported.at("model.layers.0.ln1"), norm);
        QCOMPARE(reported.at("model.layers.0.ffn"), ffn);
        QVERIFY(linear != "Float");  // autocast did lower the matmuls
        QCOMPARE(reported.at("parameters"), std::string("Float"));
        QCOMPARE(reported.at("gradients"), std::string("Float"));
        QCOMPARE(reported.at("loss"), std::string("Float"));
        QVERIFY(reported.count("model.layers.1.attn (attention core)"));
    }

    void dtypeFlowNeedsAutocast() {
        RunConfig config = test::tinyCpuConfig();
        config.precision = Precision::Fp32;
        QVERIFY_THROWS_EXCEPTION(InvalidConfigError, inspectDtypeFlow(config));
    }

    void accumulationLab() {
        std::map<std::string, AccumulationRow> rows;
        for (const auto& row : runAccumulationLab(0.01, 1000)) {
            rows[row.accumulator + "+" + row.addend] = row;
        }
        QVERIFY(std::abs(rows.at("fp32+fp32").result - 10.0) < 1e-3);
        QVERIFY(rows.at("fp16+fp16").absoluteError > 10 * rows.at("fp32+fp32").absoluteError);
        // An fp32 accumulator fixes most of it even with half-precision addends.
        QVERIFY(rows.at("fp32+fp16").absoluteError < rows.at("fp16+fp16").absoluteError);

        // Stagnation: past 32 the spacing of fp16 (1/32) is over twice 0.01,
        // so every further addition rounds back to the same sum.
        const auto longer = runAccumulationLab(0.01, 10000);
        const auto shorter = runAccumulationLab(0.01, 5000);
        QCOMPARE(longer[1].accumulator, std::string("fp16"));
        QCOMPARE(longer[1].result, 32.0);
        QCOMPARE(shorter[1].result, longer[1].result);
    }

    // Issue 40, item 5: the note said fp16 stops growing where the table
    // showed bf16 stalling at 4 and fp16 reaching 9.95. It is computed from
    // the rows: what it says of each sum is what that sum's row holds.
    void accumulationNoteIsComputedFromTheTable() {
        const std::vector<AccumulationRow> rows = runAccumulationLab(0.01, 1000);
        std::map<std::string, AccumulationRow> byPair;
        for (const auto& row : rows) {
            byPair[row.accumulator + "+" + row.addend] = row;
        }
        const AccumulationRow& bf16 = byPair.at("bf16+bf16");
        const AccumulationRow& fp16 = byPair.at("fp16+fp16");
        QVERIFY(bf16.stalled && !fp16.stalled);  // bf16's spacing passes 0.02 first
        const QString note = QString::fromStdString(accumulationNote(rows));
        QVERIFY2(note.contains(QString("bf16 sum stopped growing at %1").arg(bf16.result)),
                 qPrintable(note));
        QVERIFY2(note.contains(QString("fp16 sum reached %1").arg(fp16.result, 0, 'g', 3)),
                 qPrintable(note));
        QVERIFY2(!note.contains("fp16 sum stopped"), qPrintable(note));
        QVERIFY2(note.contains("Within 0.1%: fp32 sum"), qPrintable(note));
        QVERIFY2(note.endsWith("Accumulate in fp32."), qPrintable(note));

        // Other rows, another note: a table where fp16 stalls and nothing is
        // within says so, and gives no advice the rows do not support.
        AccumulationRow stalledHalf = fp16;
        stalledHalf.result = 32;
        stalledHalf.exact = 100;
        stalledHalf.absoluteError = 68;
        stalledHalf.stalled = true;
        const QString other = QString::fromStdString(accumulationNote({stalledHalf}));
        QCOMPARE(other, QString("Exact: 100. The fp16 sum stopped growing at 32: once a sum's "
                                "spacing exceeds twice the addend, each addition rounds away."));
        QVERIFY(accumulationNote({}).empty());
    }
};

QTEST_GUILESS_MAIN(TestPrecision)
#include "tst_precision.moc"
