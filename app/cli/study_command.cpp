// stepscope-cli study: the course's tables, one command each. Each study is
// a sweep (or the attention grid) with its own table; the work is in
// core/experiments/study.h.
#include <cstdio>
#include <iostream>
#include <optional>

#include "cli/commands.h"
#include "cli/guarded.h"
#include "cli/stderr_progress.h"
#include "engines/isolated_run.h"
#include "experiments/study.h"
#include "results/run_file.h"
#include "util/strings.h"
#include "util/temporary_directory.h"

namespace stepscope::cli {

namespace {

// Where a study writes: --out, or a directory that goes when the study ends.
struct StudyDirectory {
    explicit StudyDirectory(const std::string& outDir) {
        if (outDir.empty()) {
            temporary.emplace("stepscope-study");
            path = temporary->path().string();
        } else {
            path = outDir;
        }
    }
    std::optional<TemporaryDirectory> temporary;
    std::string path;
};

template <typename Row>
bool allOk(const std::vector<Row>& rows, size_t expected) {
    if (rows.size() != expected) {
        return false;
    }
    for (const auto& row : rows) {
        if (row.status != RunStatus::Ok) {
            return false;
        }
    }
    return true;
}

}  // namespace

int commandStudyWarmup(const ConfigFlags& flags, const std::string& outDir) {
    return guarded([&] {
        WarmupStudySpec spec;
        spec.base = flags.toRunConfig();
        spec.warmups = flags.integers("warmup");
        spec.cli = currentExecutablePath();
        const StudyDirectory directory(outDir);
        spec.outDir = directory.path;
        StderrProgress progress;
        progress.setAxes(warmupStudySweep(spec).axes);
        // Fresh processes through spec.cli: runWarmupStudy isolates every point.
        const SweepControl control = cliSweepControl(progress, false);
        std::fprintf(stderr,
                     "stepscope: warm-up study, %s, batch %lld × ctx %lld, %s, %s on %s, %d "
                     "measured steps; each point in a fresh process\n",
                     spec.base.model.name.c_str(), static_cast<long long>(spec.base.batchSize),
                     static_cast<long long>(spec.base.contextLength),
                     toString(spec.base.mode).c_str(), toString(spec.base.precision).c_str(),
                     toString(spec.base.device).c_str(), spec.base.measuredSteps);
        const std::vector<WarmupStudyRow> rows = runWarmupStudy(spec, control);
        std::cout << formatWarmupStudyMarkdown(rows);
        if (!outDir.empty()) {
            std::fprintf(stderr, "stepscope: run files, study.csv and study.md in %s\n",
                         outDir.c_str());
        }
        return allOk(rows, spec.warmups.size()) ? kExitOk : kExitRunFailed;
    });
}

int commandStudyPrecision(const ConfigFlags& flags, const std::string& outDir, bool isolate) {
    return guarded([&] {
        const StudyDirectory directory(outDir);
        SweepSpec spec = flags.toSweepSpec(directory.path);
        StderrProgress progress;
        progress.setAxes(spec.axes);
        const SweepControl control = cliSweepControl(progress, isolate);
        const size_t expected = expandSweep(spec).size();
        const std::vector<PrecisionStudyRow> rows = runPrecisionStudy(spec, control);
        std::cout << formatPrecisionStudyMarkdown(rows);
        if (!outDir.empty()) {
            std::fprintf(stderr, "stepscope: run files, study.csv and study.md in %s\n",
                         outDir.c_str());
        }
        return allOk(rows, expected) ? kExitOk : kExitRunFailed;
    });
}

int commandStudyAttention(const AttentionFlags& flags, const CLI::App& command, bool json) {
    return guarded([&] {
        const auto device = parseDeviceKind(flags.device);
        if (!device) {
            throw InvalidConfigError(std::vector<ConfigError>{
                {"device",
                 "'" + flags.device + "' is not allowed; allowed: " + joinNames(deviceNames())}});
        }
        // The course's grid; what the user gave replaces its part.
        AttentionBenchSpec spec = attentionStudySpec(*device);
        auto given = [&command](const char* flag) { return command.count(flag) > 0; };
        if (given("--backends")) {
            spec.backends = flags.backends;
        }
        if (given("--d")) {
            spec.headDims = flags.headDims;
        }
        if (given("--seq")) {
            spec.seqLens = flags.seqLens;
        }
        if (given("--precision")) {
            spec.precisions = parsePrecisionNames(flags.precisions);
        }
        if (given("--batch")) {
            spec.batch = flags.batch;
        }
        if (given("--heads")) {
            spec.heads = flags.heads;
        }
        if (given("--causal") || given("--no-causal")) {
            spec.causal = flags.causal;
        }
        if (given("--warmup")) {
            spec.warmup = flags.warmup;
        }
        if (given("--repeats")) {
            spec.repeats = flags.repeats;
        }
        if (given("--tile-q")) {
            spec.options.queryTile = flags.queryTile;
        }
        if (given("--tile-k")) {
            spec.options.keyTile = flags.keyTile;
        }
        if (given("--engine")) {
            const AttentionBenchSpec engine = attentionSpecFromFlags(flags);
            spec.engine = engine.engine;
            if (!given("--backends")) {
                spec.backends = defaultAttentionBackends(spec.engine);
            }
        }
        spec.pyAttention = flags.pyAttention;
        spec.pyPath = flags.pyPath;
        spec.pyAttentionName = flags.pyAttentionName;
        spec.python = flags.python;
        return runAttentionGrid(spec, flags.outDir, flags.outFile, json);
    });
}

int commandStudyUnknown(const std::string& name) {
    if (name.empty()) {
        std::cerr << "stepscope-cli: study: name a study; allowed: " << joinNames(studyNames())
                  << "\n";
    } else {
        std::cerr << "stepscope-cli: study: '" << name
                  << "' is not a study; allowed: " << joinNames(studyNames()) << "\n";
    }
    return kExitBadInput;
}

}  // namespace stepscope::cli
