#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "experiments/attention_benchmark.h"
#include "experiments/sweep.h"

namespace stepscope {

// Named studies: the course's tables, each one command. A study composes
// sweeps (or the attention grid) and writes result files; it runs nothing of
// its own.
const std::vector<std::string>& studyNames();  // warmup, precision, attention

// ---- warm-up -------------------------------------------------------------

// One config at several warm-up counts, each point in a fresh process (the
// first measured step of a process that has warmed up already says nothing
// about start-up costs).
struct WarmupStudySpec {
    RunConfig base;
    std::vector<int> warmups{0, 1, 2, 5};
    std::string outDir;  // run files, sweep.csv/md, study.csv/md
    std::string cli;     // the stepscope-cli that runs each point; empty: beside this program
};

struct WarmupStudyRow {
    int warmup = 0;
    RunStatus status = RunStatus::Ok;
    std::string message;
    Stats total;                    // the measured steps (count 0 when none)
    std::optional<double> firstMs;  // the first and second measured steps
    std::optional<double> secondMs;
    int processId = 0;
    std::string runFile;
};

// The spec as the sweep it is: the base with a warmup axis.
SweepSpec warmupStudySweep(const WarmupStudySpec& spec);
// Runs it (control.runPoint, when set, replaces the fresh process: tests),
// then writes study.csv and study.md beside the run files. Throws
// InvalidConfigError before anything runs, as runSweep does.
std::vector<WarmupStudyRow> runWarmupStudy(const WarmupStudySpec& spec,
                                           const SweepControl& control = {});
WarmupStudyRow warmupStudyRow(const RunResult& run, const std::string& runFile);
std::string formatWarmupStudyMarkdown(const std::vector<WarmupStudyRow>& rows);
std::string formatWarmupStudyCsv(const std::vector<WarmupStudyRow>& rows);

// ---- precision -----------------------------------------------------------

// fp32 against bf16 and fp16 (autocast) for each model, context and mode of
// the sweep: mean step time, the speed-up over fp32 of the same point, and
// the measured peak where the runs traced memory.
struct PrecisionStudyRow {
    std::string model;
    int64_t context = 0;
    RunMode mode = RunMode::TrainStep;
    Precision precision = Precision::Fp32;
    RunStatus status = RunStatus::Ok;
    std::string message;
    Stats total;
    std::optional<double> speedup;      // fp32 mean / this mean
    std::optional<int64_t> peakBytes;   // with trace_memory
    std::optional<double> memoryRatio;  // this peak / fp32's peak
    std::string runFile;
};

// `sweep.precisions` empty: fp32, bf16, fp16. Without isolation unless
// control.runPoint says otherwise. Writes study.csv and study.md.
std::vector<PrecisionStudyRow> runPrecisionStudy(SweepSpec sweep, const SweepControl& control = {});
std::vector<PrecisionStudyRow> precisionStudyRows(const std::vector<RunResult>& runs,
                                                  const std::vector<std::string>& runFiles);
std::string formatPrecisionStudyMarkdown(const std::vector<PrecisionStudyRow>& rows);
std::string formatPrecisionStudyCsv(const std::vector<PrecisionStudyRow>& rows);

// ---- attention -----------------------------------------------------------

// The course's attention grid: naive, tiled (FlashAttention-2 in ATen ops),
// fused SDPA and torch.compile'd naive attention, head dims 16…128, batch 8,
// one head, causal; sequence lengths 256…16384 on CUDA, 256…2048 on the CPU;
// 100 repeats on CUDA, 5 on the CPU.
AttentionBenchSpec attentionStudySpec(DeviceKind device);

}  // namespace stepscope
