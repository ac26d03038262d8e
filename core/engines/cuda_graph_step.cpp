#include "engines/cuda_graph_step.h"

#include <c10/core/StreamGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>

#include <stdexcept>
#include <string>

#ifdef STEPSCOPE_TORCH_HAS_CUDA
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#endif

namespace stepscope {

struct CudaSideStream::Guard {
    explicit Guard(const c10::Device& device)
        : guard(c10::impl::VirtualGuardImpl(device.type()).getStreamFromGlobalPool(device)) {}
    c10::StreamGuard guard;
};

CudaSideStream::CudaSideStream(const c10::Device& device)
    : guard_(std::make_unique<Guard>(device)) {}

CudaSideStream::~CudaSideStream() = default;

#ifdef STEPSCOPE_TORCH_HAS_CUDA

namespace {

void check(cudaError_t status, const char* what) {
    if (status != cudaSuccess) {
        throw std::runtime_error(std::string("cuda-graph: ") + what + ": " +
                                 cudaGetErrorString(status));
    }
}

int64_t countKernelNodes(cudaGraph_t graph) {
    size_t count = 0;
    check(cudaGraphGetNodes(graph, nullptr, &count), "counting the graph's nodes");
    std::vector<cudaGraphNode_t> nodes(count);
    check(cudaGraphGetNodes(graph, nodes.data(), &count), "listing the graph's nodes");
    int64_t kernels = 0;
    for (cudaGraphNode_t node : nodes) {
        cudaGraphNodeType type{};
        check(cudaGraphNodeGetType(node, &type), "reading a node's type");
        kernels += type == cudaGraphNodeTypeKernel ? 1 : 0;
    }
    return kernels;
}

}  // namespace

struct CudaGraphStep::Captured {
    // keep_graph: the captured graph stays readable, for its kernel count.
    at::cuda::CUDAGraph graph{/*keep_graph=*/true};
    std::vector<cudaEvent_t> events;  // the step's start, then the end of each phase
    at::Tensor loss;
    int64_t kernelNodes = 0;

    ~Captured() {
        for (cudaEvent_t event : events) {
            cudaEventDestroy(event);
        }
    }

    // An external event node: recorded by every replay, readable after it.
    void markOnStream() {
        cudaEvent_t event = nullptr;
        check(cudaEventCreate(&event), "creating a phase event");
        events.push_back(event);
        check(cudaEventRecordWithFlags(event, at::cuda::getCurrentCUDAStream(),
                                       cudaEventRecordExternal),
              "recording a phase event inside the graph");
    }
};

CudaGraphStep::CudaGraphStep(const Phases& phases) : captured_(std::make_unique<Captured>()) {
    Captured& c = *captured_;
    c.graph.capture_begin();
    try {
        c.markOnStream();
        c.loss = phases([&c] { c.markOnStream(); });
    } catch (...) {
        // A capture left open breaks every later CUDA call on this stream.
        try {
            c.graph.capture_end();
        } catch (...) {
        }
        throw;
    }
    c.graph.capture_end();
    c.kernelNodes = countKernelNodes(c.graph.raw_cuda_graph());
    c.graph.instantiate();
}

CudaGraphStep::~CudaGraphStep() = default;

std::vector<double> CudaGraphStep::replay() {
    Captured& c = *captured_;
    c.graph.replay();
    check(cudaEventSynchronize(c.events.back()), "waiting for the replay");
    std::vector<double> times;
    for (size_t i = 1; i < c.events.size(); ++i) {
        float ms = 0;
        check(cudaEventElapsedTime(&ms, c.events[i - 1], c.events[i]), "timing a phase");
        times.push_back(ms);
    }
    float total = 0;
    check(cudaEventElapsedTime(&total, c.events.front(), c.events.back()), "timing the step");
    times.push_back(total);
    return times;
}

#else

struct CudaGraphStep::Captured {
    at::Tensor loss;
};

CudaGraphStep::CudaGraphStep(const Phases& phases) {
    (void)phases;
    throw std::runtime_error(
        "cuda-graph: this StepScope was built against a LibTorch without CUDA");
}

CudaGraphStep::~CudaGraphStep() = default;

std::vector<double> CudaGraphStep::replay() {
    return {};
}

#endif

const at::Tensor& CudaGraphStep::loss() const {
    return captured_->loss;
}

int64_t CudaGraphStep::kernelNodes() const {
#ifdef STEPSCOPE_TORCH_HAS_CUDA
    return captured_->kernelNodes;
#else
    return 0;
#endif
}

}  // namespace stepscope
