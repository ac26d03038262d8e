#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/run_config.h"
#include "results/run_result.h"

namespace stepscope {

// The correctness gate a Python backend passes before it is timed
// (python/stepscope/attention/gate.py): its output, logsumexp and gradients
// against float64 on small shapes, once per backend, precision and device.
struct AttentionGate {
    bool ok = false;
    std::optional<double> maxRelError;  // the worst max|x−r|/max|r|; none where it raised or NaN
    double tolerance = 0;               // fp32 1e-4, bf16 and fp16 2e-2
    std::string message;                // why it failed, else empty
};

// One point of the attention grid as measured (experiments/attention_benchmark.h
// measures them): a backend at one head dim, sequence length and precision.
struct AttentionPoint {
    std::string backend;
    std::string kernel;  // what actually ran (sdpa's choice), else the backend
    int64_t d = 0;
    int64_t seq = 0;
    int64_t batch = 0;
    int64_t heads = 0;
    Precision precision = Precision::Fp32;
    bool causal = true;
    // ok; oom; unavailable (the backend, device or precision is not served, or
    // Triton on the CPU: checked, not timed); failed (it raised: message);
    // incorrect (beyond the gate's tolerance: never timed)
    std::string status;
    std::string message;
    std::optional<double> forwardMs;
    std::optional<double> backwardMs;
    std::optional<int64_t>
        memBeforeBackwardBytes;  // allocated after forward: inputs, saved, output
    std::optional<int64_t> peakBytes;
    std::optional<double> forwardTflops;
    std::optional<double> backwardTflops;
    int64_t scoreMatrixBytes = 0;       // one seq × seq score matrix of the batch (naive keeps ~3)
    std::optional<AttentionGate> gate;  // the Python backends' (not naive, sdpa, compiled, …)
};

// Where a point sits in the grid (backend, d, seq, batch, heads, precision,
// causal), as the attention file and the Python worker's request spell it.
nlohmann::json attentionPointCoordinates(const AttentionPoint& point);

// The attention benchmark's file: versioned JSON ("stepscope-attention",
// version 1) with the environment and every point; plus its tables. A point's
// `gate` is null where the backend has none and absent in files written
// before it: an addition old readers skip, so the version stays 1.
std::string attentionPointsToJson(const std::vector<AttentionPoint>& points);  // a JSON list
std::string attentionResultToJson(const std::vector<AttentionPoint>& points,
                                  const EnvironmentInfo& environment);
std::vector<AttentionPoint> attentionResultFromJson(const std::string& json);  // RunFileError

// A whole attention file: where it was measured, and its points.
struct AttentionFile {
    EnvironmentInfo environment;  // the fields the file keeps (versions, device, threads, Slurm)
    std::vector<AttentionPoint> points;
};
AttentionFile attentionFileFromJson(const std::string& json);  // RunFileError
AttentionFile readAttentionFile(const std::string& path);      // RunFileError naming the path
std::string formatAttentionCsv(const std::vector<AttentionPoint>& points);
// Markdown: every point, then the gate of each gated backend and precision
// (its worst relative error, and whether it is incorrect).
std::string formatAttentionTable(const std::vector<AttentionPoint>& points);

// The gate of each backend and precision that has one, in the points' order:
// the worst relative error over its points.
struct AttentionGateRow {
    std::string backend;
    Precision precision = Precision::Fp32;
    AttentionGate gate;
};
std::vector<AttentionGateRow> attentionGateRows(const std::vector<AttentionPoint>& points);
// "ok 3.2e-07", "incorrect 4.1e-01 > 1e-04", "raised", "": how the tables show a gate.
std::string gateText(const std::optional<AttentionGate>& gate);

}  // namespace stepscope
