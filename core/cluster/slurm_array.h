#pragma once

// core/cluster: sweeps and attention grids as Slurm job arrays. The array's
// folder and script (here), submitting, progress, collecting. Includes
// experiments/ and below; the top layer of core/.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace stepscope {

// A directory that runs an experiment as a Slurm job array, one point per
// array task: DIR/slurm-array.json (what the array is), DIR/stepscope.sbatch
// (the job script), DIR/inputs/ (what a task reads), DIR/points/ (what the
// tasks write) and DIR/logs/ (Slurm's output, %x-%A_%a.out). Every path a
// task uses is relative to DIR, so the directory can be copied elsewhere and
// collected there.

// A clear refusal or failure: a bad option, a directory that cannot be used,
// sbatch missing or saying no. The message names the flag where there is one.
class SlurmError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// What sbatch is asked for; each set field is one #SBATCH line.
struct SlurmOptions {
    std::string partition;                    // --partition
    std::string gres;                         // --gres, e.g. gpu:1
    std::string time;                         // --time, e.g. 00:30:00
    int cpusPerTask = 0;                      // --cpus-per-task; 0: Slurm's default
    int gpusPerNode = 0;                      // --gpus-per-node; 0: not asked for
    std::string mem;                          // --mem, e.g. 16G
    int arrayLimit = 0;                       // the %N throttle of --array; 0: none
    std::vector<std::string> extraArguments;  // --sbatch-arg, each an #SBATCH line as is
};

// Throws SlurmError naming the flag: a negative count, text that would break
// the script (a newline), an --sbatch-arg that is not an option or that sets
// what StepScope sets itself (--array, --output).
void checkSlurmOptions(const SlurmOptions& options);

// What runs a task's arguments on the node: stepscope-cli (this C++ build,
// the default), or the Python recorder stepscope-record (`pip install
// ./python` into the node's environment with torch; the PyTorch engines
// only), found through $STEPSCOPE_RECORD, else on PATH when the task runs.
enum class SlurmRunner { Cli, Recorder };

std::string toString(SlurmRunner runner);  // "cli", "recorder": as --runner takes it
std::optional<SlurmRunner> parseSlurmRunner(const std::string& text);
const std::vector<std::string>& slurmRunnerNames();

// One array task: `arguments` after the array's runner (stepscope-cli or
// stepscope-record), run in DIR.
struct SlurmTask {
    std::string name;                    // the point's name: its result file and log say it
    std::string resultFile;              // relative to DIR, under points/
    std::vector<std::string> arguments;  // e.g. run --config inputs/N.json --out points/N.json
    std::string inputFile;               // relative to DIR, under inputs/; may be empty
    std::string inputText;               // what inputFile holds

    bool operator==(const SlurmTask&) const = default;
};

struct SlurmArray {
    std::string kind;     // "sweep" or "attention": which collector reads the points
    std::string jobName;  // the job's name (%x in the log names)
    nlohmann::json details = nlohmann::json::object();  // the collector's own (table columns…)
    std::vector<std::string> environment;               // NAME=value the tasks export
    SlurmRunner runner = SlurmRunner::Cli;              // what the tasks' arguments go to
    // The nodes each task's allocation spans (#SBATCH --nodes, one srun task
    // a node): the most any point's ranks go over (RunConfig::nodes).
    int nodes = 1;
    std::vector<SlurmTask> tasks;
};

constexpr const char* kSlurmArrayFile = "slurm-array.json";
constexpr const char* kSlurmScriptFile = "stepscope.sbatch";

// Throws SlurmError naming the field ("tasks[2].name") where `array` would
// put into a script or a path what StepScope never writes: a kind, job or
// point name beyond [A-Za-z0-9._-]+, an environment variable other than
// those StepScope exports, an input or result outside DIR/inputs/ or
// DIR/points/. Every array read from a folder and every script passes it.
void checkArrayForScript(const SlurmArray& array);

// Throws SlurmError naming `field` where `program`, an interpreter read from
// the array in `directory`, is not ours to run: a relative path (the task
// runs it from DIR: `./evil.sh` is a script the folder brought) or a path
// into the folder itself. A bare name (python3, found on the node's PATH) or
// an absolute path outside the folder is the user's own.
void checkInterpreterOutside(const std::string& field, const std::string& program,
                             const std::string& directory);

// `program` as a task in the array's folder must name it: a path made
// absolute from the current folder (the user's, where the flag was given); a
// bare name (python3, found on PATH) or an empty one as it is.
std::string absoluteProgram(const std::string& program);

// Throws SlurmError naming `field` where `folder`, a folder a task imports
// code from, read from the array in `directory`, is not absolute or lies
// inside that directory: code a folder brings never runs.
void checkCodeFolderOutside(const std::string& field, const std::string& folder,
                            const std::string& directory);

// `arguments` joined by spaces, each printable: how messages show a task's.
std::string argumentsText(const std::vector<std::string>& arguments);

// A task's stored `--flag value` pairs from arguments[first] on, read as
// data: each flag one of `known` (what StepScope writes for `what`), each
// once, each with a value. Throws SlurmError naming `where`[i] otherwise.
std::map<std::string, std::string> storedFlagValues(const std::vector<std::string>& arguments,
                                                    size_t first,
                                                    const std::vector<std::string>& known,
                                                    const std::string& where,
                                                    const std::string& what);

// A stored value as a whole number; throws SlurmError naming `field` otherwise.
int64_t storedWholeNumber(const std::string& field, const std::string& text);

// The array's job script: #SBATCH lines for `options`, --array for
// `taskIndices` (ascending) and the logs; task i runs its arguments in
// `directory` (absolute) with `cli` ($STEPSCOPE_CLI overrides it), or with
// the recorder for a recorder array. Run by hand with SLURM_ARRAY_TASK_ID
// set, it runs that one point.
std::string slurmJobScript(const SlurmArray& array, const std::string& directory,
                           const std::string& cli, const SlurmOptions& options,
                           const std::vector<int>& taskIndices);

// "0-3%2", "1,4-6": Slurm's --array value for ascending indices.
std::string slurmArrayRange(const std::vector<int>& taskIndices, int limit = 0);

// The array `directory` holds (its slurm-array.json; one without "runner",
// written before there were runners, is run by stepscope-cli), nullopt when
// it holds none. Throws SlurmError when the file is there but unreadable.
std::optional<SlurmArray> readSlurmArray(const std::string& directory);

// The array `directory` holds, which must be a `kind` array; throws
// SlurmError naming `flag` when it holds none, another kind or an unreadable one.
SlurmArray readSlurmArrayOfKind(const std::string& directory, const std::string& kind,
                                const std::string& flag);

// Throws SlurmError naming `flag` where `array` cannot go into `directory`:
// a file; a directory that holds a different array (other points or
// configs), or files and no array. A missing or empty directory, or one
// holding this same array (to submit again), is fine.
void checkSlurmDirectory(const std::string& directory, const SlurmArray& array,
                         const std::string& flag);

// checkSlurmDirectory, then writes the array into `directory` (made if
// missing) for the tasks in `taskIndices`, every file atomically: inputs, the
// script, then slurm-array.json. Throws SlurmError naming `flag` when the
// directory cannot be made or written, or its path holds a line break.
void writeSlurmArray(const std::string& directory, const SlurmArray& array, const std::string& cli,
                     const SlurmOptions& options, const std::vector<int>& taskIndices,
                     const std::string& flag);

// The newest Slurm log of task `index` (logs/*_INDEX.out): its name and a
// colon, then its last `lines` lines, one per line; empty when it has none.
std::string slurmLogTail(const std::string& directory, int index, size_t lines = 5);

}  // namespace stepscope
