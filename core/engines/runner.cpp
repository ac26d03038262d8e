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
#include <memory>
#include <optional>

#include "attention/attention_registry.h"
#include "engines/autocast_scope.h"
#include "engines/cpu_allocator.h"
#include "engines/environment.h"
#include "engines/evaluate.h"
#include "engines/python_worker.h"
#include "engines/step_timer.h"
#include "estimate/cost_model.h"
#include "estimate/flop_groups.h"
#include "estimate/memory_estimate.h"
#include "interop/checkpoint.h"
#include "model/chunked_loss.h"
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

StepRecord runStep(RunState& state, const RunConfig& config, const at::Device& device,
                   StepTimer& timer, Progress& progress, int index) {
    StepRecord record;
    record.index = index;
    record.warmup = index < config.warmupSteps;
    at::Tensor loss;

    const TraceRange stepRange("step " + std::to_string(index));
    timer.start();
    progress.report(index, record.warmup, "forward");
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
    timer.mark();
    if (hasBackward(config.mode)) {
        progress.report(index, record.warmup, "backward");
        const TraceRange range("backward");
        loss.backward();
        timer.mark();
        if (state.memory) {
            state.memory->mark(gradientsOf(state.model), MemoryCategory::Gradients);
        }
    }
    if (hasOptimizer(config.mode)) {
        progress.report(index, record.warmup, "optimizer");
        const TraceRange range("optimizer");
        state.optimizer->step();
        timer.mark();
        if (state.memory) {
            state.memory->mark(state.optimizer->state(), MemoryCategory::OptimizerState);
        }
    }
    const std::vector<double> times = timer.finish();  // synchronises the device
    record.forwardMs = times[0];
    if (hasBackward(config.mode)) {
        record.backwardMs = times[1];
    }
    if (hasOptimizer(config.mode)) {
        record.optimizerMs = times[2];
    }
    record.totalMs = times.back();
    {
        const TraceRange range("bookkeeping");  // outside every phase: reading the loss back
        record.loss = loss.item<double>();
    }
    return record;
}

void releaseMemory(RunState& state, const at::Device& device) {
    state = RunState{};
    if (device.is_cuda()) {
        at::accelerator::emptyCache();
    }
}

}  // namespace

RunResult runBenchmark(const RunConfig& config, const RunControl& control) {
    auto errors = validate(config, validationContext());
    if (!errors.empty()) {
        throw InvalidConfigError(std::move(errors));
    }
    if (config.engine != Engine::LibTorch) {
        return runInPythonWorker(config, control);
    }
    if (config.threads > 0) {
        at::set_num_threads(config.threads);
    }
    keepFreedMemoryForSteadySteps();

    RunResult result;
    result.config = config;
    result.environment = captureEnvironment(config);
    result.parameterCount = parameterCount(config.model);
    const auto peak =
        devicePeakFlopsPerSecond(result.environment.deviceName, config.precision, config.tf32);
    auto finish = [&](RunStatus status, std::string message) {
        result.status = status;
        result.message = std::move(message);
        result.summary = summarizeSteps(result.steps, config, peak);
        return result;
    };

    if (auto refusal = preflightRefusal(
            config, control.availableMemoryBytes.value_or(availableSystemMemory()))) {
        return finish(RunStatus::Refused, std::move(*refusal));
    }

    const at::Device device(config.device == DeviceKind::Cuda ? at::kCUDA : at::kCPU, 0);
    if (device.is_cuda()) {
        at::globalContext().setAllowTF32CuBLAS(config.tf32);
        at::globalContext().setAllowTF32CuDNN(config.tf32);
    }
    const int totalSteps = config.warmupSteps + config.measuredSteps;
    Progress progress(control.observer, totalSteps);
    RunState state;
    // Outside the try: a run that fails keeps its memory trace up to the failure.
    std::optional<CudaHistory> history;
    std::optional<MemoryTracker> memory;
    auto keepMemoryTraces = [&] {
        if (memory) {
            state.memory = nullptr;
            result.memory = memory->finish();
            memory.reset();
        }
        if (history) {
            history->write(config.cudaSnapshotPath);
            history.reset();
        }
    };
    try {
        progress.report(0, config.warmupSteps > 0, "setup");
        at::manual_seed(config.seed);
        const auto options = at::TensorOptions().device(device).dtype(at::kFloat);
        std::shared_ptr<AttentionBackend> attention = makeAttentionBackend(config.attention);
        // A backend that cannot run this shape or dtype says why, before anything is built.
        const at::ScalarType attentionDtype = config.precision == Precision::Bf16   ? at::kBFloat16
                                              : config.precision == Precision::Fp16 ? at::kHalf
                                                                                    : at::kFloat;
        const at::Tensor probe =
            at::empty({1, config.model.heads, config.contextLength, config.model.headDim()},
                      options.dtype(attentionDtype));
        if (const auto reason = attention->unavailableReason(probe)) {
            return finish(RunStatus::Unavailable, "attention " + config.attention + ": " + *reason);
        }
        if (hasOptimizer(config.mode)) {
            if (const auto reason = optimizerUnavailableReason(config.optimizer, device)) {
                return finish(RunStatus::Unavailable,
                              "optimizer " + toString(config.optimizer) + ": " + *reason);
            }
        }
        if (!config.cudaSnapshotPath.empty() && device.is_cuda()) {
            history.emplace();
        }
        if (config.traceMemory) {
            memory.emplace(device);
            state.memory = &*memory;
        }
        state.model = TransformerLM(config.model, attention, options);
        state.model->setCheckpointStrategy(config.activationCheckpoint);
        if (memory) {
            memory->mark(state.model->parameters(), MemoryCategory::Parameters);
        }
        if (hasOptimizer(config.mode)) {
            // lr 1e-3, weight decay 0.01, LibTorch's betas and eps (AdamWHyperParameters).
            state.optimizer = makeOptimizer(config.optimizer, state.model->parameters());
        }
        if (!config.weightsPath.empty()) {
            loadStateDict(*state.model, readStateDict(config.weightsPath));
        }
        const at::Tensor tokens = batchOfTokens(config, device);
        state.inputs = tokens.narrow(1, 0, config.contextLength);
        state.targets = tokens.narrow(1, 1, config.contextLength);
        if (memory) {
            memory->mark({tokens}, MemoryCategory::Inputs);
        }

        const auto timer = makeStepTimer(device);
        // The kernel tracer needs the operator tracer: its correlation ids
        // tie each kernel to the operator and phase that launched it.
        std::optional<KernelTracer> kernelTracer;
        if (config.traceKernels) {
            if (const auto reason = KernelTracer::unavailableReason()) {
                return finish(RunStatus::Unavailable, *reason);
            }
            kernelTracer.emplace();
        }
        std::optional<OperatorTracer> tracer;
        if (config.traceOps || config.traceKernels) {
            tracer.emplace(kernelTracer ? &*kernelTracer : nullptr);
        }
        auto collectOperators = [&] {
            if (!tracer) {
                return;
            }
            tracer->collectKernels();
            result.operators = tracer->aggregate(config.warmupSteps);
            result.kernels = tracer->aggregateKernels(config.warmupSteps);
            result.flopGroups = flopGroups(config, tracer->forwardGroupTimes(config.warmupSteps));
            if (!result.steps.empty()) {
                result.timeline = tracer->timeline(result.steps.back().index);
            }
        };
        // Tracers stop in the reverse order they started: they chain range listeners.
        auto collectTraces = [&] {
            collectOperators();
            tracer.reset();
            kernelTracer.reset();
            keepMemoryTraces();
        };
        for (int index = 0; index < totalSteps; ++index) {
            if (control.cancel && control.cancel->load()) {
                collectTraces();
                releaseMemory(state, device);
                return finish(RunStatus::Cancelled, "cancelled after " + std::to_string(index) +
                                                        " of " + std::to_string(totalSteps) +
                                                        " steps");
            }
            result.steps.push_back(runStep(state, config, device, *timer, progress, index));
            if (control.observer) {
                control.observer->onStep(result.steps.back());
            }
        }
        collectTraces();
    } catch (const c10::OutOfMemoryError& error) {
        keepMemoryTraces();  // what was alive when memory ran out
        releaseMemory(state, device);
        return finish(RunStatus::Oom, error.what_without_backtrace());
    } catch (const c10::Error& error) {
        keepMemoryTraces();
        releaseMemory(state, device);
        return finish(RunStatus::Failed, error.what_without_backtrace());
    } catch (const std::exception& error) {
        keepMemoryTraces();
        releaseMemory(state, device);
        return finish(RunStatus::Failed, error.what());
    }
    releaseMemory(state, device);
    return finish(RunStatus::Ok, "");
}

}  // namespace stepscope
