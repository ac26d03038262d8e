#include "analysis/recording_summary.h"

#include "analysis/snapshot_as_run.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace stepscope {

namespace {

// Whole microseconds (a snapshot's) print as integers, fractions as they are.
nlohmann::json timeValue(double us) {
    if (std::isfinite(us) && us == std::floor(us) && std::abs(us) < 9e15) {
        return static_cast<int64_t>(us);
    }
    return us;
}

}  // namespace

RecordingSummary summarizeTimeline(const SnapshotTimeline& timeline, std::string source) {
    RecordingSummary summary;
    summary.source = std::move(source);
    summary.deviceIndex = timeline.device;
    summary.events = static_cast<int64_t>(timeline.memvizEvents);
    summary.allocations = static_cast<int64_t>(timeline.blocks.size());
    summary.allocs = static_cast<int64_t>(timeline.allocs);
    summary.frees = static_cast<int64_t>(timeline.frees);
    summary.aliveBeforeBytes = timeline.aliveBeforeBytes;
    summary.peakBytes = timeline.peakBytes;
    summary.peakTimeUs = timeline.peakTimeUs - timeline.firstTimeUs;
    summary.endBytes = timeline.endBytes;
    summary.reservedPeakBytes = timeline.reservedPeakBytes;

    std::vector<int64_t> byCategory(timeline.categories.size(), 0);
    std::vector<SiteAtPeak> bySite(timeline.sites.size());
    for (const uint32_t b : timeline.aliveAtPeak) {
        const TimelineBlock& block = timeline.blocks[b];
        byCategory[block.category] += block.bytes;
        bySite[block.site].bytes += block.bytes;
        bySite[block.site].count += 1;
    }
    // By the app's categories: Mosaic's "backward" is "gradients" there, and
    // a name of no category of ours "other" (two names may become one).
    std::vector<int64_t> byName(kMemoryCategories, 0);
    for (size_t c = 0; c < byCategory.size(); ++c) {
        byName[size_t(memoryCategoryOfSnapshot(timeline.categories[c]))] += byCategory[c];
    }
    for (size_t c = 0; c < kMemoryCategories; ++c) {
        if (byName[c] > 0) {
            summary.byCategoryAtPeak.emplace_back(toString(MemoryCategory(c)), byName[c]);
        }
    }
    std::stable_sort(summary.byCategoryAtPeak.begin(), summary.byCategoryAtPeak.end(),
                     [](const auto& x, const auto& y) { return x.second > y.second; });
    for (size_t s = 0; s < bySite.size(); ++s) {
        if (bySite[s].count > 0) {
            bySite[s].site = timeline.sites[s];
            summary.sitesAtPeak.push_back(std::move(bySite[s]));
        }
    }
    std::sort(summary.sitesAtPeak.begin(), summary.sitesAtPeak.end(),
              [](const SiteAtPeak& x, const SiteAtPeak& y) {
                  return x.bytes != y.bytes ? x.bytes > y.bytes : x.site < y.site;
              });
    return summary;
}

nlohmann::json toJson(const RecordingSummary& summary, size_t topSites) {
    nlohmann::json out;
    out["source"] = summary.source;
    if (summary.deviceIndex) {
        out["device"] = *summary.deviceIndex;
    } else {
        out["device"] = summary.deviceLabel;
    }
    out["events"] = summary.events;
    out["allocations"] = summary.allocations;
    out["allocs"] = summary.allocs;
    out["frees"] = summary.frees;
    out["alive_before_bytes"] = summary.aliveBeforeBytes;
    out["peak_bytes"] = summary.peakBytes;
    out["peak_time_us"] = timeValue(summary.peakTimeUs);
    out["end_bytes"] = summary.endBytes;
    out["reserved_peak_bytes"] =
        summary.reservedPeakBytes ? nlohmann::json(*summary.reservedPeakBytes) : nullptr;
    out["by_category_at_peak"] = nlohmann::json::object();
    for (const auto& [category, bytes] : summary.byCategoryAtPeak) {
        out["by_category_at_peak"][category] = bytes;
    }
    out["top_sites_at_peak"] = nlohmann::json::array();
    for (size_t i = 0; i < summary.sitesAtPeak.size() && i < topSites; ++i) {
        const SiteAtPeak& site = summary.sitesAtPeak[i];
        out["top_sites_at_peak"].push_back(
            {{"site", site.site}, {"bytes", site.bytes}, {"count", site.count}});
    }
    return out;
}

RecordingDiff diffRecordings(RecordingSummary a, RecordingSummary b) {
    RecordingDiff diff;
    diff.peakDeltaBytes = b.peakBytes - a.peakBytes;
    std::unordered_map<std::string, size_t> index;
    for (const SiteAtPeak& site : a.sitesAtPeak) {
        index.emplace(site.site, diff.sites.size());
        diff.sites.push_back({site.site, site.bytes, 0, 0});
    }
    for (const SiteAtPeak& site : b.sitesAtPeak) {
        const auto [found, added] = index.try_emplace(site.site, diff.sites.size());
        if (added) {
            diff.sites.push_back({site.site, 0, 0, 0});
        }
        diff.sites[found->second].bBytes = site.bytes;
    }
    for (SiteDelta& site : diff.sites) {
        site.deltaBytes = site.bBytes - site.aBytes;
    }
    std::sort(diff.sites.begin(), diff.sites.end(), [](const SiteDelta& x, const SiteDelta& y) {
        const int64_t dx = x.deltaBytes < 0 ? -x.deltaBytes : x.deltaBytes;
        const int64_t dy = y.deltaBytes < 0 ? -y.deltaBytes : y.deltaBytes;
        return dx != dy ? dx > dy : x.site < y.site;
    });
    diff.a = std::move(a);
    diff.b = std::move(b);
    return diff;
}

nlohmann::json toJson(const RecordingDiff& diff, size_t topSites, size_t maxSites) {
    nlohmann::json out;
    out["a"] = toJson(diff.a, topSites);
    out["b"] = toJson(diff.b, topSites);
    out["peak_delta_bytes"] = diff.peakDeltaBytes;
    out["sites"] = nlohmann::json::array();
    for (size_t i = 0; i < diff.sites.size() && i < maxSites; ++i) {
        const SiteDelta& site = diff.sites[i];
        out["sites"].push_back({{"site", site.site},
                                {"a_bytes", site.aBytes},
                                {"b_bytes", site.bBytes},
                                {"delta_bytes", site.deltaBytes}});
    }
    return out;
}

}  // namespace stepscope
