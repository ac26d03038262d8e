#include "results/report.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "config/config_field.h"
#include "results/rank_figures.h"
#include "util/strings.h"

namespace stepscope {

namespace {

std::string scientific(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1e", value);
    return text;
}

// A spread needs two steps: one step's std and CV are "–", not 0.
std::string spreadText(const Stats& stats, double value, int decimals = 2) {
    return hasSpread(stats) ? fixedDecimals(value, decimals) : "–";
}

// Right-aligned in `width` columns, counting characters, not bytes ("–" is three).
std::string padLeft(const std::string& text, size_t width) {
    size_t chars = 0;
    for (const unsigned char c : text) {
        chars += (c & 0xC0) != 0x80;
    }
    return std::string(width > chars ? width - chars : 0, ' ') + text;
}

std::string meanStd(const std::optional<Stats>& stats) {
    return stats ? fixedDecimals(stats->mean) + " ± " + spreadText(*stats, stats->std) : "–";
}

std::string scaled(double value, const char* unit) {
    const char* prefixes[] = {"", "k", "M", "G", "T", "P"};
    int i = 0;
    while (value >= 1000.0 && i < 5) {
        value /= 1000.0;
        ++i;
    }
    return fixedDecimals(value) + " " + prefixes[i] + unit;
}

std::string modelLabel(const RunConfig& config) {
    const ModelDims& m = config.model;
    return m.name + " (d_model " + std::to_string(m.dModel) + ", d_ff " + std::to_string(m.dFf) +
           ", " + std::to_string(m.layers) + " layers, " + std::to_string(m.heads) +
           " heads, vocab " + std::to_string(m.vocabSize) + ")";
}

// What ran the steps, with its version: "LibTorch 2.11.0", "PyTorch 2.11.0
// eager (/venv/bin/python)", "torch.compile reduce-overhead, PyTorch 2.11.0 (…)".
// The backend, or the user's attention by its MODULE:NAME.
std::string attentionLabel(const RunConfig& config) {
    return config.pyAttention.empty() ? config.attention : config.pyAttention + " (your own)";
}

std::string engineLabel(const RunResult& r) {
    const RunConfig& c = r.config;
    const EnvironmentInfo& env = r.environment;
    if (c.engine == Engine::LibTorch) {
        return "LibTorch " + env.libtorchVersion;
    }
    const std::string torch =
        env.pythonTorchVersion.empty() ? "PyTorch" : "PyTorch " + env.pythonTorchVersion;
    std::string label = c.engine == Engine::PyTorchCompile
                            ? "torch.compile " + c.compileMode + ", " + torch
                            : torch + " eager";
    if (!env.python.empty()) {
        label += " (" + env.python + ")";
    }
    if (!c.pyModel.empty()) {
        label += ", model " + c.pyModel;
    }
    return label;
}

std::string csvNumber(const Stats* stats, double Stats::*field) {
    return stats ? fixedDecimals(stats->*field, 4) : "";
}

const Stats* orNull(const std::optional<Stats>& stats) {
    return stats ? &*stats : nullptr;
}

// The summary's phases in display order; total always, the others where run.
std::vector<std::pair<const char*, std::optional<Stats>>> phaseRows(const RunSummary& s) {
    return {{"total", s.total},
            {"forward", s.forward},
            {"backward", s.backward},
            {"optimizer", s.optimizer},
            {"comm wait", s.communicationWait}};
}

}  // namespace

// Each step by phase; a distributed step's wait for its communication
// between backward and the optimizer too.
void addStepsTable(std::ostringstream& out, const RunResult& r) {
    const bool waits = r.distributed.has_value();
    out << "\nstep  kind     total ms  forward  backward  optimizer" << (waits ? "  comm wait" : "")
        << "\n";
    for (const auto& s : r.steps) {
        char line[160];
        auto phase = [](const std::optional<double>& ms) { return ms ? *ms : 0.0; };
        std::snprintf(line, sizeof line, "%4d  %-7s %9.2f %8.2f %9.2f %10.2f", s.index,
                      s.warmup ? "warm-up" : "measure", s.totalMs, phase(s.forwardMs),
                      phase(s.backwardMs), phase(s.optimizerMs));
        out << line;
        if (waits) {
            std::snprintf(line, sizeof line, " %10.2f", phase(s.communicationWaitMs));
            out << line;
        }
        out << "\n";
    }
}

// A distributed run's ranks: each one's communication over the measured
// steps' spans, its wait on the others, its peak; the straggler; the gate.
void addRanksReport(std::ostringstream& out, const RunResult& r) {
    const DistributedRun& run = *r.distributed;
    out << "\nranks      " << r.config.ranks << " (" << r.config.parallel << ", "
        << r.config.backend << "); the steps above are rank 0's\n";
    if (const std::string nodes = rankNodesText(run); !nodes.empty() && r.config.nodes > 1) {
        out << "nodes      " << r.config.nodes << ": " << nodes << "\n";
    }
    if (run.gate) {
        out << "gate       " << (run.gate->ok ? "passed" : "FAILED") << ": max relative error "
            << (run.gate->maxRelError ? scientific(*run.gate->maxRelError) : std::string("NaN"))
            << " (tolerance " << scientific(run.gate->tolerance) << ")\n";
    }
    out << "\nper measured step:\nrank  comm ms  exposed ms  overlap  collectives        bytes  "
           "wait ms  peak (whole run)\n";
    for (const RankRecord& rank : run.ranks) {
        const RankStepFigures f = perMeasuredStep(rank);
        char line[200];
        std::snprintf(line, sizeof line, "%4d %8.2f %11.2f %7.1f%% %12.0f %12.0f %8.2f  ", f.rank,
                      f.communicationMs, f.exposedMs, f.overlapPercent, f.collectives, f.bytes,
                      f.waitMs);
        out << line << (f.peakBytes ? formatBytes(double(*f.peakBytes)) : "–") << "\n";
    }
    if (const std::string caveat = overlapCaveat(r.config); !caveat.empty()) {
        out << "note       " << caveat << "\n";
    }
    out << "matched    " << run.collectives.size()
        << " collectives across the ranks, over the measured steps";
    if (run.unmatched > 0) {
        out << ", " << run.unmatched << " not found on every rank";
    }
    out << "\n";
    if (run.straggler) {
        const double steps = std::max<double>(1, double(r.summary.total.count));
        out << "straggler  rank " << run.straggler->rank << ": the others waited "
            << fixedDecimals(run.straggler->othersWaitUs / 1e3 / steps, 2)
            << " ms a step more for it, on average\n";
    }
}

std::string formatRunReport(const RunResult& r) {
    const RunConfig& c = r.config;
    std::ostringstream out;
    out << "StepScope run: " << toString(r.status) << "\n";
    if (!r.message.empty()) {
        out << "  " << r.message << "\n";
    }
    out << "model      " << modelLabel(c) << ", " << r.parameterCount << " parameters\n"
        << "workload   batch " << c.batchSize << " × ctx " << c.contextLength << ", "
        << toString(c.mode) << ", " << toString(c.precision) << (c.tf32 ? " + TF32" : "")
        << ", attention " << attentionLabel(c) << "\n"
        << "steps      " << c.warmupSteps << " warm-up + " << c.measuredSteps << " measured, seed "
        << c.seed << "\n"
        << "device     " << toString(c.device) << ": " << r.environment.deviceName << " ("
        << r.environment.cpuThreads << " CPU threads)\n"
        << "engine     " << engineLabel(r) << "\n";
    // A received file names its sender's code: said before anyone runs it.
    if (const std::vector<NamedCode> code = codeNamedBy(c); !code.empty()) {
        out << "code       " << describeNamedCode(code)
            << " (Python it imports; run --config runs it only with --trust-code)\n";
    }
    if (r.cudaGraphKernels) {
        out << "cuda graph captured once; each measured step replays its " << *r.cudaGraphKernels
            << " kernels\n";
    }
    if (r.compileMs) {
        out << "compile    " << fixedDecimals(*r.compileMs / 1000.0)
            << " s for the first call, not "
            << "counted in the steps\n";
    }
    if (r.steps.empty()) {
        return out.str();
    }
    addStepsTable(out, r);
    const RunSummary& m = r.summary;
    if (m.total.count == 0) {
        return out.str();
    }
    out << "\nphase       mean ms    std   median      min      max     cv\n";
    auto row = [&out](const char* name, const std::optional<Stats>& stats) {
        if (!stats) {
            return;
        }
        char line[160];
        std::snprintf(line, sizeof line, "%-9s %9.2f ", name, stats->mean);
        out << line << padLeft(spreadText(*stats, stats->std), 6);
        std::snprintf(line, sizeof line, " %8.2f %8.2f %8.2f ", stats->median, stats->min,
                      stats->max);
        out << line << padLeft(hasSpread(*stats) ? fixedDecimals(100 * stats->cv, 1) + "%" : "–", 6)
            << "\n";
    };
    for (const auto& [name, stats] : phaseRows(m)) {
        row(name, stats);
    }
    out << "\nthroughput " << scaled(m.tokensPerSecond, "tokens/s") << ", "
        << scaled(m.flopsPerStep, "FLOP") << " per step, "
        << scaled(m.achievedFlopsPerSecond, "FLOP/s");
    if (m.mfu) {
        out << ", MFU " << fixedDecimals(100.0 * *m.mfu, 1) << "% of "
            << scaled(*m.devicePeakFlopsPerSecond, "FLOP/s");
    }
    out << "\n";
    if (r.distributed) {
        addRanksReport(out, r);
    }
    return out.str();
}

std::string formatStepsCsv(const RunResult& result) {
    std::ostringstream out;
    out << "index,warmup,total_ms,forward_ms,backward_ms,optimizer_ms,loss\n";
    auto cell = [](const std::optional<double>& value) {
        return value ? fixedDecimals(*value, 6) : std::string();
    };
    for (const auto& s : result.steps) {
        out << s.index << ',' << (s.warmup ? "true" : "false") << ',' << fixedDecimals(s.totalMs, 6)
            << ',' << cell(s.forwardMs) << ',' << cell(s.backwardMs) << ',' << cell(s.optimizerMs)
            << ',' << cell(s.loss) << '\n';
    }
    return out.str();
}

std::string formatRunMarkdown(const RunResult& r, const std::vector<std::string>& images) {
    const RunConfig& c = r.config;
    std::ostringstream out;
    out << "# StepScope run: " << c.model.name << ", ctx " << c.contextLength << ", "
        << toString(c.mode) << ", " << toString(c.precision) << "\n\n"
        << "Status: **" << toString(r.status) << "**" << (r.message.empty() ? "" : " — ")
        << r.message << "\n\n"
        << "## Configuration\n\n| field | value |\n|---|---|\n"
        << "| model | " << modelLabel(c) << " |\n"
        << "| parameters | " << r.parameterCount << " |\n"
        << "| batch × context | " << c.batchSize << " × " << c.contextLength << " |\n"
        << "| mode | " << toString(c.mode) << " |\n"
        << "| precision | " << toString(c.precision) << (c.tf32 ? " + TF32" : "") << " |\n"
        << "| attention | " << attentionLabel(c) << " |\n"
        << "| steps | " << c.warmupSteps << " warm-up + " << c.measuredSteps << " measured |\n"
        << (r.cudaGraphKernels ? "| CUDA graph | captured once; each measured step replays its " +
                                     std::to_string(*r.cudaGraphKernels) + " kernels |\n"
                               : std::string())
        << "| device | " << toString(c.device) << ": " << r.environment.deviceName << " |\n"
        << "| engine | " << engineLabel(r) << " |\n"
        << (r.compileMs ? "| compile | " + fixedDecimals(*r.compileMs / 1000.0) +
                              " s (not in the steps) |\n"
                        : std::string())
        << "| started | " << r.environment.startedAt << " |\n\n";
    const RunSummary& m = r.summary;
    if (m.total.count > 0) {
        out << "## Time per step (ms, measured steps)\n\n"
            << "| phase | mean | std | median | min | max | CV "
               "|\n|---|---:|---:|---:|---:|---:|---:|\n";
        auto row = [&out](const char* name, const std::optional<Stats>& stats) {
            if (stats) {
                out << "| " << name << " | " << fixedDecimals(stats->mean) << " | "
                    << spreadText(*stats, stats->std) << " | " << fixedDecimals(stats->median)
                    << " | " << fixedDecimals(stats->min) << " | " << fixedDecimals(stats->max)
                    << " | " << (hasSpread(*stats) ? fixedDecimals(100 * stats->cv, 1) + "%" : "–")
                    << " |\n";
            }
        };
        for (const auto& [name, stats] : phaseRows(m)) {
            row(name, stats);
        }
        out << "\nThroughput: " << scaled(m.tokensPerSecond, "tokens/s") << ", "
            << scaled(m.achievedFlopsPerSecond, "FLOP/s") << " achieved ("
            << scaled(m.flopsPerStep, "FLOP") << " per step)";
        if (m.mfu) {
            out << ", MFU " << fixedDecimals(100 * *m.mfu, 1) << "%";
        }
        out << ".\n";
    }
    for (const auto& image : images) {
        out << "\n![" << image << "](" << image << ")\n";
    }
    return out.str();
}

namespace {

// A distributed run's most exposed rank, per measured step; "–" elsewhere.
std::string mostExposedText(const RunResult& r) {
    if (!r.distributed || r.distributed->ranks.empty() || !r.summary.total.count) {
        return "–";
    }
    double most = 0;
    for (const RankRecord& rank : r.distributed->ranks) {
        most = std::max(most, perMeasuredStep(rank).exposedMs);
    }
    return fixedDecimals(most, 2);
}

}  // namespace

std::string formatSweepMarkdown(const std::vector<RunResult>& results,
                                const std::vector<std::string>& axisFields) {
    // The fields beyond the fixed columns that this table shows, in the
    // config's order: the sweep's axes and whatever differs between the runs.
    std::vector<std::string> extra;
    for (const auto& field : configFieldNames()) {
        if (field == "model" || field == "ctx" || field == "mode" || field == "precision" ||
            field == "engine") {
            continue;
        }
        const bool axis =
            std::find(axisFields.begin(), axisFields.end(), field) != axisFields.end();
        const bool differs = std::any_of(results.begin(), results.end(), [&](const RunResult& r) {
            return configFieldText(r.config, field) !=
                   configFieldText(results.front().config, field);
        });
        if (axis || differs) {
            extra.push_back(field);
        }
    }
    std::ostringstream out;
    out << "| model | ctx | mode | precision |";
    for (const auto& field : extra) {
        std::string header = field;
        std::replace(header.begin(), header.end(), '-', ' ');
        out << " " << header << " |";
    }
    // Distributed points: their wait for communication, and the most
    // exposed communication of any rank (the one the step waits on).
    const bool ranks = std::any_of(results.begin(), results.end(),
                                   [](const RunResult& r) { return r.distributed.has_value(); });
    out << " engine | status | forward ms | backward ms | optimizer ms |"
        << (ranks ? " comm wait ms | exposed ms |" : "") << " total ms | tokens/s | compile s |\n"
        << "|---|---:|---|---|";
    for (const auto& field : extra) {
        const bool numeric = field == "batch" || field == "warmup" || field == "steps" ||
                             field == "seed" || field == "threads" || field == "ranks";
        out << (numeric ? "---:|" : "---|");
    }
    out << "---|---|---:|---:|---:|" << (ranks ? "---:|---:|" : "") << "---:|---:|---:|\n";
    for (const auto& r : results) {
        const RunSummary& s = r.summary;
        out << "| " << r.config.model.name << " | " << r.config.contextLength << " | "
            << toString(r.config.mode) << " | " << toString(r.config.precision) << " | ";
        for (const auto& field : extra) {
            out << configFieldText(r.config, field) << " | ";
        }
        out << toString(r.config.engine) << " | " << toString(r.status) << " | "
            << meanStd(s.forward) << " | " << meanStd(s.backward) << " | " << meanStd(s.optimizer)
            << " | ";
        if (ranks) {
            out << meanStd(s.communicationWait) << " | " << mostExposedText(r) << " | ";
        }
        out << (s.total.count ? meanStd(s.total) : std::string("–")) << " | "
            << (s.total.count ? fixedDecimals(s.tokensPerSecond, 0) : std::string("–")) << " | "
            << (r.compileMs ? fixedDecimals(*r.compileMs / 1000.0, 1) : std::string("–")) << " |\n";
    }
    return out.str();
}

std::string formatSweepCsv(const std::vector<RunResult>& results,
                           const std::vector<std::string>& runFiles) {
    std::ostringstream out;
    out << "model,parameters,ctx,batch,mode,precision,device,attention,engine,compile_mode,tf32,"
           "warmup,steps,seed,threads,isolated,pid,status,total_mean_ms,total_std_ms,"
           "forward_mean_ms,forward_std_ms,backward_mean_ms,backward_std_ms,optimizer_mean_ms,"
           "optimizer_std_ms,tokens_per_second,compile_ms,"
           "run_file,message\n";
    for (size_t i = 0; i < results.size(); ++i) {
        const RunResult& r = results[i];
        const RunSummary& s = r.summary;
        const Stats* total = s.total.count ? &s.total : nullptr;
        out << csvField(r.config.model.name) << ',' << r.parameterCount << ','
            << r.config.contextLength << ',' << r.config.batchSize << ',' << toString(r.config.mode)
            << ',' << toString(r.config.precision) << ',' << toString(r.config.device) << ','
            << csvField(r.config.attention) << ',' << toString(r.config.engine) << ','
            << csvField(r.config.compileMode) << ',' << (r.config.tf32 ? "on" : "off") << ','
            << r.config.warmupSteps << ',' << r.config.measuredSteps << ',' << r.config.seed << ','
            << r.config.threads << ',' << (r.environment.isolated ? "true" : "false") << ','
            << r.environment.processId << ',' << toString(r.status) << ','
            << csvNumber(total, &Stats::mean) << ',' << csvNumber(total, &Stats::std) << ','
            << csvNumber(orNull(s.forward), &Stats::mean) << ','
            << csvNumber(orNull(s.forward), &Stats::std) << ','
            << csvNumber(orNull(s.backward), &Stats::mean) << ','
            << csvNumber(orNull(s.backward), &Stats::std) << ','
            << csvNumber(orNull(s.optimizer), &Stats::mean) << ','
            << csvNumber(orNull(s.optimizer), &Stats::std) << ','
            << (total ? fixedDecimals(s.tokensPerSecond, 1) : std::string()) << ','
            << (r.compileMs ? fixedDecimals(*r.compileMs, 1) : std::string()) << ','
            << csvField(i < runFiles.size() ? runFiles[i] : std::string()) << ','
            << csvField(r.message) << '\n';
    }
    return out.str();
}

}  // namespace stepscope
