#include "cli/stderr_progress.h"

#include "cli/guarded.h"
#include "engines/isolated_run.h"

namespace stepscope::cli {

SweepControl cliSweepControl(StderrProgress& progress, bool isolate) {
    SweepControl control;
    control.observer = &progress;
    control.runObserver = &progress;
    control.cancel = &cancelRequested();
    if (isolate) {
        control.runPoint = freshProcessRunner(currentExecutablePath());
    }
    return control;
}

}  // namespace stepscope::cli
