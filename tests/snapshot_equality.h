#pragma once

// The first difference between two MemorySnapshots, field by field and id
// for id ("" when they are equal): how tests and the fuzz target hold the
// streaming snapshot reader to the tree reader.

#include <bit>
#include <cstdint>
#include <string>

#include "interop/memory_snapshot.h"

namespace stepscope::test {

inline bool sameBits(double a, double b) {
    return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

inline std::string firstDifference(const MemorySnapshot& a, const MemorySnapshot& b) {
    auto at = [](const char* what, size_t i) {
        return std::string(what) + "[" + std::to_string(i) + "]";
    };
    if (a.strings != b.strings) {
        return "strings";
    }
    if (a.frames.size() != b.frames.size()) {
        return "frames";
    }
    for (size_t i = 0; i < a.frames.size(); ++i) {
        const SnapshotFrame& x = a.frames[i];
        const SnapshotFrame& y = b.frames[i];
        if (x.filename != y.filename || x.name != y.name || x.line != y.line) {
            return at("frames", i);
        }
    }
    if (a.stackStart != b.stackStart || a.stackFrames != b.stackFrames) {
        return "stacks";
    }
    if (a.segments.size() != b.segments.size()) {
        return "segments";
    }
    for (size_t i = 0; i < a.segments.size(); ++i) {
        const SnapshotSegment& x = a.segments[i];
        const SnapshotSegment& y = b.segments[i];
        if (x.device != y.device || x.address != y.address || x.totalSize != y.totalSize ||
            x.stream != y.stream || x.large != y.large || x.expandable != y.expandable ||
            x.stack != y.stack || x.firstBlock != y.firstBlock || x.blockCount != y.blockCount) {
            return at("segments", i);
        }
    }
    if (a.blocks.size() != b.blocks.size()) {
        return "blocks";
    }
    for (size_t i = 0; i < a.blocks.size(); ++i) {
        const SnapshotBlock& x = a.blocks[i];
        const SnapshotBlock& y = b.blocks[i];
        if (x.address != y.address || x.size != y.size || x.requestedSize != y.requestedSize ||
            x.state != y.state || x.stack != y.stack) {
            return at("blocks", i);
        }
    }
    if (a.deviceTraces.size() != b.deviceTraces.size()) {
        return "deviceTraces";
    }
    for (size_t d = 0; d < a.deviceTraces.size(); ++d) {
        const SnapshotDeviceTrace& x = a.deviceTraces[d];
        const SnapshotDeviceTrace& y = b.deviceTraces[d];
        if (x.action != y.action || x.address != y.address || x.bytes != y.bytes ||
            x.stream != y.stream || x.stack != y.stack || x.category != y.category ||
            x.missingTimes != y.missingTimes || x.timeUs.size() != y.timeUs.size()) {
            return at("deviceTraces", d);
        }
        for (size_t i = 0; i < x.timeUs.size(); ++i) {
            if (!sameBits(x.timeUs[i], y.timeUs[i])) {
                return at("deviceTraces", d) + ".timeUs" + at("", i);
            }
        }
    }
    if (a.annotations.size() != b.annotations.size()) {
        return "annotations";
    }
    for (size_t i = 0; i < a.annotations.size(); ++i) {
        const SnapshotAnnotation& x = a.annotations[i];
        const SnapshotAnnotation& y = b.annotations[i];
        if (x.device != y.device || !sameBits(x.timeUs, y.timeUs) || x.start != y.start ||
            x.name != y.name) {
            return at("annotations", i);
        }
    }
    if (a.allocatorSettings != b.allocatorSettings) {
        return "allocatorSettings";
    }
    if (a.eventCategories != b.eventCategories) {
        return "eventCategories";
    }
    return "";
}

}  // namespace stepscope::test
