#include "profile/operator_tracer.h"

#include <ATen/record_function.h>
#include <torch/csrc/profiler/orchestration/observer.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "profile/block_log.h"
#include "profile/kernel_tracer.h"
#include "profile/name_table.h"
#include "profile/trace_clock.h"
#include "profile/trace_range.h"
#include "util/strings.h"

namespace stepscope {

namespace {

struct OperatorEvent {
    int64_t id;
    int64_t startNs;
    int64_t endNs;
    int32_t name;
    int32_t path;
    int32_t step;
    int16_t thread;
    int16_t phase;
};

// What a kernel inherits from its launching operator (or, launched outside
// one, from the phase under way): phase, step, category, the operator itself.
struct KernelLaunch {
    int phase = 0;
    int step = -1;
    std::string category;
    const OperatorEvent* op = nullptr;  // into the operator log, whose records never move
};

struct RangeEvent {
    int64_t startNs;
    int64_t endNs;
    int32_t name;
    int32_t step;
};

bool containsAny(const std::string& text, std::initializer_list<const char*> parts) {
    return std::any_of(parts.begin(), parts.end(),
                       [&text](const char* part) { return contains(text, part); });
}

}  // namespace

std::string operatorCategory(const std::string& name, const std::string& phase) {
    if (phase == "optimizer") {
        return "optimizer";
    }
    if (containsAny(name, {"scaled_dot_product", "flash_attention", "efficient_attention",
                           "TiledAttention", "ScaledDotProduct"})) {
        return "attention core";
    }
    if (containsAny(name, {"linear", "matmul", "aten::mm", "addmm", "bmm", "MmBackward",
                           "AddmmBackward", "BmmBackward", "LinearBackward"})) {
        return "matmul";
    }
    // The loss (log-softmax + NLL) is a reduction over the vocabulary, not attention's softmax.
    if (containsAny(name, {"cross_entropy", "nll_loss", "NllLoss", "log_softmax", "LogSoftmax",
                           "aten::sum", "SumBackward", "aten::mean", "MeanBackward", "aten::max",
                           "MaxBackward", "aten::amax"})) {
        return "reduction";
    }
    if (containsAny(name, {"softmax", "Softmax"})) {
        return "softmax";
    }
    if (containsAny(name, {"rsqrt", "Rsqrt", "norm", "Norm"})) {
        return "normalisation";
    }
    if (containsAny(name,
                    {"aten::to", "aten::_to_copy", "ToCopyBackward", "copy_", "clone", "Clone",
                     "contiguous", "aten::empty", "zero_", "ones_like", "AccumulateGrad"})) {
        return "copy/cast";
    }
    if (containsAny(name, {"add", "Add", "mul",         "Mul",        "sub",   "Sub",
                           "div", "Div", "silu",        "Silu",       "exp",   "Exp",
                           "pow", "Pow", "masked_fill", "MaskedFill", "cos",   "sin",
                           "neg", "Neg", "where",       "Where",      "stack", "Stack",
                           "cat", "Cat", "embedding",   "Embedding",  "index", "Index"})) {
        return "elementwise";
    }
    return "other";
}

std::string kernelCategory(const std::string& kernel, const std::string& operatorCategory,
                           const std::string& phase) {
    if (kernel.rfind("memcpy", 0) == 0 || kernel == "memset") {
        return "copy/cast";
    }
    if (phase == "optimizer") {
        return "optimizer";
    }
    // cuBLAS, cuBLASLt (nvjet) and CUTLASS GEMMs, whoever launched them.
    if (containsAny(kernel, {"gemm", "Gemm", "GEMM", "cutlass", "nvjet", "xmma", "cublas"})) {
        return "matmul";
    }
    if (containsAny(kernel, {"flash", "fmha", "attention", "Attention"})) {
        return "attention core";
    }
    // Softmax kernels also serve the loss's log-softmax; the operator knows which.
    if (containsAny(kernel, {"softmax", "SoftMax", "Softmax"})) {
        return operatorCategory == "reduction" ? "reduction" : "softmax";
    }
    if (operatorCategory == "normalisation" || operatorCategory == "softmax" ||
        operatorCategory == "attention core") {
        return operatorCategory;
    }
    if (containsAny(kernel, {"reduce_kernel", "Reduce", "reduction"})) {
        return "reduction";
    }
    if (containsAny(kernel, {"elementwise", "Elementwise"})) {
        return "elementwise";
    }
    return operatorCategory.empty() ? "other" : operatorCategory;
}

// Shared by the RecordFunction callbacks (any thread) and the range listener
// (the runner's thread).
struct OperatorTracer::State final : public RangeListener {
    KernelTracer* kernels = nullptr;
    RangeListener* next = nullptr;
    std::atomic<int> phase{0};
    std::atomic<int> step{-1};
    std::atomic<int> path{-1};
    std::atomic<int64_t> nextId{0};
    std::atomic<int> nextThread{0};
    at::CallbackHandle handle = 0;

    // Range stack of the runner's thread (the listener runs there only).
    struct OpenRange {
        int32_t name;
        int64_t startNs;
    };
    std::vector<OpenRange> open;

    mutable std::mutex mutex;  // guards what follows
    NameTable names;
    BlockLog<OperatorEvent> operators;
    BlockLog<RangeEvent> ranges;
    std::vector<KernelActivity> activities;
    std::vector<KernelLaunch> launches;  // one per activity, resolved when collected

    // The innermost module range, with the attention part inside it if any.
    int32_t currentPath() {
        std::string module;
        std::string part;
        for (const OpenRange& range : open) {
            const std::string& name = names[range.name];
            if (isModuleRange(name)) {
                module = name;
                part.clear();
            } else if (name.rfind("attention ", 0) == 0) {
                part = name;
            }
        }
        if (module.empty()) {
            return -1;
        }
        return names.intern(part.empty() ? module : module + "/" + part);
    }

    void onPush(const std::string& name) override {
        const int64_t now = traceClockNs();
        const std::optional<StepMark> mark = stepMarkOf(name);
        if (mark) {
            if (mark->step) {
                step.store(*mark->step);
            }
            phase.store(mark->phase);
        }
        {
            const std::lock_guard lock(mutex);
            open.push_back({names.intern(name), now});
            path.store(currentPath());
        }
        // A step's own tag (phase 0) covers what runs between its phases, a
        // CUDA graph's replay among it.
        if (mark && kernels) {
            kernels->pushPhase(int64_t(step.load()) * 4 + mark->phase);
        }
        if (next) {
            next->onPush(name);
        }
    }

    void onPop() override {
        const int64_t now = traceClockNs();
        {
            const std::lock_guard lock(mutex);
            if (open.empty()) {
                return;
            }
            const OpenRange range = open.back();
            open.pop_back();
            ranges.push({range.startNs, now, range.name, step.load()});
            path.store(currentPath());
            if (kernels && stepMarkOf(names[range.name])) {
                kernels->popPhase();
            }
        }
        if (next) {
            next->onPop();
        }
    }
};

namespace {

std::atomic<OperatorTracer::State*> activeState{nullptr};

// Only top-level calls are timed; nested ones just keep the depth count. The
// start is kept per thread, so the callbacks allocate nothing.
struct ThreadTrace {
    int depth = 0;
    int16_t thread = -1;
    int64_t id = 0;
    int64_t startNs = 0;
};
thread_local ThreadTrace current;

std::unique_ptr<at::ObserverContext> onStart(const at::RecordFunction&) {
    if (current.depth++ != 0) {
        return nullptr;
    }
    OperatorTracer::State* state = activeState.load();
    if (!state) {
        return nullptr;
    }
    current.id = state->nextId.fetch_add(1);
    if (state->kernels) {
        state->kernels->pushOperator(current.id);
    }
    current.startNs = traceClockNs();
    return nullptr;
}

void onEnd(const at::RecordFunction& fn, at::ObserverContext*) {
    if (--current.depth != 0) {
        return;
    }
    const int64_t end = traceClockNs();
    OperatorTracer::State* state = activeState.load();
    if (!state) {
        return;
    }
    if (state->kernels) {
        state->kernels->popOperator();
    }
    if (current.thread < 0) {
        current.thread = int16_t(state->nextThread.fetch_add(1));
    }
    // Backward nodes come as "autograd::engine::evaluate_function: MmBackward0".
    std::string_view name = fn.name();
    constexpr std::string_view wrapper = "autograd::engine::evaluate_function: ";
    if (name.substr(0, wrapper.size()) == wrapper) {
        name.remove_prefix(wrapper.size());
    }
    const std::lock_guard lock(state->mutex);
    state->operators.push({current.id, current.startNs, end, state->names.intern(name),
                           state->path.load(), state->step.load(), current.thread,
                           int16_t(state->phase.load())});
}

// Installs the tracer's state as this thread's range listener while tracing.
thread_local std::unique_ptr<RangeListenerScope> listenerScope;

}  // namespace

OperatorTracer::OperatorTracer(KernelTracer* kernels) : state_(std::make_unique<State>()) {
    if (torch::profiler::impl::profilerEnabled()) {
        throw std::runtime_error("ops: LibTorch's profiler (Kineto) is already active");
    }
    State* expected = nullptr;
    if (!activeState.compare_exchange_strong(expected, state_.get())) {
        throw std::runtime_error("ops: another operator tracer is already active");
    }
    state_->kernels = kernels;
    state_->next = RangeListenerScope::current();
    listenerScope = std::make_unique<RangeListenerScope>(state_.get());
    state_->handle = at::addGlobalCallback(
        at::RecordFunctionCallback(&onStart, &onEnd)
            .needsInputs(false)
            .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION}));
}

OperatorTracer::~OperatorTracer() {
    at::removeCallback(state_->handle);
    listenerScope.reset();
    activeState.store(nullptr);
}

int64_t OperatorTracer::eventCount() const {
    const std::lock_guard lock(state_->mutex);
    return int64_t(state_->operators.size());
}

namespace {

std::vector<TimeRow> sortedRows(std::map<std::pair<int, std::string>, TimeRow>& rows) {
    std::vector<TimeRow> out;
    for (auto& [key, row] : rows) {
        out.push_back(std::move(row));
    }
    std::sort(out.begin(), out.end(),
              [](const TimeRow& a, const TimeRow& b) { return a.totalMs > b.totalMs; });
    return out;
}

}  // namespace

std::vector<TimeRow> OperatorTracer::aggregate(int firstMeasuredStep) const {
    std::map<std::pair<int, std::string>, TimeRow> rows;
    const std::lock_guard lock(state_->mutex);
    state_->operators.forEach([&](const OperatorEvent& event) {
        if (event.step < firstMeasuredStep || event.phase == 0) {
            return;
        }
        const std::string& name = state_->names[event.name];
        TimeRow& row = rows[{event.phase, name}];
        if (row.calls == 0) {
            row.name = name;
            row.phase = phaseName(event.phase);
            row.category = operatorCategory(row.name, row.phase);
        }
        ++row.calls;
        row.totalMs += double(event.endNs - event.startNs) / 1e6;
    });
    return sortedRows(rows);
}

void OperatorTracer::collectKernels() {
    if (!state_->kernels) {
        return;
    }
    std::vector<KernelActivity> collected = state_->kernels->collect();
    const std::lock_guard lock(state_->mutex);
    std::unordered_map<int64_t, const OperatorEvent*> byId;
    byId.reserve(state_->operators.size());
    state_->operators.forEach([&](const OperatorEvent& event) { byId[event.id] = &event; });
    for (auto& activity : collected) {
        KernelLaunch launch;
        std::string opCategory;
        if (const auto found = byId.find(activity.operatorId); found != byId.end()) {
            launch.op = found->second;
            launch.phase = launch.op->phase;
            launch.step = launch.op->step;
            opCategory = operatorCategory(state_->names[launch.op->name], phaseName(launch.phase));
        } else if (activity.phaseTag >= 0) {  // tag = step · 4 + phase
            launch.phase = int(activity.phaseTag % 4);
        }
        if (activity.phaseTag >= 0) {
            // A replayed graph's kernel: its operator ran once, at capture;
            // the kernel belongs to the replay's step.
            launch.step = int(activity.phaseTag / 4);
        }
        launch.category = kernelCategory(activity.name, opCategory, phaseName(launch.phase));
        state_->activities.push_back(std::move(activity));
        state_->launches.push_back(std::move(launch));
    }
}

std::vector<TimeRow> OperatorTracer::aggregateKernels(int firstMeasuredStep) const {
    std::map<std::pair<int, std::string>, TimeRow> rows;
    const std::lock_guard lock(state_->mutex);
    for (size_t i = 0; i < state_->activities.size(); ++i) {
        const KernelActivity& activity = state_->activities[i];
        const KernelLaunch& launch = state_->launches[i];
        if (launch.step < firstMeasuredStep || launch.phase == 0) {
            continue;
        }
        TimeRow& row = rows[{launch.phase, activity.name}];
        if (row.calls == 0) {
            row.name = activity.name;
            row.phase = phaseName(launch.phase);
            row.category = launch.category;
        }
        ++row.calls;
        row.totalMs += double(activity.endNs - activity.startNs) / 1e6;
    }
    return sortedRows(rows);
}

std::vector<GroupTime> OperatorTracer::forwardGroupTimes(int firstMeasuredStep) const {
    std::map<std::string, double> totals;
    std::map<int, bool> steps;
    const std::lock_guard lock(state_->mutex);
    auto groupOf = [&](const OperatorEvent& op) {
        const std::string& name = state_->names[op.name];
        const std::string path = op.path >= 0 ? state_->names[op.path] : std::string();
        return flopGroupOf(operatorCategory(name, "forward"), path);
    };
    const bool useKernels = !state_->activities.empty();
    if (useKernels) {
        for (size_t i = 0; i < state_->activities.size(); ++i) {
            const KernelActivity& activity = state_->activities[i];
            const KernelLaunch& launch = state_->launches[i];
            if (launch.op && launch.phase == 1 && launch.step >= firstMeasuredStep) {
                totals[groupOf(*launch.op)] += double(activity.endNs - activity.startNs) / 1e6;
                steps[launch.step] = true;
            }
        }
    } else {
        state_->operators.forEach([&](const OperatorEvent& op) {
            if (op.phase == 1 && op.step >= firstMeasuredStep) {
                totals[groupOf(op)] += double(op.endNs - op.startNs) / 1e6;
                steps[op.step] = true;
            }
        });
    }
    std::vector<GroupTime> out;
    for (const auto& [group, ms] : totals) {
        out.push_back({group, ms / double(std::max<size_t>(1, steps.size()))});
    }
    return out;
}

StepTimeline OperatorTracer::timeline(int step) const {
    StepTimeline timeline;
    const std::lock_guard lock(state_->mutex);
    const std::string stepName = "step " + std::to_string(step);
    int64_t origin = -1;
    state_->ranges.forEach([&](const RangeEvent& range) {
        if (range.step == step && state_->names[range.name] == stepName) {
            origin = range.startNs;
        }
    });
    if (origin < 0) {
        return timeline;
    }
    timeline.step = step;
    timeline.clockOriginUs = double(origin) / 1e3;
    auto micros = [origin](int64_t ns) { return double(ns - origin) / 1e3; };
    state_->ranges.forEach([&](const RangeEvent& range) {
        if (range.step != step) {
            return;
        }
        TimelineSpan span;
        span.kind = SpanKind::Range;
        span.name = state_->names[range.name];
        span.track = "ranges";
        span.startUs = micros(range.startNs);
        span.durationUs = double(range.endNs - range.startNs) / 1e3;
        timeline.spans.push_back(std::move(span));
    });
    state_->operators.forEach([&](const OperatorEvent& op) {
        if (op.step != step) {
            return;
        }
        TimelineSpan span;
        span.kind = SpanKind::Operator;
        span.name = state_->names[op.name];
        span.phase = phaseName(op.phase);
        span.category = operatorCategory(span.name, span.phase);
        span.track = "thread " + std::to_string(op.thread);
        span.detail = op.path >= 0 ? state_->names[op.path] : "";
        span.startUs = micros(op.startNs);
        span.durationUs = double(op.endNs - op.startNs) / 1e3;
        timeline.spans.push_back(std::move(span));
    });
    for (size_t i = 0; i < state_->activities.size(); ++i) {
        const KernelActivity& activity = state_->activities[i];
        const KernelLaunch& launch = state_->launches[i];
        if (launch.step != step) {
            continue;
        }
        TimelineSpan span;
        span.kind = activity.kind;
        span.name = activity.name;
        span.phase = phaseName(launch.phase);
        span.category = launch.category;
        span.track = "stream " + std::to_string(activity.stream);
        span.detail = launch.op ? state_->names[launch.op->name] : "";
        span.startUs = micros(activity.startNs);
        span.durationUs = double(activity.endNs - activity.startNs) / 1e3;
        timeline.spans.push_back(std::move(span));
    }
    std::stable_sort(
        timeline.spans.begin(), timeline.spans.end(),
        [](const TimelineSpan& a, const TimelineSpan& b) { return a.startUs < b.startUs; });
    return timeline;
}

std::string flopGroupOf(const std::string& category, const std::string& modulePath) {
    for (const char* part : {"attention q·kᵀ", "attention softmax", "attention ·v"}) {
        if (endsWith(modulePath, std::string("/") + part)) {
            return part;
        }
    }
    if (category == "attention core") {
        return "attention core";
    }
    if (category == "matmul") {
        if (endsWith(modulePath, ".attn")) {
            return "attention projections";
        }
        if (endsWith(modulePath, ".ffn")) {
            return "MLP matmuls";
        }
        if (modulePath == "lm_head") {
            return "LM head";
        }
    }
    return "other";
}

}  // namespace stepscope
