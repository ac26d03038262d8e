#include "profile/memory_tracker.h"

#include <ATen/DeviceAccelerator.h>
#include <ATen/core/Tensor.h>
#include <ATen/record_function.h>
#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/profiler/orchestration/observer.h>

#include <atomic>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <typeindex>
#include <unordered_map>

#include "profile/block_log.h"
#include "profile/name_table.h"
#include "profile/recompute_scope.h"
#include "profile/trace_clock.h"
#include "profile/trace_range.h"

namespace stepscope {

namespace {

struct RawEvent {
    int64_t timeNs;
    uint64_t address;
    int64_t bytes;      // 0 for a fact
    int64_t allocated;  // the allocator's totals as reported, 0 when it reports none
    int64_t reserved;
    int32_t path;
    int32_t op;  // name id of the operator that allocated, -1 when none
    int32_t step;
    uint8_t phase;
    uint8_t fact;     // MemoryCategory + 1 for a fact, 0 for an allocation or free
    bool recomputed;  // made inside a RecomputeScope (a checkpointed forward run again)
};

// The ATen operators running on this thread, innermost last, as their
// (static) name strings: pushing a pointer is all an operator costs. Filled by
// a thread-local RecordFunction callback while a tracker lives on the thread.
thread_local std::vector<const char*> runningOps;

std::unique_ptr<at::ObserverContext> onOpStart(const at::RecordFunction& fn) {
    runningOps.push_back(fn.name());
    return nullptr;
}

void onOpEnd(const at::RecordFunction&, at::ObserverContext*) {
    if (!runningOps.empty()) {
        runningOps.pop_back();
    }
}

// The op that asked for the memory: the innermost one that is not a bare
// allocation (aten::empty inside aten::mm says less than aten::mm).
const char* allocatingOp() {
    for (auto it = runningOps.rbegin(); it != runningOps.rend(); ++it) {
        if (std::string_view(*it).substr(0, 11) != "aten::empty") {
            return *it;
        }
    }
    return runningOps.empty() ? nullptr : runningOps.back();
}

}  // namespace

struct MemoryTracker::State final : public c10::MemoryReportingInfoBase, public RangeListener {
    c10::DeviceType type;
    int64_t originNs = traceClockNs();
    std::atomic<bool> listening{true};
    std::atomic<int> phase{0};
    std::atomic<int> step{-1};
    std::atomic<int> path{-1};
    RangeListener* next = nullptr;
    std::vector<std::pair<int32_t, int64_t>> open;  // range stack: name id, start

    mutable std::mutex mutex;  // guards what follows
    BlockLog<RawEvent> events;
    NameTable names;
    std::unordered_map<std::type_index, int32_t> nodeNames;
    std::unordered_map<const char*, int32_t> opNames;  // by the op's name pointer
    std::vector<MemoryTrace::PhaseRange> phaseRanges;

    explicit State(c10::DeviceType type) : type(type) {}

    // In backward the module is unknown; the autograd node being evaluated
    // on this thread says what is allocating.
    int32_t backwardNodeLocked() {
        const std::shared_ptr<torch::autograd::Node> node = torch::autograd::get_current_node();
        if (!node) {
            return -1;
        }
        const std::type_index type(typeid(*node));
        const auto found = nodeNames.find(type);
        if (found != nodeNames.end()) {
            return found->second;
        }
        return nodeNames[type] = names.intern(node->name());
    }

    int32_t opLocked(const char* name) {
        if (!name) {
            return -1;
        }
        const auto found = opNames.find(name);
        if (found != opNames.end()) {
            return found->second;
        }
        return opNames[name] = names.intern(name);
    }

    void reportMemoryUsage(void* pointer, int64_t size, size_t totalAllocated, size_t totalReserved,
                           c10::Device device) override {
        if (!listening.load() || device.type() != type || size == 0) {
            return;
        }
        const int64_t now = traceClockNs();
        const int currentPhase = phase.load();
        // A forward recomputed in backward runs ATen ops under module ranges as
        // the forward does; where those are not seen (CUDA's autograd thread),
        // the checkpoint's node says what allocated.
        const bool recomputing = RecomputeScope::active();
        const bool byNode = currentPhase == 2 && !recomputing;
        const char* running = size > 0 && !byNode ? allocatingOp() : nullptr;
        const std::lock_guard lock(mutex);
        // In backward the node is both where and what allocated; the path
        // keeps it for files read by older versions.
        const int32_t node = currentPhase == 2 ? backwardNodeLocked() : -1;
        const int32_t modulePath = path.load();
        const int32_t where = byNode || (recomputing && modulePath < 0) ? node : modulePath;
        int32_t op = byNode ? (size > 0 ? node : -1) : opLocked(running);
        if (recomputing && op < 0 && size > 0) {
            op = node;
        }
        events.push({now, reinterpret_cast<uint64_t>(pointer), size, int64_t(totalAllocated),
                     int64_t(totalReserved), where, op, step.load(), uint8_t(currentPhase), 0,
                     recomputing});
    }
    bool memoryProfilingEnabled() const override { return true; }

    void onPush(const std::string& name) override {
        const int64_t now = traceClockNs();
        if (const std::optional<StepMark> mark = stepMarkOf(name)) {
            if (mark->step) {
                step.store(*mark->step);
            }
            phase.store(mark->phase);
        }
        {
            const std::lock_guard lock(mutex);
            open.emplace_back(names.intern(name), now);
            path.store(modulePathLocked());
        }
        if (next) {
            next->onPush(name);
        }
    }

    void onPop() override {
        const int64_t now = traceClockNs();
        {
            const std::lock_guard lock(mutex);
            if (!open.empty()) {
                const auto [name, start] = open.back();
                open.pop_back();
                if (const int closed = phaseOfRange(names[name])) {
                    phaseRanges.push_back({uint8_t(closed), step.load(),
                                           double(start - originNs) / 1e3,
                                           double(now - originNs) / 1e3});
                    phase.store(0);
                }
                path.store(modulePathLocked());
            }
        }
        if (next) {
            next->onPop();
        }
    }

    // The innermost module range open on the runner's thread.
    int32_t modulePathLocked() const {
        for (auto it = open.rbegin(); it != open.rend(); ++it) {
            if (isModuleRange(names[it->first])) {
                return it->first;
            }
        }
        return -1;
    }
};

MemoryTracker::MemoryTracker(const c10::Device& device)
    : device_(device), state_(std::make_shared<State>(device.type())) {
    if (torch::profiler::impl::profilerEnabled() ||
        c10::ThreadLocalDebugInfo::get(c10::DebugInfoKind::PROFILER_STATE)) {
        throw std::runtime_error(
            "memory: LibTorch's profiler (or another memory listener) already holds this "
            "thread's profiler slot");
    }
    state_->next = RangeListenerScope::current();
    guard_ = std::make_unique<c10::DebugInfoGuard>(c10::DebugInfoKind::PROFILER_STATE, state_);
    listenerScope_ = std::make_unique<RangeListenerScope>(state_.get());
    runningOps.clear();
    opCallback_ = at::addThreadLocalCallback(at::RecordFunctionCallback(&onOpStart, &onOpEnd)
                                                 .needsInputs(false)
                                                 .scopes({at::RecordScope::FUNCTION}));
    if (device.is_cuda()) {
        at::accelerator::synchronizeDevice(device.index());
        at::accelerator::resetPeakStats(device.index());
    }
}

MemoryTracker::~MemoryTracker() {
    state_->listening.store(false);
    stopOpCallback();
}

void MemoryTracker::stopOpCallback() {
    if (opCallback_) {
        at::removeCallback(opCallback_);  // a thread-local handle: on the thread that added it
        opCallback_ = 0;
        runningOps.clear();
    }
}

void MemoryTracker::mark(const std::vector<at::Tensor>& tensors, MemoryCategory category) {
    const int64_t now = traceClockNs();
    const std::lock_guard lock(state_->mutex);
    for (const at::Tensor& tensor : tensors) {
        if (tensor.defined() && tensor.has_storage()) {
            state_->events.push({now, reinterpret_cast<uint64_t>(tensor.storage().data_ptr().get()),
                                 0, 0, 0, -1, -1, state_->step.load(),
                                 uint8_t(state_->phase.load()), uint8_t(int(category) + 1), false});
        }
    }
}

int64_t MemoryTracker::eventCount() const {
    const std::lock_guard lock(state_->mutex);
    return int64_t(state_->events.size());
}

namespace {

// One allocation from its alloc to its free (or the end), and what is known of it.
struct AllocationInstance {
    size_t event;  // index into the trace
    int phase;
    int step;
    int fact = -1;  // MemoryCategory
    int freePhase = -1;
    int freeStep = -1;
    bool recomputed = false;
};

struct PairedEvents {
    std::vector<AllocationInstance> instances;
    std::vector<int64_t> instanceOfEvent;  // by trace event; -1: allocated before tracking
};

// Puts the allocations and frees into the trace's columns and pairs each free
// with its allocation; facts name the allocation live at their address.
PairedEvents pairAllocations(const BlockLog<RawEvent>& events, int64_t originNs,
                             MemoryTrace& trace) {
    PairedEvents paired;
    std::vector<AllocationInstance>& instances = paired.instances;
    std::unordered_map<uint64_t, size_t> live;
    int64_t runningTotal = 0;
    events.forEach([&](const RawEvent& event) {
        if (event.fact) {
            if (const auto found = live.find(event.address); found != live.end()) {
                instances[found->second].fact = event.fact - 1;
            }
            return;
        }
        const size_t index = trace.timeUs.size();
        trace.timeUs.push_back(double(event.timeNs - originNs) / 1e3);
        trace.address.push_back(event.address);
        trace.bytes.push_back(event.bytes);
        trace.phase.push_back(event.phase);
        trace.step.push_back(event.step);
        trace.path.push_back(event.path);
        trace.op.push_back(event.op);
        runningTotal += event.bytes;
        trace.allocated.push_back(event.allocated > 0 ? event.allocated : runningTotal);
        trace.reserved.push_back(event.reserved);
        if (event.bytes > 0) {
            live[event.address] = instances.size();
            paired.instanceOfEvent.push_back(int64_t(instances.size()));
            instances.push_back({index, event.phase, event.step});
            instances.back().recomputed = event.recomputed;
        } else if (const auto found = live.find(event.address); found != live.end()) {
            instances[found->second].freePhase = event.phase;
            instances[found->second].freeStep = event.step;
            paired.instanceOfEvent.push_back(int64_t(found->second));
            live.erase(found);
        } else {
            paired.instanceOfEvent.push_back(-1);  // allocated before tracking began
        }
    });
    return paired;
}

// An allocation's category: a fact where the runner marked one, else what its
// phases say. `backwardStart` holds the steps whose backward has started.
MemoryCategory categoryOf(const AllocationInstance& instance,
                          const std::unordered_map<int, double>& backwardStart) {
    if (instance.fact >= 0) {
        return MemoryCategory(instance.fact);
    }
    if (instance.recomputed) {
        return MemoryCategory::Recomputed;
    }
    if (instance.phase == 1) {
        const auto backward = backwardStart.find(instance.step);
        const bool freedBeforeBackward =
            instance.freeStep == instance.step && instance.freePhase == 1;
        if (backward != backwardStart.end() && !freedBeforeBackward) {
            return MemoryCategory::Activations;
        }
    }
    if (instance.phase > 0 && instance.freePhase == instance.phase &&
        instance.freeStep == instance.step) {
        return MemoryCategory::Temporaries;
    }
    return MemoryCategory::Other;
}

// Every event takes its allocation's category; frees of allocations made
// before tracking began stay Other.
void classify(const PairedEvents& paired, MemoryTrace& trace) {
    // When backward started in each step: forward allocations alive then are activations.
    std::unordered_map<int, double> backwardStart;
    for (const auto& range : trace.phases) {
        if (range.phase == 2) {
            backwardStart[range.step] = range.startUs;
        }
    }
    trace.category.resize(trace.timeUs.size(), uint8_t(MemoryCategory::Other));
    for (size_t i = 0; i < trace.category.size(); ++i) {
        if (paired.instanceOfEvent[i] >= 0) {
            trace.category[i] = uint8_t(
                categoryOf(paired.instances[size_t(paired.instanceOfEvent[i])], backwardStart));
        }
    }
}

}  // namespace

MemoryTrace MemoryTracker::finish() {
    state_->listening.store(false);
    stopOpCallback();
    listenerScope_.reset();
    guard_.reset();
    MemoryTrace trace;
    trace.device = device_.str();
    trace.clockOriginUs = double(state_->originNs) / 1e3;
    const std::lock_guard lock(state_->mutex);
    trace.paths = state_->names.names();
    trace.phases = state_->phaseRanges;
    const PairedEvents paired = pairAllocations(state_->events, state_->originNs, trace);
    classify(paired, trace);
    if (device_.is_cuda()) {
        const auto stats = at::accelerator::getDeviceStats(device_.index());
        trace.devicePeakAllocated = stats.allocated_bytes[0].peak;
        trace.devicePeakReserved = stats.reserved_bytes[0].peak;
    }
    return trace;
}

}  // namespace stepscope
