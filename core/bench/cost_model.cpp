#include "bench/cost_model.h"

#include <algorithm>
#include <cstdio>
#include <functional>

namespace stepscope {

double forwardFlops(const RunConfig& config) {
    const ModelDims& m = config.model;
    const double tokens = static_cast<double>(config.batchSize * config.contextLength);
    const double d = static_cast<double>(m.dModel);
    const double matmulParams =
        static_cast<double>(m.layers) * (4 * d * d + 3 * d * static_cast<double>(m.dFf)) +
        static_cast<double>(m.vocabSize) * d;
    const double attention = 4.0 * static_cast<double>(config.batchSize) *
                             static_cast<double>(config.contextLength * config.contextLength) * d *
                             static_cast<double>(m.layers);
    return 2.0 * tokens * matmulParams + attention;
}

double modelFlopsPerStep(const RunConfig& config) {
    return forwardFlops(config) * (hasBackward(config.mode) ? 3.0 : 1.0);
}

MemoryEstimate estimateMemory(const RunConfig& config) {
    const ModelDims& m = config.model;
    const int64_t params = parameterCount(m);
    const int64_t fp32 = 4;
    const int64_t actBytes = config.precision == Precision::Fp32 ? 4 : 2;
    MemoryEstimate estimate;
    estimate.parameters = params * fp32;
    if (config.precision != Precision::Fp32) {
        estimate.parameters += params * actBytes;  // autocast's low-precision weight copies
    }
    if (hasBackward(config.mode)) {
        estimate.gradients = params * fp32;
    }
    if (hasOptimizer(config.mode)) {
        estimate.optimizerState = 2 * params * fp32;  // AdamW: first and second moments
    }
    // Per block, saved for backward: the residual input and norm outputs
    // (≈4·B·T·d), q/k/v and their rotated copies (≈5·B·T·d), attention output
    // and projection input (≈3·B·T·d), the MLP's w1, w3, silu and product
    // (4·B·T·d_ff), and the scores, masked scores and softmax (3·B·H·T²).
    const int64_t bt = config.batchSize * config.contextLength;
    const int64_t perLayer = bt * (12 * m.dModel + 4 * m.dFf) + 3 * config.batchSize * m.heads *
                                                                    config.contextLength *
                                                                    config.contextLength;
    const int64_t head = bt * 2 * m.dModel + 3 * bt * m.vocabSize;  // final norm, logits, loss
    const bool keepsGraph = config.mode != RunMode::Inference;
    const int64_t elements = keepsGraph ? m.layers * perLayer + head + perLayer  // + working set
                                        : perLayer + head;
    estimate.activations = elements * actBytes;
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
    auto fits = [&](RunConfig candidate) { return estimateMemory(candidate).total() <= available; };
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

std::string formatBytes(double bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int unit = 0;
    while (bytes >= 1024.0 && unit < 4) {
        bytes /= 1024.0;
        ++unit;
    }
    char text[32];
    std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.2f %s", bytes, units[unit]);
    return text;
}

}  // namespace stepscope
