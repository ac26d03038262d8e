#include "estimate/cost_model.h"

#include <algorithm>
#include <cstdio>
#include <functional>

#include "estimate/memory_estimate.h"

namespace stepscope {

namespace {

// One block's forward: its projections and MLP, and the two T×T attention matmuls.
double blockForwardFlops(const RunConfig& config) {
    const ModelDims& m = config.model;
    const double tokens = static_cast<double>(config.batchSize * config.contextLength);
    const double d = static_cast<double>(m.dModel);
    const double matmuls = 2.0 * tokens * (4 * d * d + 3 * d * static_cast<double>(m.dFf));
    const double attention = 4.0 * static_cast<double>(config.batchSize) *
                             static_cast<double>(config.contextLength * config.contextLength) * d;
    return matmuls + attention;
}

double lmHeadFlops(const RunConfig& config) {
    return 2.0 * static_cast<double>(config.batchSize * config.contextLength) *
           static_cast<double>(config.model.vocabSize) * static_cast<double>(config.model.dModel);
}

}  // namespace

double forwardFlops(const RunConfig& config) {
    return static_cast<double>(config.model.layers) * blockForwardFlops(config) +
           lmHeadFlops(config);
}

double recomputedFlops(const RunConfig& config) {
    if (!hasBackward(config.mode)) {
        return 0;
    }
    const double blocks = static_cast<double>(
        recomputedBlockForwards(config.activationCheckpoint, config.model.layers));
    return blocks * blockForwardFlops(config) +
           (config.loss == LossKind::Chunked ? lmHeadFlops(config) : 0.0);
}

double modelFlopsPerStep(const RunConfig& config) {
    return forwardFlops(config) * (hasBackward(config.mode) ? 3.0 : 1.0) + recomputedFlops(config);
}

MemoryEstimate estimateMemory(const RunConfig& config) {
    const MemoryPrediction prediction = predictMemory(config);
    MemoryEstimate estimate;
    estimate.parameters = prediction.at(MemoryCategory::Parameters);
    estimate.gradients = prediction.at(MemoryCategory::Gradients);
    estimate.optimizerState = prediction.at(MemoryCategory::OptimizerState);
    // What the model keeps for backward; without backward, the forward's working set.
    estimate.activations =
        hasBackward(config.mode)
            ? prediction.at(MemoryCategory::Activations)
            : prediction.at(MemoryCategory::Temporaries) +
                  (config.mode == RunMode::Forward ? prediction.at(MemoryCategory::Other) : 0);
    return estimate;
}

namespace {

// The largest value in [1, high] for which `fits` holds, given that it holds
// for 1 and that the estimate grows with the value; 0 when it fails at 1.
int64_t largestFitting(int64_t high, const std::function<bool(int64_t)>& fits) {
    if (!fits(1)) {
        return 0;
    }
    int64_t low = 1;
    while (low < high) {
        const int64_t middle = low + (high - low + 1) / 2;
        if (fits(middle)) {
            low = middle;
        } else {
            high = middle - 1;
        }
    }
    return low;
}

}  // namespace

std::optional<RunConfig> shrinkToFit(const RunConfig& config, int64_t available) {
    auto fits = [&](RunConfig candidate) { return preflightBytes(candidate) <= available; };
    RunConfig shrunk = config;
    shrunk.batchSize = largestFitting(std::max<int64_t>(1, config.batchSize), [&](int64_t batch) {
        RunConfig candidate = config;
        candidate.batchSize = batch;
        return fits(candidate);
    });
    if (shrunk.batchSize > 0) {
        return shrunk;
    }
    shrunk.batchSize = 1;
    shrunk.contextLength =
        largestFitting(std::max<int64_t>(1, config.contextLength), [&](int64_t context) {
            RunConfig candidate = shrunk;
            candidate.contextLength = context;
            return fits(candidate);
        });
    if (shrunk.contextLength > 0) {
        return shrunk;
    }
    return std::nullopt;
}

std::optional<double> devicePeakFlopsPerSecond(const std::string& deviceName, Precision precision,
                                               bool tf32) {
    struct Peak {
        const char* namePart;
        double fp32, tf32, half;  // TFLOP/s, dense
    };
    // Vendor datasheet figures (SXM parts; PCIe parts are lower, so MFU reads high there).
    static const Peak peaks[] = {
        {"H200", 67, 494, 989},   {"H100", 67, 494, 989},    {"A100", 19.5, 156, 312},
        {"L40S", 91.6, 183, 362}, {"A10G", 31.2, 62.5, 125}, {"V100", 15.7, 15.7, 125},
    };
    for (const auto& peak : peaks) {
        if (deviceName.find(peak.namePart) != std::string::npos) {
            const double tflops = precision != Precision::Fp32 ? peak.half
                                  : tf32                       ? peak.tf32
                                                               : peak.fp32;
            return tflops * 1e12;
        }
    }
    return std::nullopt;
}

double attentionForwardFlops(int64_t batch, int64_t heads, int64_t seq, int64_t d, bool causal) {
    const double flops =
        4.0 * double(batch) * double(heads) * double(seq) * double(seq) * double(d);
    return causal ? flops / 2 : flops;
}

}  // namespace stepscope
