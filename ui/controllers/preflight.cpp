#include "controllers/preflight.h"

#include <QMessageBox>
#include <QObject>
#include <QPushButton>
#include <QStringList>

#include "engines/environment.h"
#include "engines/runner.h"
#include "estimate/cost_model.h"
#include "estimate/fit_check.h"
#include "estimate/memory_estimate.h"
#include "models/format.h"

namespace stepscope::ui {

MemoryEstimateText memoryEstimateText(const RunConfig& config, bool configValid,
                                      std::optional<int64_t> available) {
    if (!configValid) {
        return {QObject::tr("Memory estimate: once the errors above are fixed."), {}, {}};
    }
    if (!config.pyModel.empty()) {
        return {QObject::tr("Memory estimate: none for a Python model of your own; StepScope "
                            "predicts its reference model only."),
                {},
                {}};
    }
    const MemoryPrediction prediction = predictMemory(config);
    size_t largest = 0;
    for (size_t c = 1; c < kMemoryCategories; ++c) {
        if (prediction.maxByCategory[c] > prediction.maxByCategory[largest]) {
            largest = c;
        }
    }
    MemoryEstimateText estimate;
    estimate.text =
        (config.ranks > 1 ? QObject::tr("Estimated peak per rank (%1 ranks) %2 in %3; largest: "
                                        "%4 %5.")
                                .arg(config.ranks)
                          : QObject::tr("Estimated peak %1 in %2; largest: %3 %4."))
            .arg(bytesText(prediction.peakBytes), phaseName(prediction.peakPhase),
                 toString(MemoryCategory(largest)), bytesText(prediction.maxByCategory[largest]));
    if (config.ranks > 1 && config.device == DeviceKind::Cpu) {
        estimate.text += " " + QObject::tr("The ranks share this machine: %1 in all.")
                                   .arg(bytesText(config.ranks * prediction.peakBytes));
    }
    // The rule the CLI's estimate and the runner's pre-flight use.
    const FitCheck fit = checkFit(config, available.value_or(availableSystemMemory()));
    if (fit.fits) {
        estimate.fits = fit.fits;
        estimate.text +=
            " " + (*fit.fits ? QObject::tr("Fits in the %1 free, with a %2% margin.")
                             : QObject::tr("Does not fit in the %1 free, with a %2% margin."))
                      .arg(bytesText(fit.freeBytes))
                      .arg(int(kPreflightMargin * 100));
    } else if (config.device != DeviceKind::Cpu && prediction.deviceBytes) {
        estimate.fits = prediction.peakBytes <= *prediction.deviceBytes;
        estimate.text += " " + (*estimate.fits ? QObject::tr("Fits in the device's %1.")
                                               : QObject::tr("Exceeds the device's %1."))
                                   .arg(bytesText(*prediction.deviceBytes));
    }
    QStringList details;
    for (const std::string& line : prediction.explanation) {
        details << QString::fromStdString(line);
    }
    estimate.details = details.join('\n');
    return estimate;
}

QString shrinkChanges(const RunConfig& from, const RunConfig& to) {
    QStringList changes;
    if (from.batchSize != to.batchSize) {
        changes << QObject::tr("batch %1 → %2").arg(from.batchSize).arg(to.batchSize);
    }
    if (from.contextLength != to.contextLength) {
        changes << QObject::tr("context %1 → %2").arg(from.contextLength).arg(to.contextLength);
    }
    return changes.join(", ");
}

bool askPreflight(QWidget* parent, RunConfig& config, std::optional<int64_t> available,
                  QString* shrunkNote) {
    // A user's Python model is not ours to predict (nor does the runner try).
    if (config.device != DeviceKind::Cpu || !config.pyModel.empty()) {
        return true;
    }
    const int64_t free = available.value_or(availableSystemMemory());
    const FitCheck fit = checkFit(config, free);
    if (!fit.fits || *fit.fits) {
        return true;
    }
    const int64_t needed = fit.neededBytes;
    const std::optional<RunConfig> shrunk = shrinkToFit(config, free);
    QString text =
        QObject::tr(
            "The run's predicted peak is %1 (%2 with a %3% margin), but only %4 is "
            "free. %5")
            .arg(bytesText(predictMemory(config).peakBytes), bytesText(needed))
            .arg(int(kPreflightMargin * 100))
            .arg(bytesText(free))
            .arg(config.engine == Engine::LibTorch
                     ? QObject::tr("Running out of memory on the CPU ends the whole program.")
                     : QObject::tr("Running out of memory on the CPU ends the Python worker, "
                                   "or another program the system picks."));
    if (shrunk) {
        text +=
            "\n\n" + QObject::tr("Shrink to fit: %1 (about %2).")
                         .arg(shrinkChanges(config, *shrunk), bytesText(preflightBytes(*shrunk)));
    } else {
        RunConfig smallest = config;
        smallest.batchSize = 1;
        smallest.contextLength = 1;
        const MemoryEstimate floor = estimateMemory(smallest);
        text +=
            "\n\n" + QObject::tr(
                         "No batch or context fits: even batch 1 at context 1 needs about %1, "
                         "of which parameters, gradients and optimizer state are %2. Choose a "
                         "smaller model, or a machine with more memory.")
                         .arg(bytesText(preflightBytes(smallest)),
                              bytesText(floor.parameters + floor.gradients + floor.optimizerState));
    }
    QMessageBox box(QMessageBox::Warning, QObject::tr("This run may not fit in memory"), text,
                    QMessageBox::Cancel, parent);
    QPushButton* shrink =
        shrunk ? box.addButton(QObject::tr("Shrink to fit"), QMessageBox::AcceptRole) : nullptr;
    QPushButton* force = box.addButton(QObject::tr("Run anyway"), QMessageBox::DestructiveRole);
    // Enter must never start a run the box just said may end the program.
    if (shrink) {
        box.setDefaultButton(shrink);
    } else {
        box.setDefaultButton(QMessageBox::Cancel);
    }
    box.exec();
    if (shrink && box.clickedButton() == shrink) {
        *shrunkNote = QObject::tr("Shrunk to fit in %1: %2.")
                          .arg(bytesText(free), shrinkChanges(config, *shrunk));
        config = *shrunk;
        return true;
    }
    if (box.clickedButton() == force) {
        config.force = true;
        return true;
    }
    return false;
}

}  // namespace stepscope::ui
