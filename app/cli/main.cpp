// stepscope-cli: the headless face of the StepScope engine. Results go to
// stdout, progress to stderr. Exit codes: 0 ok, 1 stdout could not be
// written, 2 bad input, 3 run failed.
#include <CLI/CLI.hpp>

#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>

#include <unistd.h>

#include "cli/commands.h"
#include "config/limits.h"
#include "engines/build_info.h"
#include "experiments/attention_benchmark.h"
#include "experiments/study.h"
#include "files/file_kinds.h"
#include "util/strings.h"

using namespace stepscope::cli;

namespace {

// `accumulate --count`: a billion additions take seconds; more only waits.
constexpr int64_t kMaxAccumulateCount = 1'000'000'000;
// `memory --top`: more rows than any snapshot has sites.
constexpr int64_t kMaxListedRows = 1'000'000;

// The attention grid's flags, shared by `attention` and `study attention`.
void addAttentionFlags(CLI::App& command, AttentionFlags& flags) {
    command
        .add_option("--backends", flags.backends,
                    "backends (comma list; default naive,tiled,sdpa, with --engine pytorch "
                    "naive,sdpa,flash-pytorch,flash-triton,compiled): " +
                        stepscope::joinNames(stepscope::attentionGridBackendNames()) +
                        " (compiled: torch.compile of naive attention; flash-pytorch, "
                        "flash-triton: our FlashAttention-2 in PyTorch ops and in Triton; all "
                        "three in the Python worker, checked before they are timed)")
        ->delimiter(',');
    command
        .add_option("--engine", flags.engine,
                    "what runs naive and sdpa: libtorch (this process) or pytorch (PyTorch "
                    "eager in the Python worker, which then runs every point)")
        ->check(CLI::IsMember({"libtorch", "pytorch"}))
        ->capture_default_str();
    command.add_option("--py-attention", flags.pyAttention,
                       "MODULE:NAME, your attention as one more backend (in the Python worker): a "
                       "torch.autograd.Function (NAME.apply(q, k, v, is_causal)) or a function "
                       "(q, k, v, is_causal) -> o, given (batch·heads, seq, d) tensors; checked "
                       "against float64 before it is timed");
    command.add_option("--py-path", flags.pyPath, "a directory to import --py-attention from");
    command.add_option("--py-attention-name", flags.pyAttentionName,
                       "your backend's name in the grid (default: NAME of MODULE:NAME)");
    command.add_option("--d", flags.headDims, "head dims (comma list)")
        ->delimiter(',')
        ->check(integerIn(stepscope::kDModelLimit))
        ->capture_default_str();
    command
        .add_option("--seq", flags.seqLens,
                    "sequence lengths (comma list; default 256..16384 on CUDA, "
                    "256..2048 on CPU)")
        ->delimiter(',')
        ->check(integerIn(stepscope::kContextLimit));
    command.add_option("--precision", flags.precisions, "fp32, bf16, fp16 (comma list)")
        ->delimiter(',')
        ->capture_default_str();
    command.add_option("--batch", flags.batch, "batch")
        ->check(integerIn(stepscope::kBatchLimit))
        ->capture_default_str();
    command.add_option("--heads", flags.heads, "heads")
        ->check(integerIn(stepscope::kHeadsLimit))
        ->capture_default_str();
    command.add_flag("--causal,!--no-causal", flags.causal, "causal (default) or not");
    command.add_option("--device", flags.device, "cpu or cuda")->capture_default_str();
    command.add_option("--warmup", flags.warmup, "warm-up repeats")
        ->check(integerIn(0, INT_MAX))
        ->capture_default_str();
    command.add_option("--repeats", flags.repeats, "measured repeats (medians)")
        ->check(integerIn(1, INT_MAX))
        ->capture_default_str();
    command.add_option("--tile-q", flags.queryTile, "tiled: query rows per tile (>= 16)")
        ->check(integerIn(stepscope::kContextLimit))
        ->capture_default_str();
    command.add_option("--tile-k", flags.keyTile, "tiled: key rows per tile (>= 16)")
        ->check(integerIn(stepscope::kContextLimit))
        ->capture_default_str();
    command.add_option(
        "--python", flags.python,
        "the Python worker's interpreter, with torch (default: $STEPSCOPE_PYTHON, then the "
        "one StepScope was built against)");
    command.add_option("--out", flags.outDir, "write attention.json and attention.csv here");
    command.add_option("--out-file", flags.outFile,
                       "write the points to this one attention file (attention.json's format)");
}

// Every command and what its flags are read into. The App keeps pointers to
// these members, so one Cli lives, unmoved, for the whole of main().
struct Cli {
    bool json = false;
    CLI::App* info = nullptr;
    ConfigFlags paramsFlags;
    bool all = false;
    CLI::App* params = nullptr;
    ConfigFlags runFlags;
    std::string outFile, configFile;
    bool events = false, trustCode = false;
    CLI::App* run = nullptr;
    ConfigFlags estimateFlags;
    CLI::App* estimate = nullptr;
    ConfigFlags sweepFlags;
    std::string outDir, slurmDir, collectDir;
    bool resume = false, isolate = false;
    SlurmFlags slurmFlags;
    CLI::App* sweep = nullptr;
    ConfigFlags evalFlags;
    std::string tokens;
    CLI::App* eval = nullptr;
    AttentionFlags attentionFlags;
    std::string attentionSlurmDir, attentionCollectDir;
    SlurmFlags attentionSlurmFlags;
    bool attentionResume = false;
    CLI::App* attention = nullptr;
    std::string studyName, studyOut;
    ConfigFlags warmupFlags, precisionFlags;
    bool precisionIsolate = false;
    AttentionFlags studyAttentionFlags;
    CLI::App *study = nullptr, *studyWarmup = nullptr, *studyPrecision = nullptr,
             *studyAttention = nullptr;
    std::string breakdownFile, breakdownPhase = "all", breakdownBy = "op";
    bool breakdownFlops = false;
    CLI::App* breakdown = nullptr;
    std::string exportFile, exportChromeTrace, exportMemviz;
    CLI::App* exportCommand = nullptr;
    std::string memoryFile, memoryAgainst;
    size_t memoryTop = 10;
    std::optional<int> memoryDevice;
    bool memorySaved = false;
    CLI::App* memory = nullptr;
    ConfigFlags dtypesFlags;
    CLI::App* dtypes = nullptr;
    int64_t accumulateCount = 1000;
    CLI::App* accumulate = nullptr;
    std::string showFile;
    std::string compareA, compareB;
    CLI::App* compare = nullptr;
    stepscope::CollectiveSpec collective;
    std::vector<std::string> collectiveSizes;
    std::string collectiveOut, collectiveSlurmDir, collectiveCollectDir;
    SlurmFlags collectiveSlurmFlags;
    bool collectiveResume = false;
    CLI::App* collectiveCommand = nullptr;
};

void addInfoParamsAndRun(CLI::App& app, Cli& c) {
    c.info = app.add_subcommand("info", "versions, devices and what is available");
    c.info->add_flag("--json", c.json, "print JSON");

    c.params = app.add_subcommand("params", "parameter counts of presets or custom dims");
    c.paramsFlags.addTo(*c.params, /*lists=*/true, kModelFlags);  // counts need the dims only
    c.params->add_flag("--all", c.all, "every preset");
    c.params->add_flag("--json", c.json, "print {preset: count}");

    c.run = app.add_subcommand("run", "one run: warm-up and measured steps");
    c.runFlags.addTo(*c.run, /*lists=*/false, kAllFlags | kDataFlags);
    c.run->add_option("--config", c.configFile,
                      "the config from a file instead of flags: a run file (its \"config\") or "
                      "a JSON object like a run file's \"config\"; no other config flag with it");
    c.run->add_flag("--trust-code", c.trustCode,
                    "run the Python code a --config file names (py_model, py_attention, their "
                    "py_path): without it such a file is refused, as trust_remote_code does; "
                    "flags you type need no say-so");
    c.run->add_option("--out", c.outFile, "write the run file here");
    c.run->add_flag("--json", c.json, "print the run file's JSON instead of the report");
    c.run->add_flag("--events", c.events,
                    "print progress and step events on stdout, one JSON object per line, instead "
                    "of the report (how sweep --isolate reads a point)");

    c.estimate = app.add_subcommand(
        "estimate", "predicted peak memory and categories of a run, without running it");
    c.estimateFlags.addTo(*c.estimate, /*lists=*/false, kModelFlags | kWorkloadFlags | kStepFlags);
    c.estimate->add_flag("--json", c.json, "print JSON");
}

void addSweep(CLI::App& app, Cli& c) {
    c.sweep = app.add_subcommand(
        "sweep",
        "every combination of the config flags' comma lists (models × contexts × modes × "
        "precisions × batch × attention × …), each a run");
    c.sweepFlags.addTo(*c.sweep, /*lists=*/true);
    auto* sweepOut =
        c.sweep->add_option("--out", c.outDir, "directory for the run files and sweep tables");
    c.sweep->add_flag("--resume", c.resume,
                      "keep points whose run file already says ok (with --slurm: the array has "
                      "only the others)");
    auto* sweepIsolate = c.sweep->add_flag(
        "--isolate", c.isolate,
        "run each point in a fresh stepscope-cli process: no first-step costs or allocator "
        "state inherited from the points before");
    auto* sweepSlurm = c.sweep->add_option(
        "--slurm", c.slurmDir,
        "instead of running here, write DIR to run the sweep as a Slurm job array, one point per "
        "task in its own process (DIR/stepscope.sbatch; --submit submits it)");
    sweepSlurm->excludes(sweepOut)->excludes(sweepIsolate);
    c.sweep
        ->add_option("--collect", c.collectDir,
                     "the tables of a --slurm DIR from the points finished so far; lists the "
                     "missing and failed ones; exit 0 when every point is ok, 3 otherwise")
        ->excludes(sweepOut)
        ->excludes(sweepSlurm);
    addSlurmFlags(*c.sweep, c.slurmFlags, sweepSlurm);
    addSlurmRunnerFlag(*c.sweep, c.slurmFlags, sweepSlurm);

    c.eval = app.add_subcommand("eval", "loss of a checkpoint on a torch.save'd token tensor");
    c.evalFlags.addTo(*c.eval, /*lists=*/false, kAllFlags & ~kEngineFlags);
    c.eval
        ->add_option("--weights", c.evalFlags.values["weights"],
                     "torch.save'd state dict or checkpoint, or the course's from_pretrained "
                     "folder (model_config.json + model.pt); without --model or dims the model's "
                     "shape comes from it")
        ->expected(1)
        ->required();
    c.eval->add_option("--tokens", c.tokens, "torch.save'd int64 tensor (batch × seq)")->required();
    c.eval->add_flag("--json", c.json, "print {\"loss\": …}");
}

void addAttention(CLI::App& app, Cli& c) {
    c.attention = app.add_subcommand(
        "attention", "attention backends × head dims × sequence lengths × precisions");
    addAttentionFlags(*c.attention, c.attentionFlags);
    auto* attentionJson = c.attention->add_flag("--json", c.json, "print the points as JSON");
    auto* attentionSlurm = c.attention->add_option(
        "--slurm", c.attentionSlurmDir,
        "instead of running here, write DIR to run the grid as a Slurm job array, one point "
        "(backend × d × seq × precision) per task (DIR/stepscope.sbatch; --submit submits it)");
    attentionSlurm->excludes("--out")->excludes("--out-file")->excludes(attentionJson);
    c.attention
        ->add_option("--collect", c.attentionCollectDir,
                     "attention.json and attention.csv of a --slurm DIR from the points "
                     "finished so far (as sweep --collect); exit 0 when every point is ok, 3 "
                     "otherwise")
        ->excludes(attentionSlurm)
        ->excludes("--out")
        ->excludes("--out-file");
    c.attention
        ->add_flag("--resume", c.attentionResume,
                   "the array has only the points without a result yet (without grid flags: "
                   "the grid DIR holds)")
        ->needs(attentionSlurm);
    addSlurmFlags(*c.attention, c.attentionSlurmFlags, attentionSlurm);
}

// study NAME: each study its own subcommand with its flags; a name that
// is not one lands in `studyName` and is answered with the list.
void addStudies(CLI::App& app, Cli& c) {
    c.study = app.add_subcommand("study", "named studies, the course's tables: " +
                                              stepscope::joinNames(stepscope::studyNames()));
    c.study->add_option("name", c.studyName,
                        "the study: " + stepscope::joinNames(stepscope::studyNames()));
    c.warmupFlags.setDefault("warmup", {"0", "1", "2", "5"});
    c.warmupFlags.setDefault("steps", {"10"});
    c.studyWarmup = c.study->add_subcommand(
        "warmup",
        "warm-up 0, 1, 2, 5 steps, each in a fresh process: mean, std, first and second "
        "measured step");
    c.warmupFlags.addTo(*c.studyWarmup, /*lists=*/false, kAllFlags, {"--warmup"});
    c.studyWarmup->add_option("--out", c.studyOut,
                              "keep the run files, study.csv and study.md here");
    c.precisionFlags.setDefault("precision", {"fp32", "bf16", "fp16"});
    c.studyPrecision = c.study->add_subcommand(
        "precision",
        "fp32 vs bf16 vs fp16 per model (comma lists as in sweep): mean step, speed-up over "
        "fp32, peak memory with --memory");
    c.precisionFlags.addTo(*c.studyPrecision, /*lists=*/true);
    c.studyPrecision->add_option("--out", c.studyOut,
                                 "keep the run files, study.csv and study.md here");
    c.studyPrecision->add_flag("--isolate", c.precisionIsolate, "each point in a fresh process");
    c.studyAttentionFlags.backends = {"naive", "tiled", "sdpa", stepscope::kCompiledAttention};
    c.studyAttention = c.study->add_subcommand(
        "attention",
        "the course's attention grid: naive, tiled, sdpa and compiled over head dims 16…128 and "
        "sequence lengths 256…16384 (CUDA; …2048 on the CPU), batch 8; flags as in attention");
    addAttentionFlags(*c.studyAttention, c.studyAttentionFlags);
    c.studyAttention->add_flag("--json", c.json, "print the points as JSON");
}

// The commands that read a recording: breakdown, export, memory.
void addRecordingCommands(CLI::App& app, Cli& c) {
    c.breakdown = app.add_subcommand(
        "breakdown",
        "where the time went, from a run made with --ops/--kernels, or HTA's analyses of a PyTorch "
        "profiler trace (.json, .json.gz) or a folder of rank traces");
    c.breakdown->add_option("file", c.breakdownFile, "run file, trace or folder of traces")
        ->required();
    c.breakdown->add_option("--phase", c.breakdownPhase, "forward, backward, optimizer or all")
        ->capture_default_str();
    c.breakdown->add_option("--by", c.breakdownBy, "kernel, op or category")->capture_default_str();
    c.breakdown->add_flag("--flops", c.breakdownFlops,
                          "forward FLOPs, time and achieved FLOP/s per operator group");
    c.breakdown->add_flag("--json", c.json, "print rows as JSON");

    c.exportCommand = app.add_subcommand("export", "a traced run in other tools' formats");
    c.exportCommand->add_option("file", c.exportFile, "run file")->required();
    c.exportCommand->add_option("--chrome-trace", c.exportChromeTrace,
                                "Chrome trace-event JSON of the traced step (Perfetto)");
    c.exportCommand->add_option("--memviz", c.exportMemviz,
                                "PyTorch memory_viz pickle of a run made with --memory");

    c.memory = app.add_subcommand(
        "memory",
        "peak, categories at peak and largest allocations of a run made with --memory, or of "
        "a PyTorch memory snapshot (torch.cuda.memory._dump_snapshot); --against: two of them "
        "side by side");
    c.memory->add_option("file", c.memoryFile, "run file or PyTorch memory snapshot")->required();
    c.memory->add_option("--against", c.memoryAgainst,
                         "a second recording (run file or snapshot): both summaries and "
                         "the difference by allocation site at each one's peak");
    c.memory->add_option("--device", c.memoryDevice,
                         "a snapshot's device (default: the one with the most events)");
    c.memory
        ->add_option("--top", c.memoryTop,
                     "how many allocations (sites, for snapshots and --against) to list")
        ->check(integerIn(0, kMaxListedRows))
        ->capture_default_str();
    c.memory->add_flag("--json", c.json, "print JSON");
    c.memory->add_flag("--saved", c.memorySaved,
                       "what each block keeps for backward: bytes, tensors, the operations "
                       "that made them, and the gradients the block makes");
}

// The precision labs and `show`.
void addLabsAndShow(CLI::App& app, Cli& c) {
    c.dtypesFlags.setDefault("precision", {"bf16"});
    c.dtypesFlags.setDefault("ctx", {"16"});
    c.dtypesFlags.setDefault("batch", {"2"});
    c.dtypes = app.add_subcommand(
        "dtypes", "what autocast produces: parameters, each module's output, loss, gradients");
    c.dtypesFlags.addTo(*c.dtypes, /*lists=*/false);
    c.dtypes->add_flag("--json", c.json, "print JSON");
    c.accumulate = app.add_subcommand("accumulate",
                                      "summing in fp32, fp16 and bf16: why accumulators are fp32");
    c.accumulate->add_option("--count", c.accumulateCount, "how many times 0.01 is added")
        ->check(integerIn(1, kMaxAccumulateCount))
        ->capture_default_str();
    c.accumulate->add_flag("--json", c.json, "print JSON");

    auto* show = app.add_subcommand("show", "the report of a saved run file");
    show->add_option("file", c.showFile, "run file")->required();
    show->add_flag("--json", c.json, "print the run file's JSON");

    c.compare = app.add_subcommand(
        "compare",
        "run B's step times against run A's, phase by phase: the ratio of medians, its "
        "interval, the test and the verdict (faster, slower, within noise, too few steps)");
    c.compare->add_option("a", c.compareA, "run file A, the reference")->required();
    c.compare->add_option("b", c.compareB, "run file B")->required();
    c.compare->add_flag("--json", c.json, "print JSON");
}

void addCollective(CLI::App& app, Cli& c) {
    c.collectiveCommand = app.add_subcommand(
        "collective",
        "time torch.distributed collectives over sizes and rank counts (torchrun's ranks): "
        "nccl-tests' algbw and busbw");
    CLI::App& command = *c.collectiveCommand;
    c.collective.ops = {"all_reduce"};
    c.collective.ranks = {2};
    c.collectiveSizes = {"1MB", "10MB", "100MB"};
    command
        .add_option("--op", c.collective.ops,
                    "all_reduce, all_gather, reduce_scatter, broadcast (a list)")
        ->delimiter(',')
        ->capture_default_str();
    command
        .add_option("--sizes", c.collectiveSizes,
                    "bytes, or K/M/G as powers of 1024 (nccl-tests'): all_gather's output, "
                    "reduce_scatter's input")
        ->delimiter(',')
        ->capture_default_str();
    command.add_option("--ranks", c.collective.ranks, "rank counts, one torchrun each (a list)")
        ->delimiter(',')
        ->capture_default_str();
    command
        .add_option("--nodes", c.collective.nodes,
                    "inside a Slurm allocation: each rank count over this many of its nodes, "
                    "srun starting a torchrun on each")
        ->capture_default_str();
    command.add_option("--backend", c.collective.backend, "gloo or nccl")->capture_default_str();
    command.add_option("--dtype", c.collective.dtype, "fp32, bf16 or fp16")->capture_default_str();
    command.add_option("--device", c.collective.device, "cpu or cuda")->capture_default_str();
    command.add_option("--warmup", c.collective.warmup, "untimed calls first (at least one runs)")
        ->capture_default_str();
    command.add_option("--repeats", c.collective.repeats, "timed calls per row")
        ->capture_default_str();
    command.add_option("--python", c.collective.python, "the Python whose torch runs the ranks");
    auto* out =
        command.add_option("--out", c.collectiveOut, "write the rows to FILE (the app opens it)");
    auto* json = command.add_flag("--json", c.json, "print {rows: [...]} instead of the table");
    auto* slurm = command.add_option(
        "--slurm", c.collectiveSlurmDir,
        "instead of running here, write DIR to run the benchmark as a Slurm job array, one rank "
        "count per task (DIR/stepscope.sbatch; --submit submits it)");
    slurm->excludes(out)->excludes(json);
    command
        .add_option("--collect", c.collectiveCollectDir,
                    "collective.json of a --slurm DIR from the rank counts finished so far (the "
                    "app opens it); exit 0 when every one is ok, 3 otherwise")
        ->excludes(slurm)
        ->excludes(out);
    command
        .add_flag("--resume", c.collectiveResume,
                  "the array has only the rank counts without a result yet (without benchmark "
                  "flags: the benchmark DIR holds)")
        ->needs(slurm);
    addSlurmFlags(command, c.collectiveSlurmFlags, slurm);
}

int dispatchRun(const Cli& c) {
    if (!c.configFile.empty()) {
        // The file is the whole config: a flag beside it would be ignored.
        for (const CLI::Option* option : c.run->get_options()) {
            const std::string name = option->get_name();
            if (option->count() > 0 && name != "--config" && name != "--out" && name != "--json" &&
                name != "--events" && name != "--trust-code") {
                std::cerr << "stepscope-cli: run: " << name
                          << " cannot be given with --config; the file holds the whole "
                             "config (allowed beside it: --out, --json, --events, "
                             "--trust-code)\n";
                return kExitBadInput;
            }
        }
    }
    return commandRun(c.runFlags, c.configFile, c.outFile, c.json, c.events, c.trustCode);
}

int dispatchSweep(const Cli& c) {
    if (!c.collectDir.empty()) {
        return commandCollect(*c.sweep, c.collectDir);
    }
    if (!c.slurmDir.empty()) {
        return commandSweepSlurm(*c.sweep, c.sweepFlags, c.slurmDir, c.slurmFlags, c.resume);
    }
    if (c.outDir.empty()) {
        std::cerr << "stepscope-cli: sweep: name where it goes: --out DIR (run here), --slurm "
                     "DIR (a Slurm job array) or --collect DIR (the tables of one)\n";
        return kExitBadInput;
    }
    return commandSweep(c.sweepFlags, c.outDir, c.resume, c.isolate);
}

int dispatchMemory(const Cli& c) {
    if (c.memorySaved && (!c.memoryAgainst.empty() || c.memoryDevice)) {
        std::cerr << "stepscope-cli: memory: --saved reads one run file; it takes neither "
                     "--against nor --device\n";
        return kExitBadInput;
    }
    if (c.memorySaved) {
        return commandMemorySaved(c.memoryFile, c.json);
    }
    if (c.memoryAgainst.empty() && !c.memoryDevice &&
        stepscope::detectFileKind(c.memoryFile) == stepscope::FileKind::RunFile) {
        return commandMemory(c.memoryFile, c.memoryTop, c.json);
    }
    return commandMemoryRecordings(c.memoryFile, c.memoryAgainst, c.memoryDevice, c.memoryTop,
                                   c.json);
}

int dispatchAttention(const Cli& c) {
    if (!c.attentionCollectDir.empty()) {
        return commandCollect(*c.attention, c.attentionCollectDir);
    }
    if (!c.attentionSlurmDir.empty()) {
        return commandAttentionSlurm(*c.attention, c.attentionFlags, c.attentionSlurmDir,
                                     c.attentionSlurmFlags, c.attentionResume);
    }
    return commandAttention(c.attentionFlags, c.json);
}

// The commands that make runs.
std::optional<int> dispatchRuns(const Cli& c) {
    if (c.info->parsed()) {
        return commandInfo(c.json);
    }
    if (c.params->parsed()) {
        const bool dims = c.params->count("--d-model") + c.params->count("--d-ff") +
                              c.params->count("--layers") + c.params->count("--heads") >
                          0;
        return commandParams(c.paramsFlags, c.all || (c.params->count("--model") == 0 && !dims),
                             c.json);
    }
    if (c.run->parsed()) {
        return dispatchRun(c);
    }
    if (c.estimate->parsed()) {
        return commandEstimate(c.estimateFlags, c.json);
    }
    if (c.sweep->parsed()) {
        return dispatchSweep(c);
    }
    if (c.eval->parsed()) {
        return commandEval(c.evalFlags, c.evalFlags.text("weights"), c.tokens, c.json);
    }
    if (c.attention->parsed()) {
        return dispatchAttention(c);
    }
    if (c.studyWarmup->parsed()) {
        return commandStudyWarmup(c.warmupFlags, c.studyOut);
    }
    if (c.studyPrecision->parsed()) {
        return commandStudyPrecision(c.precisionFlags, c.studyOut, c.precisionIsolate);
    }
    if (c.studyAttention->parsed()) {
        return commandStudyAttention(c.studyAttentionFlags, *c.studyAttention, c.json);
    }
    if (c.study->parsed()) {
        return commandStudyUnknown(c.studyName);
    }
    return std::nullopt;
}

// The commands that read what runs and tools wrote.
int dispatchReaders(const Cli& c) {
    if (c.breakdown->parsed()) {
        const bool runFlagsGiven = c.breakdown->count("--phase") + c.breakdown->count("--by") +
                                       c.breakdown->count("--flops") >
                                   0;
        return commandBreakdown(c.breakdownFile, c.breakdownPhase, c.breakdownBy, c.breakdownFlops,
                                c.json, runFlagsGiven);
    }
    if (c.exportCommand->parsed()) {
        return commandExport(c.exportFile, c.exportChromeTrace, c.exportMemviz);
    }
    if (c.memory->parsed()) {
        return dispatchMemory(c);
    }
    if (c.dtypes->parsed()) {
        return commandDtypes(c.dtypesFlags, c.json);
    }
    if (c.accumulate->parsed()) {
        return commandAccumulate(c.accumulateCount, c.json);
    }
    if (c.compare->parsed()) {
        return commandCompare(c.compareA, c.compareB, c.json);
    }
    if (c.collectiveCommand->parsed()) {
        if (!c.collectiveCollectDir.empty()) {
            return commandCollect(*c.collectiveCommand, c.collectiveCollectDir);
        }
        if (!c.collectiveSlurmDir.empty()) {
            return commandCollectiveSlurm(*c.collectiveCommand, c.collective, c.collectiveSizes,
                                          c.collectiveSlurmDir, c.collectiveSlurmFlags,
                                          c.collectiveResume);
        }
        return commandCollective(c.collective, c.collectiveSizes, c.collectiveOut, c.json);
    }
    return commandShow(c.showFile, c.json);
}

// SIGINT and SIGTERM: a command whose loop checks cancelRequested() (a run,
// a sweep, a grid) stops between steps and writes what it measured; any
// other command, or a second signal, ends now, as without a handler.
void onStopSignal(int signal) {
    if (!cancelChecked().load() || cancelRequested().exchange(true)) {
        std::signal(signal, SIG_DFL);
        std::raise(signal);
    }
}

// What a command printed must have reached stdout: a full disk (or
// /dev/full) is a failure with its reason, exit 1, not an empty file and 0.
int checkedOutput(int code) {
    std::cout.flush();
    errno = 0;
    int reason = std::fflush(stdout) == 0 ? 0 : errno;
    const bool failed = reason != 0 || std::ferror(stdout) || !std::cout.good();
    if (!failed) {
        return code;
    }
    if (reason == 0) {
        // An earlier flush failed (writing to stderr flushes stdout first) and
        // its errno is gone: one more byte asks the descriptor why.
        errno = 0;
        if (::write(STDOUT_FILENO, "\n", 1) < 0) {
            reason = errno;
        }
    }
    std::fprintf(stderr, "stepscope-cli: cannot write the output to stdout: %s\n",
                 reason ? std::strerror(reason) : "a write failed");
    return code == kExitOk ? kExitOutputLost : code;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"StepScope: what a Transformer training step costs, measured on LibTorch",
                 "stepscope-cli"};
    app.require_subcommand(1);
    // The version, the LibTorch this binary loaded and CUDA (engines/build_info.h).
    app.set_version_flag("--version", [] { return stepscope::versionText("stepscope-cli"); });
    Cli cli;
    addInfoParamsAndRun(app, cli);
    addSweep(app, cli);
    addAttention(app, cli);
    addStudies(app, cli);
    addRecordingCommands(app, cli);
    addLabsAndShow(app, cli);
    addCollective(app, cli);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        const int code = app.exit(error);
        return code == 0 ? kExitOk : kExitBadInput;
    }
    // The docs' check (CTest doc_commands): each command they show must
    // still parse; nothing is run.
    if (std::getenv("STEPSCOPE_CLI_PARSE_ONLY") != nullptr) {
        return kExitOk;
    }

    std::signal(SIGINT, onStopSignal);
    // A sweep's isolated point is stopped with SIGTERM: stop as Ctrl-C does.
    std::signal(SIGTERM, onStopSignal);
    if (const auto code = dispatchRuns(cli)) {
        return checkedOutput(*code);
    }
    return checkedOutput(dispatchReaders(cli));
}
