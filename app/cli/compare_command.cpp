// compare A B: run B's step times against run A's, phase by phase, with the
// verdict the app's Compare tab gives (results/run_comparison.h).
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/guarded.h"
#include "results/run_comparison.h"
#include "results/run_file.h"
#include "util/strings.h"

namespace stepscope::cli {

namespace {

std::string ratioText(double ratio) {
    return fixedDecimals(ratio, 3) + "×";
}

std::string phaseText(const PhaseComparison& p, const std::vector<ConfigDifference>& differences) {
    const TimeComparison& t = p.times;
    std::ostringstream out;
    out << toString(p.phase) << "\n  medians  " << fixedDecimals(t.medianA, 3) << " ms (A, "
        << t.countA << " steps), " << fixedDecimals(t.medianB, 3) << " ms (B, " << t.countB
        << " steps)\n  ratio    " << (t.ratio > 0 ? ratioText(t.ratio) : std::string("–"))
        << " (A ÷ B: above 1, B is faster)";
    if (t.ciLow && t.ciHigh) {
        out << ", " << fixedDecimals(100 * t.ciLevel, 0) << "% interval " << ratioText(*t.ciLow)
            << " to " << ratioText(*t.ciHigh);
    }
    out << "\n  test     " << testText(t);
    if (t.pValue) {
        out << ": p = " << fixedDecimals(*t.pValue, 4);
    }
    out << "\n  verdict  " << toString(t.verdict);
    for (const ConfigDifference& d : differences) {
        if (unlikeIn(d, p.phase)) {
            out << " (unlike steps: " << d.field << " " << d.a << " vs " << d.b << ")";
            break;
        }
    }
    out << "\n";
    return out.str();
}

std::string comparisonText(const RunComparison& c, const std::string& a, const std::string& b) {
    std::ostringstream out;
    out << "A: " << a << "\nB: " << b << "\n";
    if (c.differences.empty()) {
        out << "The runs' configurations are the same.\n";
    } else {
        out << "The runs differ in:";
        for (const ConfigDifference& d : c.differences) {
            out << "\n  " << d.field << " " << d.a << " vs " << d.b
                << (d.work ? " (the steps do different work: the ratio is not a speed-up)" : "");
        }
        out << "\n";
    }
    if (c.phases.empty()) {
        out << "No phase has measured steps in both runs.\n";
    }
    for (const PhaseComparison& phase : c.phases) {
        out << "\n" << phaseText(phase, c.differences);
    }
    return out.str();
}

}  // namespace

int commandCompare(const std::string& a, const std::string& b, bool json) {
    return guarded([&] {
        const RunComparison comparison = compareRuns(readRunFile(a), readRunFile(b));
        if (json) {
            std::cout << toJson(comparison).dump(2) << "\n";
        } else {
            std::cout << comparisonText(comparison, a, b);
        }
        return kExitOk;
    });
}

}  // namespace stepscope::cli
