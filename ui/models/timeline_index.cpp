#include "models/timeline_index.h"

#include <algorithm>
#include <unordered_map>

namespace stepscope::ui {

TimelineIndex::TimelineIndex(const StepTimeline& timeline) : timeline_(&timeline) {
    const std::vector<TimelineSpan>& spans = timeline.spans;
    trackOf_.assign(spans.size(), -1);
    depthOf_.assign(spans.size(), 0);
    categoryOf_.assign(spans.size(), 0);
    std::unordered_map<std::string, int> trackIds;
    std::unordered_map<std::string, uint16_t> categoryIds;
    std::vector<std::string> names;  // the tracks, in order of first use
    for (size_t i = 0; i < spans.size(); ++i) {
        if (spans[i].kind == SpanKind::Range) {
            continue;
        }
        const auto track = trackIds.try_emplace(spans[i].track, int(names.size()));
        if (track.second) {
            names.push_back(spans[i].track);
        }
        trackOf_[i] = track.first->second;
        const auto category =
            categoryIds.try_emplace(spans[i].category, uint16_t(categories_.size()));
        if (category.second && categories_.size() < 0xffff) {
            categories_.push_back(spans[i].category);
        }
        categoryOf_[i] = category.first->second;
    }
    // Host threads above streams, each kind in order of first use.
    std::vector<int> order(names.size());
    for (size_t i = 0; i < order.size(); ++i) {
        order[i] = int(i);
    }
    std::stable_sort(order.begin(), order.end(), [&names](int a, int b) {
        return names[size_t(a)].rfind("thread", 0) == 0 && names[size_t(b)].rfind("stream", 0) == 0;
    });
    std::vector<int> row(names.size());
    for (size_t i = 0; i < order.size(); ++i) {
        row[size_t(order[i])] = int(i);
        tracks_ << QString::fromStdString(names[size_t(order[i])]);
    }
    lanes_.assign(names.size(), {});
    for (size_t i = 0; i < spans.size(); ++i) {
        if (trackOf_[i] >= 0) {
            trackOf_[i] = row[size_t(trackOf_[i])];
            lanes_[size_t(trackOf_[i])].spans.push_back(int32_t(i));
        }
    }
    for (Track& lane : lanes_) {
        indexTrack(lane);
    }
    launchOf_ = launchingSpans(timeline);
    for (size_t i = 0; i < launchOf_.size(); ++i) {
        if (launchOf_[i] >= 0) {
            launched_.emplace_back(launchOf_[i], int32_t(i));
        }
    }
    std::sort(launched_.begin(), launched_.end());
}

// By start, the longer first at one start so that it encloses the shorter;
// each span's parent is the innermost earlier span still open at its start.
void TimelineIndex::indexTrack(Track& lane) {
    const std::vector<TimelineSpan>& spans = timeline_->spans;
    std::stable_sort(lane.spans.begin(), lane.spans.end(), [&spans](int32_t a, int32_t b) {
        const TimelineSpan& x = spans[size_t(a)];
        const TimelineSpan& y = spans[size_t(b)];
        return x.startUs != y.startUs ? x.startUs < y.startUs : x.durationUs > y.durationUs;
    });
    std::vector<int32_t> open;  // positions of the spans enclosing the next one
    for (const int32_t span : lane.spans) {
        const double start = spans[size_t(span)].startUs;
        while (!open.empty() && endOf(lane.spans[size_t(open.back())]) <= start) {
            open.pop_back();
        }
        lane.parents.push_back(open.empty() ? -1 : open.back());
        depthOf_[size_t(span)] = uint8_t(std::min<size_t>(open.size(), 255));
        open.push_back(int32_t(lane.starts.size()));
        lane.starts.push_back(start);
    }
}

int TimelineIndex::lastStartedBy(const Track& lane, double timeUs) {
    const auto after = std::upper_bound(lane.starts.begin(), lane.starts.end(), timeUs);
    return int(after - lane.starts.begin()) - 1;
}

int TimelineIndex::spanAt(double timeUs, int track, double slackUs) const {
    if (!timeline_ || track < 0 || track >= int(lanes_.size())) {
        return -1;
    }
    const Track& lane = lanes_[size_t(track)];
    const int last = lastStartedBy(lane, timeUs);
    // What holds the time: that span, or one of those enclosing it; else the
    // one of them that ended nearest before it, within the slack.
    int best = -1;
    double distance = slackUs;
    for (int at = last; at >= 0; at = lane.parents[size_t(at)]) {
        const double gap = timeUs - endOf(lane.spans[size_t(at)]);
        if (gap <= 0) {
            return lane.spans[size_t(at)];
        }
        if (gap <= distance) {
            best = lane.spans[size_t(at)];
            distance = gap;
        }
    }
    // Or the next to start, if nearer.
    const size_t next = size_t(last + 1);
    if (next < lane.spans.size() && lane.starts[next] - timeUs <= distance) {
        best = lane.spans[next];
    }
    return best;
}

std::vector<int> TimelineIndex::launchedBy(int span) const {
    std::vector<int> kernels;
    auto it = std::lower_bound(launched_.begin(), launched_.end(),
                               std::make_pair(int32_t(span), int32_t(-1)));
    for (; it != launched_.end() && it->first == span; ++it) {
        kernels.push_back(it->second);
    }
    return kernels;
}

}  // namespace stepscope::ui
