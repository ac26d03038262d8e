#include "analysis/snapshot_timeline.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

namespace stepscope {

namespace {

// Sizes come from a file: their sums are checked, never wrapped.
int64_t checkedSum(int64_t a, int64_t b, const std::string& source) {
    int64_t sum = 0;
    if (__builtin_add_overflow(a, b, &sum)) {
        throw SnapshotError(SnapshotError::Kind::TooLarge,
                            source + ": its sizes add up past 2^63 bytes");
    }
    return sum;
}

int64_t checkedNegation(int64_t value, const std::string& source) {
    if (value == INT64_MIN) {
        throw SnapshotError(SnapshotError::Kind::TooLarge,
                            source + ": its sizes add up past 2^63 bytes");
    }
    return -value;
}

}  // namespace

std::vector<int> snapshotDevices(const MemorySnapshot& snapshot) {
    std::vector<int> devices;
    for (size_t device = 0; device < snapshot.deviceTraces.size(); ++device) {
        if (snapshot.deviceTraces[device].size() > 0) {
            devices.push_back(static_cast<int>(device));
        }
    }
    for (const SnapshotSegment& segment : snapshot.segments) {
        devices.push_back(segment.device);
    }
    std::sort(devices.begin(), devices.end());
    devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
    return devices;
}

size_t memvizEventCount(const SnapshotDeviceTrace& trace) {
    size_t count = trace.size();
    for (size_t i = 1; i < trace.size(); ++i) {
        // MemoryViz.js, annotate_snapshot: the pair becomes one "free".
        if (trace.action[i] == SnapshotAction::FreeCompleted &&
            trace.action[i - 1] == SnapshotAction::FreeRequested &&
            trace.address[i] == trace.address[i - 1]) {
            --count;
        }
    }
    return count;
}

int busiestDevice(const MemorySnapshot& snapshot) {
    std::unordered_map<int, int64_t> reserved;
    for (const SnapshotSegment& segment : snapshot.segments) {
        reserved[segment.device] =
            checkedSum(reserved[segment.device], segment.totalSize, snapshot.source);
    }
    int best = 0;
    size_t bestEvents = 0;
    int64_t bestReserved = -1;
    for (const int device : snapshotDevices(snapshot)) {
        const size_t events = size_t(device) < snapshot.deviceTraces.size()
                                  ? snapshot.deviceTraces[size_t(device)].size()
                                  : 0;
        const int64_t bytes = reserved.count(device) ? reserved[device] : 0;
        if (events > bestEvents || (events == bestEvents && bytes > bestReserved)) {
            best = device;
            bestEvents = events;
            bestReserved = bytes;
        }
    }
    return best;
}

namespace {

// Categories and sites, each worked out once per stack.
class BlockLabels {
public:
    BlockLabels(const MemorySnapshot& snapshot, const std::vector<CategoryRule>& rules)
        : snapshot_(snapshot),
          categorizer_(rules),
          stackCategory_(snapshot.stackCount() + 1, StackCategory{kUnset, kUnset}),
          stackSite_(snapshot.stackCount() + 1, kUnsetSite),
          freedSite_(snapshot.stackCount() + 1, kUnsetSite) {
        for (const std::string& name : snapshot.eventCategories) {
            eventCategory_.push_back(categorizer_.idOf(name));
        }
    }

    // The user's rules, else the event's own category, else Mosaic's rules.
    uint16_t category(uint32_t stack, uint16_t eventCategory) {
        StackCategory& cached = stackCategory_[slot(stack)];
        if (cached.user == kUnset) {
            const auto user = categorizer_.userCategoryOf(snapshot_, stack);
            cached.user = user ? *user : kNoUserRule;
        }
        if (cached.user != kNoUserRule) {
            return cached.user;
        }
        if (eventCategory > 0) {
            return eventCategory_[eventCategory - 1];
        }
        if (cached.inferred == kUnset) {
            cached.inferred = categorizer_.inferredCategoryOf(snapshot_, stack);
        }
        return cached.inferred;
    }
    // Where the block was allocated (siteOf its alloc's stack); for a block
    // alive before the trace and freed in it (`freed`), whose alloc was not
    // recorded, where it was freed, said as such (memory_viz: "alloc not
    // recorded, stack trace for free").
    uint32_t site(uint32_t stack, bool freed = false) {
        uint32_t& cached = (freed ? freedSite_ : stackSite_)[slot(stack)];
        if (cached == kUnsetSite) {
            std::string label = siteOf(snapshot_, stack);
            if (freed && !snapshot_.stack(stack).empty()) {
                label = "(alloc not recorded; freed at " + label + ")";
            }
            const auto [found, added] = siteIds_.try_emplace(label, uint32_t(sites_.size()));
            if (added) {
                sites_.push_back(std::move(label));
            }
            cached = found->second;
        }
        return cached;
    }
    std::vector<std::string> categories() const { return categorizer_.names(); }
    std::vector<std::string> takeSites() { return std::move(sites_); }

private:
    static constexpr uint16_t kUnset = UINT16_MAX;
    static constexpr uint16_t kNoUserRule = UINT16_MAX - 1;
    static constexpr uint32_t kUnsetSite = UINT32_MAX;
    size_t slot(uint32_t stack) const {
        return stack == kNoStack ? snapshot_.stackCount() : size_t(stack);
    }

    const MemorySnapshot& snapshot_;
    StackCategorizer categorizer_;
    std::vector<uint16_t> eventCategory_;
    struct StackCategory {
        uint16_t user;
        uint16_t inferred;
    };
    std::vector<StackCategory> stackCategory_;
    std::vector<uint32_t> stackSite_;
    std::vector<uint32_t> freedSite_;
    std::unordered_map<std::string, uint32_t> siteIds_;
    std::vector<std::string> sites_;
};

bool isSegmentGrowth(SnapshotAction action) {
    return action == SnapshotAction::SegmentAlloc || action == SnapshotAction::SegmentMap;
}
bool isSegmentShrink(SnapshotAction action) {
    return action == SnapshotAction::SegmentFree || action == SnapshotAction::SegmentUnmap;
}

void addReserved(const MemorySnapshot& snapshot, const SnapshotDeviceTrace& trace,
                 SnapshotTimeline& out) {
    int64_t segmentsTotal = 0;
    for (const SnapshotSegment& segment : snapshot.segments) {
        if (segment.device == out.device) {
            segmentsTotal = checkedSum(segmentsTotal, segment.totalSize, snapshot.source);
        }
    }
    out.reservedBeforeBytes = segmentsTotal;
    for (const SnapshotAction action : trace.action) {
        out.hasSegmentEvents =
            out.hasSegmentEvents || isSegmentGrowth(action) || isSegmentShrink(action);
    }
    if (!out.hasSegmentEvents) {
        return;
    }
    // What was reserved before the trace: the segments at its end less what
    // the trace added; never less than its segment frees need (a file whose
    // segments list misses what its trace made).
    out.reservedAfter.resize(trace.size());
    int64_t net = 0;
    int64_t lowest = 0;
    for (size_t i = 0; i < trace.size(); ++i) {
        if (isSegmentGrowth(trace.action[i])) {
            net = checkedSum(net, trace.bytes[i], snapshot.source);
        } else if (isSegmentShrink(trace.action[i])) {
            net = checkedSum(net, -trace.bytes[i], snapshot.source);
        }
        out.reservedAfter[i] = net;
        lowest = std::min(lowest, net);
    }
    out.reservedBeforeBytes =
        std::max(checkedSum(segmentsTotal, checkedNegation(net, snapshot.source), snapshot.source),
                 checkedNegation(lowest, snapshot.source));
    int64_t peak = out.reservedBeforeBytes;
    for (int64_t& reserved : out.reservedAfter) {
        reserved = checkedSum(reserved, out.reservedBeforeBytes, snapshot.source);
        peak = std::max(peak, reserved);
    }
    out.reservedPeakBytes = peak;
}

void addBands(const MemorySnapshot& snapshot, SnapshotTimeline& out) {
    struct Open {
        uint32_t name;
        double startUs;
        int depth;
    };
    std::vector<Open> open;
    for (const SnapshotAnnotation& annotation : snapshot.annotations) {
        if (annotation.device != out.device && annotation.device != -1) {
            continue;
        }
        if (annotation.start) {
            open.push_back({annotation.name, annotation.timeUs, int(open.size())});
            continue;
        }
        // An END closes the last open START of its name (Mosaic does the
        // same); an END without one is dropped.
        for (size_t i = open.size(); i-- > 0;) {
            if (open[i].name == annotation.name) {
                out.bands.push_back(
                    {open[i].name, open[i].startUs, annotation.timeUs, open[i].depth, true});
                open.erase(open.begin() + long(i));
                break;
            }
        }
    }
    const double lastUs = out.timeUs.empty() ? out.firstTimeUs : out.timeUs.back();
    for (const Open& range : open) {
        out.bands.push_back(
            {range.name, range.startUs, std::max(lastUs, range.startUs), range.depth, false});
    }
    std::stable_sort(
        out.bands.begin(), out.bands.end(),
        [](const TimelineBand& a, const TimelineBand& b) { return a.startUs < b.startUs; });
}

}  // namespace

namespace {

const SnapshotDeviceTrace& traceOf(const MemorySnapshot& snapshot, int device) {
    const std::vector<int> devices = snapshotDevices(snapshot);
    if (!devices.empty() && std::find(devices.begin(), devices.end(), device) == devices.end()) {
        std::string held;
        for (const int d : devices) {
            held += (held.empty() ? "" : ", ") + std::to_string(d);
        }
        throw std::invalid_argument(snapshot.source + " has no device " + std::to_string(device) +
                                    " (it holds " + held + ")");
    }
    static const SnapshotDeviceTrace kNoEvents;
    const SnapshotDeviceTrace& trace = size_t(device) < snapshot.deviceTraces.size()
                                           ? snapshot.deviceTraces[size_t(device)]
                                           : kNoEvents;
    if (trace.size() >= size_t(kAliveAtEnd)) {
        throw std::invalid_argument(snapshot.source + ": too many events on one device");
    }
    return trace;
}

// The trace's events in order: blocks opened, closed and marked, and what is
// allocated after each event counting from zero (the blocks alive before
// the trace are added once all are known). Returns the blocks left open.
std::unordered_map<uint64_t, uint32_t> replayTrace(const MemorySnapshot& snapshot,
                                                   const SnapshotDeviceTrace& trace,
                                                   BlockLabels& labels, SnapshotTimeline& out) {
    const std::string& source = snapshot.source;
    std::unordered_map<uint64_t, uint32_t> open;  // address → block
    open.reserve(1024);
    out.blocks.reserve(
        size_t(std::count(trace.action.begin(), trace.action.end(), SnapshotAction::Alloc)));
    auto newBlock = [&](size_t i, int32_t allocEvent, int32_t freeEvent) {
        const uint32_t stack = trace.stack[i];
        const uint16_t own = trace.category.empty() ? 0 : trace.category[i];
        out.blocks.push_back({trace.address[i], trace.bytes[i], allocEvent, freeEvent, -1, stack,
                              labels.category(stack, own),
                              labels.site(stack, allocEvent == kBeforeTrace)});
    };
    int64_t allocated = 0;
    for (size_t i = 0; i < trace.size(); ++i) {
        const auto event = static_cast<int32_t>(i);
        const auto found = open.find(trace.address[i]);
        switch (trace.action[i]) {
            case SnapshotAction::Alloc:  // over an open block: that one stays open
                newBlock(i, event, kAliveAtEnd);
                if (found != open.end()) {
                    found->second = static_cast<uint32_t>(out.blocks.size() - 1);
                } else {
                    open.emplace(trace.address[i], static_cast<uint32_t>(out.blocks.size() - 1));
                }
                allocated = checkedSum(allocated, trace.bytes[i], source);
                ++out.allocs;
                break;
            case SnapshotAction::FreeCompleted:
            case SnapshotAction::Free:
                ++out.frees;
                if (found != open.end()) {
                    TimelineBlock& block = out.blocks[found->second];
                    block.freeEvent = event;
                    allocated = checkedSum(allocated, -block.bytes, source);
                    open.erase(found);
                } else {  // alive before the trace, freed here
                    newBlock(i, kBeforeTrace, event);
                    out.aliveBeforeBytes = checkedSum(out.aliveBeforeBytes, trace.bytes[i], source);
                    allocated = checkedSum(allocated, -trace.bytes[i], source);
                }
                break;
            case SnapshotAction::FreeRequested:
                if (found != open.end()) {
                    out.blocks[found->second].freeRequestedEvent = event;
                }
                break;
            case SnapshotAction::Oom:
                out.ooms.push_back({event, trace.timeUs[i], trace.bytes[i], trace.address[i]});
                break;
            default:
                break;
        }
        out.allocatedAfter[i] = allocated;
    }
    return open;
}

// Blocks the segments hold at the end that no alloc in the trace left open.
void addSegmentBlocks(const MemorySnapshot& snapshot,
                      const std::unordered_map<uint64_t, uint32_t>& open, BlockLabels& labels,
                      SnapshotTimeline& out) {
    for (const SnapshotSegment& segment : snapshot.segments) {
        if (segment.device != out.device) {
            continue;
        }
        for (uint32_t b = segment.firstBlock; b < segment.firstBlock + segment.blockCount; ++b) {
            const SnapshotBlock& block = snapshot.blocks[b];
            if (block.state != SnapshotBlockState::ActiveAllocated || open.count(block.address)) {
                continue;
            }
            out.blocks.push_back({block.address, block.requestedSize, kBeforeTrace, kAliveAtEnd, -1,
                                  block.stack, labels.category(block.stack, 0),
                                  labels.site(block.stack)});
            out.aliveBeforeBytes =
                checkedSum(out.aliveBeforeBytes, block.requestedSize, snapshot.source);
        }
    }
}

void findPeak(const MemorySnapshot& snapshot, SnapshotTimeline& out) {
    out.peakBytes = out.aliveBeforeBytes;
    out.peakEvent = kBeforeTrace;
    for (size_t i = 0; i < out.allocatedAfter.size(); ++i) {
        out.allocatedAfter[i] =
            checkedSum(out.allocatedAfter[i], out.aliveBeforeBytes, snapshot.source);
        if (out.allocatedAfter[i] > out.peakBytes) {
            out.peakBytes = out.allocatedAfter[i];
            out.peakEvent = static_cast<int32_t>(i);
        }
    }
    out.endBytes = out.allocatedAfter.empty() ? out.aliveBeforeBytes : out.allocatedAfter.back();
    out.peakTimeUs =
        out.peakEvent == kBeforeTrace ? out.firstTimeUs : out.timeUs[size_t(out.peakEvent)];
    for (size_t b = 0; b < out.blocks.size(); ++b) {
        if (out.blocks[b].aliveAfter(out.peakEvent)) {
            out.aliveAtPeak.push_back(static_cast<uint32_t>(b));
        }
    }
    std::stable_sort(out.aliveAtPeak.begin(), out.aliveAtPeak.end(), [&](uint32_t a, uint32_t b) {
        return out.blocks[a].bytes > out.blocks[b].bytes;
    });
}

}  // namespace

SnapshotTimeline buildTimeline(const MemorySnapshot& snapshot, int device,
                               const std::vector<CategoryRule>& rules) {
    const SnapshotDeviceTrace& trace = traceOf(snapshot, device);
    SnapshotTimeline out;
    out.device = device;
    out.events = trace.size();
    out.memvizEvents = memvizEventCount(trace);
    out.timeUs = trace.timeUs;
    out.firstTimeUs = trace.timeUs.empty() ? 0 : trace.timeUs.front();
    out.allocatedAfter.resize(trace.size());
    BlockLabels labels(snapshot, rules);
    const auto open = replayTrace(snapshot, trace, labels, out);
    addSegmentBlocks(snapshot, open, labels, out);
    findPeak(snapshot, out);
    addReserved(snapshot, trace, out);
    if (out.reservedPeakBytes) {
        out.reservedAtPeakBytes = out.peakEvent == kBeforeTrace
                                      ? out.reservedBeforeBytes
                                      : out.reservedAfter[size_t(out.peakEvent)];
    }
    addBands(snapshot, out);
    out.categories = labels.categories();
    out.sites = labels.takeSites();
    return out;
}

}  // namespace stepscope
