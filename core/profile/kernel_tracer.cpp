#include "profile/kernel_tracer.h"

#include <stdexcept>

#ifdef STEPSCOPE_HAVE_CUPTI
#include <c10/cuda/CUDAFunctions.h>
#include <cupti.h>
#include <cxxabi.h>
#include <dlfcn.h>
#include <torch/csrc/profiler/orchestration/observer.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <unordered_map>

#include "profile/trace_clock.h"
#endif

namespace stepscope {

#ifndef STEPSCOPE_HAVE_CUPTI

struct KernelTracer::State {};

std::optional<std::string> KernelTracer::unavailableReason() {
    return "kernels: this build has no CUPTI headers (CUDA toolkit or nvidia-cuda-cupti)";
}
KernelTracer::KernelTracer() {
    throw std::runtime_error(*unavailableReason());
}
KernelTracer::~KernelTracer() = default;
void KernelTracer::pushOperator(int64_t) {}
void KernelTracer::popOperator() {}
void KernelTracer::pushPhase(int64_t) {}
void KernelTracer::popPhase() {}
std::vector<KernelActivity> KernelTracer::collect() {
    return {};
}

#else

namespace {

constexpr CUpti_ActivityKind kActivities[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET};
// The API calls that put work on a stream; only these are called back, so the
// many other CUDA calls of a step cost nothing extra.
struct LaunchCallback {
    CUpti_CallbackDomain domain;
    CUpti_CallbackId id;
};
constexpr LaunchCallback kLaunchCallbacks[] = {
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DAsync_v3020},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_ptsz_v7000},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async},
    // A captured launch creates a graph node instead of running; instantiating
    // the graph clones it. Replays report the clone's id, not a launch's.
    {CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED},
    {CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED},
};

// The correlation scopes of this thread: the operator being dispatched and
// the phase pushed. CUPTI's API callback reads them at each launch.
thread_local int64_t currentOperator = -1;
thread_local int64_t currentPhase = -1;
thread_local std::vector<int64_t> outerPhases;  // the tags pushPhase() covered

// The CUPTI entry points we use, resolved from the shared library at run time.
struct Cupti {
    void* handle = nullptr;
    std::string error;
    decltype(&cuptiActivityRegisterCallbacks) registerCallbacks = nullptr;
    decltype(&cuptiActivityRegisterTimestampCallback) registerTimestamp = nullptr;
    decltype(&cuptiActivityEnable) enable = nullptr;
    decltype(&cuptiActivityDisable) disable = nullptr;
    decltype(&cuptiActivityFlushAll) flushAll = nullptr;
    decltype(&cuptiActivityGetNextRecord) nextRecord = nullptr;
    decltype(&cuptiSubscribe) subscribe = nullptr;
    decltype(&cuptiUnsubscribe) unsubscribe = nullptr;
    decltype(&cuptiEnableCallback) enableCallback = nullptr;
    decltype(&cuptiGetResultString) resultString = nullptr;
    decltype(&cuptiGetGraphNodeId) graphNodeId = nullptr;

    template <typename F>
    bool resolve(F& function, const char* name) {
        function = reinterpret_cast<F>(dlsym(handle, name));
        if (!function && error.empty()) {
            error = std::string("kernels: libcupti lacks ") + name;
        }
        return function != nullptr;
    }
};

const Cupti& cupti() {
    static const Cupti loaded = [] {
        Cupti library;
        // LibTorch's CUDA build already maps libcupti.so.13 from the nvidia
        // wheel; the toolkit's copy serves builds that were linked without it.
        for (const char* name :
             {"libcupti.so.13", "libcupti.so", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so"}) {
            if ((library.handle = dlopen(name, RTLD_NOW | RTLD_GLOBAL))) {
                break;
            }
        }
        if (!library.handle) {
            library.error = "kernels: CUPTI (libcupti.so.13) could not be loaded";
            return library;
        }
        library.resolve(library.registerCallbacks, "cuptiActivityRegisterCallbacks");
        library.resolve(library.registerTimestamp, "cuptiActivityRegisterTimestampCallback");
        library.resolve(library.enable, "cuptiActivityEnable");
        library.resolve(library.disable, "cuptiActivityDisable");
        library.resolve(library.flushAll, "cuptiActivityFlushAll");
        library.resolve(library.nextRecord, "cuptiActivityGetNextRecord");
        library.resolve(library.subscribe, "cuptiSubscribe");
        library.resolve(library.unsubscribe, "cuptiUnsubscribe");
        library.resolve(library.enableCallback, "cuptiEnableCallback");
        library.resolve(library.resultString, "cuptiGetResultString");
        library.resolve(library.graphNodeId, "cuptiGetGraphNodeId");
        return library;
    }();
    return loaded;
}

void check(CUptiResult result, const char* what) {
    if (result != CUPTI_SUCCESS) {
        const char* text = "unknown error";
        cupti().resultString(result, &text);
        throw std::runtime_error(std::string("kernels: ") + what + ": " + text);
    }
}

uint64_t CUPTIAPI timestamp() {
    return static_cast<uint64_t>(traceClockNs());
}

std::string demangle(const char* name) {
    int status = 0;
    char* plain = abi::__cxa_demangle(name, nullptr, nullptr, &status);
    if (status != 0 || !plain) {
        return name;
    }
    std::string out(plain);
    std::free(plain);
    return out;
}

const char* copyKindName(uint8_t kind) {
    switch (kind) {
        case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
            return "memcpy HtoD";
        case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
            return "memcpy DtoH";
        case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
            return "memcpy DtoD";
        default:
            return "memcpy";
    }
}

std::atomic<KernelTracer::State*> activeState{nullptr};

}  // namespace

struct KernelTracer::State {
    std::mutex mutex;
    std::vector<KernelActivity> activities;
    CUpti_SubscriberHandle subscriber = nullptr;
    // CUPTI correlation id of each API call made inside an operator or phase.
    // Each launching thread appends to its own log without locking; the logs
    // are read in collect(), when the device is idle.
    struct Launch {
        uint32_t correlation;
        int64_t operatorId;
        int64_t phaseTag;
    };
    std::vector<std::unique_ptr<std::vector<Launch> > > launchLogs;
    // The scopes under way when each graph node was created (capture) or the
    // node it was cloned from (instantiation), by CUPTI's node id.
    std::unordered_map<uint64_t, Launch> graphNodes;
    uint64_t generation = 0;
    std::map<const char*, std::string> names;  // CUPTI keeps kernel names alive
    int64_t buffers = 0;

    void add(CUpti_Activity* record) {
        KernelActivity activity;
        uint32_t correlation = 0;
        switch (record->kind) {
            case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
            case CUPTI_ACTIVITY_KIND_KERNEL: {
                const auto* kernel = reinterpret_cast<CUpti_ActivityKernel10*>(record);
                auto [it, added] = names.try_emplace(kernel->name);
                if (added) {
                    it->second = demangle(kernel->name);
                }
                activity.name = it->second;
                activity.stream = kernel->streamId;
                activity.startNs = int64_t(kernel->start);
                activity.endNs = int64_t(kernel->end);
                activity.graphNode = kernel->graphNodeId;
                correlation = kernel->correlationId;
                break;
            }
            case CUPTI_ACTIVITY_KIND_MEMCPY: {
                const auto* copy = reinterpret_cast<CUpti_ActivityMemcpy6*>(record);
                activity.kind = SpanKind::Memcpy;
                activity.name = copyKindName(copy->copyKind);
                activity.stream = copy->streamId;
                activity.startNs = int64_t(copy->start);
                activity.endNs = int64_t(copy->end);
                activity.graphNode = copy->graphNodeId;
                correlation = copy->correlationId;
                break;
            }
            case CUPTI_ACTIVITY_KIND_MEMSET: {
                const auto* set = reinterpret_cast<CUpti_ActivityMemset4*>(record);
                activity.kind = SpanKind::Memset;
                activity.name = "memset";
                activity.stream = set->streamId;
                activity.startNs = int64_t(set->start);
                activity.endNs = int64_t(set->end);
                activity.graphNode = set->graphNodeId;
                correlation = set->correlationId;
                break;
            }
            default:
                return;
        }
        // Ids are resolved in collect(); keep CUPTI's correlation id meanwhile.
        activity.operatorId = correlation;
        activities.push_back(std::move(activity));
    }
};

namespace {

constexpr size_t kBufferBytes = 8 << 20;

void CUPTIAPI bufferRequested(uint8_t** buffer, size_t* size, size_t* maxRecords) {
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
    *size = kBufferBytes;
    *maxRecords = 0;
}

void CUPTIAPI bufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
    if (KernelTracer::State* state = activeState.load()) {
        const std::lock_guard lock(state->mutex);
        ++state->buffers;
        CUpti_Activity* record = nullptr;
        while (cupti().nextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
            state->add(record);
        }
    }
    std::free(buffer);
}

std::atomic<uint64_t> generations{0};

// This thread's launch log for the tracer of the given generation.
struct ThreadLaunchLog {
    uint64_t generation = 0;
    std::vector<KernelTracer::State::Launch>* log = nullptr;
};
thread_local ThreadLaunchLog threadLaunchLog;

uint64_t nodeId(CUgraphNode node) {
    uint64_t id = 0;
    return node && cupti().graphNodeId(node, &id) == CUPTI_SUCCESS ? id : 0;
}

// Graph nodes are created inside the captured launch call, on its thread, so
// the scopes under way are the launch's; a clone inherits its original's.
void onGraphNode(CUpti_CallbackId id, const CUpti_ResourceData* resource) {
    KernelTracer::State* state = activeState.load();
    const auto* graph = static_cast<const CUpti_GraphData*>(resource->resourceDescriptor);
    if (!state || !graph) {
        return;
    }
    const uint64_t node = nodeId(graph->node);
    const std::lock_guard lock(state->mutex);
    if (id == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED) {
        if (node != 0 && (currentOperator >= 0 || currentPhase >= 0)) {
            state->graphNodes[node] = {0, currentOperator, currentPhase};
        }
        return;
    }
    const auto original = state->graphNodes.find(nodeId(graph->originalNode));
    if (node != 0 && original != state->graphNodes.end()) {
        const KernelTracer::State::Launch scopes = original->second;
        state->graphNodes[node] = scopes;
    }
}

// Runs on the launching thread at each launch, memcpy and memset call.
void CUPTIAPI onLaunch(void*, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* data) {
    if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
        onGraphNode(id, static_cast<const CUpti_ResourceData*>(data));
        return;
    }
    const auto* call = static_cast<const CUpti_CallbackData*>(data);
    if (call->callbackSite != CUPTI_API_ENTER || (currentOperator < 0 && currentPhase < 0)) {
        return;
    }
    KernelTracer::State* state = activeState.load();
    if (!state) {
        return;
    }
    if (threadLaunchLog.generation != state->generation) {
        const std::lock_guard lock(state->mutex);
        state->launchLogs.push_back(std::make_unique<std::vector<KernelTracer::State::Launch> >());
        state->launchLogs.back()->reserve(1 << 16);
        threadLaunchLog = {state->generation, state->launchLogs.back().get()};
    }
    threadLaunchLog.log->push_back({call->correlationId, currentOperator, currentPhase});
}

}  // namespace

std::optional<std::string> KernelTracer::unavailableReason() {
    if (c10::cuda::device_count() == 0) {
        return "kernels: no CUDA device";
    }
    if (torch::profiler::impl::profilerEnabled()) {
        return "kernels: LibTorch's profiler (Kineto) is active and holds CUPTI";
    }
    if (!cupti().error.empty()) {
        return cupti().error;
    }
    return std::nullopt;
}

KernelTracer::KernelTracer() : state_(std::make_unique<State>()) {
    state_->generation = ++generations;
    if (const auto reason = unavailableReason()) {
        throw std::runtime_error(*reason);
    }
    State* expected = nullptr;
    if (!activeState.compare_exchange_strong(expected, state_.get())) {
        throw std::runtime_error("kernels: another kernel tracer is already active");
    }
    try {
        static const bool registered = [] {
            // CUPTI stamps on our clock, so kernels line up with operators.
            check(cupti().registerTimestamp(&timestamp), "cuptiActivityRegisterTimestampCallback");
            check(cupti().registerCallbacks(&bufferRequested, &bufferCompleted),
                  "cuptiActivityRegisterCallbacks");
            return true;
        }();
        (void)registered;
        // One subscriber per process: this fails while another tool holds CUPTI.
        check(cupti().subscribe(&state_->subscriber, &onLaunch, nullptr), "cuptiSubscribe");
        for (const LaunchCallback& callback : kLaunchCallbacks) {
            check(cupti().enableCallback(1, state_->subscriber, callback.domain, callback.id),
                  "cuptiEnableCallback");
        }
        for (CUpti_ActivityKind kind : kActivities) {
            check(cupti().enable(kind), "cuptiActivityEnable");
        }
    } catch (...) {
        if (state_->subscriber) {
            cupti().unsubscribe(state_->subscriber);
        }
        activeState.store(nullptr);
        throw;
    }
}

KernelTracer::~KernelTracer() {
    for (CUpti_ActivityKind kind : kActivities) {
        cupti().disable(kind);
    }
    cupti().flushAll(1);
    cupti().unsubscribe(state_->subscriber);
    activeState.store(nullptr);
}

// Operators do not nest here (the operator tracer passes top-level calls only).
void KernelTracer::pushOperator(int64_t id) {
    currentOperator = id;
}

void KernelTracer::popOperator() {
    currentOperator = -1;
}

void KernelTracer::pushPhase(int64_t tag) {
    outerPhases.push_back(currentPhase);
    currentPhase = tag;
}

void KernelTracer::popPhase() {
    if (outerPhases.empty()) {
        currentPhase = -1;
        return;
    }
    currentPhase = outerPhases.back();
    outerPhases.pop_back();
}

std::vector<KernelActivity> KernelTracer::collect() {
    check(cupti().flushAll(1), "cuptiActivityFlushAll");
    const std::lock_guard lock(state_->mutex);
    std::vector<KernelActivity> out = std::move(state_->activities);
    state_->activities.clear();
    std::unordered_map<uint32_t, const State::Launch*> launches;
    for (const auto& log : state_->launchLogs) {
        for (const State::Launch& launch : *log) {
            launches[launch.correlation] = &launch;
        }
    }
    int64_t matched = 0;
    for (KernelActivity& activity : out) {
        const auto found = launches.find(uint32_t(activity.operatorId));
        const State::Launch* launch = found == launches.end() ? nullptr : found->second;
        activity.operatorId = launch ? launch->operatorId : -1;
        activity.phaseTag = launch ? launch->phaseTag : -1;
        matched += launch != nullptr;
        const auto node = state_->graphNodes.find(activity.graphNode);
        if (activity.graphNode == 0 || node == state_->graphNodes.end()) {
            continue;
        }
        // A replayed node: the operator and phase of its capture, the step of
        // the replay's launch (tag = step · 4 + phase).
        activity.operatorId = node->second.operatorId;
        // Backward nodes are created on autograd's thread, outside any phase
        // tag: their operator gives the phase.
        const int64_t capturedPhase = std::max<int64_t>(node->second.phaseTag, 0) % 4;
        activity.phaseTag = launch && launch->phaseTag >= 0
                                ? launch->phaseTag / 4 * 4 + capturedPhase
                                : node->second.phaseTag;
    }
    if (std::getenv("STEPSCOPE_TRACE_DEBUG")) {
        std::fprintf(stderr, "kernels: %lld buffers, %zu activities, %lld tied to a launch\n",
                     (long long)state_->buffers, out.size(), (long long)matched);
    }
    return out;
}

#endif

}  // namespace stepscope
