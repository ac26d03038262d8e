#include "models/memory_index.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <functional>
#include <numeric>
#include <unordered_map>

namespace stepscope::ui {

namespace {

constexpr uint32_t kAliveAtEnd = UINT32_MAX;
constexpr size_t kMinSpacing = 1024;  // events between checkpoints, at least

}  // namespace

MemoryIndex::MemoryIndex(const MemoryTrace& trace) : trace_(&trace) {
    const size_t n = trace.size();
    const bool hasOp = trace.op.size() == n;
    allocationOfEvent_.assign(n, -1);
    total_.resize(n);
    std::unordered_map<uint64_t, uint32_t> open;
    open.reserve(4096);
    const auto made = size_t(std::count_if(trace.bytes.begin(), trace.bytes.end(),
                                           [](int64_t bytes) { return bytes > 0; }));
    allocations_.reserve(made);
    startEvent_.reserve(made);
    endEvent_.reserve(made);
    int64_t total = 0;
    blockAlive_.reserve(n / kBlock + 1);
    CategoryBytes alive{};
    for (size_t i = 0; i < n; ++i) {
        if (i % kBlock == 0) {
            blockAlive_.push_back(alive);
        }
        total += trace.bytes[i];
        total_[i] = total;
        if (trace.bytes[i] > 0) {
            const auto id = uint32_t(allocations_.size());
            MemoryAllocation& a = allocations_.emplace_back();
            a.address = trace.address[i];
            a.bytes = trace.bytes[i];
            a.category = MemoryCategory(trace.category[i]);
            a.phase = trace.phase[i];
            a.step = trace.step[i];
            a.path = trace.path[i];
            a.op = hasOp ? trace.op[i] : -1;
            a.startUs = trace.timeUs[i];
            startEvent_.push_back(uint32_t(i));
            endEvent_.push_back(kAliveAtEnd);
            open[a.address] = id;
            allocationOfEvent_[i] = int32_t(id);
            alive[size_t(a.category)] += a.bytes;
        } else if (const auto found = open.find(trace.address[i]); found != open.end()) {
            endEvent_[found->second] = uint32_t(i);
            allocations_[found->second].endUs = trace.timeUs[i];
            allocationOfEvent_[i] = int32_t(found->second);
            alive[size_t(allocations_[found->second].category)] -=
                allocations_[found->second].bytes;
            open.erase(found);
        }
    }
    blockMax_.assign((n + kBlock - 1) / kBlock, INT64_MIN);
    for (size_t i = 0; i < n; ++i) {
        blockMax_[i / kBlock] = std::max(blockMax_[i / kBlock], total_[i]);
    }
    addCheckpoints();
}

// Checkpoints of the alive set, each made from the one before: keep who is
// still alive, add who was made since. Spacing them at least as far apart as
// the set is large keeps the whole at O(events).
void MemoryIndex::addCheckpoints() {
    const size_t n = trace_->size();
    checkpoint_.push_back(0);
    checkpointStart_.push_back(0);
    size_t previous = 0;
    while (previous < n) {
        const size_t previousCount = checkpointAlive_.size() - checkpointStart_.back();
        const size_t next = std::min(n, previous + std::max(kMinSpacing, previousCount));
        const size_t from = checkpointStart_.back();
        const size_t to = checkpointAlive_.size();
        checkpointStart_.push_back(to);
        checkpoint_.push_back(next);
        for (size_t k = from; k < to; ++k) {
            const uint32_t a = checkpointAlive_[k];
            if (endEvent_[a] >= next) {
                checkpointAlive_.push_back(a);
            }
        }
        const auto first =
            size_t(std::lower_bound(startEvent_.begin(), startEvent_.end(), uint32_t(previous)) -
                   startEvent_.begin());
        for (size_t a = first; a < allocations_.size() && startEvent_[a] < next; ++a) {
            if (endEvent_[a] >= next) {
                checkpointAlive_.push_back(uint32_t(a));
            }
        }
        previous = next;
    }
}

double MemoryIndex::startUs() const {
    return trace_ && !trace_->empty() ? trace_->timeUs.front() : 0;
}

double MemoryIndex::endUs() const {
    return trace_ && !trace_->empty() ? trace_->timeUs.back() : 0;
}

double MemoryIndex::endOf(size_t allocation) const {
    return allocations_[allocation].endUs >= 0 ? allocations_[allocation].endUs : endUs();
}

size_t MemoryIndex::position(double timeUs) const {
    if (!trace_) {
        return 0;
    }
    return size_t(std::upper_bound(trace_->timeUs.begin(), trace_->timeUs.end(), timeUs) -
                  trace_->timeUs.begin());
}

template <typename Fn>
void MemoryIndex::forEachAlive(size_t position, Fn fn) const {
    if (checkpoint_.empty()) {
        return;
    }
    const size_t c = size_t(std::upper_bound(checkpoint_.begin(), checkpoint_.end(), position) -
                            checkpoint_.begin()) -
                     1;
    const size_t from = checkpointStart_[c];
    const size_t to =
        c + 1 < checkpointStart_.size() ? checkpointStart_[c + 1] : checkpointAlive_.size();
    for (size_t k = from; k < to; ++k) {
        if (endEvent_[checkpointAlive_[k]] >= position) {
            fn(checkpointAlive_[k]);
        }
    }
    const auto first =
        size_t(std::lower_bound(startEvent_.begin(), startEvent_.end(), uint32_t(checkpoint_[c])) -
               startEvent_.begin());
    for (size_t a = first; a < allocations_.size() && startEvent_[a] < position; ++a) {
        if (endEvent_[a] >= position) {
            fn(uint32_t(a));
        }
    }
}

std::vector<uint32_t> MemoryIndex::aliveAtPosition(size_t position) const {
    std::vector<uint32_t> alive;
    forEachAlive(position, [&](uint32_t a) { alive.push_back(a); });
    return alive;
}

std::vector<uint32_t> MemoryIndex::aliveAt(double timeUs) const {
    return aliveAtPosition(position(timeUs));
}

bool MemoryIndex::below(uint32_t a, uint32_t b, StackOrder order) const {
    if (order == StackOrder::ByCategory && allocations_[a].category != allocations_[b].category) {
        return allocations_[a].category < allocations_[b].category;
    }
    return a < b;
}

std::vector<MemoryIndex::Placed> MemoryIndex::stackAt(double timeUs, StackOrder order,
                                                      int64_t floorBytes) const {
    std::vector<uint32_t> alive = aliveAt(timeUs);
    if (order == StackOrder::ByAllocation) {
        std::erase_if(alive, [&](uint32_t a) { return allocations_[a].bytes < floorBytes; });
    } else {
        std::stable_sort(alive.begin(), alive.end(), [&](uint32_t a, uint32_t b) {
            return allocations_[a].category < allocations_[b].category;
        });
    }
    std::vector<Placed> stack;
    stack.reserve(alive.size());
    int64_t bottom = 0;
    for (const uint32_t a : alive) {
        stack.push_back({a, bottom});
        bottom += allocations_[a].bytes;
    }
    return stack;
}

int64_t MemoryIndex::allocationAt(double timeUs, double bytes, StackOrder order,
                                  int64_t floorBytes) const {
    if (bytes < 0) {
        return -1;
    }
    // No stack is built: one pass finds the category the height falls in
    // (by category), a second the allocation within it.
    const size_t at = position(timeUs);
    int category = -1;
    double below = 0;
    if (order == StackOrder::ByCategory) {
        CategoryBytes sums{};
        forEachAlive(at, [&](uint32_t a) {
            sums[size_t(allocations_[a].category)] += allocations_[a].bytes;
        });
        for (size_t c = 0; c < kMemoryCategories; ++c) {
            if (bytes < below + double(sums[c])) {
                category = int(c);
                break;
            }
            below += double(sums[c]);
        }
        if (category < 0) {
            return -1;
        }
    }
    int64_t found = -1;
    forEachAlive(at, [&](uint32_t a) {
        const MemoryAllocation& allocation = allocations_[a];
        if (found >= 0 || (category >= 0 && int(allocation.category) != category) ||
            (order == StackOrder::ByAllocation && allocation.bytes < floorBytes)) {
            return;
        }
        below += double(allocation.bytes);
        if (bytes < below) {
            found = a;
        }
    });
    return found;
}

std::vector<BandVertex> MemoryIndex::bandOf(size_t allocation, StackOrder order,
                                            int64_t floorBytes) const {
    return bandOf(allocation, order, floorBytes, -HUGE_VAL, HUGE_VAL, 0);
}

std::vector<BandVertex> MemoryIndex::bandOf(size_t allocation, StackOrder order, int64_t floorBytes,
                                            double fromUs, double toUs, size_t columns) const {
    std::vector<BandVertex> band;
    const auto self = uint32_t(allocation);
    const bool floored = order == StackOrder::ByAllocation;
    if (floored && allocations_[self].bytes < floorBytes) {
        return band;
    }
    const auto counts = [&](uint32_t other) {
        return other != self && (!floored || allocations_[other].bytes >= floorBytes) &&
               below(other, self, order);
    };
    // Its events within the window: from the last at or before fromUs (its
    // own alloc, where that is later) to the first after toUs (its free,
    // where that is sooner).
    const size_t made = startEvent_[self];
    const size_t start = std::max(made, std::max<size_t>(position(fromUs), 1) - 1);
    const size_t end = std::min<size_t>({endEvent_[self], trace_->size(), position(toUs) + 1});
    int64_t bottom = 0;
    std::vector<std::pair<uint32_t, int64_t>> olderFreed;  // same category: (free, bytes)
    for (const uint32_t other : aliveAtPosition(start + 1)) {
        if (counts(other)) {
            bottom += allocations_[other].bytes;
            if (allocations_[other].category == allocations_[self].category) {
                olderFreed.emplace_back(endEvent_[other], allocations_[other].bytes);
            }
        }
    }
    band.push_back({trace_->timeUs[start], bottom});
    if (!floored && columns > 0 && end > start && (end - start) / kBlock > 2 * columns) {
        // Sampled: what lies below it is the lower categories' sum at each
        // block's start, and the older ones of its own category not yet freed.
        std::sort(olderFreed.begin(), olderFreed.end());
        int64_t older = 0;
        for (const auto& [freed, bytes] : olderFreed) {
            older += bytes;
        }
        auto next = olderFreed.begin();
        const size_t category = size_t(allocations_[self].category);
        for (size_t p = (start / kBlock + 1) * kBlock; p < end; p += kBlock) {
            for (; next != olderFreed.end() && next->first < p; ++next) {
                older -= next->second;
            }
            if (trace_->timeUs[p - 1] == trace_->timeUs[p]) {
                continue;  // the time holds more events than this block's first
            }
            const CategoryBytes& at = blockAlive_[p / kBlock];
            const int64_t lower =
                std::accumulate(at.begin(), at.begin() + long(category), int64_t{0});
            band.push_back({trace_->timeUs[p - 1], lower + older});
        }
        return band;
    }
    for (size_t j = start + 1; j < end; ++j) {
        const int32_t other = allocationOfEvent_[j];
        if (other < 0 || !counts(uint32_t(other))) {
            continue;
        }
        bottom += trace_->bytes[j];
        if (band.back().timeUs == trace_->timeUs[j]) {
            band.back().bottom = bottom;
        } else {
            band.push_back({trace_->timeUs[j], bottom});
        }
    }
    return band;
}

int64_t MemoryIndex::maxTotal(double fromUs, double toUs) const {
    const size_t to = position(toUs);  // events [first, to) count
    if (to == 0) {
        return 0;
    }
    const size_t from = position(fromUs);
    size_t first = from > 0 ? from - 1 : 0;  // the state holding at fromUs
    int64_t best = 0;
    while (first < to) {
        if (first % kBlock == 0 && first + kBlock <= to) {
            best = std::max(best, blockMax_[first / kBlock]);
            first += kBlock;
        } else {
            best = std::max(best, total_[first]);
            ++first;
        }
    }
    return best;
}

std::vector<uint32_t> MemoryIndex::aliveBetween(double fromUs, double toUs) const {
    const size_t from = position(fromUs);
    std::vector<uint32_t> alive = aliveAtPosition(from);
    const size_t to = position(toUs);
    const auto first =
        size_t(std::lower_bound(startEvent_.begin(), startEvent_.end(), uint32_t(from)) -
               startEvent_.begin());
    for (size_t a = first; a < allocations_.size() && startEvent_[a] < to; ++a) {
        alive.push_back(uint32_t(a));
    }
    return alive;
}

AllocationLayout MemoryIndex::layout(int64_t floorBytes, size_t maxBands,
                                     size_t maxVertices) const {
    AllocationLayout out;
    if (!trace_ || trace_->empty()) {
        return out;
    }
    // Raise the floor until no more than maxBands allocations reach it.
    std::vector<int64_t> sizes;
    for (const MemoryAllocation& a : allocations_) {
        if (a.bytes >= floorBytes) {
            sizes.push_back(a.bytes);
        }
    }
    int64_t floor = floorBytes;
    if (sizes.size() > maxBands) {
        std::nth_element(sizes.begin(), sizes.begin() + long(maxBands), sizes.end(),
                         std::greater<>());
        floor = sizes[maxBands] + 1;
    }
    const size_t n = trace_->size();
    std::vector<int32_t> band(allocations_.size(), -1);
    for (size_t a = 0; a < allocations_.size(); ++a) {
        if (allocations_[a].bytes >= floor) {
            band[a] = int32_t(out.shown.size());
            out.shown.push_back(uint32_t(a));
        }
    }
    out.floorBytes = floor;
    out.hiddenCount = allocations_.size() - out.shown.size();
    std::vector<std::vector<BandVertex>> vertices(out.shown.size());
    std::vector<int64_t> bottom(out.shown.size(), 0);
    std::vector<uint32_t> stack;  // bands alive, bottom first: in the order they were made
    size_t vertexCount = 0;
    int64_t shownSum = 0;
    for (size_t j = 0; j < n; ++j) {
        const int32_t a = allocationOfEvent_[j];
        const double time = trace_->timeUs[j];
        if (a >= 0 && band[size_t(a)] >= 0) {
            const auto b = uint32_t(band[size_t(a)]);
            if (trace_->bytes[j] > 0) {
                bottom[b] = shownSum;
                vertices[b].push_back({time, shownSum});
                ++vertexCount;
                stack.push_back(b);
                shownSum += trace_->bytes[j];
            } else {
                const auto it = std::lower_bound(stack.begin(), stack.end(), b);
                const auto above = size_t(it - stack.begin());
                stack.erase(it);
                shownSum += trace_->bytes[j];
                for (size_t k = above; k < stack.size(); ++k) {
                    const uint32_t moved = stack[k];
                    bottom[moved] += trace_->bytes[j];
                    if (vertices[moved].back().timeUs == time) {
                        vertices[moved].back().bottom = bottom[moved];
                    } else {
                        vertices[moved].push_back({time, bottom[moved]});
                        ++vertexCount;
                    }
                }
                if (vertexCount > maxVertices && maxBands > 16) {
                    return layout(floorBytes, maxBands / 2, maxVertices);
                }
            }
        }
    }
    out.vertices.reserve(vertexCount);
    for (auto& v : vertices) {
        out.firstVertex.push_back(out.vertices.size());
        out.vertices.insert(out.vertices.end(), v.begin(), v.end());
    }
    return out;
}

SmallerBand MemoryIndex::smallerBand(double fromUs, double toUs, int64_t floorBytes,
                                     size_t maxPoints) const {
    SmallerBand out;
    if (!trace_ || trace_->empty() || toUs <= fromUs) {
        return out;
    }
    const size_t first = position(fromUs);
    const size_t last = position(toUs);
    int64_t shown = 0;
    int64_t hidden = 0;
    forEachAlive(first, [&](uint32_t a) {
        (allocations_[a].bytes >= floorBytes ? shown : hidden) += allocations_[a].bytes;
    });
    out.keysUs.push_back(fromUs);  // the state holding at the left edge
    out.shownBytes.push_back(shown);
    out.totalBytes.push_back(shown + hidden);
    const size_t buckets = std::max<size_t>(1, maxPoints);
    std::vector<int64_t> best(buckets, -1);
    std::vector<std::pair<int64_t, double>> bestAt(buckets);
    const double span = toUs - fromUs;
    for (size_t j = first; j < last; ++j) {
        const int32_t a = allocationOfEvent_[j];
        if (a < 0) {
            continue;
        }
        (allocations_[size_t(a)].bytes >= floorBytes ? shown : hidden) += trace_->bytes[j];
        const double time = trace_->timeUs[j];
        const size_t bucket =
            std::min(buckets - 1, size_t((time - fromUs) / span * double(buckets)));
        if (shown + hidden > best[bucket]) {
            best[bucket] = shown + hidden;
            bestAt[bucket] = {shown, time};
        }
    }
    for (size_t b = 0; b < buckets; ++b) {
        if (best[b] >= 0) {
            out.keysUs.push_back(bestAt[b].second);
            out.shownBytes.push_back(bestAt[b].first);
            out.totalBytes.push_back(best[b]);
        }
    }
    out.keysUs.push_back(toUs);  // carried to the right edge
    out.shownBytes.push_back(out.shownBytes.back());
    out.totalBytes.push_back(out.totalBytes.back());
    return out;
}

namespace {

// An allocation's site: its path, op, category and phase, hashed (a million
// allocations fall into a few hundred sites; a tree costs a dozen
// comparisons for each).
struct SiteKey {
    int32_t path;
    int32_t op;
    int category;
    int phase;
    bool operator==(const SiteKey&) const = default;
};
struct SiteKeyHash {
    size_t operator()(const SiteKey& key) const {
        const uint64_t ids = (uint64_t(uint32_t(key.path)) << 32) | uint32_t(key.op);
        const uint64_t kinds = (uint64_t(uint32_t(key.category)) << 32) | uint32_t(key.phase);
        return std::hash<uint64_t>{}(ids * 0x9E3779B97F4A7C15ULL ^ kinds);
    }
};

}  // namespace

std::vector<AllocationSite> groupSites(const MemoryIndex& index,
                                       const std::vector<uint32_t>& allocations) {
    std::unordered_map<SiteKey, size_t, SiteKeyHash> found;
    std::vector<AllocationSite> sites;
    std::vector<std::vector<int64_t>> sizes;
    for (const uint32_t a : allocations) {
        const MemoryAllocation& allocation = index.allocations()[a];
        const SiteKey key{allocation.path, allocation.op, int(allocation.category),
                          allocation.phase};
        auto [it, added] = found.try_emplace(key, sites.size());
        if (added) {
            AllocationSite& site = sites.emplace_back();
            site.path = index.trace()->name(allocation.path);
            site.op = index.trace()->name(allocation.op);
            site.category = allocation.category;
            site.phase = allocation.phase;
            sizes.emplace_back();
        }
        AllocationSite& site = sites[it->second];
        site.largest = std::max(site.largest, allocation.bytes);
        site.totalBytes += allocation.bytes;
        site.meanLifetimeUs += index.endOf(a) - allocation.startUs;
        // Allocations come in time order, so a site's steps mostly repeat
        // the one before, and so do its sizes: kept once each run.
        if (site.steps.empty() || site.steps.back() != allocation.step) {
            site.steps.push_back(allocation.step);
        }
        site.allocations.push_back(a);
        if (sizes[it->second].empty() || sizes[it->second].back() != allocation.bytes) {
            sizes[it->second].push_back(allocation.bytes);
        }
    }
    for (size_t s = 0; s < sites.size(); ++s) {
        AllocationSite& site = sites[s];
        site.meanLifetimeUs /= double(site.allocations.size());
        std::sort(site.steps.begin(), site.steps.end());
        site.steps.erase(std::unique(site.steps.begin(), site.steps.end()), site.steps.end());
        std::sort(sizes[s].begin(), sizes[s].end());
        site.sizes = size_t(std::unique(sizes[s].begin(), sizes[s].end()) - sizes[s].begin());
    }
    std::sort(sites.begin(), sites.end(), [](const AllocationSite& a, const AllocationSite& b) {
        return a.largest != b.largest ? a.largest > b.largest : a.totalBytes > b.totalBytes;
    });
    return sites;
}

std::string formatSteps(const std::vector<int>& steps) {
    std::string out;
    for (size_t i = 0; i < steps.size();) {
        size_t j = i;
        while (j + 1 < steps.size() && steps[j + 1] == steps[j] + 1 && steps[j] >= 0) {
            ++j;
        }
        if (!out.empty()) {
            out += ", ";
        }
        if (steps[i] < 0) {
            out += "setup";
            j = i;
        } else if (j == i) {
            out += std::to_string(steps[i]);
        } else {
            out += std::to_string(steps[i]) + "–" + std::to_string(steps[j]);
        }
        i = j + 1;
    }
    return out;
}

std::string moduleKind(const std::string& path) {
    std::string out;
    size_t start = 0;
    while (start <= path.size()) {
        size_t dot = path.find('.', start);
        if (dot == std::string::npos) {
            dot = path.size();
        }
        const std::string_view part(path.data() + start, dot - start);
        const bool number = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) {
            return c >= '0' && c <= '9';
        });
        if (start > 0) {
            out += '.';
        }
        out += number ? std::string_view("*") : part;
        start = dot + 1;
    }
    return out;
}

}  // namespace stepscope::ui
