#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/attention_grid.h"
#include "engines/run_control.h"
#include "results/attention_file.h"
#include "util/child_process.h"

namespace stepscope {

// The client of the Python worker (docs/worker-protocol.md): runs a config
// whose engine is pytorch or pytorch-compile in a child process and turns its
// events into a RunResult, streaming steps to the observer as they arrive.
// Every outcome is the result's status: no Python → unavailable (saying what
// was looked for); a worker that fails or dies → failed with its message or
// stderr tail and the steps received so far; cancel → SIGTERM, then SIGKILL
// after the grace period, cancelled with the steps received.
RunResult runInPythonWorker(const RunConfig& config, const RunControl& control);

// Measures attention points in the worker (compiled: torch.compile of naive
// attention; flash-pytorch, flash-triton and the spec's py_attention, each
// gated first; naive and sdpa in PyTorch eager) with the spec's warm-up,
// repeats, seed and device. Returns every point: measured, gated (incorrect,
// or Triton on the CPU unavailable: checked, not timed), or with status
// failed (the backend's or the worker's message, or the stderr tail),
// unavailable (no Python) or cancelled; `onPoint` hears each as it arrives.
// A py_attention the worker cannot load throws InvalidConfigError naming
// py-attention. `cancel` stops the worker as runInPythonWorker does.
std::vector<AttentionPoint> measureAttentionInPythonWorker(
    std::vector<AttentionPoint> points, const AttentionBenchSpec& spec,
    const std::atomic<bool>* cancel,
    const std::function<void(const AttentionPoint&)>& onPoint = {});

// The interpreters tried for the worker, in order, each with where it came
// from: --python, $STEPSCOPE_PYTHON, the Python whose torch StepScope was
// built against, python3 on PATH.
struct PythonCandidate {
    std::string path;
    std::string source;  // "--python", "$STEPSCOPE_PYTHON", "the build's", "PATH"
};
std::vector<PythonCandidate> workerPythonCandidates(const std::string& explicitPython);

// Starts `python -m MODULE ARGS…` (the `stepscope` package importable) with
// the first candidate interpreter that starts; `chosen` is set to it.
// nullptr, with `whyNot` naming the candidates tried, when none does.
std::unique_ptr<ChildProcess> startPythonModule(const std::vector<std::string>& moduleAndArguments,
                                                const std::string& explicitPython,
                                                std::string& chosen, std::string& whyNot);

// The folder holding the `stepscope` Python package: the installed copy beside
// the executable, else the source tree's python/.
std::string workerPackageDir();

}  // namespace stepscope
