#include "analysis/trace_report.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace stepscope {

namespace {

std::string format(const char* pattern, double a, double b = 0, double c = 0, double d = 0) {
    char text[160];
    std::snprintf(text, sizeof text, pattern, a, b, c, d);
    return text;
}

void writeTemporal(std::ostringstream& out, const RankAnalysis& rank) {
    if (!rank.temporal) {
        out << "No kernels, memcpys or memsets: no temporal breakdown.\n\n";
        return;
    }
    const TemporalBreakdown& t = *rank.temporal;
    out << "| temporal (HTA) | µs | % of span |\n|---|---:|---:|\n"
        << "| compute | " << format("%.3f | %.2f", t.computeUs, t.percentOf(t.computeUs)) << " |\n"
        << "| non-compute | " << format("%.3f | %.2f", t.nonComputeUs, t.percentOf(t.nonComputeUs))
        << " |\n"
        << "| idle | " << format("%.3f | %.2f", t.idleUs, t.percentOf(t.idleUs)) << " |\n"
        << "| span | " << format("%.3f | 100.00", t.spanUs) << " |\n\n";
    out << "| kernel type | µs |\n|---|---:|\n";
    for (const KernelTypeTime& type : rank.kernelTypes) {
        out << "| " << type.name << " | " << format("%.3f", type.us) << " |\n";
    }
    out << "\n";
}

void writeKernels(std::ostringstream& out, const RankAnalysis& rank, size_t top) {
    if (rank.kernels.empty()) {
        return;
    }
    out << "| kernel | type | calls | total µs | mean µs | min µs | max µs | std µs | share |\n"
        << "|---|---|---:|---:|---:|---:|---:|---:|---:|\n";
    for (size_t i = 0; i < std::min(top, rank.kernels.size()); ++i) {
        const KernelStats& k = rank.kernels[i];
        out << "| " << k.name.substr(0, 100) << " | " << toString(k.type) << " | " << k.calls
            << " | " << format("%.3f | %.3f | %.3f | %.3f", k.totalUs, k.meanUs, k.minUs, k.maxUs)
            << " | " << format("%.3f | %.1f%%", k.stdUs, 100 * k.share) << " |\n";
    }
    if (rank.kernels.size() > top) {
        out << "\n(" << rank.kernels.size() - top << " more kernels: --json lists them all)\n";
    }
    const LaunchStatistics& l = rank.launch;
    out << "\n"
        << l.launches.size() << " launches: CPU "
        << format("%.3f µs (max %.3f), GPU %.3f µs (max %.3f)", l.cpuTotalUs, l.cpuMaxUs,
                  l.gpuTotalUs, l.gpuMaxUs)
        << format(", launch delay %.3f µs (max %.3f)", l.delayTotalUs, l.delayMaxUs) << "; "
        << l.shortKernels << " kernels shorter than their launch, " << l.runtimeOutliers
        << " launches over " << format("%.0f µs, ", l.runtimeCutoffUs) << l.delayOutliers
        << " kernels started over " << format("%.0f µs late", l.launchDelayCutoffUs) << ".\n\n";
}

void writeOperators(std::ostringstream& out, const RankAnalysis& rank, size_t top) {
    if (rank.operators.empty()) {
        return;
    }
    out << "| host operator | calls | self µs | total µs |\n|---|---:|---:|---:|\n";
    for (size_t i = 0; i < std::min(top, rank.operators.size()); ++i) {
        const OperatorStats& o = rank.operators[i];
        out << "| " << o.name << " | " << o.calls << " | "
            << format("%.3f | %.3f", o.selfUs, o.totalUs) << " |\n";
    }
    out << "\n";
}

void writeSteps(std::ostringstream& out, const RankAnalysis& rank, bool severalRanks) {
    if (rank.steps.empty()) {
        return;
    }
    out << "| profiler step | µs | kernels | kernel µs | |\n|---:|---:|---:|---:|---|\n";
    for (const StepTime& s : rank.steps) {
        const bool slowest = severalRanks && s.slowest;
        out << "| " << s.step << " | " << format("%.3f", s.durationUs) << " | " << s.kernels
            << " | " << format("%.3f", s.kernelUs) << " | " << (slowest ? "slowest rank" : "")
            << (slowest && !s.analysed ? "; " : "")
            << (s.analysed ? "" : "last step, left out as HTA does") << " |\n";
    }
    out << "\n";
}

void writeCommunication(std::ostringstream& out, const RankAnalysis& rank) {
    if (rank.communicationSource == CommunicationSource::None) {
        return;
    }
    const RankCommunication& c = rank.communication;
    out << "| communication (" << toString(rank.communicationSource) << ") | µs |\n|---|---:|\n"
        << "| communicating | " << format("%.3f", c.communicationUs) << " |\n"
        << "| exposed (no compute under it) | " << format("%.3f", c.exposedUs) << " |\n"
        << "| overlap with compute | " << format("%.2f %%", c.overlapPercent) << " |\n"
        << "| waiting for other ranks | " << format("%.3f", c.waitUs) << " |\n"
        << "| collectives | " << c.collectives << " |\n\n";
}

// The collectives matched across the ranks present, and who the others wait for.
void writeAcrossRanks(std::ostringstream& out, const std::vector<RankAnalysis>& ranks) {
    const int64_t worldSize = ranks.empty() ? 0 : ranks.front().worldSize;
    const bool partial = worldSize > int64_t(ranks.size());
    const CrossRankCommunication across = communicationAcross(ranks);
    if (across.ranks.size() < 2 && !partial) {
        return;
    }
    out << "## across ranks\n\n";
    if (partial) {
        out << "The folder holds " << ranks.size() << " of the job's " << worldSize
            << " ranks: those are analysed, and matched among themselves.\n";
    }
    if (across.ranks.size() >= 2) {
        out << across.collectives.size() << " collectives matched on every rank (in start order), "
            << across.unmatched << " not.\n";
    }
    if (across.straggler) {
        out << "Straggler: rank " << across.straggler->rank << ", the others wait "
            << format("%.3f", across.straggler->othersWaitUs) << " µs more for it.\n";
    }
    out << "\n";
}

}  // namespace

std::string formatTraceBreakdown(const std::vector<RankAnalysis>& ranks, size_t topRows) {
    std::ostringstream out;
    for (const RankAnalysis& rank : ranks) {
        out << "## rank " << rank.rank << " (" << rank.file << ")\n\n";
        writeTemporal(out, rank);
        writeCommunication(out, rank);
        writeKernels(out, rank, topRows);
        writeOperators(out, rank, topRows);
        writeSteps(out, rank, ranks.size() > 1);
    }
    writeAcrossRanks(out, ranks);
    return out.str();
}

}  // namespace stepscope
