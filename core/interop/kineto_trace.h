#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace stepscope {

// A PyTorch profiler (Kineto) trace as `prof.export_chrome_trace` and
// `tensorboard_trace_handler` write it (`.json` or `.json.gz`), read into
// typed values. Reading checks every value it keeps against limits and turns
// any trouble into one KinetoTraceError naming the file and the field; it
// never recurses over the document's depth.

// An event's Kineto category ("cat"); anything else is Other, kept and counted.
enum class TraceCategory : uint8_t {
    CpuOp,
    UserAnnotation,
    GpuUserAnnotation,
    PythonFunction,
    CudaRuntime,
    CudaDriver,
    Kernel,
    GpuMemcpy,
    GpuMemset,
    Ac2g,  // the flow events that tie a launch to its kernel
    Other,
};
inline constexpr size_t kTraceCategories = size_t(TraceCategory::Other) + 1;
std::string_view toString(TraceCategory category);  // Kineto's spelling; "other"

// A thread (host) or stream (device) lane: Kineto's (pid, tid), which are
// numbers or strings ("Spans", "PyTorch Profiler"); kept as written.
struct TraceTrack {
    std::string pid;
    std::string tid;
    std::string processName;  // from "process_name" metadata, where given
    std::string threadName;   // from "thread_name" metadata, where given
};

// One event with a time: complete ("X") events, instants and counters.
// Times are microseconds as the file writes them, fractions kept.
struct TraceEvent {
    double startUs = 0;
    double durationUs = 0;     // 0 where the event has no "dur"
    int64_t correlation = -1;  // args.correlation: a launch and its kernel share it
    int64_t externalId = -1;   // args["External id"]: an operator and its launches share it
    int64_t stream = -1;       // args.stream: kernels, memcpys, memsets (and syncs); else -1
    int32_t name = 0;          // into KinetoTrace::strings
    int32_t categoryName = 0;  // the "cat" as written, into KinetoTrace::strings
    int32_t track = 0;         // into KinetoTrace::tracks
    TraceCategory category = TraceCategory::Other;
    char phase = 'X';
    bool hasDuration = false;  // "dur" was written (HTA keeps only these)
    bool hasCategory = false;  // "cat" was written (HTA keeps only these)
};

// One flow event ("s", "t" or "f"): for ac2g, id is the launch's correlation.
struct TraceFlow {
    int64_t id = 0;
    double timeUs = 0;
    int32_t track = 0;
    int32_t categoryName = 0;
    TraceCategory category = TraceCategory::Other;
    char phase = 's';
    bool bindsEnclosing = false;  // "bp": "e": the flow ends at the enclosing slice
};

// A "ProfilerStep#N" range on the host, in start order.
struct ProfilerStepRange {
    int64_t number = 0;
    double startUs = 0;
    double durationUs = 0;
    int32_t event = 0;  // into KinetoTrace::events
};

struct TraceDevice {
    int64_t id = 0;
    std::string name;
    int64_t totalGlobalMem = 0;
    int64_t computeMajor = 0;
    int64_t computeMinor = 0;
    int64_t numSms = 0;
};

struct TraceDistributedInfo {
    std::string backend;
    int64_t rank = 0;
    int64_t worldSize = 1;
};

struct KinetoTrace {
    std::string path;  // or the label given to parseKinetoTrace
    int64_t schemaVersion = 0;
    std::optional<int64_t> baseTimeNanoseconds;
    std::vector<TraceDevice> devices;                 // deviceProperties
    std::optional<TraceDistributedInfo> distributed;  // distributedInfo
    std::vector<std::string> strings;                 // every name and category, once
    std::vector<TraceTrack> tracks;
    std::vector<TraceEvent> events;  // in file order
    std::vector<TraceFlow> flows;
    std::vector<ProfilerStepRange> steps;
    std::array<int64_t, kTraceCategories> eventsByCategory{};
    // Categories StepScope does not know ("Trace", "fwdbwd", "cuda_sync", ...),
    // with their event counts, in first-seen order: kept, never fatal.
    std::vector<std::pair<std::string, int64_t>> otherCategories;
    int64_t metadataEvents = 0;    // "M": names applied to the tracks
    int64_t otherPhaseEvents = 0;  // phases with no time ("P", "O", ...), skipped
    int64_t defaultRank() const { return distributed ? distributed->rank : 0; }
    const std::string& nameOf(const TraceEvent& event) const { return strings[event.name]; }
};

class KinetoTraceError : public std::runtime_error {
public:
    enum class Kind {
        Unreadable,  // cannot open or read the file
        NotJson,     // empty, binary, a PNG, or JSON that does not parse
        Gzip,        // a gzip stream that is truncated or corrupt
        RunFile,     // a StepScope run file, which opens as a run instead
        NotATrace,   // JSON without traceEvents
        Invalid,     // a trace with a field out of its type or range
        TooLarge,    // past a limit on bytes, events or string size
    };
    KinetoTraceError(Kind kind, const std::string& message)
        : std::runtime_error(message), kind_(kind) {}
    Kind kind() const { return kind_; }

private:
    Kind kind_;
};

// Limits from the world: a 100 MB trace holds about half a million events.
struct KinetoTraceLimits {
    uint64_t maxBytes = uint64_t(4) << 30;  // after gunzip; simdjson reads < 4 GiB
    int64_t maxEvents = 50'000'000;
    size_t maxStringBytes = size_t(1) << 20;  // a kernel's demangled name is a few kB
    int64_t maxDevices = 4096;
    int64_t maxTracks = 1'000'000;
    // The memory this process may still take (util/system_memory.h) where
    // nullopt: text that would not fit with its parse (about
    // kParseBytesPerTextByte times its size) is refused before it is
    // inflated further or parsed, not left to end in std::bad_alloc.
    std::optional<int64_t> memoryRoomBytes;
};

// What reading a trace takes per byte of its JSON: the text, and simdjson's
// structural index (4) and string buffer (5/3) over it.
inline constexpr uint64_t kParseBytesPerTextByte = 7;

// Reads `path` (gzip by its magic bytes, whatever the extension).
KinetoTrace readKinetoTrace(const std::string& path, const KinetoTraceLimits& limits = {});
// The same from bytes in memory (raw or gzip); `label` names them in messages.
KinetoTrace parseKinetoTrace(std::string_view bytes, const std::string& label,
                             const KinetoTraceLimits& limits = {});

// The trace files of a folder of rank traces (*.json, *.json.gz), sorted by name.
// Throws KinetoTraceError (Unreadable) when the folder cannot be listed or holds none.
std::vector<std::string> kinetoTraceFiles(const std::string& folder);

}  // namespace stepscope
