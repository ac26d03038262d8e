// Parameter counts: the closed-form count against the parameters the model
// actually registers (built on the meta device, so 2.7B costs no memory), and
// state-dict names against design.md.
#include <QtTest/QtTest>

#include <set>

#include "attention/attention_registry.h"
#include "config/model_dims.h"
#include "model/transformer.h"

using namespace stepscope;

class TestModelDims : public QObject {
    Q_OBJECT

private:
    static TransformerLM metaModel(const ModelDims& dims) {
        return TransformerLM(dims, makeAttentionBackend("naive"),
                             at::TensorOptions().device(at::kMeta).dtype(at::kFloat));
    }

private Q_SLOTS:
    void closedFormMatchesRegisteredParameters_data() {
        QTest::addColumn<QString>("preset");
        for (const auto& name : presetNames()) {
            QTest::newRow(name.c_str()) << QString::fromStdString(name);
        }
    }

    void closedFormMatchesRegisteredParameters() {
        QFETCH(QString, preset);
        const ModelDims dims = *findPreset(preset.toStdString());
        int64_t registered = 0;
        for (const auto& parameter : metaModel(dims)->parameters()) {
            registered += parameter.numel();
        }
        QCOMPARE(parameterCount(dims), registered);
    }

    void knownCountsByHand() {
        // small: 2·10000·768 + 12·(4·768² + 3·768·3072 + 2·768) + 768
        QCOMPARE(parameterCount(*findPreset("small")), int64_t{128625408});
        // 2.7B: 2·10000·2560 + 32·(4·2560² + 3·2560·10240 + 2·2560) + 2560
        QCOMPARE(parameterCount(*findPreset("2.7B")), int64_t{3406809600});
    }

    void stateDictNamesFollowTheDesign() {
        ModelDims dims = *findPreset("nano");
        std::set<std::string> names;
        for (const auto& item : metaModel(dims)->named_parameters()) {
            names.insert(item.key());
        }
        std::set<std::string> expected = {"token_embeddings.weight", "ln_final.weight",
                                          "lm_head.weight"};
        for (int i = 0; i < dims.layers; ++i) {
            const std::string p = "layers." + std::to_string(i) + ".";
            for (const char* suffix :
                 {"attn.q_proj.weight", "attn.k_proj.weight", "attn.v_proj.weight",
                  "attn.output_proj.weight", "ln1.weight", "ln2.weight", "ffn.w1.weight",
                  "ffn.w2.weight", "ffn.w3.weight"}) {
                expected.insert(p + suffix);
            }
        }
        QCOMPARE(names, expected);
    }

    void linearWeightsAreStoredOutByIn() {
        ModelDims dims = *findPreset("nano");
        auto model = metaModel(dims);
        const auto params = model->named_parameters();
        QCOMPARE(params["layers.0.ffn.w1.weight"].sizes().vec(),
                 (std::vector<int64_t>{dims.dFf, dims.dModel}));
        QCOMPARE(params["layers.0.ffn.w2.weight"].sizes().vec(),
                 (std::vector<int64_t>{dims.dModel, dims.dFf}));
        QCOMPARE(params["lm_head.weight"].sizes().vec(),
                 (std::vector<int64_t>{dims.vocabSize, dims.dModel}));
    }

    void presetsHaveTheDesignedShapes() {
        const auto xl = *findPreset("xl");
        QCOMPARE(xl.dModel, int64_t{1600});
        QCOMPARE(xl.dFf, int64_t{6400});
        QCOMPARE(xl.layers, int64_t{48});
        QCOMPARE(xl.heads, int64_t{25});
        QCOMPARE(xl.headDim(), int64_t{64});
        QVERIFY(!findPreset("huge").has_value());
    }
};

QTEST_GUILESS_MAIN(TestModelDims)
#include "tst_model_dims.moc"
