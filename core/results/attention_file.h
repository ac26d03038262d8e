#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/run_config.h"
#include "results/run_result.h"

namespace stepscope {

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
    std::string status;  // ok, oom, unavailable, failed
    std::string message;
    std::optional<double> forwardMs;
    std::optional<double> backwardMs;
    std::optional<int64_t>
        memBeforeBackwardBytes;  // allocated after forward: inputs, saved, output
    std::optional<int64_t> peakBytes;
    std::optional<double> forwardTflops;
    std::optional<double> backwardTflops;
    int64_t scoreMatrixBytes = 0;  // one seq × seq score matrix of the batch (naive keeps ~3)
};

// The attention benchmark's file: versioned JSON ("stepscope-attention",
// version 1) with the environment and every point; plus its tables.
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
std::string formatAttentionTable(const std::vector<AttentionPoint>& points);  // Markdown

}  // namespace stepscope
