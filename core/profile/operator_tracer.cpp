#include "profile/operator_tracer.h"

#include <ATen/record_function.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <stdexcept>

#include "profile/trace_range.h"

namespace stepscope {

namespace {

const char* kPhases[] = {"setup", "forward", "backward", "optimizer"};

struct Event {
    std::string name;
    int phase;
    int step;
    double durationMs;
};

bool contains(const std::string& text, const char* part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

std::string operatorCategory(const std::string& name, const std::string& phase) {
    if (phase == "optimizer") {
        return "optimizer";
    }
    auto any = [&name](std::initializer_list<const char*> parts) {
        return std::any_of(parts.begin(), parts.end(),
                           [&name](const char* part) { return contains(name, part); });
    };
    if (any({"scaled_dot_product", "flash_attention", "efficient_attention", "TiledAttention",
             "ScaledDotProduct"})) {
        return "attention core";
    }
    if (any({"linear", "matmul", "aten::mm", "addmm", "bmm", "MmBackward", "AddmmBackward",
             "BmmBackward", "LinearBackward"})) {
        return "matmul";
    }
    // The loss (log-softmax + NLL) is a reduction over the vocabulary, not attention's softmax.
    if (any({"cross_entropy", "nll_loss", "NllLoss", "log_softmax", "LogSoftmax", "aten::sum",
             "SumBackward", "aten::mean", "MeanBackward", "aten::max", "MaxBackward",
             "aten::amax"})) {
        return "reduction";
    }
    if (any({"softmax", "Softmax"})) {
        return "softmax";
    }
    if (any({"rsqrt", "Rsqrt", "norm", "Norm"})) {
        return "normalisation";
    }
    if (any({"aten::to", "aten::_to_copy", "ToCopyBackward", "copy_", "clone", "Clone",
             "contiguous", "aten::empty", "zero_", "ones_like", "AccumulateGrad"})) {
        return "copy/cast";
    }
    if (any({"add", "Add", "mul",         "Mul",        "sub",   "Sub",
             "div", "Div", "silu",        "Silu",       "exp",   "Exp",
             "pow", "Pow", "masked_fill", "MaskedFill", "cos",   "sin",
             "neg", "Neg", "where",       "Where",      "stack", "Stack",
             "cat", "Cat", "embedding",   "Embedding",  "index", "Index"})) {
        return "elementwise";
    }
    return "other";
}

// Shared by the RecordFunction callbacks (any thread) and the range listener
// (the runner's thread).
struct OperatorTracer::State final : public RangeListener {
    std::atomic<int> phase{0};
    std::atomic<int> step{-1};
    RangeListener* next = nullptr;
    std::mutex mutex;
    std::vector<Event> events;
    at::CallbackHandle handle = 0;

    void onPush(const std::string& name) override {
        if (name.rfind("step ", 0) == 0) {
            step.store(std::stoi(name.substr(5)));
            phase.store(0);
        } else if (name == "bookkeeping") {
            phase.store(0);
        } else {
            for (int i = 1; i < 4; ++i) {
                if (name == kPhases[i]) {
                    phase.store(i);
                }
            }
        }
        if (next) {
            next->onPush(name);
        }
    }
    void onPop() override {
        if (next) {
            next->onPop();
        }
    }
};

namespace {

std::atomic<OperatorTracer::State*> activeState{nullptr};
thread_local int depth = 0;

struct Started final : public at::ObserverContext {
    std::chrono::steady_clock::time_point start;
};

// Only top-level calls are timed; nested ones just keep the depth count.
std::unique_ptr<at::ObserverContext> onStart(const at::RecordFunction&) {
    if (depth++ != 0) {
        return nullptr;
    }
    auto context = std::make_unique<Started>();
    context->start = std::chrono::steady_clock::now();
    return context;
}

void onEnd(const at::RecordFunction& fn, at::ObserverContext* raw) {
    --depth;
    auto* context = static_cast<Started*>(raw);
    OperatorTracer::State* state = activeState.load();
    if (!context || !state) {
        return;
    }
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - context->start)
            .count();
    // Backward nodes come as "autograd::engine::evaluate_function: MmBackward0".
    std::string name = fn.name();
    const std::string wrapper = "autograd::engine::evaluate_function: ";
    if (name.rfind(wrapper, 0) == 0) {
        name.erase(0, wrapper.size());
    }
    const std::lock_guard lock(state->mutex);
    state->events.push_back({std::move(name), state->phase.load(), state->step.load(), ms});
}

// Installs the tracer's state as this thread's range listener while tracing.
thread_local std::unique_ptr<RangeListenerScope> listenerScope;

}  // namespace

OperatorTracer::OperatorTracer() : state_(std::make_unique<State>()) {
    State* expected = nullptr;
    if (!activeState.compare_exchange_strong(expected, state_.get())) {
        throw std::runtime_error("ops: another operator tracer is already active");
    }
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
    return int64_t(state_->events.size());
}

std::vector<OperatorRow> OperatorTracer::aggregate(int firstMeasuredStep) const {
    std::map<std::pair<int, std::string>, OperatorRow> rows;
    {
        const std::lock_guard lock(state_->mutex);
        for (const Event& event : state_->events) {
            if (event.step < firstMeasuredStep || event.phase == 0) {
                continue;
            }
            OperatorRow& row = rows[{event.phase, event.name}];
            if (row.calls == 0) {
                row.name = event.name;
                row.phase = kPhases[event.phase];
                row.category = operatorCategory(row.name, row.phase);
            }
            ++row.calls;
            row.totalMs += event.durationMs;
        }
    }
    std::vector<OperatorRow> out;
    for (auto& [key, row] : rows) {
        out.push_back(std::move(row));
    }
    std::sort(out.begin(), out.end(),
              [](const OperatorRow& a, const OperatorRow& b) { return a.totalMs > b.totalMs; });
    return out;
}

}  // namespace stepscope
