// stepscope-cli: the headless face of the StepScope engine. Results go to
// stdout, progress to stderr. Exit codes: 0 ok, 2 bad input, 3 run failed.
#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdlib>

#include "cli/commands.h"
#include "engines/build_info.h"
#include "experiments/attention_benchmark.h"
#include "experiments/study.h"
#include "files/file_kinds.h"
#include "util/strings.h"

using namespace stepscope::cli;

namespace {

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
        ->capture_default_str();
    command
        .add_option("--seq", flags.seqLens,
                    "sequence lengths (comma list; default 256..16384 on CUDA, "
                    "256..2048 on CPU)")
        ->delimiter(',');
    command.add_option("--precision", flags.precisions, "fp32, bf16, fp16 (comma list)")
        ->delimiter(',')
        ->capture_default_str();
    command.add_option("--batch", flags.batch, "batch")->capture_default_str();
    command.add_option("--heads", flags.heads, "heads")->capture_default_str();
    command.add_flag("--causal,!--no-causal", flags.causal, "causal (default) or not");
    command.add_option("--device", flags.device, "cpu or cuda")->capture_default_str();
    command.add_option("--warmup", flags.warmup, "warm-up repeats")->capture_default_str();
    command.add_option("--repeats", flags.repeats, "measured repeats (medians)")
        ->capture_default_str();
    command.add_option("--tile-q", flags.queryTile, "tiled: query rows per tile (>= 16)")
        ->capture_default_str();
    command.add_option("--tile-k", flags.keyTile, "tiled: key rows per tile (>= 16)")
        ->capture_default_str();
    command.add_option(
        "--python", flags.python,
        "the Python worker's interpreter, with torch (default: $STEPSCOPE_PYTHON, then the "
        "one StepScope was built against)");
    command.add_option("--out", flags.outDir, "write attention.json and attention.csv here");
    command.add_option("--out-file", flags.outFile,
                       "write the points to this one attention file (attention.json's format)");
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"StepScope: what a Transformer training step costs, measured on LibTorch",
                 "stepscope-cli"};
    app.require_subcommand(1);
    // The version, the LibTorch this binary loaded and CUDA (engines/build_info.h).
    app.set_version_flag("--version", [] { return stepscope::versionText("stepscope-cli"); });

    bool json = false;
    auto* info = app.add_subcommand("info", "versions, devices and what is available");
    info->add_flag("--json", json, "print JSON");

    ConfigFlags paramsFlags;
    bool all = false;
    auto* params = app.add_subcommand("params", "parameter counts of presets or custom dims");
    paramsFlags.addTo(*params, /*lists=*/true, kModelFlags);  // counts need the dims only
    params->add_flag("--all", all, "every preset");
    params->add_flag("--json", json, "print {preset: count}");

    ConfigFlags runFlags;
    std::string outFile, configFile;
    bool events = false;
    auto* run = app.add_subcommand("run", "one run: warm-up and measured steps");
    runFlags.addTo(*run, /*lists=*/false, kAllFlags | kDataFlags);
    run->add_option("--config", configFile,
                    "the config from a file instead of flags: a run file (its \"config\") or "
                    "a JSON object like a run file's \"config\"; no other config flag with it");
    run->add_option("--out", outFile, "write the run file here");
    run->add_flag("--json", json, "print the run file's JSON instead of the report");
    run->add_flag("--events", events,
                  "print progress and step events on stdout, one JSON object per line, instead "
                  "of the report (how sweep --isolate reads a point)");

    ConfigFlags estimateFlags;
    auto* estimate = app.add_subcommand(
        "estimate", "predicted peak memory and categories of a run, without running it");
    estimateFlags.addTo(*estimate, /*lists=*/false, kModelFlags | kWorkloadFlags | kStepFlags);
    estimate->add_flag("--json", json, "print JSON");

    ConfigFlags sweepFlags;
    std::string outDir;
    bool resume = false, isolate = false;
    auto* sweep = app.add_subcommand(
        "sweep",
        "every combination of the config flags' comma lists (models × contexts × modes × "
        "precisions × batch × attention × …), each a run");
    sweepFlags.addTo(*sweep, /*lists=*/true);
    auto* sweepOut =
        sweep->add_option("--out", outDir, "directory for the run files and sweep tables");
    sweep->add_flag("--resume", resume,
                    "keep points whose run file already says ok (with --slurm: the array has "
                    "only the others)");
    auto* sweepIsolate = sweep->add_flag(
        "--isolate", isolate,
        "run each point in a fresh stepscope-cli process: no first-step costs or allocator "
        "state inherited from the points before");
    std::string slurmDir, collectDir;
    SlurmFlags slurmFlags;
    auto* sweepSlurm = sweep->add_option(
        "--slurm", slurmDir,
        "instead of running here, write DIR to run the sweep as a Slurm job array, one point per "
        "task in its own process (DIR/stepscope.sbatch; --submit submits it)");
    sweepSlurm->excludes(sweepOut)->excludes(sweepIsolate);
    sweep
        ->add_option("--collect", collectDir,
                     "the tables of a --slurm DIR from the points finished so far; lists the "
                     "missing and failed ones; exit 0 when every point is ok, 3 otherwise")
        ->excludes(sweepOut)
        ->excludes(sweepSlurm);
    addSlurmFlags(*sweep, slurmFlags, sweepSlurm);
    addSlurmRunnerFlag(*sweep, slurmFlags, sweepSlurm);

    ConfigFlags evalFlags;
    std::string tokens;
    auto* eval = app.add_subcommand("eval", "loss of a checkpoint on a torch.save'd token tensor");
    evalFlags.addTo(*eval, /*lists=*/false, kAllFlags & ~kEngineFlags);
    eval->add_option("--weights", evalFlags.weights,
                     "torch.save'd state dict or checkpoint, or the course's from_pretrained "
                     "folder (model_config.json + model.pt); without --model or dims the model's "
                     "shape comes from it")
        ->required();
    eval->add_option("--tokens", tokens, "torch.save'd int64 tensor (batch × seq)")->required();
    eval->add_flag("--json", json, "print {\"loss\": …}");

    AttentionFlags attentionFlags;
    auto* attention = app.add_subcommand(
        "attention", "attention backends × head dims × sequence lengths × precisions");
    addAttentionFlags(*attention, attentionFlags);
    auto* attentionJson = attention->add_flag("--json", json, "print the points as JSON");
    std::string attentionSlurmDir, attentionCollectDir;
    SlurmFlags attentionSlurmFlags;
    bool attentionResume = false;
    auto* attentionSlurm = attention->add_option(
        "--slurm", attentionSlurmDir,
        "instead of running here, write DIR to run the grid as a Slurm job array, one point "
        "(backend × d × seq × precision) per task (DIR/stepscope.sbatch; --submit submits it)");
    attentionSlurm->excludes("--out")->excludes("--out-file")->excludes(attentionJson);
    attention
        ->add_option("--collect", attentionCollectDir,
                     "attention.json and attention.csv of a --slurm DIR from the points "
                     "finished so far (as sweep --collect); exit 0 when every point is ok, 3 "
                     "otherwise")
        ->excludes(attentionSlurm)
        ->excludes("--out")
        ->excludes("--out-file");
    attention
        ->add_flag("--resume", attentionResume,
                   "the array has only the points without a result yet (without grid flags: "
                   "the grid DIR holds)")
        ->needs(attentionSlurm);
    addSlurmFlags(*attention, attentionSlurmFlags, attentionSlurm);

    // study NAME: each study its own subcommand with its flags; a name that
    // is not one lands in `studyName` and is answered with the list.
    std::string studyName, studyOut;
    auto* study = app.add_subcommand("study", "named studies, the course's tables: " +
                                                  stepscope::joinNames(stepscope::studyNames()));
    study->add_option("name", studyName,
                      "the study: " + stepscope::joinNames(stepscope::studyNames()));
    ConfigFlags warmupFlags;
    warmupFlags.warmups = {0, 1, 2, 5};
    warmupFlags.steps = {10};
    auto* studyWarmup = study->add_subcommand(
        "warmup",
        "warm-up 0, 1, 2, 5 steps, each in a fresh process: mean, std, first and second "
        "measured step");
    warmupFlags.addTo(*studyWarmup, /*lists=*/false, kAllFlags, {"--warmup"});
    studyWarmup->add_option("--out", studyOut, "keep the run files, study.csv and study.md here");
    ConfigFlags precisionFlags;
    precisionFlags.precisions = {"fp32", "bf16", "fp16"};
    bool precisionIsolate = false;
    auto* studyPrecision = study->add_subcommand(
        "precision",
        "fp32 vs bf16 vs fp16 per model (comma lists as in sweep): mean step, speed-up over "
        "fp32, peak memory with --memory");
    precisionFlags.addTo(*studyPrecision, /*lists=*/true);
    studyPrecision->add_option("--out", studyOut,
                               "keep the run files, study.csv and study.md here");
    studyPrecision->add_flag("--isolate", precisionIsolate, "each point in a fresh process");
    AttentionFlags studyAttentionFlags;
    studyAttentionFlags.backends = {"naive", "tiled", "sdpa", stepscope::kCompiledAttention};
    auto* studyAttention = study->add_subcommand(
        "attention",
        "the course's attention grid: naive, tiled, sdpa and compiled over head dims 16…128 and "
        "sequence lengths 256…16384 (CUDA; …2048 on the CPU), batch 8; flags as in attention");
    addAttentionFlags(*studyAttention, studyAttentionFlags);
    studyAttention->add_flag("--json", json, "print the points as JSON");

    std::string breakdownFile, breakdownPhase = "all", breakdownBy = "op";
    auto* breakdownCommand = app.add_subcommand(
        "breakdown",
        "where the time went, from a run made with --ops/--kernels, or HTA's analyses of a PyTorch "
        "profiler trace (.json, .json.gz) or a folder of rank traces");
    breakdownCommand->add_option("file", breakdownFile, "run file, trace or folder of traces")
        ->required();
    breakdownCommand->add_option("--phase", breakdownPhase, "forward, backward, optimizer or all")
        ->capture_default_str();
    breakdownCommand->add_option("--by", breakdownBy, "kernel, op or category")
        ->capture_default_str();
    bool breakdownFlops = false;
    breakdownCommand->add_flag("--flops", breakdownFlops,
                               "forward FLOPs, time and achieved FLOP/s per operator group");
    breakdownCommand->add_flag("--json", json, "print rows as JSON");

    std::string exportFile, exportChromeTrace, exportMemviz;
    auto* exportCommand = app.add_subcommand("export", "a traced run in other tools' formats");
    exportCommand->add_option("file", exportFile, "run file")->required();
    exportCommand->add_option("--chrome-trace", exportChromeTrace,
                              "Chrome trace-event JSON of the traced step (Perfetto)");
    exportCommand->add_option("--memviz", exportMemviz,
                              "PyTorch memory_viz pickle of a run made with --memory");

    std::string memoryFile;
    size_t memoryTop = 10;
    auto* memoryCommand = app.add_subcommand(
        "memory",
        "peak, categories at peak and largest allocations of a run made with --memory, or of "
        "a PyTorch memory snapshot (torch.cuda.memory._dump_snapshot); --against: two of them "
        "side by side");
    memoryCommand->add_option("file", memoryFile, "run file or PyTorch memory snapshot")
        ->required();
    std::string memoryAgainst;
    memoryCommand->add_option("--against", memoryAgainst,
                              "a second recording (run file or snapshot): both summaries and "
                              "the difference by allocation site at each one's peak");
    std::optional<int> memoryDevice;
    memoryCommand->add_option("--device", memoryDevice,
                              "a snapshot's device (default: the one with the most events)");
    memoryCommand
        ->add_option("--top", memoryTop,
                     "how many allocations (sites, for snapshots and --against) to list")
        ->capture_default_str();
    memoryCommand->add_flag("--json", json, "print JSON");
    bool memorySaved = false;
    memoryCommand->add_flag("--saved", memorySaved,
                            "what each block keeps for backward: bytes, tensors, the operations "
                            "that made them, and the gradients the block makes");

    ConfigFlags dtypesFlags;
    dtypesFlags.precisions = {"bf16"};
    dtypesFlags.contexts = {16};
    dtypesFlags.batches = {2};
    auto* dtypes = app.add_subcommand(
        "dtypes", "what autocast produces: parameters, each module's output, loss, gradients");
    dtypesFlags.addTo(*dtypes, /*lists=*/false);
    dtypes->add_flag("--json", json, "print JSON");
    auto* accumulate = app.add_subcommand(
        "accumulate", "summing in fp32, fp16 and bf16: why accumulators are fp32");
    int64_t accumulateCount = 1000;
    accumulate->add_option("--count", accumulateCount, "how many times 0.01 is added")
        ->capture_default_str();
    accumulate->add_flag("--json", json, "print JSON");

    std::string showFile;
    auto* show = app.add_subcommand("show", "the report of a saved run file");
    show->add_option("file", showFile, "run file")->required();
    show->add_flag("--json", json, "print the run file's JSON");

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

    std::signal(SIGINT, [](int) { cancelRequested().store(true); });
    // A sweep's isolated point is stopped with SIGTERM: stop as Ctrl-C does.
    std::signal(SIGTERM, [](int) { cancelRequested().store(true); });

    if (info->parsed()) {
        return commandInfo(json);
    }
    if (params->parsed()) {
        const bool dims = params->count("--d-model") + params->count("--d-ff") +
                              params->count("--layers") + params->count("--heads") >
                          0;
        return commandParams(paramsFlags, all || (params->count("--model") == 0 && !dims), json);
    }
    if (run->parsed()) {
        if (!configFile.empty()) {
            // The file is the whole config: a flag beside it would be ignored.
            for (const CLI::Option* option : run->get_options()) {
                const std::string name = option->get_name();
                if (option->count() > 0 && name != "--config" && name != "--out" &&
                    name != "--json" && name != "--events") {
                    std::cerr << "stepscope-cli: run: " << name
                              << " cannot be given with --config; the file holds the whole "
                                 "config (allowed beside it: --out, --json, --events)\n";
                    return kExitBadInput;
                }
            }
        }
        return commandRun(runFlags, configFile, outFile, json, events);
    }
    if (estimate->parsed()) {
        return commandEstimate(estimateFlags, json);
    }
    if (sweep->parsed()) {
        if (!collectDir.empty()) {
            return commandCollect(*sweep, collectDir);
        }
        if (!slurmDir.empty()) {
            return commandSweepSlurm(*sweep, sweepFlags, slurmDir, slurmFlags, resume);
        }
        if (outDir.empty()) {
            std::cerr << "stepscope-cli: sweep: name where it goes: --out DIR (run here), --slurm "
                         "DIR (a Slurm job array) or --collect DIR (the tables of one)\n";
            return kExitBadInput;
        }
        return commandSweep(sweepFlags, outDir, resume, isolate);
    }
    if (eval->parsed()) {
        return commandEval(evalFlags, evalFlags.weights, tokens, json);
    }
    if (breakdownCommand->parsed()) {
        const bool runFlagsGiven = breakdownCommand->count("--phase") +
                                       breakdownCommand->count("--by") +
                                       breakdownCommand->count("--flops") >
                                   0;
        return commandBreakdown(breakdownFile, breakdownPhase, breakdownBy, breakdownFlops, json,
                                runFlagsGiven);
    }
    if (exportCommand->parsed()) {
        return commandExport(exportFile, exportChromeTrace, exportMemviz);
    }
    if (memoryCommand->parsed()) {
        if (memorySaved && (!memoryAgainst.empty() || memoryDevice)) {
            std::cerr << "stepscope-cli: memory: --saved reads one run file; it takes neither "
                         "--against nor --device\n";
            return kExitBadInput;
        }
        if (memorySaved) {
            return commandMemorySaved(memoryFile, json);
        }
        if (memoryAgainst.empty() && !memoryDevice &&
            stepscope::detectFileKind(memoryFile) == stepscope::FileKind::RunFile) {
            return commandMemory(memoryFile, memoryTop, json);
        }
        return commandMemoryRecordings(memoryFile, memoryAgainst, memoryDevice, memoryTop, json);
    }
    if (dtypes->parsed()) {
        return commandDtypes(dtypesFlags, json);
    }
    if (accumulate->parsed()) {
        return commandAccumulate(accumulateCount, json);
    }
    if (attention->parsed()) {
        if (!attentionCollectDir.empty()) {
            return commandCollect(*attention, attentionCollectDir);
        }
        if (!attentionSlurmDir.empty()) {
            return commandAttentionSlurm(*attention, attentionFlags, attentionSlurmDir,
                                         attentionSlurmFlags, attentionResume);
        }
        return commandAttention(attentionFlags, json);
    }
    if (studyWarmup->parsed()) {
        return commandStudyWarmup(warmupFlags, studyOut);
    }
    if (studyPrecision->parsed()) {
        return commandStudyPrecision(precisionFlags, studyOut, precisionIsolate);
    }
    if (studyAttention->parsed()) {
        return commandStudyAttention(studyAttentionFlags, *studyAttention, json);
    }
    if (study->parsed()) {
        return commandStudyUnknown(studyName);
    }
    return commandShow(showFile, json);
}
