// PyTorch profiler (Kineto) traces (issue 30): the reader on hand-written GPU
// traces whose figures are counted here by hand, on traces torch.profiler
// makes on the CPU (checked in, and made afresh), against torch's own
// operator table and against Holistic Trace Analysis itself (HTA 0.5.0 in
// scripts/hta-venv.sh's venv); the refusals, each with its own message
// (issue 33); mutated fixtures that must never crash the reader. The open
// time of a 100 MB trace is a benchmark (stepscope-trace-bench), not a test.
#include <QtTest/QtTest>

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include "analysis/trace_analysis.h"
#include "analysis/trace_report.h"
#include "analysis/trace_run.h"
#include "engines/runner.h"
#include "interop/chrome_trace.h"
#include "interop/kineto_trace.h"
#include "test_support.h"

using namespace stepscope;

namespace {

std::string fixture(const QString& relative) {
    return test::sourcePath("tests/data/traces/" + relative).toStdString();
}

std::string readBytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const KernelTypeTime* typeTime(const RankAnalysis& rank, const std::string& name) {
    for (const KernelTypeTime& type : rank.kernelTypes) {
        if (type.name == name) {
            return &type;
        }
    }
    return nullptr;
}

double typeUs(const RankAnalysis& rank, const std::string& name) {
    const KernelTypeTime* type = typeTime(rank, name);
    return type ? type->us : 0.0;
}

const OperatorStats* operatorRow(const RankAnalysis& rank, const std::string& name) {
    for (const OperatorStats& row : rank.operators) {
        if (row.name == name) {
            return &row;
        }
    }
    return nullptr;
}

// The refusal `bytes` meet, or a failure message when they open.
KinetoTraceError refusalOf(const std::string& bytes, const KinetoTraceLimits& limits = {}) {
    try {
        parseKinetoTrace(bytes, "input", limits);
    } catch (const KinetoTraceError& error) {
        return error;
    }
    return KinetoTraceError(KinetoTraceError::Kind::Unreadable, "<opened>");
}

QString htaPython() {
    const QByteArray cache = qgetenv("STEPSCOPE_CACHE");
    const QString root =
        cache.isEmpty() ? QDir::homePath() + "/.cache/stepscope" : QString::fromLocal8Bit(cache);
    return root + "/hta-venv/bin/python";
}

// Skips where HTA's venv is missing, and fails instead where CTest (whose
// hta_venv fixture makes it first) runs the test. A macro: QSKIP must return
// from the test function itself.
#define REQUIRE_HTA()                                                                        \
    do {                                                                                     \
        if (!QFile::exists(htaPython())) {                                                   \
            QVERIFY2(qEnvironmentVariableIsEmpty("STEPSCOPE_REQUIRE_HTA"),                   \
                     "no HTA venv although CTest's hta_venv fixture should have made it");   \
            QSKIP("no HTA venv: run scripts/hta-venv.sh (holistictraceanalysis from PyPI)"); \
        }                                                                                    \
    } while (false)

// HTA's figures for a folder, from tests/hta_oracle.py.
nlohmann::json runOracle(const QString& folder, bool includeLastStep, QString* error) {
    QTemporaryDir dir;
    const QString out = dir.filePath("oracle.json");
    QStringList arguments{test::sourcePath("tests/hta_oracle.py"), folder, "--out", out};
    if (includeLastStep) {
        arguments << "--include-last-step";
    }
    QProcess process;
    process.start(htaPython(), arguments);
    if (!process.waitForFinished(300000) || process.exitCode() != 0) {
        *error = "hta_oracle.py failed: " + QString::fromUtf8(process.readAllStandardError());
        return {};
    }
    std::ifstream in(out.toStdString());
    return nlohmann::json::parse(in);
}

// A traced GPU step as the run file keeps it (µs from the step's start): two
// streams, a memcpy, and an NCCL kernel whose launching operator is unknown.
RunResult gpuShapedRun() {
    RunResult run;
    run.environment.deviceName = "NVIDIA H100 80GB HBM3";
    run.timeline.step = 3;
    auto add = [&run](SpanKind kind, const char* name, const char* track, const char* detail,
                      double start, double duration) {
        TimelineSpan span;
        span.kind = kind;
        span.name = name;
        span.track = track;
        span.detail = detail;
        span.phase = start < 400 ? "forward" : "backward";
        span.startUs = start;
        span.durationUs = duration;
        run.timeline.spans.push_back(span);
    };
    const char* gemm = "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4>";
    add(SpanKind::Range, "step 3", "ranges", "", 0, 1000);
    add(SpanKind::Range, "forward", "ranges", "", 0.5, 399.5);
    add(SpanKind::Operator, "aten::mm", "thread 0", "blocks.0.attn", 10, 20);
    add(SpanKind::Kernel, gemm, "stream 7", "aten::mm", 30, 150.25);
    add(SpanKind::Operator, "aten::add", "thread 0", "blocks.0", 40, 10);
    add(SpanKind::Kernel, "void at::native::vectorized_elementwise_kernel<4>", "stream 7",
        "aten::add", 181, 8.5);
    add(SpanKind::Range, "backward", "ranges", "", 400, 500);
    add(SpanKind::Operator, "aten::mm", "thread 0", "blocks.0.attn", 410, 20);
    add(SpanKind::Kernel, gemm, "stream 7", "aten::mm", 430, 300);
    add(SpanKind::Operator, "aten::copy_", "thread 0", "", 440, 10);
    add(SpanKind::Kernel, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)", "stream 13", "",
        500, 100);
    add(SpanKind::Memcpy, "Memcpy DtoH (Device -> Pageable)", "stream 13", "aten::copy_", 731, 12);
    return run;
}

// Sums of the run's spans of `kind` by name: {calls, µs}.
std::map<std::string, std::pair<int64_t, double>> runSums(const RunResult& run, bool device) {
    std::map<std::string, std::pair<int64_t, double>> sums;
    for (const TimelineSpan& span : run.timeline.spans) {
        const bool onDevice = span.kind == SpanKind::Kernel || span.kind == SpanKind::Memcpy ||
                              span.kind == SpanKind::Memset;
        if ((device && onDevice) || (!device && span.kind == SpanKind::Operator)) {
            sums[span.name].first += 1;
            sums[span.name].second += span.durationUs;
        }
    }
    return sums;
}

}  // namespace

class TestKinetoTrace : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // tests/data/traces/gpu_two_ranks/rank0.json (make_kineto_traces.py gpu), µs:
    //   host: ProfilerStep#1 [0,100) #2 [100,200) #3 [200,300); launches
    //   device, stream 7:  gemm [20,60) C   add [60,65) C   memset [145,147) M
    //                      gemm [120,150) C add [150,156) C DeviceSyncKernel [185,190) OTHER
    //                      (gemm [220,260) C, launched in step 3: left out)
    //           stream 20: nccl [40,90) N   nccl [130,180) N
    //           stream 21: memcpy HtoD [50,70) M   memcpy DtoH [92,94) M
    // Span 20..190 = 170; busy [20,90) [92,94) [120,180) [185,190) = 137, idle 33;
    // compute [20,65) [120,156) = 81; non-compute 170 - 81 - 33 = 56.
    // Types: C [20,40) [120,130) = 30; C+N [40,50) [130,145) [147,156) = 34;
    // C+N+M [50,65) [145,147) = 17; N+M [65,70) = 5; N [70,90) [156,180) = 44; M [92,94) = 2.
    void gpuTraceFiguresMatchTheHandCount() {
        const KinetoTrace trace = readKinetoTrace(fixture("gpu_two_ranks/rank0.json"));
        const RankAnalysis rank = analyzeTrace(trace);
        QVERIFY(rank.temporal.has_value());
        QCOMPARE(rank.temporal->spanUs, 170.0);
        QCOMPARE(rank.temporal->idleUs, 33.0);
        QCOMPARE(rank.temporal->computeUs, 81.0);
        QCOMPARE(rank.temporal->nonComputeUs, 56.0);
        QVERIFY(std::abs(rank.temporal->percentOf(rank.temporal->computeUs) - 47.647) < 0.001);
        QCOMPARE(int(rank.kernelTypes.size()), 6);
        QCOMPARE(typeUs(rank, "COMPUTATION"), 30.0);
        QCOMPARE(typeUs(rank, "COMPUTATION overlapping COMMUNICATION"), 34.0);
        QCOMPARE(typeUs(rank, "COMPUTATION overlapping COMMUNICATION overlapping MEMORY"), 17.0);
        QCOMPARE(typeUs(rank, "COMMUNICATION overlapping MEMORY"), 5.0);
        QCOMPARE(typeUs(rank, "COMMUNICATION"), 44.0);
        QCOMPARE(typeUs(rank, "MEMORY"), 2.0);
        QCOMPARE(rank.kernelTypes.front().name, std::string("COMMUNICATION"));  // largest first
        QCOMPARE(rank.communication.communicationUs, 100.0);

        // Kernels by name: memcpy and memset rows by their own names.
        std::map<std::string, KernelStats> byName;
        for (const KernelStats& row : rank.kernels) {
            byName[row.name] = row;
        }
        QCOMPARE(int(byName.size()), 7);
        const KernelStats& gemm = byName.at(
            "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_16x4_tn_align4>(Params)");
        QCOMPARE(gemm.calls, int64_t(2));
        QCOMPARE(gemm.totalUs, 70.0);
        QCOMPARE(gemm.meanUs, 35.0);
        QCOMPARE(gemm.minUs, 30.0);
        QCOMPARE(gemm.maxUs, 40.0);
        QVERIFY(std::abs(gemm.stdUs - std::sqrt(50.0)) < 1e-9);  // pandas' sample std
        QVERIFY(std::abs(gemm.share - 70.0 / 210.0) < 1e-12);    // of all device time
        QVERIFY(byName.at("Memcpy HtoD (Pageable -> Device)").type == KernelType::Memory);
        QCOMPARE(byName.at("Memset (Device)").totalUs, 2.0);
        QVERIFY(byName.at("void cub::DeviceSyncKernel<int>(int*)").type == KernelType::Other);
        QVERIFY(rank.kernels.front().type == KernelType::Communication);  // nccl, 100 µs
        int stream20 = 0;
        for (const KernelStats& row : rank.kernelsPerStream) {
            stream20 += row.stream == 20;
        }
        QCOMPARE(stream20, 1);

        // Launches (correlations 1-9 and 12; 10 is in the last step).
        const LaunchStatistics& launch = rank.launch;
        QCOMPARE(int(launch.launches.size()), 10);
        QCOMPARE(launch.cpuTotalUs, 107.0);
        QCOMPARE(launch.gpuTotalUs, 210.0);
        QCOMPARE(launch.delayTotalUs, 297.0);  // the nccl launch on thread 101: clipped to 0
        QCOMPARE(launch.shortKernels, int64_t(3));
        QCOMPARE(launch.runtimeOutliers, int64_t(1));
        QCOMPARE(launch.delayOutliers, int64_t(1));
        QCOMPARE(launch.delayMaxUs, 103.0);

        // Steps: kernels by their launch's step; the last step left out.
        QCOMPARE(int(rank.steps.size()), 3);
        QCOMPARE(rank.steps[0].kernels, int64_t(6));
        QCOMPARE(rank.steps[0].kernelUs, 119.0);
        QCOMPARE(rank.steps[1].kernels, int64_t(4));
        QCOMPARE(rank.steps[1].kernelUs, 91.0);
        QVERIFY(!rank.steps[2].analysed);
        QCOMPARE(rank.meanStepUs, 100.0);

        // Operators: self time is the duration less the launch each holds.
        const OperatorStats* mm = operatorRow(rank, "aten::mm");
        QVERIFY(mm);
        QCOMPARE(mm->calls, int64_t(2));
        QCOMPARE(mm->totalUs, 14.0);
        QCOMPARE(mm->selfUs, 4.0);
        QCOMPARE(operatorRow(rank, "c10d::allreduce_")->selfUs, 3.0);
        QCOMPARE(operatorRow(rank, "aten::add")->selfUs, 3.0);

        // With HTA's include_last_profiler_step the third gemm joins.
        TraceAnalysisOptions all;
        all.includeLastStep = true;
        const RankAnalysis whole = analyzeTrace(trace, all);
        QCOMPARE(whole.temporal->spanUs, 240.0);
        QCOMPARE(whole.temporal->idleUs, 63.0);
        QCOMPARE(whole.temporal->computeUs, 121.0);
        QCOMPARE(typeUs(whole, "COMPUTATION"), 70.0);
        QCOMPARE(operatorRow(whole, "aten::mm")->calls, int64_t(3));
        QVERIFY(whole.steps[2].analysed);
        QCOMPARE(whole.steps[2].kernels, int64_t(1));
    }

    // The timeline the app draws ties each device event to its launch call:
    // the fixture's (launch ts, kernel ts) pairs (make_kineto_traces.py LAUNCHES).
    void traceTimelineTiesEachKernelToItsLaunch() {
        const KinetoTrace trace = readKinetoTrace(fixture("gpu_two_ranks/rank0.json"));
        const RunResult run = traceAsRun(trace, analyzeTrace(trace));
        const StepTimeline& timeline = run.timeline;
        const std::set<std::pair<double, double>> expected = {
            {10, 20},   {16, 40},   {22, 50},   {28, 60},   {37, 145}, {43, 92},
            {110, 120}, {116, 130}, {122, 150}, {130, 185}, {210, 220}};
        std::set<std::pair<double, double>> linked;
        int devices = 0;
        for (const TimelineSpan& span : timeline.spans) {
            if (span.kind == SpanKind::Operator || span.kind == SpanKind::Range) {
                QCOMPARE(span.launch, -1);
                continue;
            }
            ++devices;
            QVERIFY(span.launch >= 0 && size_t(span.launch) < timeline.spans.size());
            const TimelineSpan& launch = timeline.spans[size_t(span.launch)];
            QCOMPARE(launch.category, std::string("cuda_runtime"));
            QVERIFY(launch.track == "thread 100" || launch.track == "thread 101");
            QCOMPARE(span.detail, launch.name);
            linked.insert(
                {launch.startUs + timeline.clockOriginUs, span.startUs + timeline.clockOriginUs});
        }
        QCOMPARE(devices, 11);
        QVERIFY(linked == expected);
        // launchingSpans() gives the same, and nothing for what no flow ties.
        const std::vector<int32_t> launches = launchingSpans(timeline);
        for (size_t i = 0; i < timeline.spans.size(); ++i) {
            QCOMPARE(launches[i], timeline.spans[i].launch);
        }
    }

    void readerKeepsEveryCategoryFlowAndName() {
        const KinetoTrace trace = readKinetoTrace(fixture("gpu_two_ranks/rank0.json"));
        auto count = [&trace](TraceCategory c) { return trace.eventsByCategory[size_t(c)]; };
        QCOMPARE(count(TraceCategory::Kernel), int64_t(8));
        QCOMPARE(count(TraceCategory::GpuMemcpy), int64_t(2));
        QCOMPARE(count(TraceCategory::GpuMemset), int64_t(1));
        QCOMPARE(count(TraceCategory::CudaRuntime), int64_t(11));
        QCOMPARE(count(TraceCategory::CudaDriver), int64_t(1));
        QCOMPARE(count(TraceCategory::CpuOp), int64_t(11));
        QCOMPARE(count(TraceCategory::UserAnnotation), int64_t(4));
        QCOMPARE(count(TraceCategory::GpuUserAnnotation), int64_t(1));
        QCOMPARE(count(TraceCategory::PythonFunction), int64_t(1));
        QCOMPARE(count(TraceCategory::Ac2g), int64_t(22));
        // Unknown categories are kept and counted: the profiler's span, the
        // forward-backward flows, and the instant and counter without "cat".
        std::map<std::string, int64_t> others(trace.otherCategories.begin(),
                                              trace.otherCategories.end());
        QCOMPARE(others.at("Trace"), int64_t(1));
        QCOMPARE(others.at("fwdbwd"), int64_t(2));
        QCOMPARE(others.at(""), int64_t(2));
        QCOMPARE(int(trace.flows.size()), 24);
        QCOMPARE(int(launchLinks(trace).size()), 11);
        QCOMPARE(trace.metadataEvents, int64_t(4));

        QVERIFY(trace.distributed.has_value());
        QCOMPARE(trace.distributed->rank, int64_t(0));
        QCOMPARE(trace.distributed->worldSize, int64_t(2));
        QCOMPARE(trace.distributed->backend, std::string("nccl"));
        QCOMPARE(int(trace.devices.size()), 1);
        QCOMPARE(trace.devices[0].name, std::string("NVIDIA H100 80GB HBM3"));
        QCOMPARE(trace.devices[0].numSms, int64_t(132));
        QCOMPARE(trace.baseTimeNanoseconds.value_or(0), int64_t(1700000000000000000));
        QCOMPARE(int(trace.steps.size()), 3);
        QCOMPARE(trace.steps[1].number, int64_t(2));

        bool namedThread = false;
        bool textPid = false;
        for (const TraceTrack& track : trace.tracks) {
            namedThread |= track.pid == "100" && track.tid == "100" &&
                           track.threadName == "thread 100 (python)" &&
                           track.processName == "python";
            textPid |= track.pid == "Spans" && track.tid == "PyTorch Profiler";
        }
        QVERIFY(namedThread);
        QVERIFY(textPid);
    }

    // The same timeline at half microseconds, without profiler steps: the
    // fractions stay, nothing is left out (so the last gemm counts).
    void fractionalTimesAreKept() {
        const KinetoTrace trace = readKinetoTrace(fixture("gpu_fractional/trace.json"));
        QVERIFY(trace.steps.empty());
        double firstKernel = 1e300;
        for (const TraceEvent& event : trace.events) {
            if (event.stream >= 0) {
                firstKernel = std::min(firstKernel, event.startUs);
            }
        }
        QCOMPARE(firstKernel, 1'000'020.5);
        const RankAnalysis rank = analyzeTrace(trace);
        QCOMPARE(rank.temporal->spanUs, 240.0);
        QCOMPARE(rank.temporal->computeUs, 121.0);
        QCOMPARE(rank.launch.launches.size(), size_t(11));
        QVERIFY(!trace.distributed);
        QCOMPARE(rank.rank, int64_t(0));
    }

    void aFolderIsOneRecordingWithTheSlowestRankPerStep() {
        const std::vector<RankAnalysis> ranks =
            analyzeTracePath(fixture("gpu_two_ranks"), TraceAnalysisOptions{});
        QCOMPARE(int(ranks.size()), 2);
        QCOMPARE(ranks[0].rank, int64_t(0));
        QCOMPARE(ranks[1].rank, int64_t(1));  // from the .json.gz
        // Rank 1's last step starts at 215, so its launch at 210 is analysed.
        QCOMPARE(ranks[1].temporal->spanUs, 240.0);
        QCOMPARE(ranks[1].launch.launches.size(), size_t(11));
        QCOMPARE(ranks[1].steps[1].kernels, int64_t(5));
        // Step 2: rank 1 took 115 µs, rank 0 100 µs. Step 3: rank 0's 100 > 85.
        QVERIFY(!ranks[0].steps[1].slowest);
        QVERIFY(ranks[1].steps[1].slowest);
        QVERIFY(ranks[0].steps[2].slowest);
        QCOMPARE(ranks[1].meanStepUs, 107.5);

        const nlohmann::json json = traceBreakdownJson(ranks);
        QCOMPARE(json.at("source").get<std::string>(), std::string("kineto"));
        QCOMPARE(json.at("ranks").size(), size_t(2));
        const nlohmann::json& first = json.at("ranks")[0];
        std::set<std::string> keys;
        for (const auto& [key, value] : first.items()) {
            keys.insert(key);
        }
        // Issue 30's keys, the per-stream rows the app's Breakdown shows too,
        // and issue 42's communication with the job's world size.
        QCOMPARE(keys, (std::set<std::string>{"rank", "span_us", "temporal", "kernel_types",
                                              "kernels", "kernels_per_stream", "launch", "steps",
                                              "world_size", "communication"}));
        QCOMPARE(first.at("span_us").get<double>(), 170.0);
        QCOMPARE(first.at("temporal").at("idle_us").get<double>(), 33.0);
        QCOMPARE(first.at("kernel_types").at("MEMORY").get<double>(), 2.0);
        std::set<std::string> kernelKeys;
        for (const auto& [key, value] : first.at("kernels")[0].items()) {
            kernelKeys.insert(key);
        }
        QCOMPARE(kernelKeys, (std::set<std::string>{"name", "calls", "total_us", "mean_us",
                                                    "min_us", "max_us"}));
        QCOMPARE(first.at("launch").at("launches").get<int>(), 10);

        // Two files of one rank are one rank too many.
        QTemporaryDir dir;
        QVERIFY(QFile::copy(QString::fromStdString(fixture("gpu_two_ranks/rank0.json")),
                            dir.filePath("a.json")));
        QVERIFY(QFile::copy(QString::fromStdString(fixture("gpu_two_ranks/rank0.json")),
                            dir.filePath("b.json")));
        try {
            analyzeTracePath(dir.path().toStdString());
            QFAIL("two traces of rank 0 were taken as one recording");
        } catch (const KinetoTraceError& error) {
            QVERIFY2(QString(error.what()).contains("both hold rank 0"), error.what());
        }
    }

    // torch.profiler on the CPU (checked in): operators, user annotations,
    // profiler steps, distributedInfo; self time as torch's own table has it.
    void cpuTracesMatchTorchsOperatorTable() {
        for (const QString name : {"rank0", "rank1"}) {
            const KinetoTrace trace =
                readKinetoTrace(fixture("cpu_gloo/" + name + ".pt.trace.json.gz"));
            compareWithTorch(trace, fixture("cpu_gloo/" + name + ".torch-ops"));
        }
    }

    // The same made now by the torch in the project's venv.
    void freshCpuTraceFromTorchProfiler() {
        QTemporaryDir dir;
        const QString error = test::runPython(
            {test::sourcePath("tests/data/make_kineto_traces.py"), "cpu", dir.path()});
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const std::vector<RankAnalysis> ranks =
            analyzeTracePath(dir.filePath("cpu_gloo").toStdString());
        QCOMPARE(int(ranks.size()), 2);
        for (int r = 0; r < 2; ++r) {
            const QString base = dir.filePath("cpu_gloo/rank" + QString::number(r));
            const KinetoTrace trace = readKinetoTrace((base + ".pt.trace.json.gz").toStdString());
            QCOMPARE(trace.distributed->rank, int64_t(r));
            QCOMPARE(int(trace.steps.size()), 3);  // schedule(active=3)
            compareWithTorch(trace, (base + ".torch-ops").toStdString());
            QVERIFY(!ranks[size_t(r)].temporal);  // no device events on the CPU
            QVERIFY(!ranks[size_t(r)].operators.empty());
        }
    }

    // Where HTA gives NaN (no NCCL kernel), communication comes from the
    // gloo:* spans on gloo's threads, each rank's matched by start order.
    void communicationOnGlooThreadsWhereHtaGivesNan() {
        const std::vector<RankAnalysis> ranks = analyzeTracePath(fixture("cpu_gloo"));
        QCOMPARE(ranks.size(), size_t(2));
        for (const RankAnalysis& rank : ranks) {
            QVERIFY(rank.communicationSource == CommunicationSource::GlooThreads);
            // HTA's analysed set leaves the last of the 3 steps out: the gloo
            // spans that start before it, counted on the trace itself.
            const KinetoTrace trace = readKinetoTrace(rank.file);
            int64_t before = 0;
            for (const TraceEvent& e : trace.events) {
                before += trace.nameOf(e).rfind("gloo:", 0) == 0 &&
                          e.startUs < trace.steps.back().startUs;
            }
            QCOMPARE(rank.communication.collectives, before);
            QVERIFY(rank.communication.communicationUs > 0);
            QCOMPARE(
                rank.communication.exposedUs,
                rank.communication.communicationUs * (1 - rank.communication.overlapPercent / 100));
            QCOMPARE(rank.worldSize, int64_t(2));
        }
        const nlohmann::json across = traceBreakdownJson(ranks).at("across_ranks");
        QCOMPARE(across.at("collectives").size(), size_t(ranks[0].communication.collectives));
        QCOMPARE(across.at("unmatched").get<int64_t>(), int64_t(0));
        // Each rank's wait is its own over the matched collectives, and the
        // straggler is the rank that waited least.
        for (size_t r = 0; r < 2; ++r) {
            double wait = 0;
            for (const auto& collective : across.at("collectives")) {
                wait += collective.at("wait_us")[r].get<double>();
            }
            QCOMPARE(wait, ranks[r].communication.waitUs);
        }
        const int64_t least = ranks[0].communication.waitUs < ranks[1].communication.waitUs ? 0 : 1;
        QCOMPARE(across.at("straggler").at("rank").get<int64_t>(), least);
        QCOMPARE(across.at("straggler").at("others_wait_us").get<double>(),
                 ranks[size_t(1 - least)].communication.waitUs -
                     ranks[size_t(least)].communication.waitUs);

        // Half the folder: rank 1 alone is analysed as what it is.
        QTemporaryDir half;
        QVERIFY(QFile::copy(QString::fromStdString(fixture("cpu_gloo/rank1.pt.trace.json.gz")),
                            half.filePath("rank1.pt.trace.json.gz")));
        const std::vector<RankAnalysis> partial = analyzeTracePath(half.path().toStdString());
        QCOMPARE(partial.size(), size_t(1));
        QCOMPARE(partial[0].worldSize, int64_t(2));
        QVERIFY(traceBreakdownJson(partial).at("across_ranks").at("straggler").is_null());
        QVERIFY(QString::fromStdString(formatTraceBreakdown(partial))
                    .contains("The folder holds 1 of the job's 2 ranks"));
        QVERIFY(QString::fromStdString(formatTraceBreakdown(ranks)).contains("Straggler: rank"));
    }

    // HTA itself, on every fixture, with and without the last step.
    void htaAgreesOnEveryFixture() {
        REQUIRE_HTA();
        for (const QString folder :
             {"gpu_two_ranks", "gpu_fractional", "cpu_gloo", "stepscope_export"}) {
            for (const bool includeLast : {false, true}) {
                QString error;
                const nlohmann::json oracle =
                    runOracle(QString::fromStdString(fixture(folder)), includeLast, &error);
                QVERIFY2(error.isEmpty(), qPrintable(error));
                TraceAnalysisOptions options;
                options.includeLastStep = includeLast;
                const std::vector<RankAnalysis> ranks = analyzeTracePath(fixture(folder), options);
                QCOMPARE(ranks.size(), oracle.at("ranks").size());
                std::set<int64_t> analysedSteps;
                for (const RankAnalysis& rank : ranks) {
                    const QString where = folder + " rank " + QString::number(rank.rank) +
                                          (includeLast ? " (last step in)" : "");
                    compareWithHta(rank, oracle.at("ranks").at(std::to_string(rank.rank)), where);
                    for (const StepTime& step : rank.steps) {
                        if (step.analysed) {
                            analysedSteps.insert(step.step);
                        }
                    }
                }
                // HTA lists the steps its analysed events fall in.
                std::set<int64_t> htaSteps;
                for (const auto& step : oracle.at("profiler_steps")) {
                    htaSteps.insert(step.get<int64_t>());
                }
                QCOMPARE(analysedSteps, htaSteps);
            }
        }
    }

    // What `stepscope-cli export` must write of a traced GPU run (issue 30,
    // item 7), made by hand: it reads back with the run's kernel time, and
    // HTA loads it (htaAgreesOnEveryFixture).
    void theExportShapeOfARunReadsBack() {
        const KinetoTrace trace = readKinetoTrace(fixture("stepscope_export/run.pt.trace.json"));
        QCOMPARE(int(trace.steps.size()), 1);
        QCOMPARE(trace.steps[0].number, int64_t(3));
        QCOMPARE(trace.distributed->worldSize, int64_t(1));
        QCOMPARE(int(launchLinks(trace).size()), 5);
        const RankAnalysis rank = analyzeTrace(trace);
        double kernelUs = 0;
        for (const KernelStats& row : rank.kernels) {
            kernelUs += row.totalUs;
        }
        QCOMPARE(kernelUs, 510.75);  // fractions kept
        QCOMPARE(rank.steps[0].kernelUs, 510.75);
        QCOMPARE(operatorRow(rank, "aten::mm")->selfUs, 32.0);  // 2 x (20 - 4)
    }

    // Item 7: our export of a traced GPU step reads back with the run's kernel
    // sums, a launch linked to every kernel, and HTA loads it and agrees.
    void ourGpuRunExportReadsBackAndLoadsInHta() {
        const RunResult run = gpuShapedRun();
        const std::string text = chromeTraceJson(run);
        QVERIFY(text.find("\"rank\": 0") != std::string::npos);  // HTA's rank search
        const KinetoTrace trace = parseKinetoTrace(text, "export");
        QCOMPARE(int(trace.steps.size()), 1);
        QCOMPARE(trace.steps[0].number, int64_t(3));
        QCOMPARE(trace.defaultRank(), int64_t(0));
        QCOMPARE(int(trace.devices.size()), 1);
        QCOMPARE(trace.devices[0].name, std::string("NVIDIA H100 80GB HBM3"));
        const auto links = launchLinks(trace);
        QCOMPARE(int(links.size()), 5);
        for (const auto& [launch, kernel] : links) {
            QVERIFY(trace.events[size_t(launch)].startUs <= trace.events[size_t(kernel)].startUs);
        }
        QCOMPARE(int(trace.flows.size()), 10);
        const RankAnalysis rank = analyzeTrace(trace);
        const auto kernels = runSums(run, true);
        QCOMPARE(rank.kernels.size(), kernels.size());
        for (const KernelStats& row : rank.kernels) {
            QCOMPARE(row.calls, kernels.at(row.name).first);
            QCOMPARE(row.totalUs, kernels.at(row.name).second);
        }
        for (const auto& [name, sum] : runSums(run, false)) {
            QCOMPARE(operatorRow(rank, name)->calls, sum.first);
            QCOMPARE(operatorRow(rank, name)->totalUs, sum.second);
        }
        QCOMPARE(rank.steps[0].kernelUs, 570.75);
        QVERIFY(rank.temporal && rank.temporal->spanUs == 713.0);

        QTemporaryDir dir;
        QFile file(dir.filePath("run.pt.trace.json"));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(text.data(), qint64(text.size()));
        file.close();
        REQUIRE_HTA();
        QString error;
        const nlohmann::json oracle = runOracle(dir.path(), false, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        compareWithHta(rank, oracle.at("ranks").at("0"), "our GPU export");
        double htaKernelUs = 0;
        for (const auto& row : oracle.at("ranks").at("0").at("kernels")) {
            htaKernelUs += row.at("sum_us").get<double>();
        }
        QCOMPARE(htaKernelUs, 570.75);  // all five are HTA types (none "Sync")
        QCOMPARE(oracle.at("profiler_steps"), nlohmann::json::array({3}));
    }

    // Item 7 on the CPU: a real traced step reads back with the run's operator sums.
    void ourCpuRunExportReadsBackAndLoadsInHta() {
        RunConfig config = test::tinyCpuConfig();
        config.mode = RunMode::TrainStep;
        config.warmupSteps = 1;
        config.measuredSteps = 1;
        config.traceOps = true;
        const RunResult run = runBenchmark(config);
        const std::string text = chromeTraceJson(run);
        const KinetoTrace trace = parseKinetoTrace(text, "export");
        QCOMPARE(int(trace.steps.size()), 1);
        QCOMPARE(trace.steps[0].number, int64_t(run.timeline.step));
        QVERIFY(trace.devices.empty());
        const RankAnalysis rank = analyzeTrace(trace);
        QVERIFY(!rank.temporal);
        const auto operators = runSums(run, false);
        QVERIFY(operators.size() > 10);
        QCOMPARE(rank.operators.size(), operators.size());
        for (const auto& [name, sum] : operators) {
            const OperatorStats* row = operatorRow(rank, name);
            QVERIFY2(row, name.c_str());
            QCOMPARE(row->calls, sum.first);
            QVERIFY(std::abs(row->totalUs - sum.second) < 1e-6);
        }
        QTemporaryDir dir;
        QFile file(dir.filePath("run.pt.trace.json"));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(text.data(), qint64(text.size()));
        file.close();
        REQUIRE_HTA();
        QString error;
        const nlohmann::json oracle = runOracle(dir.path(), false, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY(oracle.at("ranks").contains("0"));
        QCOMPARE(oracle.at("profiler_steps"), nlohmann::json::array({run.timeline.step}));
    }

    void eachRefusalHasItsOwnMessage() {
        using Kind = KinetoTraceError::Kind;
        struct Case {
            std::string bytes;
            Kind kind;
            QString says;
        };
        const std::string gz = readBytes(fixture("gpu_two_ranks/rank1.pt.trace.json.gz"));
        const std::string png =
            readBytes(test::sourcePath("docs/breakdown-h100.png").toStdString());
        QVERIFY(png.size() > 8);
        const std::vector<Case> cases = {
            {R"({"format": "stepscope-run", "version": 1, "config": {}})", Kind::RunFile,
             "a StepScope run file"},
            {png, Kind::NotJson, "a PNG image"},
            {gz.substr(0, gz.size() / 2), Kind::Gzip, "truncated gzip"},
            {std::string("\x1f\x8b\x08\0\0\0\0\0\0\x03\xff\xff garbage", 19), Kind::Gzip,
             "corrupt gzip"},
            {R"({"name": "not a trace", "values": [1, 2]})", Kind::NotATrace,
             "no traceEvents (its keys: name, values)"},
            {"[1, 2, 3]", Kind::NotATrace, "not an event"},
            {"", Kind::NotJson, "empty file"},
            {"hello", Kind::NotJson, "text, not JSON"},
            {std::string("\0\1\2\3", 4), Kind::NotJson, "binary data"},
            {R"({"traceEvents": [{"ph": "X", "cat": "kernel", "ts": 1, "dur": 2})", Kind::NotJson,
             "not valid JSON"},
            {R"({"traceEvents": {}})", Kind::Invalid, "traceEvents: not an array"},
            {R"({"traceEvents": [{"ph": "X", "ts": 1e999, "dur": 1}]})", Kind::Invalid,
             "traceEvents[0].ts: not a finite number"},
            {R"({"traceEvents": [{"ph": "X", "ts": 1, "dur": 1}, {"ph": "X", "ts": 1, "dur": -4}]})",
             Kind::Invalid, "traceEvents[1].dur: -4 is outside"},
            {R"({"traceEvents": [{"ph": "X", "ts": 1, "dur": 1, "args": {"stream": "seven"}}]})",
             Kind::Invalid, "traceEvents[0].args.stream: not an integer"},
            {R"({"traceEvents": [{"ph": "X", "ts": 1, "dur": 1, "pid": [1]}]})", Kind::Invalid,
             "traceEvents[0].pid: neither a number nor a string"},
            {R"({"traceEvents": [{"ph": "X", "dur": 1}]})", Kind::Invalid,
             "traceEvents[0].ts: missing"},
            {R"({"traceEvents": [{"ph": "s", "ts": 1}]})", Kind::Invalid,
             "a flow event without an id"},
            {R"({"traceEvents": [], "distributedInfo": {"rank": 4, "world_size": 2}})",
             Kind::Invalid, "distributedInfo.rank: 4 is not below world_size 2"},
            {R"({"traceEvents": [], "distributedInfo": {"rank": -1}})", Kind::Invalid,
             "distributedInfo.rank: -1 is outside"},
            {R"({"traceEvents": [], "deviceProperties": [{"id": 0, "numSms": "many"}]})",
             Kind::Invalid, "deviceProperties[0].numSms: not an integer"},
            {R"({"traceEvents": []} {"again": 1})", Kind::NotJson, "more text after"},
        };
        for (const Case& c : cases) {
            const KinetoTraceError error = refusalOf(c.bytes);
            const QString message = QString::fromUtf8(error.what());
            QVERIFY2(message.startsWith("'input': "), qPrintable(message));
            QVERIFY2(message.contains(c.says), qPrintable(message + " | wanted: " + c.says));
            QVERIFY2(error.kind() == c.kind, qPrintable(message));
        }
        // A path that is no file, a folder without traces.
        try {
            readKinetoTrace("/nonexistent/trace.json");
            QFAIL("opened a missing file");
        } catch (const KinetoTraceError& error) {
            QVERIFY2(QString(error.what()).contains("does not exist"), error.what());
        }
        QTemporaryDir empty;
        try {
            kinetoTraceFiles(empty.path().toStdString());
            QFAIL("listed traces in an empty folder");
        } catch (const KinetoTraceError& error) {
            QVERIFY(QString(error.what()).contains("no trace files"));
        }
    }

    void limitsStopWorkBeforeItGrows() {
        using Kind = KinetoTraceError::Kind;
        const std::string text = readBytes(fixture("gpu_two_ranks/rank0.json"));
        KinetoTraceLimits few;
        few.maxEvents = 5;
        QVERIFY(refusalOf(text, few).kind() == Kind::TooLarge);
        QVERIFY(QString(refusalOf(text, few).what()).contains("more than 5 events"));
        KinetoTraceLimits shortStrings;
        shortStrings.maxStringBytes = 16;
        QVERIFY(
            QString(refusalOf(text, shortStrings).what()).contains("bytes, more than the limit"));
        // A gzip that inflates past the byte limit stops there.
        KinetoTraceLimits small;
        small.maxBytes = 4096;
        const KinetoTraceError bomb =
            refusalOf(readBytes(fixture("gpu_two_ranks/rank1.pt.trace.json.gz")), small);
        QVERIFY2(bomb.kind() == Kind::TooLarge, bomb.what());
        // Nesting 200,000 deep: skipped where it is not read, refused where an
        // event should be; never a stack overflow (nothing recurses).
        const std::string nest = std::string(200000, '[') + std::string(200000, ']');
        const KinetoTrace skipped = parseKinetoTrace(
            R"({"traceEvents": [{"ph": "X", "ts": 1, "dur": 1, "args": {"a": )" + nest + "}}]}",
            "input");
        QCOMPARE(int(skipped.events.size()), 1);
        const KinetoTraceError nested = refusalOf(R"({"traceEvents": [)" + nest + "]}");
        QVERIFY2(QString(nested.what()).contains("traceEvents[0]: not an event object"),
                 nested.what());
    }

    // Issue 45: a 10 MB .json.gz under an 8 GB limit ended in a bare
    // std::bad_alloc: the buffer doubled toward 4 GiB. Inflating stops at the
    // text that memory could parse, naming the file. Built here: 64 gzip
    // members of 1 MiB of spaces each, 64 KiB that inflate to 64 MiB.
    void gzipBombStopsAtTheMemoryItWouldTake() {
        QTemporaryDir dir;
        const QString path = dir.filePath("bomb.pt.trace.json.gz");
        const QString error = test::runPython({"-c",
                                               "import gzip, sys\n"
                                               "member = gzip.compress(b' ' * (1 << 20), 9)\n"
                                               "open(sys.argv[1], 'wb').write(member * 64)\n",
                                               path});
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY(QFileInfo(path).size() < (1 << 20));
        KinetoTraceLimits limits;
        limits.memoryRoomBytes = int64_t(64) << 20;
        try {
            readKinetoTrace(path.toStdString(), limits);
            QFAIL("a gzip bomb was read");
        } catch (const KinetoTraceError& refused) {
            const QString message = QString::fromUtf8(refused.what());
            QVERIFY2(refused.kind() == KinetoTraceError::Kind::TooLarge &&
                         message.startsWith("'" + path + "': inflates to more than") &&
                         message.contains("in memory") && message.contains("64.00 MiB"),
                     qPrintable(message));
        }
        // The same text read whole where memory holds it: only white space.
        limits.memoryRoomBytes = int64_t(1) << 30;
        try {
            readKinetoTrace(path.toStdString(), limits);
            QFAIL("white space was read as a trace");
        } catch (const KinetoTraceError& refused) {
            QVERIFY2(refused.kind() == KinetoTraceError::Kind::NotJson, refused.what());
        }
    }

    // Mutated fixtures (bounded, deterministic): a refusal or a trace, never a crash.
    void mutatedFixturesNeverCrash() {
        const std::vector<std::string> seeds = {
            readBytes(fixture("gpu_two_ranks/rank0.json")),
            readBytes(fixture("gpu_fractional/trace.json")),
            readBytes(fixture("gpu_two_ranks/rank1.pt.trace.json.gz")),
        };
        const std::vector<std::string> tokens = {"\"ts\"",
                                                 "\"dur\"",
                                                 "\"stream\"",
                                                 "-1",
                                                 "1e999",
                                                 "[",
                                                 "]",
                                                 "{",
                                                 "}",
                                                 ",",
                                                 "\"",
                                                 "\"ProfilerStep#",
                                                 "9223372036854775807",
                                                 "null",
                                                 "\"ph\": \"s\""};
        std::mt19937 random(30);
        KinetoTraceLimits limits;
        limits.maxBytes = 16 << 20;
        int opened = 0;
        for (int round = 0; round < 1500; ++round) {
            std::string bytes = seeds[size_t(round) % seeds.size()];
            const int edits = 1 + int(random() % 4);
            for (int e = 0; e < edits && !bytes.empty(); ++e) {
                const size_t at = random() % bytes.size();
                switch (random() % 4) {
                    case 0:
                        bytes[at] = char(random() % 256);
                        break;
                    case 1:
                        bytes.erase(at, 1 + random() % 64);
                        break;
                    case 2:
                        bytes.insert(at, tokens[random() % tokens.size()]);
                        break;
                    default:
                        bytes.resize(at);
                        break;
                }
            }
            try {
                const KinetoTrace trace = parseKinetoTrace(bytes, "mutant", limits);
                (void)traceBreakdownJson({analyzeTrace(trace)}).dump();
                ++opened;
            } catch (const KinetoTraceError&) {
            }
        }
        QVERIFY(opened > 0);  // some mutants stay traces
    }

private:
    void compareWithTorch(const KinetoTrace& trace, const std::string& tablePath) {
        std::ifstream in(tablePath);
        const nlohmann::json torch = nlohmann::json::parse(in);
        TraceAnalysisOptions all;
        all.includeLastStep = true;  // torch's table holds every step
        const RankAnalysis rank = analyzeTrace(trace, all);
        QVERIFY(rank.operators.size() > 10);
        QVERIFY(operatorRow(rank, "aten::addmm"));
        for (const OperatorStats& row : rank.operators) {
            QVERIFY2(torch.contains(row.name), row.name.c_str());
            const nlohmann::json& theirs = torch.at(row.name);
            // Self time matches; torch folds an operator into a parent of the
            // same name, so its counts and totals may be smaller, never larger.
            QVERIFY2(std::abs(row.selfUs - theirs.at("self_cpu_time_total").get<double>()) < 0.05,
                     qPrintable(QString::fromStdString(row.name) + ": self " +
                                QString::number(row.selfUs) + " vs torch " +
                                QString::number(theirs.at("self_cpu_time_total").get<double>())));
            QVERIFY(row.calls >= theirs.at("count").get<int64_t>());
            QVERIFY(row.totalUs >= theirs.at("cpu_time_total").get<double>() - 0.05);
        }
        for (const char* annotation : {"forward", "ProfilerStep*"}) {
            QVERIFY2(torch.contains(annotation), annotation);
        }
        QVERIFY(trace.eventsByCategory[size_t(TraceCategory::UserAnnotation)] > 0);
    }

    void compareWithHta(const RankAnalysis& rank, const nlohmann::json& hta, const QString& where) {
        auto near = [&where](double ours, double theirs, double tolerance, const char* what) {
            QVERIFY2(std::abs(ours - theirs) <= tolerance,
                     qPrintable(where + ": " + what + " " + QString::number(ours, 'f', 3) +
                                " vs HTA " + QString::number(theirs, 'f', 3)));
        };
        // HTA's get_comm_comp_overlap, rounded as HTA rounds it; NaN where no
        // NCCL kernel runs (a gloo trace: ours comes from gloo's threads).
        if (rank.communicationSource == CommunicationSource::DeviceKernels) {
            const double rounded = std::round(rank.communication.overlapPercent * 100) / 100;
            near(rounded, hta.at("comm_overlap_pct").get<double>(), 1e-9,
                 "communication overlap %");
        } else {
            QVERIFY2(hta.at("comm_overlap_pct").is_null(), qPrintable(where));
        }
        if (hta.at("temporal").is_null()) {
            QVERIFY2(!rank.temporal, qPrintable(where));
        } else {
            QVERIFY2(rank.temporal, qPrintable(where));
            const TemporalBreakdown& t = *rank.temporal;
            const nlohmann::json& h = hta.at("temporal");
            near(t.spanUs, h.at("span_us"), 1e-6, "span");
            near(t.percentOf(t.idleUs), h.at("idle_pct"), 0.1, "idle %");
            near(t.percentOf(t.computeUs), h.at("compute_pct"), 0.1, "compute %");
            near(t.percentOf(t.nonComputeUs), h.at("non_compute_pct"), 0.1, "non-compute %");
        }
        // Kernel types within 1 µs each (HTA truncates each stretch to whole µs).
        const nlohmann::json& types = hta.at("kernel_types");
        for (const auto& [name, us] : types.items()) {
            near(typeUs(rank, name), us.get<double>(), 1.0, name.c_str());
        }
        for (const KernelTypeTime& type : rank.kernelTypes) {
            QVERIFY2(types.contains(type.name) || type.us < 1.0,
                     qPrintable(where + ": HTA has no " + QString::fromStdString(type.name)));
        }
        // Kernels by name: every row HTA lists (its three types).
        size_t listed = 0;
        for (const auto& row : hta.at("kernels")) {
            const std::string name = row.at("name");
            const KernelStats* ours = nullptr;
            for (const KernelStats& k : rank.kernels) {
                if (k.name == name) {
                    ours = &k;
                }
            }
            QVERIFY2(ours, qPrintable(where + ": no row " + QString::fromStdString(name)));
            QCOMPARE(std::string(toString(ours->type)), row.at("type").get<std::string>());
            near(ours->totalUs, row.at("sum_us"), 1e-6, "kernel sum");
            near(ours->meanUs, row.at("mean_us"), 1e-6, "kernel mean");
            near(ours->minUs, row.at("min_us"), 1e-6, "kernel min");
            near(ours->maxUs, row.at("max_us"), 1e-6, "kernel max");
            near(ours->stdUs, row.at("std_us"), 1e-6, "kernel std");
            ++listed;
        }
        size_t typed = 0;
        for (const KernelStats& k : rank.kernels) {
            typed += k.type != KernelType::Other;
        }
        QCOMPARE(listed, typed);
        const nlohmann::json& launch = hta.at("launch");
        QCOMPARE(int64_t(rank.launch.launches.size()), launch.at("launches").get<int64_t>());
        near(rank.launch.cpuTotalUs, launch.at("cpu_total_us"), 1e-6, "launch cpu");
        near(rank.launch.gpuTotalUs, launch.at("gpu_total_us"), 1e-6, "launch gpu");
        near(rank.launch.delayTotalUs, launch.at("delay_total_us"), 1e-6, "launch delay");
        QCOMPARE(rank.launch.shortKernels, launch.at("short_kernels").get<int64_t>());
        QCOMPARE(rank.launch.runtimeOutliers, launch.at("runtime_outliers").get<int64_t>());
        QCOMPARE(rank.launch.delayOutliers, launch.at("delay_outliers").get<int64_t>());
    }
};

QTEST_GUILESS_MAIN(TestKinetoTrace)
#include "tst_kineto_trace.moc"
