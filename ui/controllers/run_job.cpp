#include "controllers/run_job.h"

namespace stepscope::ui {

RunJob::RunJob(QObject* parent) : QObject(parent) {
    qRegisterMetaType<stepscope::RunResult>("stepscope::RunResult");
    qRegisterMetaType<stepscope::RunProgress>("stepscope::RunProgress");
    qRegisterMetaType<std::vector<stepscope::StepRecord>>("std::vector<stepscope::StepRecord>");
    qRegisterMetaType<std::vector<stepscope::RankStep>>("std::vector<stepscope::RankStep>");
    qRegisterMetaType<std::vector<stepscope::AttentionPoint>>(
        "std::vector<stepscope::AttentionPoint>");
}

RunJob::~RunJob() {
    if (thread_) {
        cancel_.store(true);
        thread_->wait();
        delete thread_;
    }
}

void RunJob::cancel() {
    cancel_.store(true);
}

void RunJob::launch(std::function<void()> work) {
    Q_ASSERT(!thread_);
    cancel_.store(false);
    runResult_.reset();
    sweepError_.reset();
    attentionError_.reset();
    thread_ = QThread::create(std::move(work));
    connect(thread_, &QThread::finished, this, &RunJob::finishThread);
    bridge_.setActive(true);
    thread_->start();
    Q_EMIT busyChanged(true);
}

// On the UI thread once the worker has returned: what it left in runResult_
// or sweepError_ is complete, and the bridge delivers the last steps first.
void RunJob::finishThread() {
    thread_->deleteLater();
    thread_ = nullptr;
    bridge_.setActive(false);
    bridge_.drain();
    Q_EMIT busyChanged(false);
    if (runResult_) {
        Q_EMIT runFinished(*std::exchange(runResult_, std::nullopt));
    } else if (sweepError_) {
        Q_EMIT sweepFinished(*std::exchange(sweepError_, std::nullopt));
    } else if (attentionError_) {
        Q_EMIT attentionFinished(*std::exchange(attentionError_, std::nullopt));
    }
}

void RunJob::startRun(const RunConfig& config, std::optional<int64_t> availableMemory) {
    launch([this, config, availableMemory] {
        RunControl control;
        control.observer = &bridge_;
        control.cancel = &cancel_;
        control.availableMemoryBytes = availableMemory;
        RunResult result;
        try {
            result = runBenchmark(config, control);
        } catch (const std::exception& error) {  // the UI validates first; this is a safety net
            result.config = config;
            result.status = RunStatus::Failed;
            result.message = error.what();
        }
        runResult_ = std::move(result);
    });
}

void RunJob::startSweep(const std::vector<SweepAxis>& axes,
                        std::function<void(const SweepControl&)> sweep) {
    bridge_.setSweepAxes(axes);
    launch([this, sweep = std::move(sweep)] {
        SweepControl control;
        control.observer = &bridge_;
        control.runObserver = &bridge_;
        control.cancel = &cancel_;
        QString error;
        try {
            sweep(control);
        } catch (const std::exception& failure) {
            error = QString::fromUtf8(failure.what());
        }
        sweepError_ = error;
    });
}

void RunJob::startAttention(const AttentionBenchSpec& spec) {
    launch([this, spec] {
        AttentionBenchControl control;
        control.cancel = &cancel_;
        control.onPoint = [this](const AttentionPoint& point, int, int) {
            bridge_.onAttentionPoint(point);
        };
        QString error;
        try {
            runAttentionBenchmark(spec, control);
        } catch (const std::exception& failure) {
            error = QString::fromUtf8(failure.what());
        }
        attentionError_ = error;
    });
}

}  // namespace stepscope::ui
