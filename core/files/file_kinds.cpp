#include "files/file_kinds.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "cluster/slurm_array.h"
#include "cluster/slurm_attention.h"
#include "cluster/slurm_collective.h"
#include "interop/kineto_trace.h"
#include "util/atomic_file.h"
#include "util/strings.h"

namespace stepscope {

namespace fs = std::filesystem;

namespace {

constexpr size_t kHeadBytes = 64 * 1024;
constexpr size_t kScanChunkBytes = 1 << 20;

const std::vector<FileKindInfo> kKinds = {
    {FileKind::RunFile, "run file",
     "a JSON file made by StepScope's app or its command line, \"format\": \"stepscope-run\"",
     "*.json", false},
    {FileKind::AttentionFile, "attention file",
     "stepscope-cli attention's JSON, \"format\": \"stepscope-attention\"", "*.json", false},
    {FileKind::CollectiveFile, "collective benchmark file",
     "stepscope-cli collective --out's JSON, \"format\": \"stepscope-collective\"", "*.json",
     false},
    {FileKind::DtypeFlow, "dtype flow", "stepscope-cli dtypes --json", "*.json", false},
    {FileKind::MemorySnapshot, "PyTorch memory snapshot",
     "torch.cuda.memory._dump_snapshot's pickle, or the same as JSON", "*.pickle *.pkl *.json",
     false},
    {FileKind::ProfilerTrace, "PyTorch profiler trace",
     "export_chrome_trace's .json or tensorboard_trace_handler's .pt.trace.json.gz",
     "*.pt.trace.json.gz *.json.gz *.json", false},
    {FileKind::TorchSave, "torch.save file", "a state dict, a checkpoint or a tokens tensor",
     "*.pt *.pth", false},
    {FileKind::SweepFolder, "sweep folder",
     "run files with sweep.csv and sweep.md, as stepscope-cli sweep --out DIR writes them", "",
     true},
    {FileKind::SlurmSweepFolder, "Slurm sweep folder",
     "slurm-array.json of a sweep, as stepscope-cli slurm sweep writes it", "", true},
    {FileKind::AttentionFolder, "attention folder",
     "attention.json, as stepscope-cli attention --out DIR writes it", "", true},
    {FileKind::SlurmAttentionFolder, "Slurm attention folder",
     "slurm-array.json of an attention grid, as stepscope-cli slurm attention writes it", "", true},
    {FileKind::SlurmCollectiveFolder, "Slurm collective benchmark folder",
     "slurm-array.json of the collective benchmark, as stepscope-cli collective --slurm writes it",
     "", true},
    {FileKind::TraceFolder, "folder of profiler traces",
     "one trace per rank (*.json, *.json.gz), as tensorboard_trace_handler writes them", "", true},
    {FileKind::PretrainedFolder, "from_pretrained folder", "model_config.json beside model.pt", "",
     true},
};

const FileKindInfo kUnknown = {FileKind::Unknown, "unknown", "", "", false};

char firstNonSpace(std::string_view text) {
    const size_t first = text.find_first_not_of(" \t\r\n");
    return first == std::string_view::npos ? '\0' : text[first];
}

// The rest of a JSON object whose head showed no marker: another tool's
// key order (a run file whose "format" comes late), or a memory snapshot
// whose "segments" run past the head before "device_traces". Read in chunks,
// never whole, and only as far as the first marker; a trace's "traceEvents"
// alone does not stop the scan, since a StepScope marker after it wins.
FileKind scanRest(std::ifstream& in, std::string head) {
    std::string window = std::move(head);
    std::vector<char> chunk(kScanChunkBytes);
    bool traceEvents = false;
    while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in.gcount() > 0) {
        // Keep a tail that a marker split between chunks still shows in.
        window.erase(0, window.size() > 64 ? window.size() - 64 : 0);
        window.append(chunk.data(), static_cast<size_t>(in.gcount()));
        if (contains(window, "\"stepscope-attention\"")) {
            return FileKind::AttentionFile;
        }
        if (contains(window, "\"stepscope-collective\"")) {
            return FileKind::CollectiveFile;
        }
        if (contains(window, "\"stepscope-run\"")) {
            return FileKind::RunFile;
        }
        if (contains(window, "\"device_traces\"")) {
            return FileKind::MemorySnapshot;
        }
        traceEvents = traceEvents || contains(window, "\"traceEvents\"");
    }
    return traceEvents ? FileKind::ProfilerTrace : FileKind::Unknown;
}

FileKind detectFile(const std::string& path, std::string* error) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        *error = "cannot open '" + path + "': " + std::strerror(errno);
        return FileKind::Unknown;
    }
    std::string head(kHeadBytes, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<size_t>(in.gcount()));
    const bool complete = in.peek() == std::ifstream::traits_type::eof();
    const FileKind kind = fileKindOfBytes(head);
    if (kind != FileKind::Unknown || complete || firstNonSpace(head) != '{' ||
        contains(head, "\"stepscope-")) {
        return kind;
    }
    return scanRest(in, std::move(head));
}

bool holds(const fs::path& folder, const char* name) {
    std::error_code ignored;
    return fs::exists(folder / name, ignored);
}

// Files of the folder (not below it) whose names end with `suffix`.
std::vector<fs::path> filesEndingWith(const fs::path& folder, std::string_view suffix) {
    std::vector<fs::path> found;
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(folder, error)) {
        const std::string name = entry.path().filename().string();
        std::error_code ignored;
        if (name.size() >= suffix.size() &&
            name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0 &&
            entry.is_regular_file(ignored)) {
            found.push_back(entry.path());
        }
    }
    std::sort(found.begin(), found.end());
    return found;
}

// A folder of profiler traces: the files the trace reader reads there
// (kinetoTraceFiles) are all traces; a .json.gz is taken as one unread, as
// knowing would mean inflating it.
bool holdsTraces(const fs::path& folder) {
    std::vector<std::string> files;
    try {
        files = kinetoTraceFiles(folder.string());
    } catch (const KinetoTraceError&) {
        return false;
    }
    std::string ignored;
    return std::all_of(files.begin(), files.end(), [&ignored](const std::string& file) {
        return file.ends_with(".json.gz") || detectFile(file, &ignored) == FileKind::ProfilerTrace;
    });
}

bool holdsRunFile(const fs::path& folder) {
    std::string ignored;
    const std::vector<fs::path> json = filesEndingWith(folder, ".json");
    return std::any_of(json.begin(), json.end(), [&ignored](const fs::path& p) {
        return detectFile(p.string(), &ignored) == FileKind::RunFile;
    });
}

FileKind detectFolder(const std::string& path, std::string* error) {
    const fs::path folder(path);
    if (holds(folder, "attention.json")) {
        return FileKind::AttentionFolder;
    }
    try {
        if (const auto array = readSlurmArray(path)) {
            return array->kind == kAttentionArrayKind    ? FileKind::SlurmAttentionFolder
                   : array->kind == kCollectiveArrayKind ? FileKind::SlurmCollectiveFolder
                                                         : FileKind::SlurmSweepFolder;
        }
    } catch (const std::exception& failure) {
        *error = failure.what();
        return FileKind::Unknown;
    }
    if (holds(folder, "sweep.csv") || holds(folder, "sweep.md")) {
        return FileKind::SweepFolder;
    }
    if (holds(folder, "model_config.json") && holds(folder, "model.pt")) {
        return FileKind::PretrainedFolder;
    }
    if (holdsTraces(folder)) {
        return FileKind::TraceFolder;
    }
    return holdsRunFile(folder) ? FileKind::SweepFolder : FileKind::Unknown;
}

}  // namespace

const std::vector<FileKindInfo>& fileKinds() {
    return kKinds;
}

const FileKindInfo& fileKindInfo(FileKind kind) {
    const auto found = std::find_if(kKinds.begin(), kKinds.end(),
                                    [kind](const FileKindInfo& info) { return info.kind == kind; });
    return found == kKinds.end() ? kUnknown : *found;
}

FileKind fileKindOfBytes(std::string_view head) {
    if (startsWith(head, "\x80")) {
        return FileKind::MemorySnapshot;  // a pickle: the snapshot reader runs nothing
    }
    if (startsWith(head, "PK\x03\x04")) {
        return FileKind::TorchSave;
    }
    if (startsWith(head, "\x1f\x8b") ||
        (contains(head, "\"traceEvents\"") && !contains(head, "\"stepscope-"))) {
        return FileKind::ProfilerTrace;
    }
    if (contains(head, "\"stepscope-attention\"")) {
        return FileKind::AttentionFile;
    }
    if (contains(head, "\"stepscope-collective\"")) {
        return FileKind::CollectiveFile;
    }
    if (contains(head, "\"stepscope-run\"")) {
        return FileKind::RunFile;
    }
    const char first = firstNonSpace(head);
    if (first == '{' && contains(head, "\"device_traces\"")) {
        return FileKind::MemorySnapshot;
    }
    if (first == '[' && contains(head, "\"dtype\"")) {
        return FileKind::DtypeFlow;
    }
    return FileKind::Unknown;
}

FileKind detectFileKind(const std::string& path, std::string* error) {
    std::string ignored;
    std::string& message = error ? *error : ignored;
    message.clear();
    std::error_code failure;
    const fs::file_status status = fs::status(path, failure);
    if (failure || !fs::exists(status)) {
        message = "'" + path + "' does not exist";
        return FileKind::Unknown;
    }
    if (fs::is_directory(status)) {
        return detectFolder(path, &message);
    }
    if (const auto why = whyNotARegularFile(path)) {  // the readers' own check
        message = *why;
        return FileKind::Unknown;
    }
    return detectFile(path, &message);
}

const std::vector<std::string_view>& folderStandIns() {
    static const std::vector<std::string_view> names = {"sweep.csv", "sweep.md", "study.csv",
                                                        "study.md", "attention.csv"};
    return names;
}

bool standsForItsFolder(std::string_view fileName) {
    const std::vector<std::string_view>& names = folderStandIns();
    return std::find(names.begin(), names.end(), fileName) != names.end();
}

}  // namespace stepscope
