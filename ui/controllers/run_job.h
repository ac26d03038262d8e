#pragma once

#include <QObject>
#include <QThread>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>

#include "controllers/run_bridge.h"
#include "engines/runner.h"
#include "experiments/sweep.h"

namespace stepscope::ui {

// Runs one run or one sweep on a worker thread with the core engine. Results
// come back on the UI thread as signals, after the last batch of steps; a job
// destroyed mid-run cancels and waits for its worker, so nothing outlives the
// window.
class RunJob final : public QObject {
    Q_OBJECT

public:
    explicit RunJob(QObject* parent = nullptr);
    ~RunJob() override;

    bool isRunning() const { return thread_ != nullptr; }
    void startRun(const RunConfig& config, std::optional<int64_t> availableMemory = {});
    // A sweep or a study built on one: `sweep` runs on the worker thread
    // with the job's observer and cancel flag in its control; `axes` name
    // the points as the sweep's files do.
    void startSweep(const std::vector<SweepAxis>& axes,
                    std::function<void(const SweepControl&)> sweep);
    void startAttention(const AttentionBenchSpec& spec);
    void cancel();  // the run stops after the step under way

    RunBridge* bridge() { return &bridge_; }

Q_SIGNALS:
    void runFinished(const stepscope::RunResult& result);
    void sweepFinished(const QString& error);  // empty when it ran to the end or was stopped
    void attentionFinished(const QString& error);
    void busyChanged(bool busy);

private:
    void launch(std::function<void()> work);
    void finishThread();

    RunBridge bridge_;
    QThread* thread_ = nullptr;
    std::atomic<bool> cancel_{false};
    // Written by the worker, read on the UI thread after it has finished.
    std::optional<RunResult> runResult_;
    std::optional<QString> sweepError_;
    std::optional<QString> attentionError_;
};

}  // namespace stepscope::ui
