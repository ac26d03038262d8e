#include "engines/python_worker.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>

#include "config/model_dims.h"
#include "engines/environment.h"
#include "estimate/cost_model.h"
#include "estimate/fit_check.h"
#include "profile/operator_tracer.h"
#include "results/run_file.h"
#include "util/child_process.h"

namespace stepscope {

namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr auto kPollInterval = std::chrono::milliseconds(100);

std::optional<double> numberOrNull(const json& event, const char* key) {
    const auto found = event.find(key);
    if (found == event.end() || found->is_null()) {
        return std::nullopt;
    }
    return found->get<double>();
}

StepRecord stepFrom(const json& event) {
    StepRecord step;
    step.index = event.at("index").get<int>();
    step.warmup = event.at("warmup").get<bool>();
    step.totalMs = event.at("total_ms").get<double>();
    step.forwardMs = numberOrNull(event, "forward_ms");
    step.backwardMs = numberOrNull(event, "backward_ms");
    step.optimizerMs = numberOrNull(event, "optimizer_ms");
    step.loss = numberOrNull(event, "loss");
    step.communicationWaitMs = numberOrNull(event, "comm_wait_ms");
    return step;
}

std::optional<int64_t> bytesOrNull(const json& object, const char* key) {
    const auto value = numberOrNull(object, key);
    return value ? std::optional<int64_t>(int64_t(*value)) : std::nullopt;
}

// A distributed step's phases and collectives (docs/worker-protocol.md,
// "Distributed runs"), on the ranks' shared clock.
RankStep rankStepFrom(const json& event, const StepRecord& record) {
    RankStep out;
    out.rank = event.at("rank").get<int>();
    out.step = record;
    const int step = record.index;
    for (const json& phase : event.value("phases", json::array())) {
        out.phases.push_back({step, phase.at("phase").get<std::string>(),
                              phase.at("start_us").get<double>(),
                              phase.at("end_us").get<double>()});
    }
    for (const json& item : event.value("collectives", json::array())) {
        CollectiveSpan span;
        span.op = item.at("op").get<std::string>();
        span.group = item.value("group", "0");
        span.sequence = item.at("seq").get<int64_t>();
        span.bytes = item.value("bytes", int64_t(0));
        span.startUs = item.at("start_us").get<double>();
        span.endUs = item.at("end_us").get<double>();
        span.dtype = item.value("dtype", "");
        span.phase = item.value("phase", "");
        span.thread = item.value("thread", "");
        span.step = step;
        span.blocking = !item.value("async", false);
        out.collectives.push_back(std::move(span));
    }
    return out;
}

CorrectnessGate gateOf(const json& event) {
    CorrectnessGate gate;
    gate.ok = event.value("ok", false);
    gate.maxRelError = numberOrNull(event, "max_rel_error");
    gate.worstParameter = event.value("worst_parameter", "");
    gate.tolerance = event.value("tolerance", 0.0);
    return gate;
}

RankMemoryMarks memoryOf(const json& memory) {
    RankMemoryMarks marks;
    marks.peakBytes = bytesOrNull(memory, "peak_bytes");
    marks.afterInitBytes = bytesOrNull(memory, "after_init_bytes");
    marks.beforeOptimizerBytes = bytesOrNull(memory, "before_optimizer_bytes");
    marks.afterOptimizerBytes = bytesOrNull(memory, "after_optimizer_bytes");
    const json categories = memory.value("by_category", json::object());
    for (const auto& [category, bytes] : categories.items()) {
        marks.byCategory.emplace_back(category, bytes.is_number()
                                                    ? std::optional<int64_t>(bytes.get<int64_t>())
                                                    : std::nullopt);
    }
    return marks;
}

// Categories the way the engine's own tracer names them, so the Breakdown
// tab groups worker rows like LibTorch rows.
std::vector<TimeRow> rowsFrom(const json& event, bool kernels) {
    std::vector<TimeRow> rows;
    for (const json& item : event.at("rows")) {
        TimeRow row;
        row.name = item.at("name").get<std::string>();
        row.phase = item.at("phase").get<std::string>();
        row.calls = item.at("calls").get<int64_t>();
        row.totalMs = item.at("total_ms").get<double>();
        row.category = kernels ? kernelCategory(row.name, "", row.phase)
                               : operatorCategory(row.name, row.phase);
        rows.push_back(std::move(row));
    }
    std::sort(rows.begin(), rows.end(),
              [](const TimeRow& a, const TimeRow& b) { return a.totalMs > b.totalMs; });
    return rows;
}

std::string directoryOfThisExecutable() {
    std::error_code error;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
    return error ? std::string() : self.parent_path().string();
}

std::string describeCandidates(const std::vector<PythonCandidate>& candidates) {
    std::string text;
    for (const auto& candidate : candidates) {
        text += (text.empty() ? "" : ", ") + candidate.path + " (" + candidate.source + ")";
    }
    return text;
}

std::string pythonPathEntry() {
    const char* existing = std::getenv("PYTHONPATH");
    return "PYTHONPATH=" + workerPackageDir() +
           (existing && *existing ? ":" + std::string(existing) : "");
}

// Starts `python -m stepscope.worker`; see startPythonModule.
std::unique_ptr<ChildProcess> startWorker(const std::string& explicitPython, std::string& chosen,
                                          std::string& whyNot) {
    return startPythonModule({"stepscope.worker"}, explicitPython, chosen, whyNot);
}

// Events in, RunResult out.
class WorkerRun {
public:
    WorkerRun(const RunConfig& config, const RunControl& control)
        : config_(config), control_(control), begin_(Clock::now()) {
        result_.config = config;
        result_.environment = captureEnvironment(config);
    }

    RunResult run() {
        std::string whyNot;
        std::unique_ptr<ChildProcess> worker =
            startWorker(config_.python, result_.environment.python, whyNot);
        if (!worker) {
            return finish(RunStatus::Unavailable,
                          "engine " + toString(config_.engine) + ": " + whyNot);
        }
        worker->writeInputAndClose(R"({"command":"run","config":)" + runConfigToJson(config_) +
                                   "}\n");
        readEvents(*worker);
        worker->wait(std::chrono::seconds(10));
        if (finished_) {
            return finish(*finishedStatus_, finishedMessage_);
        }
        const std::string steps = std::to_string(result_.steps.size()) + " of " +
                                  std::to_string(config_.warmupSteps + config_.measuredSteps) +
                                  " steps";
        if (stopRequestedAt_) {
            return finish(RunStatus::Cancelled,
                          "cancelled after " + steps +
                              " (the worker was stopped: " + worker->exitDescription() + ")");
        }
        std::string message = "the PyTorch worker ended without a result (" +
                              worker->exitDescription() + ") after " + steps;
        if (const std::string tail = worker->stderrTail(); !tail.empty()) {
            message += "; its last output:\n" + tail;
        }
        return finish(RunStatus::Failed, message);
    }

private:
    void readEvents(ChildProcess& worker) {
        while (!worker.atEnd()) {
            if (auto line = worker.readLine(kPollInterval)) {
                handle(*line);
            }
            stopIfAsked(worker);
        }
    }

    void stopIfAsked(ChildProcess& worker) {
        if (!control_.cancel || !control_.cancel->load()) {
            return;
        }
        if (!stopRequestedAt_) {
            stopRequestedAt_ = Clock::now();
            worker.terminate();
        } else if (Clock::now() - *stopRequestedAt_ > control_.stopGracePeriod) {
            worker.kill();
        }
    }

    void handle(const std::string& line) {
        json event;
        try {
            event = json::parse(line);
            const std::string kind = event.at("event").get<std::string>();
            if (kind == "started") {
                started(event);
            } else if (kind == "progress") {
                progress(event);
            } else if (kind == "compiled") {
                result_.compileMs = event.at("compile_ms").get<double>();
            } else if (kind == "step") {
                step(event);
            } else if (kind == "gate") {
                distributed().gate = gateOf(event);
            } else if (kind == "rank_summary") {
                rankRecord(event.at("rank").get<int>()).memory =
                    memoryOf(event.value("memory", json::object()));
            } else if (kind == "rank_started") {
                rankRecord(event.at("rank").get<int>()).host = event.value("host", "");
            } else if (kind == "operators") {
                result_.operators = rowsFrom(event, /*kernels=*/false);
            } else if (kind == "kernels") {
                result_.kernels = rowsFrom(event, /*kernels=*/true);
            } else if (kind == "memory") {
                result_.memory = memoryTraceFromJson(event.at("memory"), "worker.memory");
            } else if (kind == "finished") {
                finished_ = true;
                finishedStatus_ = parseRunStatus(event.at("status").get<std::string>());
                finishedMessage_ = event.value("message", "");
                if (!finishedStatus_) {
                    finishedStatus_ = RunStatus::Failed;
                    finishedMessage_ = "the worker finished with an unknown status: " + line;
                }
            }
        } catch (const std::exception& error) {
            // A worker that speaks something else is a failed run, not a crash.
            finished_ = true;
            finishedStatus_ = RunStatus::Failed;
            finishedMessage_ = std::string("the worker sent an event StepScope cannot read (") +
                               error.what() + "): " + line.substr(0, 300);
        }
    }

    // One rank's step (a distributed run: every rank's; the run's are rank 0's).
    void step(const json& event) {
        const StepRecord record = stepFrom(event);
        if (event.contains("rank")) {
            RankStep rankStep = rankStepFrom(event, record);
            checkRank(rankStep.rank);
            if (control_.observer) {
                control_.observer->onRankStep(rankStep);
            }
            addRankStep(distributed(), std::move(rankStep));
            if (event.at("rank").get<int>() != 0) {
                return;
            }
        }
        result_.steps.push_back(record);
        if (control_.observer) {
            control_.observer->onStep(result_.steps.back());
        }
    }

    DistributedRun& distributed() {
        if (!result_.distributed) {
            result_.distributed.emplace();
        }
        return *result_.distributed;
    }

    // The record of rank `rank`, made in the ranks' order as they first speak.
    RankRecord& rankRecord(int rank) {
        checkRank(rank);
        return rankRecordOf(distributed(), rank);
    }

    void checkRank(int rank) const {
        if (rank < 0 || rank >= config_.ranks) {
            throw std::out_of_range("rank " + std::to_string(rank) + " of " +
                                    std::to_string(config_.ranks));
        }
    }

    void started(const json& event) {
        EnvironmentInfo& env = result_.environment;
        env.pythonTorchVersion = event.value("torch_version", "");
        env.cudaVersion = event.value("cuda_version", "");
        env.deviceName = event.value("device_name", "");
        env.cpuThreads = event.value("cpu_threads", 0);
        if (const auto python = event.value("python", ""); !python.empty()) {
            env.python = python;
        }
        result_.parameterCount = event.value("parameters", int64_t(0));
    }

    void progress(const json& event) {
        if (!control_.observer) {
            return;
        }
        RunProgress progress;
        progress.step = event.value("step", 0);
        progress.totalSteps = event.value("total_steps", 0);
        progress.warmup = event.value("warmup", false);
        progress.phase = event.value("phase", "");
        progress.elapsedMs =
            std::chrono::duration<double, std::milli>(Clock::now() - begin_).count();
        control_.observer->onProgress(progress);
    }

    RunResult finish(RunStatus status, std::string message) {
        result_.status = status;
        result_.message = std::move(message);
        if (result_.parameterCount == 0 && config_.pyModel.empty()) {
            result_.parameterCount = parameterCount(config_.model);
        }
        if (result_.distributed) {
            // A rank that died before it said anything still has its place.
            for (int rank = 0; rank < config_.ranks; ++rank) {
                rankRecord(rank);
            }
            analyzeRanks(*result_.distributed);
        }
        result_.summary = summarizeSteps(result_.steps, config_,
                                         devicePeakFlopsPerSecond(result_.environment.deviceName,
                                                                  config_.precision, config_.tf32));
        return std::move(result_);
    }

    const RunConfig& config_;
    const RunControl& control_;
    Clock::time_point begin_;
    RunResult result_;
    bool finished_ = false;
    std::optional<RunStatus> finishedStatus_;
    std::string finishedMessage_;
    std::optional<Clock::time_point> stopRequestedAt_;
};

json attentionRequest(const std::vector<AttentionPoint>& points, const AttentionBenchSpec& spec) {
    json list = json::array();
    for (const auto& p : points) {
        json point = attentionPointCoordinates(p);
        point.update({{"device", toString(spec.device)},
                      {"warmup", spec.warmup},
                      {"repeats", spec.repeats},
                      {"seed", spec.seed}});
        list.push_back(std::move(point));
    }
    json request = {{"command", "attention"}, {"points", list}};
    if (!spec.pyAttention.empty()) {
        request["py_attention"] = spec.pyAttention;
        request["py_path"] = spec.pyPath;
        request["py_attention_name"] = userAttentionName(spec);
    }
    return request;
}

std::optional<AttentionGate> gateFrom(const json& event) {
    const auto found = event.find("gate");
    if (found == event.end() || found->is_null()) {
        return std::nullopt;
    }
    AttentionGate gate;
    gate.ok = found->value("ok", false);
    gate.maxRelError = numberOrNull(*found, "max_rel_error");
    gate.tolerance = found->value("tolerance", 0.0);
    gate.message = found->value("message", "");
    return gate;
}

void fillMeasuredPoint(AttentionPoint& point, const json& event) {
    point.status = event.value("status", "failed");
    point.message = event.value("message", "");
    point.kernel = event.value("kernel", point.backend);
    point.forwardMs = numberOrNull(event, "forward_ms");
    point.backwardMs = numberOrNull(event, "backward_ms");
    if (const auto peak = numberOrNull(event, "peak_bytes")) {
        point.peakBytes = int64_t(*peak);
    }
    point.gate = gateFrom(event);
    const double flops =
        attentionForwardFlops(point.batch, point.heads, point.seq, point.d, point.causal);
    if (point.forwardMs && *point.forwardMs > 0) {
        point.forwardTflops = flops / (*point.forwardMs / 1000) / 1e12;
    }
    if (point.backwardMs && *point.backwardMs > 0) {
        point.backwardTflops = 2.5 * flops / (*point.backwardMs / 1000) / 1e12;
    }
}

}  // namespace

namespace {

// The `attention` command's events in, the points out, each passed on as it arrives.
class AttentionWorkerRun {
public:
    AttentionWorkerRun(std::vector<AttentionPoint> points, const std::atomic<bool>* cancel,
                       const std::function<void(const AttentionPoint&)>& onPoint)
        : points_(std::move(points)), cancel_(cancel), onPoint_(onPoint) {}

    std::vector<AttentionPoint> run(const AttentionBenchSpec& spec) {
        if (points_.empty()) {
            return points_;
        }
        std::string python, whyNot;
        const auto worker = startWorker(spec.python, python, whyNot);
        if (!worker) {
            markRest("unavailable", whyNot);
            return points_;
        }
        worker->writeInputAndClose(attentionRequest(points_, spec).dump() + "\n");
        while (!worker->atEnd()) {
            stopIfAsked(*worker);
            if (const auto line = worker->readLine(kPollInterval)) {
                handle(*line);
            }
        }
        worker->wait(std::chrono::seconds(10));
        if (received_ == 0 && finishedMessage_.rfind(kPyAttentionPrefix, 0) == 0) {
            // The user's attention could not be loaded: bad input, not a result.
            const std::string why = finishedMessage_.substr(std::string(kPyAttentionPrefix).size());
            throw InvalidConfigError(
                std::vector<ConfigError>{{"py-attention", why.substr(0, why.find('\n'))}});
        }
        if (received_ < points_.size()) {
            markRest(stopRequestedAt_ ? "cancelled" : "failed", whyUnfinished(*worker));
        }
        return points_;
    }

private:
    static constexpr const char* kPyAttentionPrefix = "py_attention: ";

    void stopIfAsked(ChildProcess& worker) {
        if (!cancel_ || !cancel_->load()) {
            return;
        }
        if (!stopRequestedAt_) {
            stopRequestedAt_ = Clock::now();
            worker.terminate();
        } else if (Clock::now() - *stopRequestedAt_ > std::chrono::seconds(10)) {
            worker.kill();
        }
    }

    void handle(const std::string& line) {
        try {
            const json event = json::parse(line);
            const std::string kind = event.at("event").get<std::string>();
            if (kind == "point" && received_ < points_.size()) {
                AttentionPoint& point = points_[received_++];
                fillMeasuredPoint(point, event);
                if (onPoint_) {
                    onPoint_(point);
                }
            } else if (kind == "finished") {
                finishedMessage_ = event.value("message", "");
            }
        } catch (const std::exception& error) {
            finishedMessage_ = std::string("the worker sent an event StepScope cannot read (") +
                               error.what() + ")";
        }
    }

    std::string whyUnfinished(ChildProcess& worker) const {
        if (stopRequestedAt_) {
            return "cancelled";
        }
        if (!finishedMessage_.empty()) {
            return finishedMessage_;
        }
        std::string why =
            "the PyTorch worker ended without a result (" + worker.exitDescription() + ")";
        if (const std::string tail = worker.stderrTail(); !tail.empty()) {
            why += "; its last output:\n" + tail;
        }
        return why;
    }

    // Failed and unavailable points are results, passed on; cancelled ones are not.
    void markRest(const std::string& status, const std::string& why) {
        for (size_t i = received_; i < points_.size(); ++i) {
            points_[i].status = status;
            points_[i].message = why;
            if (onPoint_ && status != "cancelled") {
                onPoint_(points_[i]);
            }
        }
    }

    std::vector<AttentionPoint> points_;
    const std::atomic<bool>* cancel_;
    const std::function<void(const AttentionPoint&)>& onPoint_;
    size_t received_ = 0;
    std::string finishedMessage_;
    std::optional<Clock::time_point> stopRequestedAt_;
};

}  // namespace

std::vector<AttentionPoint> measureAttentionInPythonWorker(
    std::vector<AttentionPoint> points, const AttentionBenchSpec& spec,
    const std::atomic<bool>* cancel, const std::function<void(const AttentionPoint&)>& onPoint) {
    return AttentionWorkerRun(std::move(points), cancel, onPoint).run(spec);
}

std::unique_ptr<ChildProcess> startPythonModule(const std::vector<std::string>& moduleAndArguments,
                                                const std::string& explicitPython,
                                                std::string& chosen, std::string& whyNot) {
    const auto candidates = workerPythonCandidates(explicitPython);
    std::vector<std::string> argv{"", "-m"};
    argv.insert(argv.end(), moduleAndArguments.begin(), moduleAndArguments.end());
    std::string lastError;
    for (const auto& candidate : candidates) {
        try {
            argv[0] = candidate.path;
            auto child =
                std::make_unique<ChildProcess>(argv, std::vector<std::string>{pythonPathEntry()});
            chosen = candidate.path;
            return child;
        } catch (const std::runtime_error& error) {
            lastError = error.what();
        }
    }
    const std::string what = moduleAndArguments.front() == "stepscope.worker"
                                 ? "the worker"
                                 : moduleAndArguments.front();
    whyNot = "no Python to run " + what + "; looked for " + describeCandidates(candidates) + ": " +
             lastError + ". Give one whose torch imports with --python PATH or STEPSCOPE_PYTHON";
    return nullptr;
}

std::vector<PythonCandidate> workerPythonCandidates(const std::string& explicitPython) {
    if (!explicitPython.empty()) {
        return {{explicitPython, "--python"}};
    }
    if (const char* fromEnvironment = std::getenv("STEPSCOPE_PYTHON");
        fromEnvironment && *fromEnvironment) {
        return {{fromEnvironment, "$STEPSCOPE_PYTHON"}};
    }
    std::vector<PythonCandidate> candidates;
#ifdef STEPSCOPE_BUILD_PYTHON
    if (::access(STEPSCOPE_BUILD_PYTHON, X_OK) == 0) {
        candidates.push_back({STEPSCOPE_BUILD_PYTHON, "the build's"});
    }
#endif
    candidates.push_back({"python3", "PATH"});
    return candidates;
}

std::string workerPackageDir() {
    const std::string here = directoryOfThisExecutable();
    if (!here.empty()) {
        const auto installed =
            std::filesystem::path(here) / ".." / "share" / "stepscope" / "python";
        if (std::filesystem::exists(installed / "stepscope" / "worker.py")) {
            return std::filesystem::weakly_canonical(installed).string();
        }
    }
#ifdef STEPSCOPE_SOURCE_PYTHON_DIR
    return STEPSCOPE_SOURCE_PYTHON_DIR;
#else
    return "python";
#endif
}

RunResult runInPythonWorker(const RunConfig& config, const RunControl& control) {
    if (auto refusal = preflightRefusal(
            config, control.availableMemoryBytes.value_or(availableSystemMemory()))) {
        RunResult refused;
        refused.config = config;
        refused.environment = captureEnvironment(config);
        refused.status = RunStatus::Refused;
        refused.message = std::move(*refusal);
        refused.parameterCount = parameterCount(config.model);
        refused.summary = summarizeSteps({}, config, std::nullopt);
        return refused;
    }
    return WorkerRun(config, control).run();
}

}  // namespace stepscope
