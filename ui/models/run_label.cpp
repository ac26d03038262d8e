#include "models/run_label.h"

#include <QHash>
#include <QSet>

#include <algorithm>

#include "config/config_field.h"

namespace stepscope::ui {

namespace {

QString text(const std::string& value) {
    return QString::fromStdString(value);
}

QString traces(const RunConfig& c) {
    QStringList traced;
    if (c.traceOps) {
        traced << "ops";
    }
    if (c.traceKernels) {
        traced << "kernels";
    }
    if (c.traceMemory) {
        traced << "memory";
    }
    return traced.isEmpty() ? QString("none") : traced.join('+');
}

// Field name and value. The name is left out of the label where the value
// speaks for itself (the model, mode, precision and device).
struct Field {
    QString name;
    QString value;
    bool usual = false;     // in every run's label, differing or not
    bool inSummary = true;  // false: named only to tell runs apart
    QString label() const { return name.isEmpty() ? value : name + " " + value; }
};

// "libtorch", "pytorch", "pytorch-compile", "pytorch-compile (max-autotune)":
// torch.compile's default mode goes without saying.
QString engineText(const RunConfig& c) {
    QString engine = text(toString(c.engine));
    if (c.engine == Engine::PyTorchCompile && c.compileMode != "default") {
        engine += " (" + text(c.compileMode) + ")";
    }
    return engine;
}

QList<Field> fieldsOf(const RunConfig& c) {
    // The engine leads: "LibTorch vs PyTorch" is what such a comparison is
    // about. It is in every label of a run that is not LibTorch's, so a
    // session of PyTorch runs still says so.
    QList<Field> fields = {{"", engineText(c), c.engine != Engine::LibTorch, true}};
    // The user's Python model stands before the preset, whose dims it is
    // built with; "reference model" only beside runs of a user's model.
    fields << (c.pyModel.empty() ? Field{"", "reference model", false, false}
                                 : Field{"", text(c.pyModel), true, true});
    // A step on several ranks says how many and how they share it, as the
    // engine does; the buckets, backend and the user's classes tell runs apart.
    const bool ranks = c.ranks > 1;
    fields << Field{"",
                    ranks ? QString("%1 ranks %2").arg(c.ranks).arg(text(c.parallel))
                          : QString("1 rank"),
                    ranks, ranks}
           << Field{"backend", text(c.backend), false, ranks}
           << Field{"bucket", text(numberText(c.bucketMb)) + " MB", false, ranks}
           << Field{"DDP", c.pyDdp.empty() ? QString("ours") : text(c.pyDdp), false, ranks}
           << Field{"FSDP", c.pyFsdp.empty() ? QString("ours") : text(c.pyFsdp), false, ranks}
           << Field{"sharded optimizer",
                    c.pyShardedOptimizer.empty() ? QString("ours") : text(c.pyShardedOptimizer),
                    false, ranks};
    fields << QList<Field>{
        {"", text(c.model.name), true, true},
        {"vocab", QString::number(c.model.vocabSize)},
        {"ctx", QString::number(c.contextLength), true},
        {"batch", QString::number(c.batchSize)},
        {"", text(toString(c.mode)), true, true},
        {"", text(toString(c.precision)), true, true},
        {"attention", text(c.attention)},
        // A lever in use is in the label, as the engine is.
        {"checkpoint", text(toString(c.activationCheckpoint)),
         c.activationCheckpoint.kind != CheckpointStrategy::Kind::Off},
        {"loss",
         c.loss == LossKind::Full ? QString("full") : QString("chunked %1").arg(c.lossChunkTokens),
         c.loss != LossKind::Full},
        // Which AdamW, where it is not LibTorch's loop.
        {"optimizer", text(toString(c.optimizer)), c.optimizer != OptimizerKind::AdamW},
        {"", text(toString(c.device)), true, true},
        {"tf32", c.tf32 ? "on" : "off"},
        {"warm-up", QString::number(c.warmupSteps)},
        {"steps", QString::number(c.measuredSteps)},
        {"seed", QString::number(c.seed)},
        {"threads", c.threads ? QString::number(c.threads) : "default"},
        {"traced", traces(c)}};
    return fields;
}

// For each config, the places of its fields that tell it from a run like
// it in all else: a field whose value is the only difference between this
// run and another. Linear in the runs: for each field, the runs are keyed
// by every other field's label, and a key two runs share is such a pair.
QList<QSet<int>> telltaleFields(const QList<QList<Field>>& all) {
    QList<QSet<int>> telltale(all.size());
    const int fields = all.isEmpty() ? 0 : int(all[0].size());
    for (int f = 0; f < fields; ++f) {
        QHash<QString, QList<int>> byRest;
        for (int run = 0; run < all.size(); ++run) {
            QString rest;
            for (int other = 0; other < all[run].size(); ++other) {
                if (other != f) {
                    rest += all[run][other].label() + '\x1f';
                }
            }
            byRest[rest] << run;
        }
        for (const QList<int>& runs : byRest) {
            // Alike in all else: with two values or more, the field tells each apart.
            QSet<QString> values;
            for (const int run : runs) {
                values.insert(all[run][f].label());
            }
            for (const int run : runs) {
                if (values.size() > 1) {
                    telltale[run].insert(f);
                }
            }
        }
    }
    return telltale;
}

// For each config, its fields that differ among `configs` (those that tell
// it from the runs most like it first, when asked: a list's order; a
// comparison keeps one order for all), and the usual ones too when asked.
QList<LabelParts> labels(const QList<RunConfig>& configs, bool withUsual, bool telltaleFirst) {
    QList<QList<Field>> all;
    for (const RunConfig& config : configs) {
        all << fieldsOf(config);
    }
    // A field differs when some run lacks its label ("attention sdpa"); the
    // vocab field exists only for presets, so fields match by label, not place.
    auto everyRunHas = [&](const Field& field) {
        return std::all_of(all.begin(), all.end(), [&](const QList<Field>& other) {
            return std::any_of(other.begin(), other.end(),
                               [&](const Field& f) { return f.label() == field.label(); });
        });
    };
    const QList<QSet<int>> telltale =
        telltaleFirst ? telltaleFields(all) : QList<QSet<int>>(all.size());
    QList<LabelParts> out;
    for (int run = 0; run < all.size(); ++run) {
        // What differs first, so that a narrow list still tells runs apart;
        // of that, first what sets the run apart from the runs most like it
        // (the warm-up study's runs differ in their warm-up alone).
        QStringList distinct, differing, usual;
        for (int f = 0; f < all[run].size(); ++f) {
            const Field& field = all[run][f];
            if (telltale[run].contains(f)) {
                distinct << field.label();
            } else if (!everyRunHas(field)) {
                differing << field.label();
            } else if (withUsual && field.usual) {
                usual << field.label();
            }
        }
        out << LabelParts{distinct.join(" · "), (differing + usual).join(" · ")};
    }
    return out;
}

QStringList joined(const QList<LabelParts>& parts) {
    QStringList out;
    for (const LabelParts& part : parts) {
        out << part.joined();
    }
    return out;
}

}  // namespace

QStringList configFields(const RunConfig& config) {
    QStringList out;
    for (const Field& field : fieldsOf(config)) {
        if (field.inSummary) {
            out << field.label();
        }
    }
    return out;
}

QStringList differingFields(const QList<RunConfig>& configs) {
    return joined(labels(configs, false, false));
}

QStringList listLabels(const QList<RunConfig>& configs) {
    return joined(labels(configs, true, true));
}

QList<LabelParts> listLabelParts(const QList<RunConfig>& configs) {
    return labels(configs, true, true);
}

QString LabelParts::joined() const {
    return distinct.isEmpty() || rest.isEmpty() ? distinct + rest : distinct + " · " + rest;
}

QString configSummary(const RunConfig& config) {
    return configFields(config).join(" · ");
}

QStringList sharedFields(const QList<RunConfig>& configs) {
    QStringList shared = configs.isEmpty() ? QStringList() : configFields(configs[0]);
    for (const RunConfig& config : configs) {
        const QStringList fields = configFields(config);
        shared.erase(std::remove_if(shared.begin(), shared.end(),
                                    [&](const QString& f) { return !fields.contains(f); }),
                     shared.end());
    }
    return shared;
}

}  // namespace stepscope::ui
