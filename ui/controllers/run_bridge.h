#pragma once

#include <QObject>
#include <QTimer>

#include <mutex>
#include <optional>
#include <vector>

#include "engines/runner.h"
#include "experiments/attention_benchmark.h"
#include "experiments/sweep.h"

namespace stepscope::ui {

// Carries what the runner emits on its worker thread to the UI thread. The
// worker only appends to a buffer under a mutex; a timer on the UI thread
// drains it at most `kDrainHz` times a second and emits one batch, so a fast
// run never floods the event loop and the UI thread never waits on the worker.
class RunBridge final : public QObject, public RunObserver, public SweepObserver {
    Q_OBJECT

public:
    static constexpr int kDrainHz = 30;
    explicit RunBridge(QObject* parent = nullptr);

    // Worker thread side.
    void onStep(const StepRecord& step) override;
    void onRankStep(const RankStep& step) override;
    void onProgress(const RunProgress& progress) override;
    void onPointStarted(int index, int total, const RunConfig& config) override;
    void onPointFinished(int index, int total, const RunResult& result,
                         const std::string& runFile) override;

    void onAttentionPoint(const AttentionPoint& point);
    // The axes of the sweep about to run, before it starts (its points' labels).
    void setSweepAxes(const std::vector<SweepAxis>& axes);

    // UI thread side: the drain timer runs only while a job does; deliver
    // whatever is pending now (also called at the end of a run).
    void setActive(bool active);
    void drain();

Q_SIGNALS:
    void stepsArrived(const std::vector<stepscope::StepRecord>& steps);
    void rankStepsArrived(const std::vector<stepscope::RankStep>& steps);
    void progressChanged(const stepscope::RunProgress& progress);
    void sweepPointStarted(int index, int total, const QString& label);
    void sweepPointFinished(int index, int total, const stepscope::RunResult& result,
                            const QString& runFile);
    void attentionPointsArrived(const std::vector<stepscope::AttentionPoint>& points);

private:
    struct SweepPoint {
        int index = 0;
        int total = 0;
        std::optional<RunResult> result;  // empty: started
        QString label;
    };

    QTimer timer_;
    std::mutex mutex_;
    std::vector<StepRecord> steps_;
    std::vector<RankStep> rankSteps_;
    std::optional<RunProgress> progress_;
    std::vector<SweepPoint> points_;
    std::vector<AttentionPoint> attention_;
    std::vector<SweepAxis> sweepAxes_;
};

}  // namespace stepscope::ui
