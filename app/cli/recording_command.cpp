// memory FILE for PyTorch's memory snapshots, and memory A --against B: one
// summary per recording (run file or snapshot) and the difference by site.
#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>

#include "analysis/recording_summary.h"
#include "analysis/run_memory_snapshot.h"
#include "analysis/snapshot_timeline.h"
#include "cli/commands.h"
#include "cli/guarded.h"
#include "files/file_kinds.h"
#include "interop/memory_snapshot.h"
#include "results/run_file.h"
#include "util/strings.h"

namespace stepscope::cli {

namespace {

struct Recording {
    RecordingSummary summary;
    std::vector<int> devices;  // a snapshot's; empty for a run
};

// A run file, or else for the snapshot reader, whose messages say what the
// file is (a pickle, a snapshot's JSON, a stranger).
Recording readRecording(const std::string& path, std::optional<int> device) {
    if (detectFileKind(path) == FileKind::RunFile) {
        const RunResult run = readRunFile(path);
        if (run.memory.size() == 0) {
            throw std::invalid_argument(path +
                                        " has no memory trace: record one with "
                                        "`stepscope-cli run --memory`");
        }
        return {summarizeRunMemory(run.memory, path), {}};
    }
    const MemorySnapshot snapshot = readMemorySnapshot(path);
    Recording recording;
    recording.devices = snapshotDevices(snapshot);
    recording.summary =
        summarizeTimeline(buildTimeline(snapshot, device.value_or(busiestDevice(snapshot))));
    return recording;
}

std::string bytesText(int64_t bytes) {
    return formatBytes(static_cast<double>(bytes));
}

std::string deviceText(const Recording& recording) {
    const RecordingSummary& summary = recording.summary;
    if (!summary.deviceIndex) {
        return summary.deviceLabel;
    }
    std::vector<std::string> held;
    for (const int device : recording.devices) {
        held.push_back(std::to_string(device));
    }
    return "device " + std::to_string(*summary.deviceIndex) + " (the file holds " +
           (held.empty() ? std::string("none") : joinNames(held)) + ")";
}

std::string summaryText(const Recording& recording, const std::string& path, size_t top) {
    const RecordingSummary& s = recording.summary;
    std::ostringstream out;
    out << (s.source == "pytorch-snapshot" ? "PyTorch memory snapshot " : "StepScope run ") << path
        << ", " << deviceText(recording) << "\n";
    // Counted as memory_viz counts them (analysis/snapshot_timeline.h), as the app does.
    out << "  " << s.events << " events, " << s.allocations << " allocations (" << s.allocs
        << " made in the trace, " << s.allocations - s.allocs << " before it), " << s.frees
        << " frees\n";
    out << "  alive before the trace began: " << bytesText(s.aliveBeforeBytes) << "\n";
    out << "  peak allocated: " << bytesText(s.peakBytes)
        << (std::isfinite(s.peakTimeUs)
                ? " at " + fixedDecimals(s.peakTimeUs / 1000.0, 3) + " ms after the first event\n"
                : std::string(" at a time the file does not give (its times are not finite)\n"));
    out << "  at the end: " << bytesText(s.endBytes) << "\n";
    out << "  peak reserved: "
        << (s.reservedPeakBytes ? bytesText(*s.reservedPeakBytes)
                                : std::string("not recorded (no segment events)"))
        << "\n";
    out << "  alive at the peak, by category:";
    for (const auto& [category, bytes] : s.byCategoryAtPeak) {
        out << "\n    " << bytesText(bytes) << "  " << category;
    }
    if (s.byCategoryAtPeak.empty()) {
        out << " nothing";
    }
    out << "\n  largest allocation sites alive at the peak:";
    if (s.sitesAtPeak.empty()) {
        out << " none";
    }
    for (size_t i = 0; i < std::min(top, s.sitesAtPeak.size()); ++i) {
        const SiteAtPeak& site = s.sitesAtPeak[i];
        out << "\n    " << bytesText(site.bytes) << " in " << site.count << "  " << site.site;
    }
    out << "\n";
    return out.str();
}

std::string signedBytes(int64_t bytes) {
    return (bytes < 0 ? "-" : "+") + bytesText(bytes < 0 ? -bytes : bytes);
}

std::string diffText(const RecordingDiff& diff, const Recording& a, const Recording& b,
                     const std::string& pathA, const std::string& pathB, size_t top) {
    std::ostringstream out;
    out << "A: " << summaryText(a, pathA, top) << "B: " << summaryText(b, pathB, top);
    out << "peak: B " << signedBytes(diff.peakDeltaBytes) << " against A\n";
    out << "sites alive at each one's peak, largest difference first (A, B, B - A):";
    for (size_t i = 0; i < std::min(top, diff.sites.size()); ++i) {
        const SiteDelta& site = diff.sites[i];
        out << "\n  " << bytesText(site.aBytes) << ", " << bytesText(site.bBytes) << ", "
            << signedBytes(site.deltaBytes) << "  " << site.site;
    }
    out << "\n";
    return out.str();
}

}  // namespace

int commandMemoryRecordings(const std::string& file, const std::string& against,
                            std::optional<int> device, size_t top, bool json) {
    return guarded([&] {
        try {
            const Recording a = readRecording(file, device);
            if (against.empty()) {
                if (json) {
                    std::cout << toJson(a.summary, top).dump(2) << "\n";
                } else {
                    std::cout << summaryText(a, file, top);
                }
                return kExitOk;
            }
            const Recording b = readRecording(against, device);
            const RecordingDiff diff = diffRecordings(a.summary, b.summary);
            if (json) {
                std::cout << toJson(diff, top).dump(2) << "\n";
            } else {
                std::cout << diffText(diff, a, b, file, against, top);
            }
        } catch (const SnapshotError& error) {
            std::cerr << "stepscope-cli: memory: " << error.what() << "\n";
            return kExitBadInput;
        } catch (const std::invalid_argument& error) {
            std::cerr << "stepscope-cli: memory: " << error.what() << "\n";
            return kExitBadInput;
        }
        return kExitOk;
    });
}

}  // namespace stepscope::cli
