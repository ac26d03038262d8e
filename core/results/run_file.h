#pragma once

#include <nlohmann/json_fwd.hpp>
#include <stdexcept>
#include <string>

#include "results/run_result.h"

namespace stepscope {

// The run file: versioned JSON that the CLI and the desktop app both read and
// write. Format "stepscope-run", version kRunFileVersion.
constexpr int kRunFileVersion = 1;

class RunFileError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

std::string runResultToJson(const RunResult& result, int indent = 2);
RunResult runResultFromJson(const std::string& json);  // throws RunFileError naming the field

// A config alone, as JSON (the desktop app keeps the last one in its settings).
std::string runConfigToJson(const RunConfig& config);
RunConfig runConfigFromJson(const std::string& json);  // throws RunFileError

// The run file's config fields as the table declares them (config/config_field.h),
// for the Python package: python/stepscope/config_fields.json is this text, and
// tst_config_fields fails when it is not.
std::string configFieldsJson();

// Where two configs differ, as a run file spells them: "batch: 1 (file), 2
// (here)" for each field, nested ones dotted ("model.layers"); empty when
// they are the same.
std::vector<std::string> configDifferences(const RunConfig& file, const RunConfig& here);

// A run file's "memory" object alone, already parsed (the Python worker sends
// one inside an event); throws RunFileError naming the field, under `where`.
MemoryTrace memoryTraceFromJson(const nlohmann::json& memory, const std::string& where = "memory");

// Where a Slurm task ran (environment.slurm of run and attention files):
// job, array job and task ids and node; null outside Slurm.
nlohmann::json slurmEnvironmentJson(const EnvironmentInfo& environment);

void writeRunFile(const RunResult& result, const std::string& path);  // atomic
RunResult readRunFile(const std::string& path);                       // throws RunFileError

}  // namespace stepscope
