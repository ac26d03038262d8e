// libFuzzer target for the memory snapshot reader (issues 28 and 33): any
// bytes, as a pickle or as JSON, give a snapshot whose every device makes a
// timeline, a summary and its JSON, or one SnapshotError; never a crash.
//
//   (one command line:) clang++-14 -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Icore
//       tests/fuzz/fuzz_memory_snapshot.cpp core/util/pickle_reader.cpp
//       core/interop/memory_snapshot.cpp core/interop/memory_snapshot_types.cpp
//       core/interop/snapshot_builder.cpp core/interop/snapshot_pickle_stream.cpp
//       core/analysis/snapshot_stacks.cpp
//       core/analysis/snapshot_timeline.cpp core/analysis/recording_summary.cpp
//       -o fuzz_memory_snapshot
//   ./fuzz_memory_snapshot -max_total_time=60 -dict=tests/fuzz/fuzz_memory_snapshot.dict
//       CORPUS_DIR  (seeds: tests/data/make_memory_snapshots.py's files)
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "../snapshot_equality.h"
#include "analysis/recording_summary.h"
#include "analysis/snapshot_stacks.h"
#include "analysis/snapshot_timeline.h"
#include "interop/memory_snapshot.h"
#include "interop/snapshot_pickle_stream.h"

using namespace stepscope;

namespace {

// Whatever the streaming reader reads, the tree reader reads the same, id
// for id; whatever the tree reader refuses, the stream leaves to it. (The
// tree's own bounds may refuse what the stream, holding no tree, reads.)
void sameAsTheTree(const std::string& bytes, const SnapshotLimits& limits) {
    std::optional<MemorySnapshot> streamed;
    try {
        streamed = streamSnapshotPickle(bytes, "fuzz.pickle", limits);
    } catch (const SnapshotError&) {
        return;  // beyond a bound that both readers share
    }
    if (!streamed) {
        return;
    }
    try {
        const MemorySnapshot tree = parseSnapshotPickleTree(bytes, "fuzz.pickle", limits);
        const std::string difference = test::firstDifference(*streamed, tree);
        if (!difference.empty()) {
            std::fprintf(stderr, "the stream and the tree differ at %s\n", difference.c_str());
            std::abort();
        }
    } catch (const SnapshotError& error) {
        if (error.kind != SnapshotError::Kind::TooLarge) {
            std::fprintf(stderr, "the stream read what the tree refuses: %s\n", error.what());
            std::abort();
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    SnapshotLimits limits;
    limits.maxEvents = 1 << 20;
    limits.maxBlocks = 1 << 20;
    limits.maxSegments = 1 << 16;
    limits.maxDevices = 64;
    limits.pickle.maxValues = 1 << 20;
    limits.pickle.maxItems = 1 << 22;
    sameAsTheTree(std::string(reinterpret_cast<const char*>(data), size), limits);
    try {
        const MemorySnapshot snapshot = parseMemorySnapshot(
            std::string(reinterpret_cast<const char*>(data), size), "fuzz.pickle", limits);
        const RecordingSummary busiest =
            summarizeTimeline(buildTimeline(snapshot, busiestDevice(snapshot), {{"mine", "a.*b"}}));
        for (const int device : snapshotDevices(snapshot)) {
            const SnapshotTimeline timeline = buildTimeline(snapshot, device);
            const RecordingSummary summary = summarizeTimeline(timeline);
            // Strict dump: a name that is not UTF-8 would throw here.
            (void)toJson(diffRecordings(busiest, summary)).dump();
            for (const uint32_t block : timeline.aliveAtPeak) {
                (void)formatStack(snapshot, timeline.blocks[block].stack);
            }
        }
    } catch (const SnapshotError&) {
        // A refusal with its message: what a hostile or broken file should get.
    }
    return 0;
}
