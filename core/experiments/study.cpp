#include "experiments/study.h"

#include <filesystem>
#include <map>
#include <sstream>
#include <tuple>

#include "engines/isolated_run.h"
#include "estimate/cost_model.h"
#include "profile/memory_trace.h"
#include "results/run_file.h"
#include "util/atomic_file.h"
#include "util/strings.h"

namespace stepscope {

namespace {

std::string cell(const std::optional<double>& value, int decimals = 2) {
    return value ? fixedDecimals(*value, decimals) : "–";
}

std::string csvCell(const std::optional<double>& value, int decimals = 4) {
    return value ? fixedDecimals(*value, decimals) : "";
}

std::optional<double> statsMean(const Stats& stats) {
    return stats.count ? std::optional<double>(stats.mean) : std::nullopt;
}

// The run files runSweep wrote, in the order of its results.
std::vector<std::string> sweepFiles(const SweepSpec& spec, const std::vector<RunResult>& results) {
    std::vector<std::string> files;
    for (const auto& result : results) {
        files.push_back(
            (std::filesystem::path(spec.outDir) / sweepPointFileName(result.config, spec.axes))
                .string());
    }
    return files;
}

void writeStudyTables(const std::string& outDir, const std::string& markdown,
                      const std::string& csv) {
    writeFileAtomically((std::filesystem::path(outDir) / "study.md").string(), markdown);
    writeFileAtomically((std::filesystem::path(outDir) / "study.csv").string(), csv);
}

}  // namespace

const std::vector<std::string>& studyNames() {
    static const std::vector<std::string> names{"warmup", "precision", "attention"};
    return names;
}

// ---- warm-up ---------------------------------------------------------------

SweepSpec warmupStudySweep(const WarmupStudySpec& spec) {
    SweepSpec sweep;
    sweep.base = spec.base;
    sweep.models = {spec.base.model};
    sweep.contexts = {spec.base.contextLength};
    sweep.modes = {spec.base.mode};
    sweep.precisions = {spec.base.precision};
    SweepAxis warmups{"warmup", {}};
    for (int count : spec.warmups) {
        warmups.values.push_back(std::to_string(count));
    }
    sweep.axes = {warmups};
    sweep.outDir = spec.outDir;
    return sweep;
}

std::vector<WarmupStudyRow> runWarmupStudy(const WarmupStudySpec& spec,
                                           const SweepControl& control) {
    const SweepSpec sweep = warmupStudySweep(spec);
    SweepControl isolated = control;
    if (!isolated.runPoint) {
        isolated.runPoint = freshProcessRunner(spec.cli.empty() ? cliBesideExecutable() : spec.cli);
    }
    const std::vector<RunResult> results = runSweep(sweep, isolated);
    const std::vector<std::string> files = sweepFiles(sweep, results);
    std::vector<WarmupStudyRow> rows;
    for (size_t i = 0; i < results.size(); ++i) {
        rows.push_back(warmupStudyRow(results[i], files[i]));
    }
    writeStudyTables(spec.outDir, formatWarmupStudyMarkdown(rows), formatWarmupStudyCsv(rows));
    return rows;
}

WarmupStudyRow warmupStudyRow(const RunResult& run, const std::string& runFile) {
    WarmupStudyRow row;
    row.warmup = run.config.warmupSteps;
    row.status = run.status;
    row.message = run.message;
    row.total = run.summary.total;
    for (const auto& step : run.steps) {
        if (step.warmup) {
            continue;
        }
        if (!row.firstMs) {
            row.firstMs = step.totalMs;
        } else if (!row.secondMs) {
            row.secondMs = step.totalMs;
        }
    }
    row.processId = run.environment.processId;
    row.runFile = runFile;
    return row;
}

std::string formatWarmupStudyMarkdown(const std::vector<WarmupStudyRow>& rows) {
    std::ostringstream out;
    out << "| warm-up | status | measured | mean ms | std ms | median ms | first ms | second ms | "
           "first / median |\n"
        << "|---:|---|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const auto& row : rows) {
        const bool any = row.total.count > 0;
        out << "| " << row.warmup << " | " << toString(row.status) << " | " << row.total.count
            << " | " << (any ? fixedDecimals(row.total.mean) : "–") << " | "
            << (hasSpread(row.total) ? fixedDecimals(row.total.std) : "–") << " | "
            << (any ? fixedDecimals(row.total.median) : "–") << " | " << cell(row.firstMs) << " | "
            << cell(row.secondMs) << " | "
            << (row.firstMs && any && row.total.median > 0
                    ? fixedDecimals(*row.firstMs / row.total.median) + "×"
                    : "–")
            << " |\n";
    }
    return out.str();
}

std::string formatWarmupStudyCsv(const std::vector<WarmupStudyRow>& rows) {
    std::ostringstream out;
    out << "warmup,status,measured_steps,mean_ms,std_ms,median_ms,min_ms,max_ms,first_ms,"
           "second_ms,pid,run_file,message\n";
    for (const auto& row : rows) {
        const bool any = row.total.count > 0;
        out << row.warmup << ',' << toString(row.status) << ',' << row.total.count << ','
            << (any ? fixedDecimals(row.total.mean, 4) : "") << ','
            << (hasSpread(row.total) ? fixedDecimals(row.total.std, 4) : "") << ','
            << (any ? fixedDecimals(row.total.median, 4) : "") << ','
            << (any ? fixedDecimals(row.total.min, 4) : "") << ','
            << (any ? fixedDecimals(row.total.max, 4) : "") << ',' << csvCell(row.firstMs) << ','
            << csvCell(row.secondMs) << ',' << row.processId << ',' << csvField(row.runFile) << ','
            << csvField(row.message) << '\n';
    }
    return out.str();
}

// ---- precision -------------------------------------------------------------

std::vector<PrecisionStudyRow> runPrecisionStudy(SweepSpec sweep, const SweepControl& control) {
    if (sweep.precisions.empty()) {
        sweep.precisions = {Precision::Fp32, Precision::Bf16, Precision::Fp16};
    }
    const std::vector<RunResult> results = runSweep(sweep, control);
    const std::vector<PrecisionStudyRow> rows =
        precisionStudyRows(results, sweepFiles(sweep, results));
    writeStudyTables(sweep.outDir, formatPrecisionStudyMarkdown(rows),
                     formatPrecisionStudyCsv(rows));
    return rows;
}

std::vector<PrecisionStudyRow> precisionStudyRows(const std::vector<RunResult>& runs,
                                                  const std::vector<std::string>& runFiles) {
    // The fp32 point each row is compared with: the same config but for the precision.
    auto key = [](const RunConfig& c) {
        RunConfig other = c;
        other.precision = Precision::Fp32;
        return runConfigToJson(other);
    };
    std::map<std::string, const RunResult*> fp32;
    for (const auto& run : runs) {
        if (run.config.precision == Precision::Fp32 && run.status == RunStatus::Ok) {
            fp32[key(run.config)] = &run;
        }
    }
    auto peakOf = [](const RunResult& run) -> std::optional<int64_t> {
        if (run.memory.empty()) {
            return std::nullopt;
        }
        return summarizeMemory(run.memory, 0).peakBytes;
    };
    std::vector<PrecisionStudyRow> rows;
    for (size_t i = 0; i < runs.size(); ++i) {
        const RunResult& run = runs[i];
        PrecisionStudyRow row;
        row.model = run.config.model.name;
        row.context = run.config.contextLength;
        row.mode = run.config.mode;
        row.precision = run.config.precision;
        row.status = run.status;
        row.message = run.message;
        row.total = run.summary.total;
        row.peakBytes = peakOf(run);
        row.runFile = i < runFiles.size() ? runFiles[i] : std::string();
        const auto base = fp32.find(key(run.config));
        if (base != fp32.end() && run.status == RunStatus::Ok && row.total.count &&
            row.total.mean > 0) {
            row.speedup = base->second->summary.total.mean / row.total.mean;
            const auto basePeak = peakOf(*base->second);
            if (row.peakBytes && basePeak && *basePeak > 0) {
                row.memoryRatio = double(*row.peakBytes) / double(*basePeak);
            }
        }
        rows.push_back(row);
    }
    return rows;
}

std::string formatPrecisionStudyMarkdown(const std::vector<PrecisionStudyRow>& rows) {
    bool memory = false;
    for (const auto& row : rows) {
        memory = memory || row.peakBytes.has_value();
    }
    std::ostringstream out;
    out << "| model | ctx | mode | precision | status | mean ms | std ms | speed-up vs fp32 |"
        << (memory ? " peak memory | memory vs fp32 |" : "") << "\n"
        << "|---|---:|---|---|---|---:|---:|---:|" << (memory ? "---:|---:|" : "") << "\n";
    for (const auto& row : rows) {
        out << "| " << row.model << " | " << row.context << " | " << toString(row.mode) << " | "
            << toString(row.precision) << " | " << toString(row.status) << " | "
            << cell(statsMean(row.total)) << " | "
            << (hasSpread(row.total) ? fixedDecimals(row.total.std) : "–") << " | "
            << (row.speedup ? fixedDecimals(*row.speedup) + "×" : "–") << " |";
        if (memory) {
            out << " " << (row.peakBytes ? formatBytes(double(*row.peakBytes)) : "–") << " | "
                << (row.memoryRatio ? fixedDecimals(*row.memoryRatio) + "×" : "–") << " |";
        }
        out << "\n";
    }
    return out.str();
}

std::string formatPrecisionStudyCsv(const std::vector<PrecisionStudyRow>& rows) {
    std::ostringstream out;
    out << "model,ctx,mode,precision,status,mean_ms,std_ms,median_ms,speedup_vs_fp32,peak_bytes,"
           "memory_vs_fp32,run_file,message\n";
    for (const auto& row : rows) {
        const bool any = row.total.count > 0;
        out << csvField(row.model) << ',' << row.context << ',' << toString(row.mode) << ','
            << toString(row.precision) << ',' << toString(row.status) << ','
            << (any ? fixedDecimals(row.total.mean, 4) : "") << ','
            << (hasSpread(row.total) ? fixedDecimals(row.total.std, 4) : "") << ','
            << (any ? fixedDecimals(row.total.median, 4) : "") << ',' << csvCell(row.speedup) << ','
            << (row.peakBytes ? std::to_string(*row.peakBytes) : "") << ','
            << csvCell(row.memoryRatio) << ',' << csvField(row.runFile) << ','
            << csvField(row.message) << '\n';
    }
    return out.str();
}

// ---- attention -------------------------------------------------------------

AttentionBenchSpec attentionStudySpec(DeviceKind device) {
    AttentionBenchSpec spec;
    spec.device = device;
    spec.backends = {"naive", "tiled", "sdpa", kCompiledAttention};
    spec.headDims = {16, 32, 64, 128};
    spec.seqLens = defaultSeqLens(device);
    spec.batch = 8;
    spec.heads = 1;
    spec.causal = true;
    spec.warmup = device == DeviceKind::Cuda ? 5 : 1;
    spec.repeats = device == DeviceKind::Cuda ? 100 : 5;
    return spec;
}

}  // namespace stepscope
