#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/snapshot_timeline.h"

namespace stepscope {

// One recording's memory in a few figures, whichever made it: a PyTorch
// snapshot (site: the first user frame) or a StepScope run (site: module
// path and op). What `stepscope-cli memory FILE --json` prints, and each
// side of `memory A --against B`.
struct SiteAtPeak {
    std::string site;
    int64_t bytes = 0;
    int64_t count = 0;
};

struct RecordingSummary {
    std::string source;              // "pytorch-snapshot", "stepscope-run"
    std::optional<int> deviceIndex;  // a snapshot's device
    std::string deviceLabel;         // a run's ("cuda:0", "cpu"), when no index
    int64_t events = 0;              // as memory_viz counts them (memvizEventCount)
    int64_t allocations = 0;  // the blocks of its Active Memory Timeline (SnapshotTimeline::blocks)
    int64_t allocs = 0;       // alloc entries in the trace
    int64_t frees = 0;        // free_completed and free entries
    int64_t aliveBeforeBytes = 0;
    int64_t peakBytes = 0;
    double peakTimeUs = 0;  // from the first event
    int64_t endBytes = 0;
    std::optional<int64_t> reservedPeakBytes;
    std::vector<std::pair<std::string, int64_t>> byCategoryAtPeak;  // largest first, none empty
    std::vector<SiteAtPeak> sitesAtPeak;  // every site alive at the peak, largest first
};

RecordingSummary summarizeTimeline(const SnapshotTimeline& timeline,
                                   std::string source = "pytorch-snapshot");

// Categories are the app's Memory view's (memoryCategoryOfSnapshot), so the
// CLI and the app name them alike.
// Keys: source, device, events, allocations, allocs, frees, alive_before_bytes,
// peak_bytes, peak_time_us, end_bytes, reserved_peak_bytes (null without
// segment events), by_category_at_peak {category: bytes},
// top_sites_at_peak [{site, bytes, count}] (the `topSites` largest).
nlohmann::json toJson(const RecordingSummary& summary, size_t topSites = 20);

struct SiteDelta {
    std::string site;
    int64_t aBytes = 0;
    int64_t bBytes = 0;
    int64_t deltaBytes = 0;  // b - a
};

// Two recordings side by side: each one's sites alive at its own peak.
struct RecordingDiff {
    RecordingSummary a;
    RecordingSummary b;
    int64_t peakDeltaBytes = 0;    // b's peak - a's peak
    std::vector<SiteDelta> sites;  // largest |delta| first, then by name
};

RecordingDiff diffRecordings(RecordingSummary a, RecordingSummary b);

// Keys: a, b (each as toJson above), peak_delta_bytes, sites
// [{site, a_bytes, b_bytes, delta_bytes}] (the first `maxSites`).
nlohmann::json toJson(const RecordingDiff& diff, size_t topSites = 20,
                      size_t maxSites = std::numeric_limits<size_t>::max());

}  // namespace stepscope
