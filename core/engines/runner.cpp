#include "engines/runner.h"

#include <ATen/Context.h>
#include <ATen/DeviceAccelerator.h>
#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/randint.h>
#include <c10/core/GradMode.h>
#include <c10/core/InferenceMode.h>
#include <c10/util/Exception.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>

#include "attention/attention_registry.h"
#include "engines/autocast_scope.h"
#include "engines/cpu_allocator.h"
#include "engines/cpu_threads.h"
#include "engines/cuda_graph_step.h"
#include "engines/environment.h"
#include "engines/python_worker.h"
#include "engines/step_timer.h"
#include "estimate/cost_model.h"
#include "estimate/fit_check.h"
#include "estimate/flop_groups.h"
#include "estimate/memory_estimate.h"
#include "model/checkpoint.h"
#include "model/chunked_loss.h"
#include "model/evaluate.h"
#include "model/optimizers.h"
#include "model/transformer.h"
#include "profile/cuda_history.h"
#include "profile/kernel_tracer.h"
#include "profile/memory_tracker.h"
#include "profile/operator_tracer.h"
#include "profile/trace_range.h"
#include "util/atomic_file.h"

namespace stepscope {

namespace {

// Everything a run allocates, so that an OOM can drop it in one place.
struct RunState {
    TransformerLM model{nullptr};
    std::unique_ptr<StepOptimizer> optimizer;
    at::Tensor inputs;
    at::Tensor targets;
    MemoryTracker* memory = nullptr;  // with traceMemory: told what the tensors are
};

std::vector<at::Tensor> gradientsOf(const TransformerLM& model) {
    std::vector<at::Tensor> gradients;
    for (const auto& parameter : model->parameters()) {
        gradients.push_back(parameter.grad());
    }
    return gradients;
}

// The batch: the tokens file's, or random ids. (batch, ctx + 1): inputs and
// next-token targets.
at::Tensor batchOfTokens(const RunConfig& config, const at::Device& device) {
    if (config.tokensPath.empty()) {
        return at::randint(config.model.vocabSize, {config.batchSize, config.contextLength + 1},
                           at::TensorOptions().device(device).dtype(at::kLong));
    }
    const at::Tensor tokens = readTokenBatch(config.tokensPath, config.model);
    if (tokens.size(0) != config.batchSize || tokens.size(1) != config.contextLength + 1) {
        throw std::runtime_error("tokens: the file holds a (" + std::to_string(tokens.size(0)) +
                                 ", " + std::to_string(tokens.size(1)) +
                                 ") batch; it runs with batch " + std::to_string(tokens.size(0)) +
                                 " and ctx " + std::to_string(tokens.size(1) - 1));
    }
    return tokens.to(device);
}

class Progress {
public:
    Progress(RunObserver* observer, int totalSteps)
        : observer_(observer), totalSteps_(totalSteps), begin_(Clock::now()) {}
    void report(int step, bool warmup, const char* phase) {
        if (!observer_) {
            return;
        }
        RunProgress progress;
        progress.step = step;
        progress.totalSteps = totalSteps_;
        progress.warmup = warmup;
        progress.phase = phase;
        progress.elapsedMs =
            std::chrono::duration<double, std::milli>(Clock::now() - begin_).count();
        observer_->onProgress(progress);
    }

private:
    using Clock = std::chrono::steady_clock;
    RunObserver* observer_;
    int totalSteps_;
    Clock::time_point begin_;
};

// The phases of one step, calling endOfPhase after each phase that runs
// (forward, then backward and optimizer where the mode has them); returns the
// loss. An eager step marks its timer there; a captured one records an event
// inside the graph.
at::Tensor runPhases(RunState& state, const RunConfig& config, const at::Device& device,
                     Progress& progress, int index, const std::function<void()>& endOfPhase) {
    const bool warmup = index < config.warmupSteps;
    at::Tensor loss;
    progress.report(index, warmup, "forward");
    if (hasBackward(config.mode)) {
        state.model->zero_grad(/*set_to_none=*/true);
    }
    {
        const TraceRange range("forward");
        std::optional<c10::InferenceMode> inference;
        if (config.mode == RunMode::Inference) {
            inference.emplace();
        }
        AutocastScope autocast(device, config.precision);
        loss =
            config.loss == LossKind::Chunked
                ? chunkedCrossEntropyLoss(state.model->hidden(state.inputs), *state.model->lm_head,
                                          state.targets, config.lossChunkTokens)
                : crossEntropyLoss(state.model->forward(state.inputs), state.targets);
    }
    endOfPhase();
    if (hasBackward(config.mode)) {
        progress.report(index, warmup, "backward");
        const TraceRange range("backward");
        loss.backward();
        endOfPhase();
        if (state.memory) {
            state.memory->mark(gradientsOf(state.model), MemoryCategory::Gradients);
        }
    }
    if (hasOptimizer(config.mode)) {
        progress.report(index, warmup, "optimizer");
        const TraceRange range("optimizer");
        state.optimizer->step();
        endOfPhase();
        if (state.memory) {
            state.memory->mark(state.optimizer->state(), MemoryCategory::OptimizerState);
        }
    }
    return loss;
}

// A step's record from its phase times (each phase the mode runs, then the
// total) and its loss, read back outside every phase.
StepRecord stepRecord(const RunConfig& config, int index, const std::vector<double>& times,
                      const at::Tensor& loss) {
    StepRecord record;
    record.index = index;
    record.warmup = index < config.warmupSteps;
    record.forwardMs = times[0];
    if (hasBackward(config.mode)) {
        record.backwardMs = times[1];
    }
    if (hasOptimizer(config.mode)) {
        record.optimizerMs = times[2];
    }
    record.totalMs = times.back();
    const TraceRange range("bookkeeping");
    record.loss = loss.item<double>();
    return record;
}

StepRecord runStep(RunState& state, const RunConfig& config, const at::Device& device,
                   StepTimer& timer, Progress& progress, int index) {
    const TraceRange stepRange("step " + std::to_string(index));
    timer.start();
    const at::Tensor loss =
        runPhases(state, config, device, progress, index, [&timer] { timer.mark(); });
    const std::vector<double> times = timer.finish();  // synchronises the device
    return stepRecord(config, index, times, loss);
}

// Why a run whose loss came out NaN or infinite failed: the weights or the
// tokens hold NaN or Inf (or training diverged), so the steps computed on
// garbage and a train step spreads it into every weight.
std::optional<std::string> nonFiniteLoss(const std::vector<StepRecord>& steps) {
    for (const auto& step : steps) {
        if (step.loss && !std::isfinite(*step.loss)) {
            return "the loss is " + std::string(std::isnan(*step.loss) ? "NaN" : "infinite") +
                   " from step " + std::to_string(step.index) +
                   " on: the weights or the tokens hold NaN or Inf, or training diverged (the "
                   "steps' times are kept)";
        }
    }
    return std::nullopt;
}

void releaseMemory(RunState& state, const at::Device& device) {
    state = RunState{};
    if (device.is_cuda()) {
        at::accelerator::emptyCache();
    }
}

at::ScalarType attentionDtypeOf(Precision precision) {
    return precision == Precision::Bf16   ? at::kBFloat16
           : precision == Precision::Fp16 ? at::kHalf
                                          : at::kFloat;
}

// One run of the LibTorch engine, in the steps a reader can name: set up the
// device, build the model and optimizer, attach the tracers, run the steps.
// A step that cannot go on returns the status it ends with; an exception on
// the way maps to oom or failed, keeping what was measured and traced.
class LibTorchRun {
public:
    LibTorchRun(const RunConfig& config, const RunControl& control)
        : config_(config),
          control_(control),
          device_(config.device == DeviceKind::Cuda ? at::kCUDA : at::kCPU, 0),
          progress_(control.observer, config.warmupSteps + config.measuredSteps) {
        result_.config = config;
        result_.environment = captureEnvironment(config);
        result_.parameterCount = parameterCount(config.model);
        peak_ =
            devicePeakFlopsPerSecond(result_.environment.deviceName, config.precision, config.tf32);
    }

    RunResult run() {
        if (auto refusal = preflightRefusal(
                config_, control_.availableMemoryBytes.value_or(availableSystemMemory()))) {
            return finish(RunStatus::Refused, std::move(*refusal));
        }
        setUpDevice();
        if (config_.cudaGraph) {
            // Everything of a graph run, from the model's first tensor to the
            // last replay, on one side stream: capture cannot use the default one.
            sideStream_.emplace(device_);
        }
        try {
            progress_.report(0, config_.warmupSteps > 0, "setup");
            at::manual_seed(config_.seed);
            std::shared_ptr<AttentionBackend> attention = makeAttentionBackend(config_.attention);
            if (auto unavailable = whatCannotRun(*attention)) {
                return finish(RunStatus::Unavailable, std::move(*unavailable));
            }
            buildModelAndOptimizer(std::move(attention));
            if (auto unavailable = attachTracers()) {
                return finish(RunStatus::Unavailable, std::move(*unavailable));
            }
            return runSteps();
        } catch (const c10::OutOfMemoryError& error) {
            return endAfterFailure(RunStatus::Oom, error.what_without_backtrace());
        } catch (const c10::Error& error) {
            return endAfterFailure(RunStatus::Failed, error.what_without_backtrace());
        } catch (const std::exception& error) {
            return endAfterFailure(RunStatus::Failed, error.what());
        }
    }

private:
    void setUpDevice() {
        if (device_.is_cuda()) {
            at::globalContext().setAllowTF32CuBLAS(config_.tf32);
            at::globalContext().setAllowTF32CuDNN(config_.tf32);
        }
    }

    // Why the attention backend or the optimizer cannot run this config,
    // asked before anything is built.
    std::optional<std::string> whatCannotRun(const AttentionBackend& attention) const {
        const at::Tensor probe = at::empty(
            {1, config_.model.heads, config_.contextLength, config_.model.headDim()},
            at::TensorOptions().device(device_).dtype(attentionDtypeOf(config_.precision)));
        if (const auto reason = attention.unavailableReason(probe)) {
            return "attention " + config_.attention + ": " + *reason;
        }
        if (hasOptimizer(config_.mode)) {
            if (const auto reason = optimizerUnavailableReason(config_.optimizer, device_)) {
                return "optimizer " + toString(config_.optimizer) + ": " + *reason;
            }
        }
        return std::nullopt;
    }

    // The memory tracker and the allocator's history start first, so that
    // the parameters, optimizer state and inputs are in the trace.
    void buildModelAndOptimizer(std::shared_ptr<AttentionBackend> attention) {
        if (!config_.cudaSnapshotPath.empty() && device_.is_cuda()) {
            history_.emplace();
        }
        if (config_.traceMemory) {
            memory_.emplace(device_);
            state_.memory = &*memory_;
        }
        const auto options = at::TensorOptions().device(device_).dtype(at::kFloat);
        state_.model = TransformerLM(config_.model, std::move(attention), options);
        state_.model->setCheckpointStrategy(config_.activationCheckpoint);
        if (memory_) {
            memory_->mark(state_.model->parameters(), MemoryCategory::Parameters);
        }
        if (hasOptimizer(config_.mode)) {
            // lr 1e-3, weight decay 0.01, LibTorch's betas and eps (AdamWHyperParameters).
            state_.optimizer = makeOptimizer(config_.optimizer, state_.model->parameters());
        }
        if (!config_.weightsPath.empty()) {
            loadStateDict(*state_.model, readStateDict(config_.weightsPath));
        }
        const at::Tensor tokens = batchOfTokens(config_, device_);
        state_.inputs = tokens.narrow(1, 0, config_.contextLength);
        state_.targets = tokens.narrow(1, 1, config_.contextLength);
        if (memory_) {
            memory_->mark({tokens}, MemoryCategory::Inputs);
        }
    }

    // The kernel tracer needs the operator tracer: its correlation ids tie
    // each kernel to the operator and phase that launched it. Returns why
    // kernels cannot be traced here, when they were asked for.
    std::optional<std::string> attachTracers() {
        timer_ = makeStepTimer(device_);
        if (config_.traceKernels) {
            if (auto reason = KernelTracer::unavailableReason()) {
                return reason;
            }
            kernelTracer_.emplace();
        }
        if (config_.traceOps || config_.traceKernels) {
            tracer_.emplace(kernelTracer_ ? &*kernelTracer_ : nullptr);
        }
        return std::nullopt;
    }

    RunResult runSteps() {
        const int totalSteps = config_.warmupSteps + config_.measuredSteps;
        for (int index = 0; index < totalSteps; ++index) {
            if (control_.cancel && control_.cancel->load()) {
                collectTraces();
                releaseMemory(state_, device_);
                return finish(RunStatus::Cancelled, "cancelled after " + std::to_string(index) +
                                                        " of " + std::to_string(totalSteps) +
                                                        " steps");
            }
            result_.steps.push_back(
                config_.cudaGraph && index >= config_.warmupSteps
                    ? replayStep(index)
                    : runStep(state_, config_, device_, *timer_, progress_, index));
            if (control_.observer) {
                control_.observer->onStep(result_.steps.back());
            }
        }
        collectTraces();
        releaseMemory(state_, device_);
        if (auto nonFinite = nonFiniteLoss(result_.steps)) {
            return finish(RunStatus::Failed, std::move(*nonFinite));
        }
        return finish(RunStatus::Ok, "");
    }

    // The first measured step is captured, then every measured step replays
    // the graph; the warm-up steps before ran eagerly on the same stream.
    StepRecord replayStep(int index) {
        if (!graph_) {
            graph_ = std::make_unique<CudaGraphStep>([&](const std::function<void()>& endOfPhase) {
                return runPhases(state_, config_, device_, progress_, index, endOfPhase);
            });
            result_.cudaGraphKernels = graph_->kernelNodes();
        }
        progress_.report(index, false, "replay");
        const TraceRange stepRange("step " + std::to_string(index));
        return stepRecord(config_, index, graph_->replay(), graph_->loss());
    }

    void collectOperators() {
        if (!tracer_) {
            return;
        }
        tracer_->collectKernels();
        result_.operators = tracer_->aggregate(config_.warmupSteps);
        result_.kernels = tracer_->aggregateKernels(config_.warmupSteps);
        result_.flopGroups = flopGroups(config_, tracer_->forwardGroupTimes(config_.warmupSteps));
        if (!result_.steps.empty()) {
            result_.timeline = tracer_->timeline(result_.steps.back().index);
        }
    }

    // Tracers stop in the reverse order they started: they chain range listeners.
    void stopTracers() {
        tracer_.reset();
        kernelTracer_.reset();
        timer_.reset();
        graph_.reset();
    }

    void collectTraces() {
        collectOperators();
        stopTracers();
        keepMemoryTraces();
    }

    void keepMemoryTraces() {
        if (memory_) {
            state_.memory = nullptr;
            result_.memory = memory_->finish();
            memory_.reset();
        }
        if (history_) {
            history_->write(config_.cudaSnapshotPath);
            history_.reset();
        }
    }

    // A run that fails keeps its memory trace up to the failure: what was
    // alive when memory ran out.
    RunResult endAfterFailure(RunStatus status, std::string message) {
        stopTracers();
        keepMemoryTraces();
        releaseMemory(state_, device_);
        return finish(status, std::move(message));
    }

    RunResult finish(RunStatus status, std::string message) {
        result_.status = status;
        result_.message = std::move(message);
        result_.summary = summarizeSteps(result_.steps, config_, peak_);
        return result_;
    }

    const RunConfig& config_;
    const RunControl& control_;
    const at::Device device_;
    std::optional<CudaSideStream> sideStream_;  // --cuda-graph: outlives every tensor below
    RunResult result_;
    std::optional<double> peak_;
    Progress progress_;
    RunState state_;
    std::optional<CudaHistory> history_;
    std::optional<MemoryTracker> memory_;
    std::unique_ptr<StepTimer> timer_;
    std::optional<KernelTracer> kernelTracer_;
    std::optional<OperatorTracer> tracer_;
    std::unique_ptr<CudaGraphStep> graph_;
};

}  // namespace

RunResult runBenchmark(const RunConfig& config, const RunControl& control) {
    auto errors = validate(config, validationContext());
    if (!errors.empty()) {
        throw InvalidConfigError(std::move(errors));
    }
    if (config.engine != Engine::LibTorch) {
        return runInPythonWorker(config, control);
    }
    applyThreadCount(config.threads);  // also the default back after a run that set another
    keepFreedMemoryForSteadySteps();
    return LibTorchRun(config, control).run();
}

}  // namespace stepscope
