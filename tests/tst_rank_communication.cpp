// core/analysis: communication across ranks on span lists made by hand, each
// figure worked out in the comments (union, overlap under compute, exposed
// time, matching by group and sequence, transfer and wait, the straggler),
// and the interval arithmetic under them.
#include <QtTest>

#include "results/intervals.h"
#include "results/rank_communication.h"
#include "results/rank_figures.h"
#include "results/run_result.h"

using namespace stepscope;

namespace {

CollectiveSpan collective(std::string op, std::string group, int64_t sequence, double start,
                          double end, int64_t bytes = 400) {
    CollectiveSpan span;
    span.op = std::move(op);
    span.group = std::move(group);
    span.sequence = sequence;
    span.startUs = start;
    span.endUs = end;
    span.bytes = bytes;
    return span;
}

// Rank 0 arrives early at both all-reduces; rank 1 comes last (its spans are
// the transfers). Rank 0 also has a broadcast rank 1 never made, and both a
// collective of group "tp" under different ops: two unmatched.
std::vector<RankSpans> twoRanks() {
    RankSpans first;
    first.rank = 0;
    first.collectives = {
        collective("all_reduce", "0", 0, 10, 20), collective("all_reduce", "0", 1, 30, 50),
        collective("broadcast", "0", 2, 60, 61, 8), collective("all_gather", "tp", 0, 70, 71, 16)};
    first.compute = {{0, 15}, {40, 45}};
    RankSpans second;
    second.rank = 1;
    second.collectives = {collective("all_reduce", "0", 0, 12, 16),
                          collective("all_reduce", "0", 1, 35, 50),
                          collective("reduce_scatter", "tp", 0, 70, 71, 16)};
    second.compute = {{0, 12}};
    return {first, second};
}

}  // namespace

class TestRankCommunication : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // Where the ranks ran, each node once, in the order it first appears.
    void theNodesNameTheirRanksInOrder() {
        DistributedRun run;
        for (const char* host : {"node-b", "node-a", "node-b", "", "node-a"}) {
            RankRecord rank;
            rank.rank = int(run.ranks.size());
            rank.host = host;
            run.ranks.push_back(rank);
        }
        QCOMPARE(rankNodesText(run), std::string("node-b (ranks 0, 2), node-a (ranks 1, 4)"));
        run.ranks.resize(1);
        QCOMPARE(rankNodesText(run), std::string("node-b (rank 0)"));
        run.ranks.front().host.clear();
        QCOMPARE(rankNodesText(run), std::string());
    }

    void intervalsMergeWhereTheyTouchAndIntersectByLength() {
        const std::vector<Interval> a = mergeIntervals({{5, 8}, {0, 2}, {2, 4}, {6, 10}});
        QCOMPARE(int(a.size()), 2);  // [0,4] (touching joins), [5,10]
        QCOMPARE(a[0].end, 4.0);
        QCOMPARE(totalLength(a), 9.0);
        const std::vector<Interval> b = mergeIntervals({{3, 6}, {9, 20}});
        QCOMPARE(intersectionLength(a, b), 1.0 + 1.0 + 1.0);  // [3,4], [5,6], [9,10]
        QCOMPARE(intersectionLength(a, {}), 0.0);
        QCOMPARE(intersectionLength({{0, 1}}, {{1, 2}}), 0.0);
    }

    // What a blocking collective takes out of a phase: worked by hand.
    void intervalsSubtractPieceByPiece() {
        const auto text = [](const std::vector<Interval>& set) {
            QStringList parts;
            for (const Interval& i : set) {
                parts << QString("%1-%2").arg(i.start).arg(i.end);
            }
            return parts.join(' ');
        };
        // A phase 0-10 with collectives at 2-3 and 5-12: 0-2 and 3-5 are left.
        QCOMPARE(text(subtractIntervals({{0, 10}}, {{2, 3}, {5, 12}})), QString("0-2 3-5"));
        // Two phases, one collective across the gap between them.
        QCOMPARE(text(subtractIntervals({{0, 4}, {6, 10}}, {{3, 7}})), QString("0-3 7-10"));
        // Nothing removed; everything removed; a collective touching an end.
        QCOMPARE(text(subtractIntervals({{1, 2}}, {})), QString("1-2"));
        QCOMPARE(text(subtractIntervals({{1, 2}}, {{0, 5}})), QString());
        QCOMPARE(text(subtractIntervals({{1, 4}}, {{0, 1}, {4, 5}})), QString("1-4"));
    }

    void eachRankHasItsCommunicationExposedAndOverlap() {
        const CrossRankCommunication result = analyzeCommunication(twoRanks());
        QCOMPARE(int(result.ranks.size()), 2);
        const RankCommunication& first = result.ranks[0];
        // [10,20] + [30,50] + [60,61] + [70,71] = 10 + 20 + 1 + 1
        QCOMPARE(first.communicationUs, 32.0);
        // Under compute: [10,15] and [40,45].
        QCOMPARE(first.exposedUs, 22.0);
        QCOMPARE(first.overlapPercent, 100.0 * 10 / 32);
        QCOMPARE(first.collectives, int64_t(4));
        QCOMPARE(first.bytes, int64_t(400 + 400 + 8 + 16));
        const RankCommunication& second = result.ranks[1];
        QCOMPARE(second.communicationUs, 4.0 + 15.0 + 1.0);
        QCOMPARE(second.exposedUs, 20.0);  // compute [0,12] only touches [12,16]
        QCOMPARE(second.overlapPercent, 0.0);
        QCOMPARE(first.computeUs, 15.0 + 5.0);
        QCOMPARE(second.computeUs, 12.0);
    }

    // Async collectives in flight together: a rank that waits in both at
    // once waited once, not twice (else its wait outgrows its step).
    void waitsInFlightTogetherCountOnce() {
        RankSpans early;
        early.rank = 0;
        early.collectives = {collective("all_reduce", "0", 0, 0, 20),
                             collective("all_reduce", "0", 1, 2, 22)};
        RankSpans late;
        late.rank = 1;
        late.collectives = {collective("all_reduce", "0", 0, 10, 20),
                            collective("all_reduce", "0", 1, 12, 22)};
        const CrossRankCommunication result = analyzeCommunication({early, late});
        QCOMPARE(result.collectives[0].waitUs, (std::vector<double>{10.0, 0.0}));
        QCOMPARE(result.collectives[1].waitUs, (std::vector<double>{10.0, 0.0}));
        QCOMPARE(result.ranks[0].waitUs, 12.0);  // [0,10] and [2,12]
        QCOMPARE(result.ranks[1].waitUs, 0.0);
        QVERIFY(result.straggler);
        QCOMPARE(result.straggler->rank, int64_t(1));
        QCOMPARE(result.straggler->othersWaitUs, 12.0);
    }

    // What a chart shades: the communication no compute hides, piece by piece.
    void exposedCommunicationIsTheCollectivesLessTheCompute() {
        const std::vector<RankSpans> ranks = twoRanks();
        const std::vector<Interval> exposed = exposedIntervals(ranks[0]);
        // [10,20] [30,50] [60,61] [70,71] less [0,15] [40,45]
        const std::vector<std::pair<double, double>> expected = {
            {15, 20}, {30, 40}, {45, 50}, {60, 61}, {70, 71}};
        QCOMPARE(int(exposed.size()), int(expected.size()));
        for (size_t i = 0; i < exposed.size(); ++i) {
            QCOMPARE(exposed[i].start, expected[i].first);
            QCOMPARE(exposed[i].end, expected[i].second);
        }
        QCOMPARE(totalLength(exposed), analyzeCommunication(ranks).ranks[0].exposedUs);
    }

    // A rank of a distributed run: its warm-up left out of the figures but
    // not of what is drawn; a blocking collective computes nothing; the
    // figures per measured step.
    void aRanksFiguresAreItsMeasuredStepsPerStep() {
        DistributedRun run;
        const auto step = [](int index, double totalMs, bool warmup) {
            RankStep out;
            out.rank = 1;
            out.step.index = index;
            out.step.totalMs = totalMs;
            out.step.warmup = warmup;
            const double at = 100.0 * index;
            out.phases = {{index, "forward", at, at + 20},
                          {index, "backward", at + 20, at + 60},
                          {index, "comm_wait", at + 60, at + 70},
                          {index, "optimizer", at + 70, at + 80}};
            CollectiveSpan async = collective("all_reduce", "0", 2 * index, at + 50, at + 70);
            async.step = index;
            CollectiveSpan blocking = collective("broadcast", "0", 2 * index + 1, at + 72, at + 76);
            blocking.step = index;
            blocking.blocking = true;
            out.collectives = {async, blocking};
            return out;
        };
        addRankStep(run, step(0, 0.5, true));
        addRankStep(run, step(1, 0.08, false));
        addRankStep(run, step(2, 0.09, false));
        rankRecordOf(run, 0);  // a rank that never spoke, placed before it
        QCOMPARE(int(run.ranks.size()), 2);
        QCOMPARE(run.ranks[0].rank, 0);
        const RankRecord& rank = run.ranks[1];
        QCOMPARE(int(rank.phases.size()), 12);
        QCOMPARE(int(spansOf(rank, /*measuredOnly=*/false).collectives.size()), 6);
        const RankSpans measured = spansOf(rank, /*measuredOnly=*/true);
        QCOMPARE(int(measured.collectives.size()), 4);
        // Per step: compute [0,60] and [70,80] less the broadcast's [72,76]: 66 µs.
        QCOMPARE(totalLength(mergeIntervals(measured.compute)), 2 * 66.0);
        analyzeRanks(run);
        const RankStepFigures figures = perMeasuredStep(run.ranks[1]);
        QCOMPARE(figures.measuredSteps, 2);
        QCOMPARE(*figures.stepMs, 0.085);
        QCOMPARE(figures.computeMs, 0.066);
        // The all-reduce [50,70] and the broadcast [72,76]: 24 µs, of which
        // [50,60] runs under backward.
        QCOMPARE(figures.communicationMs, 0.024);
        QCOMPARE(figures.exposedMs, 0.014);
        QCOMPARE(figures.overlapPercent, 100.0 * 10 / 24);
        QCOMPARE(figures.collectives, 2.0);
        QCOMPARE(figures.bytes, 800.0);
    }

    void theSameCollectiveIsMatchedOnEveryRankWithTransferAndWaits() {
        const CrossRankCommunication result = analyzeCommunication(twoRanks());
        QCOMPARE(result.unmatched, int64_t(2));  // the lone broadcast; tp's two ops
        QCOMPARE(int(result.collectives.size()), 2);
        const MatchedCollective& firstReduce = result.collectives[0];
        QCOMPARE(firstReduce.sequence, int64_t(0));
        QCOMPARE(firstReduce.transferUs, 4.0);  // min(10, 4)
        QCOMPARE(firstReduce.waitUs, (std::vector<double>{6.0, 0.0}));
        const MatchedCollective& secondReduce = result.collectives[1];
        QCOMPARE(secondReduce.transferUs, 15.0);  // min(20, 15)
        QCOMPARE(secondReduce.waitUs, (std::vector<double>{5.0, 0.0}));
        QCOMPARE(result.ranks[0].waitUs, 11.0);
        QCOMPARE(result.ranks[1].waitUs, 0.0);
    }

    void theStragglerIsTheRankTheOthersWaitFor() {
        const CrossRankCommunication result = analyzeCommunication(twoRanks());
        QVERIFY(result.straggler.has_value());
        QCOMPARE(result.straggler->rank, int64_t(1));
        QCOMPARE(result.straggler->othersWaitUs, 11.0);

        // A third rank that waited 2 µs in all: rank 1 still, the others
        // waiting (11 + 2) / 2 on average.
        std::vector<RankSpans> three = twoRanks();
        RankSpans third;
        third.rank = 2;
        third.collectives = {collective("all_reduce", "0", 0, 10, 15),
                             collective("all_reduce", "0", 1, 30, 46)};
        three.push_back(third);
        const CrossRankCommunication threeResult = analyzeCommunication(three);
        QCOMPARE(threeResult.ranks[2].waitUs, 1.0 + 1.0);
        QCOMPARE(threeResult.straggler->rank, int64_t(1));
        QCOMPARE(threeResult.straggler->othersWaitUs, (11.0 + 2.0) / 2);
    }

    void concurrentCollectivesCountOnceAndEqualWaitsNameNoStraggler() {
        RankSpans rank;
        rank.collectives = {collective("all_reduce", "0", 0, 0, 10),
                            collective("all_reduce", "1", 0, 5, 15)};
        rank.compute = {{8, 12}};
        const CrossRankCommunication alone = analyzeCommunication({rank});
        QCOMPARE(alone.ranks[0].communicationUs, 15.0);
        QCOMPARE(alone.ranks[0].exposedUs, 11.0);
        QCOMPARE(alone.ranks[0].overlapPercent, 100.0 * 4 / 15);
        QVERIFY(!alone.straggler);  // one rank waits for no one
        QCOMPARE(int(alone.collectives.size()), 2);

        RankSpans twin = rank;
        twin.rank = 1;
        const CrossRankCommunication twins = analyzeCommunication({rank, twin});
        QVERIFY(!twins.straggler);  // nobody waited
        QCOMPARE(twins.collectives[0].waitUs, (std::vector<double>{0.0, 0.0}));
        QVERIFY(analyzeCommunication({}).ranks.empty());
    }
};

QTEST_GUILESS_MAIN(TestRankCommunication)
#include "tst_rank_communication.moc"
