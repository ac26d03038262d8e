#include "controllers/run_workflow.h"

#include <QEventLoop>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>

#include <optional>

#include "controllers/folder_watch.h"
#include "controllers/messages.h"
#include "controllers/preflight.h"
#include "controllers/run_controller.h"
#include "controllers/run_list.h"
#include "controllers/sweep_launch.h"
#include "engines/environment.h"
#include "experiments/study.h"
#include "pages/attention_page.h"
#include "pages/config_panel.h"
#include "pages/sweep_page.h"
#include "widgets/file_code_question.h"

namespace stepscope::ui {

namespace {

// The user's attention could not be loaded or failed its correctness gate
// before any step (the worker's message starts "py_attention: "): bad input,
// said beside its field, as the CLI exits 2 naming --py-attention.
std::optional<QString> refusedAttention(const RunResult& result) {
    const std::string prefix = "py_attention: ";
    if (result.status != RunStatus::Failed || !result.steps.empty() ||
        result.message.rfind(prefix, 0) != 0) {
        return std::nullopt;
    }
    const std::string why = result.message.substr(prefix.size());
    return QString::fromStdString(why.substr(0, why.find('\n')));
}

// "Run #4: cancelled after 7 of 27 steps", not "cancelled: cancelled after …".
QString runOutcome(const QString& who, const RunResult& result) {
    const QString status = QString::fromStdString(toString(result.status));
    const QString message = QString::fromStdString(result.message);
    return message.startsWith(status) ? RunWorkflow::tr("Run %1: %2").arg(who, message)
           : message.isEmpty()        ? RunWorkflow::tr("Run %1 %2").arg(who, status)
                                      : RunWorkflow::tr("Run %1 %2: %3").arg(who, status, message);
}

}  // namespace

RunWorkflow::RunWorkflow(const Parts& parts, QObject* parent) : QObject(parent), parts_(parts) {
    connectRunner();
    connectPages();
}

void RunWorkflow::connectRunner() {
    RunController* runner = parts_.runner;
    connect(runner, &RunController::busyChanged, this, &RunWorkflow::onBusyChanged);
    connect(runner, &RunController::progressChanged, this, [this](const QString& text, bool tick) {
        // A tick only unless something else (Stop) has spoken since.
        if (!tick || parts_.status->text() == progressShown_) {
            parts_.status->setText(text);
            progressShown_ = text;
        }
    });
    connect(runner, &RunController::stepProgress, this, [this](int step, int total) {
        parts_.progress->setRange(0, total);
        parts_.progress->setValue(step);
    });
    connect(runner, &RunController::configShrunk, this,
            [this](const RunConfig& config, const QString& note) {
                parts_.config->setConfig(config);
                parts_.config->editCopy();  // the form now holds a new config, not a past run's
                parts_.messages->setBanner(note, false);
            });
    connect(runner, &RunController::stepsArrived, this, &RunWorkflow::onStepsArrived);
    connect(runner, &RunController::rankStepsArrived, this, &RunWorkflow::onRankStepsArrived);
    connect(runner, &RunController::runFinished, this, &RunWorkflow::onRunFinished);
    connect(runner, &RunController::sweepPointFinished, this,
            [this](int index, const RunResult& result, const QString& file) {
                parts_.runs->add(result, file).madeHere = true;
                parts_.sweep->addPoint(index, result);
            });
    connect(runner, &RunController::sweepFinished, this, [this](const QString& error) {
        parts_.sweep->finish(error);
        batchFinished(error, tr("Sweep finished"), tr("Sweep ended early"));
        Q_EMIT sweepFinished();
    });
    connect(runner, &RunController::attentionPointsArrived, parts_.attention,
            &AttentionPage::addPoints);
    connect(runner, &RunController::attentionFinished, this, [this](const QString& error) {
        parts_.attention->finish(error);
        batchFinished(error, tr("Attention grid finished"), tr("Attention grid ended early"));
        Q_EMIT attentionFinished();
    });
}

void RunWorkflow::connectPages() {
    connect(parts_.config, &ConfigPanel::runAgainRequested, this, &RunWorkflow::startRun);
    connect(parts_.config, &ConfigPanel::changed, this, &RunWorkflow::configChanged);
    connect(parts_.sweep, &SweepPage::startRequested, this, &RunWorkflow::startSweep);
    connect(parts_.sweep, &SweepPage::stopRequested, this, &RunWorkflow::stopRun);
    connect(parts_.attention, &AttentionPage::startRequested, this, &RunWorkflow::startAttention);
    connect(parts_.attention, &AttentionPage::stopRequested, this, &RunWorkflow::stopRun);
}

bool RunWorkflow::isRunning() const {
    return parts_.runner->isRunning();
}

void RunWorkflow::configChanged() {
    ConfigPanel* config = parts_.config;
    ValidationContext context = validationContext();
    // A past run's configuration is shown as it ran: a device this machine
    // lacks is no error of that run, only why it cannot run again here.
    QString cannotRunHere;
    if (config->isReadOnly() && !context.cudaAvailable &&
        config->config().device == DeviceKind::Cuda) {
        context.cudaAvailable = true;
        cannotRunHere =
            tr("It ran on a CUDA device; this machine has none, so it cannot run "
               "again here (stepscope-cli on a GPU server can).");
    }
    config->setViewingNote(cannotRunHere);
    const bool errors = config->showErrors(validate(config->config(), context));
    if (!errors) {
        parts_.messages->clearBannerAbout(Messages::About::ConfigErrors);  // they are fixed
    }
    updateEstimate(!errors);
    parts_.sweep->setBaseConfig(config->config());
}

void RunWorkflow::configLoaded() {
    parts_.sweep->setBaseConfig(parts_.config->config());
    updateEstimate(validate(parts_.config->config(), validationContext()).empty());
}

void RunWorkflow::updateEstimate(bool configValid) {
    const MemoryEstimateText estimate =
        memoryEstimateText(parts_.config->config(), configValid, parts_.runner->availableMemory());
    parts_.config->showEstimate(estimate.text, estimate.details, estimate.fits);
}

bool RunWorkflow::startRun() {
    if (isRunning()) {
        return false;
    }
    RunConfig config = parts_.config->config();
    if (parts_.config->showErrors(validate(config, validationContext()))) {
        parts_.messages->setBanner(
            tr("The configuration has errors; they are shown beside their fields."), true,
            Messages::About::ConfigErrors);
        return false;
    }
    parts_.messages->clearBanner();
    if (!fileCodeAllowed() || !parts_.runner->preflight(config)) {
        return false;
    }
    RunResult live;
    live.config = config;
    // A user's Python model says its own count when the worker starts it.
    live.parameterCount = config.pyModel.empty() ? parameterCount(config.model) : 0;
    RunDocument& document = parts_.runs->add(live, QString());  // listed, not selected
    document.madeHere = true;
    const int id = document.id;
    parts_.runs->setLive(id);
    parts_.runs->select(id);
    Q_EMIT runStarted();
    parts_.runner->startRun(config);
    return true;
}

bool RunWorkflow::fileCodeAllowed() {
    ConfigPanel* panel = parts_.config;
    if (panel->codeFromFile().empty()) {
        return true;
    }
    if (!askToRunFileCode(panel->window(), tr("This configuration"),
                          codeNamedBy(panel->config()))) {
        parts_.status->setText(tr("Not run: its file's code was not trusted"));
        return false;
    }
    panel->trustCodeFromFile();
    return true;
}

void RunWorkflow::stopRun() {
    if (isRunning()) {
        parts_.runner->stop();
        parts_.status->setText(tr("Stopping after the step under way…"));
    }
}

void RunWorkflow::finishRunInProgress() {
    if (!isRunning()) {
        return;
    }
    QEventLoop loop;
    connect(parts_.runner, &RunController::busyChanged, &loop, [&loop](bool busy) {
        if (!busy) {
            loop.quit();
        }
    });
    stopRun();
    loop.exec();  // after the step under way; the live document is then whole
}

void RunWorkflow::onBusyChanged(bool busy) {
    parts_.config->runAgainButton()->setEnabled(!busy);
    parts_.sweep->setRunning(busy);
    parts_.attention->setRunning(busy);
    parts_.progress->setVisible(busy);
    if (!busy) {
        parts_.progress->reset();
    }
    Q_EMIT busyChanged(busy);
}

void RunWorkflow::onStepsArrived(const std::vector<StepRecord>& steps) {
    const RunDocument* document = parts_.runs->addLiveSteps(steps);
    if (document && parts_.runs->current() == document) {
        Q_EMIT shownRunChanged();
    }
}

void RunWorkflow::onRankStepsArrived(const std::vector<RankStep>& steps) {
    const RunDocument* document = parts_.runs->addLiveRankSteps(steps);
    if (document && parts_.runs->current() == document) {
        Q_EMIT shownRunChanged();
    }
}

void RunWorkflow::onRunFinished(const RunResult& result) {
    if (const auto why = refusedAttention(result)) {
        refuseAttention(result, *why);
        return;
    }
    RunList* runs = parts_.runs;
    RunDocument* document = runs->byId(runs->liveId());
    runs->setLive(0);
    if (document) {
        document->result = result;
        document->modified = true;
    }
    runs->refresh();
    if (document) {
        runs->changedInPlace(document->id);
    }
    Q_EMIT shownRunChanged();
    const QString who = document ? QString("#%1").arg(document->id) : QString();
    parts_.status->setText(
        tr("Run %1 %2").arg(who, QString::fromStdString(toString(result.status))));
    if (result.status != RunStatus::Ok) {
        parts_.messages->setBanner(runOutcome(who, result), result.status != RunStatus::Cancelled,
                                   Messages::About::Run, document ? document->id : 0);
    }
    Q_EMIT runFinished(result);
}

// The user's attention was refused before any step: the run never started,
// so its document goes and the reason stands beside the attention field.
void RunWorkflow::refuseAttention(const RunResult& result, const QString& why) {
    parts_.runs->remove(parts_.runs->liveId());
    parts_.config->setConfig(result.config);
    parts_.config->editCopy();  // re-validates the form, so the error goes in after
    parts_.config->showErrors({{"py-attention", why.toStdString()}});
    parts_.messages->setBanner(tr("Your attention was not run: %1").arg(why), true,
                               Messages::About::ConfigErrors);
    parts_.status->setText(tr("Run not started"));
    Q_EMIT shownRunChanged();
    Q_EMIT runFinished(result);
}

// A sweep, study or attention grid ended: said in the status bar, its error
// in the banner.
void RunWorkflow::batchFinished(const QString& error, const QString& done, const QString& early) {
    parts_.status->setText(error.isEmpty() ? done : early);
    if (!error.isEmpty()) {
        parts_.messages->setBanner(error, true);
    }
}

void RunWorkflow::startSweep() {
    if (isRunning()) {
        return;
    }
    SweepPage* sweep = parts_.sweep;
    if (!fileCodeAllowed()) {
        return;
    }
    const RunConfig base = parts_.config->config();
    if (sweep->study() == SweepPage::Study::Attention) {
        parts_.attention->setForm(attentionStudySpec(base.device));
        Q_EMIT attentionStarted();
        startAttention();
        return;
    }
    SweepLaunch launch;
    try {
        launch = sweepLaunchFor(*sweep, base, parts_.runner->pointCli());
    } catch (const InvalidConfigError& error) {
        parts_.messages->setBanner(
            parts_.config->inPanelTerms(QString::fromUtf8(error.what()).trimmed()), true);
        return;
    }
    parts_.messages->clearBanner();
    parts_.folders->stopSweep();  // the tab shows this sweep now, not a folder's
    const std::optional<int64_t> available = parts_.runner->availableMemory();
    sweep->begin(launch.spec,
                 launch.spec.base.device == DeviceKind::Cpu
                     ? std::optional<int64_t>(available.value_or(availableSystemMemory()))
                     : std::nullopt);
    parts_.runner->startSweep(launch);
}

void RunWorkflow::startAttention() {
    if (isRunning()) {
        return;
    }
    if (!fileCodeAllowed()) {
        return;
    }
    AttentionBenchSpec spec;
    try {
        const RunConfig config = parts_.config->config();
        spec = parts_.attention->spec(config.device);
        // "your own…" in the attention field adds the user's attention to the grid.
        spec.pyAttention = config.pyAttention;
        spec.pyPath = config.pyAttention.empty() ? std::string() : config.pyPath;
        validateAttentionSpec(spec);
    } catch (const InvalidConfigError& error) {
        parts_.messages->setBanner(QString::fromUtf8(error.what()).trimmed(), true);
        return;
    }
    parts_.messages->clearBanner();
    parts_.attention->begin(int(attentionGridPoints(spec).size()));
    parts_.runner->startAttention(spec);
}

}  // namespace stepscope::ui
