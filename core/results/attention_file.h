#pragma once

#include <string>
#include <vector>

#include "attention/attention_benchmark.h"
#include "results/run_result.h"

namespace stepscope {

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
