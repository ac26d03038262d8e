#pragma once

#include <atomic>
#include <optional>
#include <string>

#include "cli/config_flags.h"
#include "cli/guarded.h"
#include "cli/stderr_progress.h"
#include "cluster/slurm_array.h"
#include "experiments/attention_benchmark.h"
#include "experiments/collective_benchmark.h"

namespace stepscope::cli {

// Set by SIGINT and SIGTERM: a run stops between steps and keeps what it measured.
std::atomic<bool>& cancelRequested();
// Whether this command has handed cancelRequested() to a loop that checks it;
// until then SIGINT and SIGTERM end the command at once (main.cpp).
std::atomic<bool>& cancelChecked();
// cancelRequested(), for a loop that checks it between steps: from now on a
// signal asks this command to stop, and a second one ends it.
const std::atomic<bool>* checkedCancel();

// A sweep's control for the CLI: progress on stderr, Ctrl-C or SIGTERM
// cancels, and with `isolate` each point in a fresh process of this program.
SweepControl cliSweepControl(StderrProgress& progress, bool isolate);

int commandInfo(bool json);
int commandParams(const ConfigFlags& flags, bool all, bool json);
// `configFile` (a run file, or a JSON object that is a run file's "config")
// replaces the flags when given. `events`: stdout carries the worker
// protocol's progress and step events, one JSON object per line, instead of
// the report (how a sweep's isolated point reports back). `trustCode`: the
// user's say-so to the code a config file names (codeNamedBy()); without it
// such a file is refused.
int commandRun(const ConfigFlags& flags, const std::string& configFile, const std::string& outFile,
               bool json, bool events, bool trustCode = false);
int commandEstimate(const ConfigFlags& flags, bool json);
// `isolate`: each point in a fresh `stepscope-cli run` process.
int commandSweep(const ConfigFlags& flags, const std::string& outDir, bool resume, bool isolate);
// sweep --slurm DIR [--submit], attention --slurm DIR [--submit] and
// --collect DIR of either (slurm_command.cpp).
struct SlurmFlags {
    SlurmOptions options;
    bool submit = false;
    std::string runner;  // sweep --runner: cli or recorder; empty when not given
};
// --partition, --gres, --time, --cpus-per-task, --gpus-per-node, --mem, --array-limit,
// --sbatch-arg and --submit, each needing `slurm` (--slurm DIR).
void addSlurmFlags(CLI::App& sweep, SlurmFlags& flags, CLI::Option* slurm);
// sweep's --runner (what runs each point of the array), needing `slurm`.
void addSlurmRunnerFlag(CLI::App& sweep, SlurmFlags& flags, CLI::Option* slurm);
// Writes DIR (one array task per point; with `resume`, only the points not
// yet ok, and without sweep flags the sweep DIR holds) and submits it with --submit.
int commandSweepSlurm(const CLI::App& sweep, const ConfigFlags& flags, const std::string& dir,
                      const SlurmFlags& slurm, bool resume);
// The tables of DIR (a sweep's or an attention grid's, as DIR says) from the
// points finished so far; 0 when every point is ok, 3 otherwise. No other
// flag of `command` may be given with it.
int commandCollect(const CLI::App& command, const std::string& dir);
int commandEval(const ConfigFlags& flags, const std::string& weights, const std::string& tokens,
                bool json);
int commandShow(const std::string& file, bool json);
// collective: `spec` with `sizes` as written ("1MB"), parsed here; progress on
// stderr, the table (or the file's JSON) on stdout, the file at `outFile`
// (collective_command.cpp). Exit 2 for a bad flag, 3 where the ranks failed
// (the rows measured are still shown and written).
int commandCollective(const CollectiveSpec& spec, const std::vector<std::string>& sizes,
                      const std::string& outFile, bool json);
// compare A B [--json]: B's step times against A's, phase by phase: the
// ratio of medians, its interval, the test and the verdict (compare_command.cpp).
int commandCompare(const std::string& a, const std::string& b, bool json);
// memory FILE for a PyTorch memory snapshot (the busiest device unless
// `device`), and memory A --against B for any two recordings (run files with
// a memory trace, snapshots): summaries and the difference by site
// (recording_command.cpp). Exit 2 for a file neither reads, or one that asks
// for code to run.
int commandMemoryRecordings(const std::string& file, const std::string& against,
                            std::optional<int> device, size_t top, bool json);

struct AttentionFlags {
    std::vector<std::string> backends;  // empty: the engine's default (defaultAttentionBackends)
    std::string engine = "libtorch";
    std::string pyAttention, pyPath, pyAttentionName;
    std::vector<int64_t> headDims{16, 32, 64, 128};
    std::vector<int64_t> seqLens;  // empty: the device's default grid
    std::vector<std::string> precisions{"fp32"};
    int64_t batch = 8;
    int64_t heads = 1;
    bool causal = true;
    std::string device = "cpu";
    int warmup = 1;
    int repeats = 5;
    int64_t queryTile = 128;
    int64_t keyTile = 128;
    std::string python;
    std::string outDir;
    std::string outFile;  // one attention file, as attention.json (how an array task writes)
};
// Throws InvalidConfigError naming a bad device or precision.
AttentionBenchSpec attentionSpecFromFlags(const AttentionFlags& flags);
int commandAttention(const AttentionFlags& flags, bool json);
// The grid of `spec`, reported as `attention` does; `outDir` and `outFile` may be empty.
int runAttentionGrid(const AttentionBenchSpec& spec, const std::string& outDir,
                     const std::string& outFile, bool json);
// Writes DIR to run the grid as a Slurm array, one point per task, as
// commandSweepSlurm does a sweep.
int commandAttentionSlurm(const CLI::App& attention, const AttentionFlags& flags,
                          const std::string& dir, const SlurmFlags& slurm, bool resume);
// collective --slurm DIR: the benchmark as a Slurm job array, a rank count a task.
int commandCollectiveSlurm(const CLI::App& collective, const CollectiveSpec& spec,
                           const std::vector<std::string>& sizes, const std::string& dir,
                           const SlurmFlags& slurm, bool resume);
// The collective benchmark's table: one line a row, nccl-tests' columns and
// their definitions under it.
std::string formatCollectiveTable(const CollectiveFile& file);
// `spec` with the --sizes texts in bytes; nullopt (and the message on stderr) for a bad one.
std::optional<CollectiveSpec> withParsedSizes(const CollectiveSpec& spec,
                                              const std::vector<std::string>& sizes);

// study warmup | precision | attention (study_command.cpp)
int commandStudyWarmup(const ConfigFlags& flags, const std::string& outDir);
int commandStudyPrecision(const ConfigFlags& flags, const std::string& outDir, bool isolate);
// The course's grid (attentionStudySpec) with the flags `command` was given.
int commandStudyAttention(const AttentionFlags& flags, const CLI::App& command, bool json);
// `study` without a study, or with one that does not exist.
int commandStudyUnknown(const std::string& name);
// breakdown FILE: a run file's rows, or a profiler trace's (or a folder of
// rank traces') HTA analyses; `runFlagsGiven`: --phase, --by or --flops was given.
int commandBreakdown(const std::string& file, const std::string& phase, const std::string& by,
                     bool flops, bool json, bool runFlagsGiven);
// The trace half (trace_command.cpp); nothing when `path` is a run file.
std::optional<int> commandTraceBreakdown(const std::string& path, bool runFlagsGiven, bool json);
// export FILE --chrome-trace OUT.json --memviz OUT.pickle
int commandExport(const std::string& file, const std::string& chromeTrace,
                  const std::string& memviz);
// memory FILE [--json]: peaks, categories at peak, top allocations
int commandMemory(const std::string& file, size_t top, bool json);
// memory FILE --saved [--json]: what each block keeps for backward (saved_command.cpp)
int commandMemorySaved(const std::string& file, bool json);
int commandDtypes(const ConfigFlags& flags, bool json);
int commandAccumulate(int64_t count, bool json);

}  // namespace stepscope::cli
