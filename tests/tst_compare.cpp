// Issue 40: a comparison of two runs' step times says what the data can
// support. 3 measured steps against 3 can never reach p < 0.05 with any
// exact test (2 / C(6, 3) = 0.1), so they are "too few steps" and say how
// many would do, with the ratio and its interval shown either way; from 4 a
// side the exact Mann–Whitney test decides. The p-values are held to
// scipy's exact tests in the venv and to a permutation count written here;
// `stepscope-cli compare` gives the same verdict as the core.
#include <QtTest/QtTest>

#include <QProcess>
#include <QTemporaryDir>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "results/report.h"
#include "results/run_comparison.h"
#include "results/run_file.h"
#include "results/statistics.h"
#include "test_support.h"

using namespace stepscope;

namespace {

// The two-sided exact permutation p of the rank sum, by brute force over
// every split of the pooled values (mid-ranks for ties; 2 × the smaller
// tail, at most 1): an implementation apart from statistics.cpp's.
double permutationP(const std::vector<double>& a, const std::vector<double>& b) {
    std::vector<double> pooled = a;
    pooled.insert(pooled.end(), b.begin(), b.end());
    const size_t n = pooled.size();
    std::vector<double> rank(n);
    for (size_t i = 0; i < n; ++i) {
        double below = 0, equal = 0;
        for (const double v : pooled) {
            below += v < pooled[i];
            equal += v == pooled[i];
        }
        rank[i] = below + (equal + 1) / 2;
    }
    const double observed = std::accumulate(rank.begin(), rank.begin() + long(a.size()), 0.0);
    double low = 0, high = 0, all = 0;
    std::vector<bool> pick(n, false);
    std::fill(pick.begin(), pick.begin() + long(a.size()), true);
    do {
        double sum = 0;
        for (size_t i = 0; i < n; ++i) {
            sum += pick[i] ? rank[i] : 0;
        }
        low += sum <= observed + 1e-9;
        high += sum >= observed - 1e-9;
        all += 1;
    } while (std::prev_permutation(pick.begin(), pick.end()));
    return std::min(1.0, 2 * std::min(low, high) / all);
}

QString list(const std::vector<double>& values) {
    QStringList out;
    for (const double v : values) {
        out << QString::number(v, 'g', 17);
    }
    return "[" + out.join(",") + "]";
}

// scipy's exact p: mannwhitneyu(method="exact") without ties, the exact
// permutation test of the rank sum with them. Empty when scipy cannot run.
QString scipyP(const std::vector<double>& a, const std::vector<double>& b) {
    const QString script = QString(
                               "import numpy as np\n"
                               "from scipy import stats\n"
                               "a, b = np.array(%1, float), np.array(%2, float)\n"
                               "pooled = np.concatenate([a, b])\n"
                               "if len(np.unique(pooled)) == len(pooled):\n"
                               "    p = stats.mannwhitneyu(a, b, method='exact').pvalue\n"
                               "else:\n"
                               "    s = lambda x, y, axis: stats.rankdata(np.concatenate([x, y], "
                               "axis=axis), axis=axis)[..., :x.shape[axis]].sum(axis=axis)\n"
                               "    p = stats.permutation_test((a, b), s, permutation_type="
                               "'independent', n_resamples=np.inf, alternative='two-sided')"
                               ".pvalue\n"
                               "print(repr(float(p)))\n")
                               .arg(list(a), list(b));
    QProcess python;
    python.start(test::pythonExecutable(), {"-c", script});
    if (!python.waitForFinished(120000) || python.exitCode() != 0) {
        return {};
    }
    return QString::fromUtf8(python.readAllStandardOutput()).trimmed();
}

// Three steps a side, as the CPU examples and the README record by default.
const std::vector<double> kThreeSlow = {10.0, 10.2, 9.9};
const std::vector<double> kThreeFast = {0.231, 0.235, 0.229};  // apart: 0.023×, no overlap
const std::vector<double> kThreeAlike = {10.1, 9.85, 10.3};    // overlapping
const std::vector<double> kFourSlow = {10.0, 10.2, 9.9, 10.1};
const std::vector<double> kFourFast = {9.0, 9.1, 8.9, 9.05};       // apart
const std::vector<double> kFourAlike = {10.05, 9.95, 10.25, 9.8};  // overlapping

RunResult runOf(const std::vector<double>& totals, const std::string& attention) {
    RunResult run;
    run.config = test::tinyCpuConfig();
    run.config.attention = attention;
    StepRecord warmup;
    warmup.warmup = true;
    warmup.totalMs = 999;
    run.steps.push_back(warmup);
    for (size_t i = 0; i < totals.size(); ++i) {
        StepRecord step;
        step.index = int(i) + 1;
        step.totalMs = totals[i];
        step.forwardMs = totals[i] / 2;
        run.steps.push_back(step);
    }
    run.summary = summarizeSteps(run.steps, run.config, std::nullopt);
    return run;
}

}  // namespace

class TestCompare : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

private Q_SLOTS:
    // 3 against 3 wholly apart: the test cannot decide (the least p is 0.1),
    // so the verdict is "too few steps", 4 a side named; the ratio and its
    // interval are there. Before issue 40 this read "within noise".
    void threeAgainstThreeApartIsTooFewSteps() {
        QCOMPARE(leastPValue(3, 3), 0.1);
        QCOMPARE(permutationP(kThreeSlow, kThreeFast), 0.1);
        const TimeComparison t = compareTimes(kThreeFast, kThreeSlow);
        QCOMPARE(t.verdict, Verdict::TooFewSteps);
        QCOMPARE(QString(toString(t.verdict)), QString("too few steps"));
        QVERIFY(!t.pValue);
        QCOMPARE(t.neededA, size_t(4));
        QCOMPARE(t.neededB, size_t(4));
        QVERIFY(!t.overlap);
        QVERIFY(qFuzzyCompare(t.ratio, 0.231 / 10.0));
        // The interval the sizes allow: the extreme pairwise ratios, at
        // 1 − 2/20 = 90% (P(U = 0) = 1/20 on each side).
        QVERIFY(qFuzzyCompare(*t.ciLow, 0.229 / 10.2));
        QVERIFY(qFuzzyCompare(*t.ciHigh, 0.235 / 9.9));
        QVERIFY(qFuzzyCompare(t.ciLevel, 0.9));
        QVERIFY2(QString::fromStdString(testText(t)).contains("4 a side can"), testText(t).c_str());
    }

    // 3 against 3 overlapping: no more decidable than apart; it says so
    // (not "within noise"), and that the steps overlap.
    void threeAgainstThreeOverlappingIsTooFewSteps() {
        const TimeComparison t = compareTimes(kThreeSlow, kThreeAlike);
        QCOMPARE(t.verdict, Verdict::TooFewSteps);
        QVERIFY(!t.pValue);
        QVERIFY(t.overlap);
        QCOMPARE(t.neededA, size_t(4));
        QVERIFY(t.ciLow && t.ciHigh && *t.ciLow < 1 && *t.ciHigh > 1);
    }

    // From 4 a side the exact test decides: apart is faster (p = 2/70),
    // overlapping is within noise; and the steps needed for other sizes.
    void fourAgainstFourDecides() {
        const TimeComparison apart = compareTimes(kFourSlow, kFourFast);
        QCOMPARE(apart.verdict, Verdict::Faster);
        QVERIFY(qFuzzyCompare(*apart.pValue, 2.0 / 70));
        QVERIFY(qFuzzyCompare(apart.ciLevel, 1 - 2.0 / 70));
        QCOMPARE(compareTimes(kFourFast, kFourSlow).verdict, Verdict::Slower);
        const TimeComparison alike = compareTimes(kFourSlow, kFourAlike);
        QCOMPARE(alike.verdict, Verdict::WithinNoise);
        QVERIFY(*alike.pValue >= kNoiseAlpha);
        QCOMPARE(stepsThatCanDecide(1, 5), std::make_pair(size_t(3), size_t(5)));
        QCOMPARE(stepsThatCanDecide(10, 1), std::make_pair(size_t(10), size_t(2)));
        QCOMPARE(stepsThatCanDecide(0, 0), std::make_pair(size_t(4), size_t(4)));
        // Ten steps a side: a 95% interval, P(U ≤ 23) ≤ 0.025 < P(U ≤ 24).
        std::vector<double> ten(10), other(10);
        std::iota(ten.begin(), ten.end(), 1.0);
        std::iota(other.begin(), other.end(), 3.5);
        const TimeComparison wide = compareTimes(ten, other);
        QVERIFY(wide.ciLevel >= 0.95 && wide.ciLevel < 0.96);
    }

    // The p-values against the permutation count above and scipy's exact
    // tests, ties included.
    void pValuesMatchScipyAndAPermutationCount_data() {
        QTest::addColumn<std::vector<double>>("a");
        QTest::addColumn<std::vector<double>>("b");
        QTest::newRow("3 v 3 apart") << kThreeSlow << kThreeFast;
        QTest::newRow("3 v 3 overlapping") << kThreeSlow << kThreeAlike;
        QTest::newRow("4 v 4 apart") << kFourSlow << kFourFast;
        QTest::newRow("4 v 4 overlapping") << kFourSlow << kFourAlike;
        QTest::newRow("5 v 5 ties")
            << std::vector<double>{1, 2, 2, 3, 5} << std::vector<double>{2, 4, 5, 6, 7};
        QTest::newRow("3 v 6") << std::vector<double>{4.0, 4.4, 4.1}
                               << std::vector<double>{3.9, 3.7, 4.05, 3.8, 3.6, 3.95};
    }
    void pValuesMatchScipyAndAPermutationCount() {
        QFETCH(std::vector<double>, a);
        QFETCH(std::vector<double>, b);
        const double ours = mannWhitneyPValue(a, b);
        QVERIFY2(std::abs(ours - permutationP(a, b)) < 1e-12,
                 qPrintable(QString("%1 vs %2").arg(ours).arg(permutationP(a, b))));
        const QString scipy = scipyP(a, b);
        QVERIFY2(!scipy.isEmpty(),
                 "scipy is not in the venv: scripts/bootstrap.sh installs it (the reference)");
        QVERIFY2(std::abs(ours - scipy.toDouble()) < 1e-12,
                 qPrintable(QString("%1 vs scipy %2").arg(ours).arg(scipy)));
    }

    // A statistic of one step has no spread: the report says "–", not
    // "0.00" and "0.0%", in its text and its Markdown.
    void oneStepHasNoSpread() {
        QVERIFY(!hasSpread(summarize({5.0})));
        QVERIFY(hasSpread(summarize({5.0, 6.0})));
        const RunResult one = runOf({5.0}, "naive");
        const QString text = QString::fromStdString(formatRunReport(one));
        const QString row = text.mid(text.indexOf("\ntotal")).section('\n', 1, 1);
        QVERIFY2(row.count("–") == 2 && !row.contains("0.0%"), qPrintable(row));
        const QString markdown = QString::fromStdString(formatRunMarkdown(one, {}));
        QVERIFY2(markdown.contains("| 5.00 | – | 5.00 | 5.00 | 5.00 | – |"), qPrintable(markdown));
        const QString two = QString::fromStdString(formatRunReport(runOf({5.0, 6.0}, "naive")));
        QVERIFY2(!two.mid(two.indexOf("\ntotal")).section('\n', 1, 1).contains("–"),
                 qPrintable(two));
    }

    // `stepscope-cli compare A B`: per phase the ratio, its interval, the
    // test or why there is none, and the verdict; the fields that differ.
    void cliComparesTwoRunFiles() {
        QVERIFY(dir_.isValid());
        const QString a = dir_.filePath("a.json"), b = dir_.filePath("b.json"),
                      c = dir_.filePath("c.json");
        writeRunFile(runOf(kThreeSlow, "naive"), a.toStdString());
        writeRunFile(runOf(kThreeFast, "sdpa"), b.toStdString());
        writeRunFile(runOf(kFourFast, "naive"), c.toStdString());
        const test::CliResult json = test::runCli({"compare", a, b, "--json"});
        QVERIFY2(json.exitCode == 0, qPrintable(json.err));
        const nlohmann::json out = nlohmann::json::parse(json.out.toStdString());
        QCOMPARE(out["phases"].size(), size_t(2));  // total and forward
        const nlohmann::json& total = out["phases"][0];
        QCOMPARE(total["phase"].get<std::string>(), std::string("total"));
        QCOMPARE(total["verdict"].get<std::string>(), std::string("too few steps"));
        QVERIFY(total["p_value"].is_null());
        QVERIFY(qFuzzyCompare(total["ratio"].get<double>(), 10.0 / 0.231));
        QVERIFY(qFuzzyCompare(total["ci_low"].get<double>(), 9.9 / 0.235));
        QVERIFY(qFuzzyCompare(total["ci_high"].get<double>(), 10.2 / 0.229));
        QVERIFY(qFuzzyCompare(total["ci_level"].get<double>(), 0.9));
        QVERIFY(total["test"].get<std::string>().find("4 a side") != std::string::npos);
        QCOMPARE(out["differences"].size(), size_t(1));
        QCOMPARE(out["differences"][0]["field"].get<std::string>(), std::string("attention"));
        QCOMPARE(out["differences"][0]["a"].get<std::string>(), std::string("naive"));
        QCOMPARE(out["differences"][0]["b"].get<std::string>(), std::string("sdpa"));

        const test::CliResult text = test::runCli({"compare", a, b});
        QVERIFY2(text.exitCode == 0, qPrintable(text.err));
        QVERIFY2(text.out.contains("verdict  too few steps"), text.out.constData());
        QVERIFY2(text.out.contains("90% interval"), text.out.constData());
        QVERIFY2(text.out.contains("attention naive vs sdpa"), text.out.constData());

        // Four steps against three: still too few (the least p is 2/35);
        // four a side would do. Apart, yet not "within noise".
        const test::CliResult decided = test::runCli({"compare", c, a, "--json"});
        QVERIFY2(decided.exitCode == 0, qPrintable(decided.err));
        const nlohmann::json d = nlohmann::json::parse(decided.out.toStdString());
        QCOMPARE(d["phases"][0]["verdict"].get<std::string>(), std::string("too few steps"));
        QVERIFY(d["differences"].empty());

        writeRunFile(runOf(kFourSlow, "naive"), dir_.filePath("d.json").toStdString());
        const test::CliResult four =
            test::runCli({"compare", dir_.filePath("d.json"), c, "--json"});
        const nlohmann::json f = nlohmann::json::parse(four.out.toStdString());
        QCOMPARE(f["phases"][0]["verdict"].get<std::string>(), std::string("faster"));
        QVERIFY(qFuzzyCompare(f["phases"][0]["p_value"].get<double>(), 2.0 / 70));

        const test::CliResult missing = test::runCli({"compare", a, dir_.filePath("none.json")});
        QCOMPARE(missing.exitCode, 2);
        QVERIFY(missing.out.isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestCompare)
#include "tst_compare.moc"
