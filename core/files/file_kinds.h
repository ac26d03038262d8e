#pragma once

// core/files: what a path is, among everything StepScope opens. One table of
// kinds (here), used by the CLI and the app alike to tell a run file from a
// snapshot, a sweep's folder from a folder of rank traces, before the
// kind's own reader reads it. Includes cluster/ (a Slurm folder's kind is in
// its slurm-array.json) and what its arrows reach.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace stepscope {

enum class FileKind : uint8_t {
    // Files
    RunFile,         // StepScope's run file ("format": "stepscope-run")
    AttentionFile,   // an attention grid's file ("format": "stepscope-attention")
    CollectiveFile,  // stepscope-cli collective --out ("format": "stepscope-collective")
    DtypeFlow,       // `stepscope-cli dtypes --json`: an array of {what, kind, dtype}
    MemorySnapshot,  // torch.cuda.memory._dump_snapshot's pickle, or its JSON
    ProfilerTrace,   // export_chrome_trace's .json, tensorboard_trace_handler's .json.gz
    TorchSave,       // a torch.save zip: a state dict, a checkpoint, a tokens tensor
    // Folders
    SweepFolder,            // run files, with sweep.csv and sweep.md (sweep --out, study --out)
    SlurmSweepFolder,       // a sweep as a Slurm array: slurm-array.json of kind "sweep"
    AttentionFolder,        // attention.json (attention --out)
    SlurmAttentionFolder,   // an attention grid as a Slurm array
    SlurmCollectiveFolder,  // the collective benchmark as a Slurm array, a rank count a task
    TraceFolder,            // profiler traces, one per rank
    PretrainedFolder,       // the course's from_pretrained folder: model_config.json, model.pt
    Unknown,
};

struct FileKindInfo {
    FileKind kind;
    std::string_view name;         // "run file", "sweep folder"
    std::string_view whatMakesIt;  // for messages: "a JSON file stepscope-cli run writes"
    std::string_view patterns;     // a file dialog's filter, "*.json *.json.gz"; empty for folders
    bool folder;
};

// Every kind but Unknown, files first, in the order above.
const std::vector<FileKindInfo>& fileKinds();
const FileKindInfo& fileKindInfo(FileKind kind);

// The kind of a file from its first bytes (64 KiB are enough for our own
// files, whose "format" key comes early; a JSON object that shows none is
// read on by detectFileKind, in chunks, to its first marker).
FileKind fileKindOfBytes(std::string_view head);

// What `path` names: a file's kind by its bytes, a folder's by what it
// holds. Unknown with `error` set (naming the path) where it cannot be read
// at all; Unknown without an error where it is readable but none of these.
FileKind detectFileKind(const std::string& path, std::string* error = nullptr);

// The files a user picks that stand for the folder holding them: sweep.csv,
// sweep.md, study.csv, study.md, attention.csv (a file dialog offers them,
// where it cannot offer a folder).
const std::vector<std::string_view>& folderStandIns();
bool standsForItsFolder(std::string_view fileName);

}  // namespace stepscope
