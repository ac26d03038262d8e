#pragma once

#include <atomic>
#include <string>

#include "cli/config_flags.h"

namespace stepscope::cli {

// Exit codes of stepscope-cli.
constexpr int kExitOk = 0;
constexpr int kExitBadInput = 2;
constexpr int kExitRunFailed = 3;

// Set by SIGINT: a run stops between steps and keeps what it measured.
std::atomic<bool>& cancelRequested();

int commandInfo(bool json);
int commandParams(const ConfigFlags& flags, bool all, bool json);
int commandRun(const ConfigFlags& flags, const std::string& outFile, bool json);
int commandSweep(const ConfigFlags& flags, const std::string& outDir, bool resume);
int commandEval(const ConfigFlags& flags, const std::string& weights, const std::string& tokens,
                bool json);
int commandShow(const std::string& file, bool json);

}  // namespace stepscope::cli
