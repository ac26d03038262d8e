#include "controllers/run_controller.h"

#include <QTimer>

#include "controllers/preflight.h"
#include "controllers/run_job.h"
#include "engines/environment.h"
#include "engines/isolated_run.h"

namespace stepscope::ui {

RunController::RunController(QWidget* window)
    : QObject(window), window_(window), job_(new RunJob(this)), progressTick_(new QTimer(this)) {
    progressTick_->setInterval(1000);
    connect(progressTick_, &QTimer::timeout, this, [this] {
        if (lastProgress_) {
            Q_EMIT progressChanged(progressText(), true);
        }
    });
    connect(job_, &RunJob::busyChanged, this, [this](bool busy) {
        lastProgress_.reset();
        if (busy) {
            progressTick_->start();
        } else {
            progressTick_->stop();
        }
        Q_EMIT busyChanged(busy);
    });
    connect(job_, &RunJob::runFinished, this, &RunController::runFinished);
    connect(job_, &RunJob::sweepFinished, this, &RunController::sweepFinished);
    connect(job_, &RunJob::attentionFinished, this, &RunController::attentionFinished);
    connect(job_->bridge(), &RunBridge::stepsArrived, this, &RunController::stepsArrived);
    connect(job_->bridge(), &RunBridge::rankStepsArrived, this, &RunController::rankStepsArrived);
    connect(job_->bridge(), &RunBridge::progressChanged, this, &RunController::onProgress);
    connect(job_->bridge(), &RunBridge::sweepPointFinished, this,
            [this](int index, int, const RunResult& result, const QString& file) {
                Q_EMIT sweepPointFinished(index, result, file);
            });
    connect(job_->bridge(), &RunBridge::attentionPointsArrived, this,
            &RunController::attentionPointsArrived);
}

bool RunController::isRunning() const {
    return job_->isRunning();
}

std::string RunController::pointCli() const {
    return pointCli_.empty() ? cliBesideExecutable() : pointCli_;
}

bool RunController::preflight(RunConfig& config) {
    QString note;
    if (!askPreflight(window_, config, availableMemory_, &note)) {
        return false;
    }
    if (!note.isEmpty()) {
        Q_EMIT configShrunk(config, note);
    }
    return true;
}

void RunController::startRun(const RunConfig& config) {
    compileMode_ = config.compileMode;
    job_->startRun(config, availableMemory_);
}

void RunController::validateSweep(const SweepSpec& spec) {
    std::vector<ConfigError> errors;
    const ValidationContext context = validationContext();
    for (const auto& point : expandSweep(spec)) {
        for (auto& error : validate(point, context)) {
            error.message += " (" + sweepPointFileName(point, spec.axes) + ")";
            errors.push_back(error);
        }
    }
    if (!errors.empty()) {
        throw InvalidConfigError(errors);
    }
}

void RunController::startSweep(const SweepLaunch& launch) {
    compileMode_ = "default";
    const std::string cli = pointCli();
    job_->startSweep(launch.spec.axes, [launch, cli](const SweepControl& given) {
        SweepControl control = given;
        if (launch.isolated) {
            control.runPoint = freshProcessRunner(cli);
        }
        switch (launch.kind) {
            case SweepLaunch::Kind::Warmup:
                runWarmupStudy(launch.warmup, control);
                break;
            case SweepLaunch::Kind::Precision:
                runPrecisionStudy(launch.spec, control);
                break;
            case SweepLaunch::Kind::Sweep:
                runSweep(launch.spec, control);
                break;
        }
    });
}

void RunController::startAttention(const AttentionBenchSpec& spec) {
    compileMode_ = "default";
    job_->startAttention(spec);
}

void RunController::stop() {
    if (job_->isRunning()) {
        job_->cancel();
    }
}

void RunController::onProgress(const RunProgress& progress) {
    lastProgress_ = progress;
    sinceProgress_.restart();
    Q_EMIT progressChanged(progressText(), false);
    Q_EMIT stepProgress(progress.step, progress.totalSteps);
}

// The last progress, its elapsed time counting on between reports: a
// torch.compile can take minutes without one.
QString RunController::progressText() const {
    const RunProgress& progress = *lastProgress_;
    const int done = progress.step;
    // Steps are named by their index, as the step table and the CLI name them.
    QString text = progress.phase == "setup" ? tr("Building the model and data")
                   : progress.phase == "compile"
                       ? tr("Compiling the model (torch.compile, mode %1)")
                             .arg(QString::fromStdString(compileMode_))
                       : tr("Step %1 (%2) · %3")
                             .arg(progress.step)
                             .arg(progress.warmup ? tr("warm-up") : tr("measured"),
                                  QString::fromStdString(progress.phase));
    text += tr(" · %1 of %2 steps done").arg(done).arg(progress.totalSteps);
    const double elapsedMs = progress.elapsedMs + double(sinceProgress_.elapsed());
    text += tr(" · %1 s elapsed").arg(elapsedMs / 1000, 0, 'f', 1);
    if (done > 0) {
        const double remaining = progress.elapsedMs / done * (progress.totalSteps - done);
        text += tr(" · about %1 s left").arg(remaining / 1000, 0, 'f', 1);
    }
    return text;
}

}  // namespace stepscope::ui
