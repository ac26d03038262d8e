#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QString>

#include <optional>
#include <string>
#include <vector>

#include "engines/runner.h"
#include "experiments/attention_benchmark.h"
#include "experiments/study.h"
#include "experiments/sweep.h"

class QTimer;
class QWidget;

namespace stepscope::ui {

class RunJob;

// What the Sweep tab asks to run: a sweep, or a study built on one.
struct SweepLaunch {
    enum class Kind { Sweep, Warmup, Precision };
    Kind kind = Kind::Sweep;
    SweepSpec spec;
    WarmupStudySpec warmup;  // Kind::Warmup
    bool isolated = false;   // each point in a fresh stepscope-cli process
};

// Starts and stops what runs on the engine (a run, a sweep or study, an
// attention grid) on RunJob's worker thread, asks the pre-flight question
// first, and says how it goes: progress lines (their elapsed time counting on
// between reports) and results, as signals.
class RunController final : public QObject {
    Q_OBJECT

public:
    // The pre-flight question is modal on `window`.
    explicit RunController(QWidget* window);

    bool isRunning() const;
    // Pre-flight and the runner act as if this much memory were free
    // (nullopt: what the system reports).
    void setAvailableMemory(std::optional<int64_t> bytes) { availableMemory_ = bytes; }
    std::optional<int64_t> availableMemory() const { return availableMemory_; }
    // The stepscope-cli that runs points in fresh processes (default: the
    // one beside this program).
    void setPointCli(const std::string& cli) { pointCli_ = cli; }
    std::string pointCli() const;

    // The CPU pre-flight question for `config`: false when the user declined.
    // Shrinking to fit changes `config` and emits configShrunk.
    bool preflight(RunConfig& config);
    void startRun(const RunConfig& config);
    // Throws InvalidConfigError naming each point's file when one is invalid.
    static void validateSweep(const SweepSpec& spec);
    void startSweep(const SweepLaunch& launch);
    void startAttention(const AttentionBenchSpec& spec);
    void stop();  // after the step under way

Q_SIGNALS:
    void busyChanged(bool busy);
    // A progress line; `tick`: the same progress, its elapsed time counted on.
    void progressChanged(const QString& text, bool tick);
    void stepProgress(int step, int totalSteps);
    void configShrunk(const stepscope::RunConfig& config, const QString& note);
    void stepsArrived(const std::vector<stepscope::StepRecord>& steps);
    // A distributed run: each rank's steps as they finish.
    void rankStepsArrived(const std::vector<stepscope::RankStep>& steps);
    void runFinished(const stepscope::RunResult& result);
    void sweepPointFinished(int index, const stepscope::RunResult& result, const QString& file);
    void sweepFinished(const QString& error);
    void attentionPointsArrived(const std::vector<stepscope::AttentionPoint>& points);
    void attentionFinished(const QString& error);

private:
    void onProgress(const RunProgress& progress);
    QString progressText() const;

    QWidget* window_;
    RunJob* job_;
    QTimer* progressTick_;
    std::optional<RunProgress> lastProgress_;  // of the job under way
    QElapsedTimer sinceProgress_;
    std::string compileMode_ = "default";  // of the run under way
    std::optional<int64_t> availableMemory_;
    std::string pointCli_;
};

}  // namespace stepscope::ui
