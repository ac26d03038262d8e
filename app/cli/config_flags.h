#pragma once

#include <CLI/CLI.hpp>

#include <map>
#include <string>
#include <vector>

#include "config/config_field.h"
#include "config/limits.h"
#include "config/run_config.h"
#include "experiments/sweep.h"

namespace stepscope::cli {

// A whole number in min..max, read without CLI11's clamping of what
// overflows int64; the message names the range.
CLI::Validator integerIn(int64_t min, int64_t max);
CLI::Validator integerIn(const IntegerLimit& limit);

// Groups of config flags, so a command lists only the flags it reads: a
// field's section (config/config_field.h) is its group, 1 << section.
enum FlagGroups : unsigned {
    kModelFlags =
        1u << unsigned(
            FieldSection::Model),  // --model, --d-model, --d-ff, --layers, --heads, --vocab
    // --max-ctx, --ctx, --batch, --mode, --precision, --tf32, --attention,
    // --activation-checkpoint, --loss, --loss-chunk, --optimizer
    kWorkloadFlags = 1u << unsigned(FieldSection::Workload),
    kStepFlags =
        1u << unsigned(
            FieldSection::Steps),  // --warmup, --steps, --device, --seed, --threads, --force
    kTraceFlags =
        1u << unsigned(FieldSection::Trace),  // --ops, --kernels, --memory, --cuda-snapshot
    kEngineFlags =
        1u << unsigned(
            FieldSection::Engine),  // --engine, --compile-mode, --py-*, --cuda-graph, --python
    kDistributedFlags =
        1u << unsigned(FieldSection::Distributed),  // --ranks, --parallel, --backend, --py-ddp…
    kAllFlags =
        kModelFlags | kWorkloadFlags | kStepFlags | kTraceFlags | kEngineFlags | kDistributedFlags,
    kDataFlags =
        1u << unsigned(
            FieldSection::Data),  // --weights, --tokens (run only: the tokens fix batch and ctx)
};

// The config flags every command that takes a config shares: one flag per
// field of the table (config/config_field.h), made from its declaration. In
// a sweep every flag of a sweep field takes a comma list (--batch 4,8
// --attention naive,sdpa; --tf32 off,on, or --tf32 alone for on); each list
// with more than one value is an axis of the sweep. Single-run commands take
// one value each. Flags a command does not add keep their defaults.
struct ConfigFlags {
    // The model field's own flags: a preset, or dims.
    std::vector<std::string> models;  // empty: nano, or with --weights the weights' shape
    int64_t dModel = 0, dFf = 0, layers = 0, heads = 0;
    // 0: the preset's own (10000 and 2048 but for the leaderboard model; those for custom dims).
    int64_t vocab = 0;
    int64_t maxContext = 0;
    // Every other field's flag as text, by field name: what was given, or the
    // command's own default (setDefault); a field not here keeps RunConfig's.
    std::map<std::string, std::vector<std::string>> values;
    // Switches given alone (--force, and --tf32 in a run), by field name.
    std::map<std::string, bool> switches;

    // A command's own default for a field, before addTo: {"0", "1", "2", "5"}.
    void setDefault(const std::string& field, std::vector<std::string> texts);
    // The field's value as given ("" when not), and a list of whole numbers.
    std::string text(const std::string& field) const;
    std::vector<int> integers(const std::string& field) const;

    // `listFlags` take comma lists even where `lists` is false (a study that
    // varies one field of an otherwise single config).
    void addTo(CLI::App& command, bool lists, unsigned groups = kAllFlags,
               const std::vector<std::string>& listFlags = {});
    // Throws InvalidConfigError (field-named) for a value no config can hold.
    RunConfig toRunConfig() const;
    SweepSpec toSweepSpec(const std::string& outDir) const;
};

}  // namespace stepscope::cli
