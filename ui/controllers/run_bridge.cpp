#include "controllers/run_bridge.h"

namespace stepscope::ui {

RunBridge::RunBridge(QObject* parent) : QObject(parent) {
    timer_.setInterval(1000 / kDrainHz);
    connect(&timer_, &QTimer::timeout, this, &RunBridge::drain);
}

void RunBridge::setActive(bool active) {
    if (active) {
        timer_.start();
    } else {
        timer_.stop();
    }
}

void RunBridge::onStep(const StepRecord& step) {
    std::lock_guard lock(mutex_);
    steps_.push_back(step);
}

void RunBridge::onRankStep(const RankStep& step) {
    std::lock_guard lock(mutex_);
    rankSteps_.push_back(step);
}

void RunBridge::onProgress(const RunProgress& progress) {
    std::lock_guard lock(mutex_);
    progress_ = progress;  // only the newest matters
}

void RunBridge::onPointStarted(int index, int total, const RunConfig& config) {
    std::lock_guard lock(mutex_);
    points_.push_back({index, total, std::nullopt,
                       QString::fromStdString(sweepPointFileName(config, sweepAxes_))});
}

void RunBridge::onPointFinished(int index, int total, const RunResult& result,
                                const std::string& runFile) {
    std::lock_guard lock(mutex_);
    points_.push_back({index, total, result, QString::fromStdString(runFile)});
}

void RunBridge::setSweepAxes(const std::vector<SweepAxis>& axes) {
    std::lock_guard lock(mutex_);
    sweepAxes_ = axes;
}

void RunBridge::onAttentionPoint(const AttentionPoint& point) {
    std::lock_guard lock(mutex_);
    attention_.push_back(point);
}

void RunBridge::drain() {
    std::vector<StepRecord> steps;
    std::vector<RankStep> rankSteps;
    std::optional<RunProgress> progress;
    std::vector<SweepPoint> points;
    std::vector<AttentionPoint> attention;
    {
        std::lock_guard lock(mutex_);
        steps.swap(steps_);
        rankSteps.swap(rankSteps_);
        progress.swap(progress_);
        points.swap(points_);
        attention.swap(attention_);
    }
    if (!attention.empty()) {
        Q_EMIT attentionPointsArrived(attention);
    }
    for (const auto& point : points) {
        if (point.result) {
            Q_EMIT sweepPointFinished(point.index, point.total, *point.result, point.label);
        } else {
            Q_EMIT sweepPointStarted(point.index, point.total, point.label);
        }
    }
    // The ranks' first: rank 0's step, the run's own, then finds them in place.
    if (!rankSteps.empty()) {
        Q_EMIT rankStepsArrived(rankSteps);
    }
    if (!steps.empty()) {
        Q_EMIT stepsArrived(steps);
    }
    if (progress) {
        Q_EMIT progressChanged(*progress);
    }
}

}  // namespace stepscope::ui
