// stepscope-cli sweep|attention|collective --slurm DIR [--submit] and --collect
// DIR: a sweep, an attention grid or the collective benchmark as a Slurm job
// array, one point (a rank count) per task, and
// its tables from whatever has finished. The work is in core/cluster/slurm_*.h.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <set>

#include "cli/commands.h"
#include "cli/guarded.h"
#include "cluster/slurm_array.h"
#include "cluster/slurm_attention.h"
#include "cluster/slurm_collective.h"
#include "cluster/slurm_submit.h"
#include "cluster/slurm_sweep.h"
#include "engines/isolated_run.h"
#include "results/attention_file.h"
#include "results/memory_report.h"
#include "results/report.h"
#include "util/strings.h"

namespace stepscope::cli {

namespace {

// A directory or option Slurm cannot use is bad input, as a bad config is.
template <typename Body>
int guardedSlurm(Body body) {
    return guarded([&] {
        try {
            return body();
        } catch (const SlurmError& error) {
            std::cerr << "stepscope-cli: " << error.what() << "\n";
            return kExitBadInput;
        }
    });
}

// Each unfinished point with why, and the end of its Slurm log.
void printUnfinished(const char* what, const std::vector<UnfinishedPoint>& points) {
    for (const auto& point : points) {
        std::fprintf(stderr, "  %s point %d %s: %s\n", what, point.index, point.name.c_str(),
                     point.why.c_str());
        if (!point.logTail.empty()) {
            std::string indented = point.logTail;
            for (size_t at = indented.find('\n'); at != std::string::npos;
                 at = indented.find('\n', at + 1)) {
                indented.insert(at + 1, "      ");
            }
            std::fprintf(stderr, "    %s\n", indented.c_str());
        }
    }
}

// Whether `command` was given a flag that describes the experiment, not
// where or how it goes.
bool givesExperimentFlags(const CLI::App& command) {
    static const std::set<std::string> placement = {
        "--slurm",         "--resume",        "--submit",     "--partition",
        "--gres",          "--time",          "--mem",        "--array-limit",
        "--cpus-per-task", "--gpus-per-node", "--sbatch-arg", "--runner"};
    const auto options = command.get_options();
    return std::any_of(options.begin(), options.end(), [](const CLI::Option* option) {
        return option->count() > 0 && !placement.count(option->get_name());
    });
}

// Which points of the array in `dir` have finished, read by its kind's collector.
SlurmProgress readProgress(const std::string& dir, const SlurmArray& array) {
    if (array.kind == kAttentionArrayKind) {
        return readSlurmAttention(dir, "--slurm");
    }
    if (array.kind == kCollectiveArrayKind) {
        return readSlurmCollective(dir, "--slurm");
    }
    return readSlurmSweep(dir, "--slurm");
}

// The array `dir` holds, as --resume writes it again: from the folder's own
// plan, never from the argument lists it stores (a tampered folder's).
SlurmArray replannedArray(const std::string& dir, const SlurmArray& held) {
    const std::string file = (std::filesystem::path(dir) / kSlurmArrayFile).string();
    try {
        if (held.kind == kAttentionArrayKind) {
            return replannedSlurmAttention(held, dir);
        }
        if (held.kind == kSweepArrayKind) {
            return replannedSlurmSweep(held, dir);
        }
        if (held.kind == kCollectiveArrayKind) {
            return replannedSlurmCollective(held, dir);
        }
        throw SlurmError("kind: '" + held.kind +
                         "' is not one StepScope writes; allowed: " + kSweepArrayKind + ", " +
                         kAttentionArrayKind + ", " + kCollectiveArrayKind);
    } catch (const SlurmError& error) {
        throw SlurmError("'" + file + "' cannot be resumed: " + error.what());
    }
}

// Writes `dir` for the experiment `make` gives (with `resume`, only its
// points not yet ok; and without experiment flags, the one `dir` holds),
// then submits it with --submit.
template <typename MakeArray>
int writeSlurmDirectory(const CLI::App& command, const std::string& dir, const SlurmFlags& slurm,
                        bool resume, MakeArray make) {
    const std::string name = command.get_name();
    const auto held = readSlurmArray(dir);
    const bool keepHeld = held && resume && !givesExperimentFlags(command);
    const SlurmArray array = keepHeld ? replannedArray(dir, *held) : make();
    if (keepHeld && !slurm.runner.empty() && toString(held->runner) != slurm.runner) {
        throw SlurmError("--runner: '" + dir + "' holds " + name + " points run by --runner " +
                         toString(held->runner) +
                         "; nothing was written. Resume with that runner, or write the " + name +
                         " with --runner " + slurm.runner + " into a new directory.");
    }
    checkSlurmOptions(slurm.options);
    checkSlurmDirectory(dir, array, "--slurm");
    const std::string quotedDir = shellQuote(dir);
    std::vector<int> tasks;
    if (resume && held) {
        tasks = readProgress(dir, array).unfinishedIndices();
        if (tasks.empty()) {
            std::fprintf(stderr,
                         "stepscope: every point of %s has finished; nothing to submit. "
                         "Tables: stepscope-cli %s --collect %s\n",
                         dir.c_str(), name.c_str(), quotedDir.c_str());
            return kExitOk;
        }
    } else {
        for (size_t i = 0; i < array.tasks.size(); ++i) {
            tasks.push_back(int(i));
        }
    }
    writeSlurmArray(dir, array, currentExecutablePath(), slurm.options, tasks, "--slurm");
    const std::string script = (std::filesystem::absolute(dir) / kSlurmScriptFile).string();
    std::fprintf(stderr, "stepscope: %zu of %zu points as array %s in %s\n", tasks.size(),
                 array.tasks.size(), slurmArrayRange(tasks, slurm.options.arrayLimit).c_str(),
                 script.c_str());
    if (!slurm.submit) {
        std::fprintf(stderr,
                     "stepscope: submit with sbatch %s; then stepscope-cli %s --collect %s\n",
                     shellQuote(script).c_str(), name.c_str(), quotedDir.c_str());
        std::cout << script << "\n";
        return kExitOk;
    }
    std::string jobId;
    try {
        jobId = submitSlurmJob(script);
    } catch (const SlurmError& error) {
        std::cerr << "stepscope-cli: " << error.what() << "\n";
        return kExitRunFailed;
    }
    std::fprintf(stderr,
                 "stepscope: submitted job %s; logs in %s/logs, tables with stepscope-cli %s "
                 "--collect %s\n",
                 jobId.c_str(), dir.c_str(), name.c_str(), quotedDir.c_str());
    std::cout << jobId << "\n";
    return kExitOk;
}

// How many points are ok, and the missing and failed ones with their logs;
// 0 when all are ok, 3 otherwise.
int reportProgress(const SlurmProgress& progress, const std::string& dir, const char* tables,
                   const std::string& kind) {
    std::fprintf(stderr, "stepscope: %zu of %zu points ok, tables in %s/%s\n", progress.finished(),
                 progress.total, dir.c_str(), tables);
    if (progress.complete()) {
        return kExitOk;
    }
    std::fprintf(stderr, "stepscope: %zu missing, %zu failed:\n", progress.missing.size(),
                 progress.failed.size());
    printUnfinished("missing", progress.missing);
    printUnfinished("failed", progress.failed);
    std::fprintf(stderr, "stepscope: run them again with %s --slurm %s --resume --submit\n",
                 kind.c_str(), shellQuote(dir).c_str());
    return kExitRunFailed;
}

}  // namespace

void addSlurmFlags(CLI::App& sweep, SlurmFlags& flags, CLI::Option* slurm) {
    SlurmOptions& options = flags.options;
    sweep.add_option("--partition", options.partition, "Slurm partition")->needs(slurm);
    sweep.add_option("--gres", options.gres, "generic resources per task, e.g. gpu:1")
        ->needs(slurm);
    sweep.add_option("--time", options.time, "time limit per task, e.g. 00:30:00")->needs(slurm);
    sweep.add_option("--cpus-per-task", options.cpusPerTask, "CPUs per task")->needs(slurm);
    sweep
        .add_option("--gpus-per-node", options.gpusPerNode,
                    "GPUs on each node of a task (with --nodes, a distributed point's nodes)")
        ->needs(slurm);
    sweep.add_option("--mem", options.mem, "memory per task, e.g. 16G")->needs(slurm);
    sweep
        .add_option("--array-limit", options.arrayLimit,
                    "at most this many tasks at once (the array's %N throttle)")
        ->needs(slurm);
    sweep
        .add_option("--sbatch-arg", options.extraArguments,
                    "one more #SBATCH option, as is (repeatable): --sbatch-arg=--account=course")
        ->needs(slurm)
        ->allow_extra_args(false);
    sweep.add_flag("--submit", flags.submit, "submit the array with sbatch and print its job id")
        ->needs(slurm);
}

void addSlurmRunnerFlag(CLI::App& sweep, SlurmFlags& flags, CLI::Option* slurm) {
    sweep
        .add_option("--runner", flags.runner,
                    "what runs each point: cli (stepscope-cli run, this build; the default) or "
                    "recorder (stepscope-record, the Python recorder: pip install ./python on "
                    "the cluster; --engine pytorch or pytorch-compile; $STEPSCOPE_RECORD, else "
                    "stepscope-record on PATH when the task runs)")
        ->needs(slurm);
}

int commandSweepSlurm(const CLI::App& sweep, const ConfigFlags& flags, const std::string& dir,
                      const SlurmFlags& slurm, bool resume) {
    return guardedSlurm([&] {
        const auto runner = parseSlurmRunner(slurm.runner.empty() ? "cli" : slurm.runner);
        if (!runner) {
            throw SlurmError("--runner: '" + slurm.runner +
                             "' is not allowed; allowed: " + joinNames(slurmRunnerNames()));
        }
        return writeSlurmDirectory(sweep, dir, slurm, resume, [&] {
            return sweepSlurmArray(flags.toSweepSpec(dir), *runner);
        });
    });
}

int commandAttentionSlurm(const CLI::App& attention, const AttentionFlags& flags,
                          const std::string& dir, const SlurmFlags& slurm, bool resume) {
    return guardedSlurm([&] {
        return writeSlurmDirectory(attention, dir, slurm, resume, [&] {
            return attentionSlurmArray(attentionSpecFromFlags(flags));
        });
    });
}

int commandCollectiveSlurm(const CLI::App& collective, const CollectiveSpec& spec,
                           const std::vector<std::string>& sizes, const std::string& dir,
                           const SlurmFlags& slurm, bool resume) {
    return guardedSlurm([&] {
        const auto parsed = withParsedSizes(spec, sizes);
        if (!parsed) {
            return kExitBadInput;
        }
        return writeSlurmDirectory(collective, dir, slurm, resume,
                                   [&] { return collectiveSlurmArray(*parsed); });
    });
}

int commandCollect(const CLI::App& command, const std::string& dir) {
    // The directory holds the whole experiment: a flag beside it would be ignored.
    for (const CLI::Option* option : command.get_options()) {
        if (option->count() > 0 && option->get_name() != "--collect") {
            std::cerr << "stepscope-cli: " << command.get_name() << ": " << option->get_name()
                      << " cannot be given with --collect; the directory holds the whole "
                         "experiment\n";
            return kExitBadInput;
        }
    }
    return guardedSlurm([&] {
        const auto held = readSlurmArray(dir);
        if (!held) {
            throw SlurmError("--collect: '" + dir + "' holds no " + kSlurmArrayFile +
                             "; make it with sweep --slurm DIR or attention --slurm DIR");
        }
        if (held->kind == kCollectiveArrayKind) {
            const CollectiveCollection collection = collectSlurmCollective(dir);
            std::cout << formatCollectiveTable(collection.file);
            return reportProgress(collection, dir, "collective.json", kCollectiveArrayKind);
        }
        if (held->kind == kAttentionArrayKind) {
            const AttentionCollection collection = collectSlurmAttention(dir);
            std::cout << formatAttentionTable(collection.points);
            return reportProgress(collection, dir, "attention.json and attention.csv",
                                  kAttentionArrayKind);
        }
        const SweepCollection collection = collectSlurmSweep(dir);
        std::cout << formatSweepMarkdown(collection.results, collection.varyingFields);
        const bool traced =
            std::any_of(collection.results.begin(), collection.results.end(),
                        [](const RunResult& result) { return result.config.traceMemory; });
        if (traced) {
            std::cout << "\n" << formatMemorySweepTable(collection.results);
        }
        return reportProgress(collection, dir, "sweep.csv and sweep.md", kSweepArrayKind);
    });
}

}  // namespace stepscope::cli
