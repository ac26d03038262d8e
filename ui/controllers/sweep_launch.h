#pragma once

#include <QString>

#include <string>

#include "controllers/run_controller.h"

namespace stepscope {
struct RunConfig;
}

namespace stepscope::ui {

class SweepPage;

// Where the app's sweeps go: ~/.local/share/stepscope/sweeps on Linux.
// (QStandardPaths' AppLocalDataLocation names the organisation and the
// app, both "StepScope": ~/.local/share/StepScope/StepScope.)
QString sweepsFolder();

// What the Sweep tab's form asks to run (a sweep, the warm-up or the
// precision study) on the configuration panel's run, into a fresh folder
// under sweepsFolder(); its points run through `pointCli` where the
// study needs a process per point. Throws InvalidConfigError naming the field.
SweepLaunch sweepLaunchFor(const SweepPage& page, const RunConfig& base,
                           const std::string& pointCli);

}  // namespace stepscope::ui
