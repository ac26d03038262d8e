#pragma once

#include <QStringList>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "profile/step_timeline.h"

namespace stepscope::ui {

// A traced step's spans indexed for drawing and hover, however many there
// are: the tracks (host threads first, then streams, each in order of first
// use); each track's spans by start, each with the span that encloses it
// (operators nest on a host thread); each span's category; and the launch
// links (a kernel's launch, a launch's kernels). A lookup at a time costs a
// binary search and the walk up the enclosing spans; drawing visits only the
// spans in view. Holds a pointer to the timeline, which must outlive it.
class TimelineIndex {
public:
    TimelineIndex() = default;
    explicit TimelineIndex(const StepTimeline& timeline);

    const StepTimeline* timeline() const { return timeline_; }
    const TimelineSpan& span(int index) const { return timeline_->spans[size_t(index)]; }
    const QStringList& tracks() const { return tracks_; }           // top to bottom
    int trackOf(int span) const { return trackOf_[size_t(span)]; }  // -1 for ranges
    int depthOf(int span) const { return depthOf_[size_t(span)]; }  // spans enclosing it
    int categoryOf(int span) const { return categoryOf_[size_t(span)]; }
    const std::vector<std::string>& categories() const { return categories_; }

    // The innermost span on a track that holds a time; where none does, the
    // nearest one within slackUs of it; -1 for none.
    int spanAt(double timeUs, int track, double slackUs = 0) const;
    // A kernel's launch (-1 for none), and the device events a span launched.
    int launchOf(int span) const { return launchOf_.empty() ? -1 : launchOf_[size_t(span)]; }
    std::vector<int> launchedBy(int span) const;

    // Calls visit(span) for each span of a track that overlaps [fromUs, toUs]:
    // first those that began before fromUs, outermost first, then by start.
    template <typename Visit>
    void forEachIn(int track, double fromUs, double toUs, Visit&& visit) const {
        const Track& lane = lanes_[size_t(track)];
        const int last = lastStartedBy(lane, fromUs);
        std::vector<int> open;  // what holds fromUs, innermost first
        for (int at = last; at >= 0; at = lane.parents[size_t(at)]) {
            if (endOf(lane.spans[size_t(at)]) >= fromUs) {
                open.push_back(lane.spans[size_t(at)]);
            }
        }
        for (auto it = open.rbegin(); it != open.rend(); ++it) {
            visit(*it);
        }
        for (size_t at = size_t(last + 1); at < lane.spans.size() && lane.starts[at] <= toUs;
             ++at) {
            visit(lane.spans[at]);
        }
    }

private:
    struct Track {
        std::vector<int32_t> spans;    // by start; an enclosing span before what it holds
        std::vector<double> starts;    // theirs
        std::vector<int32_t> parents;  // the position of the span enclosing each, or -1
    };
    void indexTrack(Track& lane);
    // The position of the last span to start at or before a time, -1 for none.
    static int lastStartedBy(const Track& lane, double timeUs);
    double endOf(int span) const {
        const TimelineSpan& s = timeline_->spans[size_t(span)];
        return s.startUs + s.durationUs;
    }

    const StepTimeline* timeline_ = nullptr;
    QStringList tracks_;
    std::vector<Track> lanes_;
    std::vector<int32_t> trackOf_;
    std::vector<uint8_t> depthOf_;
    std::vector<uint16_t> categoryOf_;
    std::vector<std::string> categories_;
    std::vector<int32_t> launchOf_;
    std::vector<std::pair<int32_t, int32_t>> launched_;  // (launch, device event), sorted
};

}  // namespace stepscope::ui
