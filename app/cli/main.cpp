// stepscope-cli: the headless face of the StepScope engine. Results go to
// stdout, progress to stderr. Exit codes: 0 ok, 2 bad input, 3 run failed.
#include <CLI/CLI.hpp>

#include <csignal>

#include "attention/attention_benchmark.h"
#include "cli/commands.h"
#include "util/strings.h"

using namespace stepscope::cli;

int main(int argc, char** argv) {
    CLI::App app{"StepScope: what a Transformer training step costs, measured on LibTorch",
                 "stepscope-cli"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string(STEPSCOPE_VERSION));

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
    std::string outFile;
    auto* run = app.add_subcommand("run", "one run: warm-up and measured steps");
    runFlags.addTo(*run, /*lists=*/false, kAllFlags | kDataFlags);
    run->add_option("--out", outFile, "write the run file here");
    run->add_flag("--json", json, "print the run file's JSON instead of the report");

    ConfigFlags estimateFlags;
    auto* estimate = app.add_subcommand(
        "estimate", "predicted peak memory and categories of a run, without running it");
    estimateFlags.addTo(*estimate, /*lists=*/false, kModelFlags | kWorkloadFlags | kStepFlags);
    estimate->add_flag("--json", json, "print JSON");

    ConfigFlags sweepFlags;
    std::string outDir;
    bool resume = false;
    auto* sweep = app.add_subcommand(
        "sweep", "models × contexts × modes × precisions, each a run (comma lists)");
    sweepFlags.addTo(*sweep, /*lists=*/true);
    sweep->add_option("--out", outDir, "directory for the run files and sweep tables")->required();
    sweep->add_flag("--resume", resume, "keep points whose run file already says ok");

    ConfigFlags evalFlags;
    std::string weights, tokens;
    auto* eval = app.add_subcommand("eval", "loss of a checkpoint on a torch.save'd token tensor");
    evalFlags.addTo(*eval, /*lists=*/false, kAllFlags & ~kEngineFlags);
    eval->add_option("--weights", weights, "torch.save'd state dict or checkpoint")->required();
    eval->add_option("--tokens", tokens, "torch.save'd int64 tensor (batch × seq)")->required();
    eval->add_flag("--json", json, "print {\"loss\": …}");

    AttentionFlags attentionFlags;
    auto* attention = app.add_subcommand(
        "attention", "attention backends × head dims × sequence lengths × precisions");
    attention
        ->add_option("--backends", attentionFlags.backends,
                     "backends (comma list): " +
                         stepscope::joinNames(stepscope::attentionGridBackendNames()) +
                         " (compiled: torch.compile of naive attention in the Python worker)")
        ->delimiter(',')
        ->capture_default_str();
    attention->add_option("--d", attentionFlags.headDims, "head dims (comma list)")
        ->delimiter(',')
        ->capture_default_str();
    attention
        ->add_option("--seq", attentionFlags.seqLens,
                     "sequence lengths (comma list; default 256..16384 on CUDA, "
                     "256..2048 on CPU)")
        ->delimiter(',');
    attention->add_option("--precision", attentionFlags.precisions, "fp32, bf16, fp16 (comma list)")
        ->delimiter(',')
        ->capture_default_str();
    attention->add_option("--batch", attentionFlags.batch, "batch")->capture_default_str();
    attention->add_option("--heads", attentionFlags.heads, "heads")->capture_default_str();
    attention->add_flag("--causal,!--no-causal", attentionFlags.causal, "causal (default) or not");
    attention->add_option("--device", attentionFlags.device, "cpu or cuda")->capture_default_str();
    attention->add_option("--warmup", attentionFlags.warmup, "warm-up repeats")
        ->capture_default_str();
    attention->add_option("--repeats", attentionFlags.repeats, "measured repeats (medians)")
        ->capture_default_str();
    attention
        ->add_option("--tile-q", attentionFlags.queryTile, "tiled: query rows per tile (>= 16)")
        ->capture_default_str();
    attention->add_option("--tile-k", attentionFlags.keyTile, "tiled: key rows per tile (>= 16)")
        ->capture_default_str();
    attention->add_option("--python", attentionFlags.python,
                          "compiled: the Python with torch (default: $STEPSCOPE_PYTHON, then the "
                          "one StepScope was built against)");
    attention->add_option("--out", attentionFlags.outDir,
                          "write attention.json and attention.csv here");
    attention->add_flag("--json", json, "print the points as JSON");

    std::string breakdownFile, breakdownPhase = "all", breakdownBy = "op";
    auto* breakdownCommand = app.add_subcommand(
        "breakdown", "where the time went, from a run made with --ops/--kernels");
    breakdownCommand->add_option("file", breakdownFile, "run file")->required();
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
        "memory", "peak, categories at peak and largest allocations of a run made with --memory");
    memoryCommand->add_option("file", memoryFile, "run file")->required();
    memoryCommand->add_option("--top", memoryTop, "how many allocations to list")
        ->capture_default_str();
    memoryCommand->add_flag("--json", json, "print JSON");

    ConfigFlags dtypesFlags;
    dtypesFlags.precisions = {"bf16"};
    dtypesFlags.contexts = {16};
    dtypesFlags.batch = 2;
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

    std::signal(SIGINT, [](int) { cancelRequested().store(true); });

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
        return commandRun(runFlags, outFile, json);
    }
    if (estimate->parsed()) {
        return commandEstimate(estimateFlags, json);
    }
    if (sweep->parsed()) {
        return commandSweep(sweepFlags, outDir, resume);
    }
    if (eval->parsed()) {
        return commandEval(evalFlags, weights, tokens, json);
    }
    if (breakdownCommand->parsed()) {
        return commandBreakdown(breakdownFile, breakdownPhase, breakdownBy, breakdownFlops, json);
    }
    if (exportCommand->parsed()) {
        return commandExport(exportFile, exportChromeTrace, exportMemviz);
    }
    if (memoryCommand->parsed()) {
        return commandMemory(memoryFile, memoryTop, json);
    }
    if (dtypes->parsed()) {
        return commandDtypes(dtypesFlags, json);
    }
    if (accumulate->parsed()) {
        return commandAccumulate(accumulateCount, json);
    }
    if (attention->parsed()) {
        return commandAttention(attentionFlags, json);
    }
    return commandShow(showFile, json);
}
