// GPU behaviour: the kernels library on a device, CUDA-event timing, and
// out-of-memory recorded as a result. Skips, saying why, without a GPU.
#include <QtTest/QtTest>

#include <algorithm>
#include <map>
#include <vector>

#include "config/model_dims.h"
#include "engines/environment.h"
#include "engines/runner.h"
#include "profile/kernel_tracer.h"
#include "test_support.h"

#ifdef STEPSCOPE_HAVE_CUDA_KERNELS
#include <cuda_runtime_api.h>

#include "stepscope/kernels/device_query.h"
#include "stepscope/kernels/fill.h"
#endif

using namespace stepscope;

class TestGpu : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void fillKernelOverwritesEveryWord() {
#ifndef STEPSCOPE_HAVE_CUDA_KERNELS
        QSKIP("the CUDA kernels were not built (no nvcc)");
#else
        if (kernels::deviceCount() == 0) {
            QSKIP("no CUDA device is available on this machine");
        }
        const size_t count = 1000003;  // not a multiple of the block size
        void* device = nullptr;
        QCOMPARE(cudaMalloc(&device, count * 4), cudaSuccess);
        QCOMPARE(cudaMemset(device, 0, count * 4), cudaSuccess);
        QCOMPARE(kernels::fillWords(device, count, 0x7FC00000u, nullptr), std::string());
        std::vector<uint32_t> host(count, 0);
        QCOMPARE(cudaMemcpy(host.data(), device, count * 4, cudaMemcpyDeviceToHost), cudaSuccess);
        cudaFree(device);
        QCOMPARE(std::count(host.begin(), host.end(), 0x7FC00000u), qsizetype(count));
        const auto properties = kernels::queryDevice(0);
        QVERIFY(properties.ok);
        QVERIFY(properties.multiprocessors > 0);
#endif
    }

    void kernelTracerAccountsForTheStep() {
        if (!probeDevices().cudaAvailable) {
            QSKIP("no CUDA device is available on this machine");
        }
        if (const auto reason = KernelTracer::unavailableReason()) {
            QSKIP(reason->c_str());
        }
        RunConfig config;
        config.model = *findPreset("small");
        config.contextLength = 256;
        config.batchSize = 4;
        config.mode = RunMode::Forward;
        config.device = DeviceKind::Cuda;
        config.warmupSteps = 2;
        config.measuredSteps = 3;
        config.traceKernels = true;
        const RunResult result = runBenchmark(config);
        QCOMPARE(toString(result.status), std::string("ok"));

        // The traced step: kernels' summed time against the CUDA-event step
        // time less the idle gaps (one stream: kernels do not overlap).
        std::vector<std::pair<double, double>> busy;
        double kernelUs = 0;
        int attributed = 0, kernels = 0;
        for (const auto& span : result.timeline.spans) {
            if (span.kind == SpanKind::Kernel || span.kind == SpanKind::Memcpy ||
                span.kind == SpanKind::Memset) {
                busy.emplace_back(span.startUs, span.startUs + span.durationUs);
                kernelUs += span.durationUs;
                ++kernels;
                attributed += !span.detail.empty();
            }
        }
        QVERIFY(kernels > 50);
        QVERIFY2(attributed >= kernels * 95 / 100,
                 qPrintable(QString("%1 of %2").arg(attributed).arg(kernels)));
        std::sort(busy.begin(), busy.end());
        double unionUs = 0, end = busy.front().first;
        for (const auto& [start, stop] : busy) {
            unionUs += std::max(0.0, stop - std::max(start, end));
            end = std::max(end, stop);
        }
        // Idle: from the step's start (its range, which the start event
        // follows at once) to the first kernel, and between kernels.
        const double leadingUs = busy.front().first;
        const double idleUs = leadingUs + (end - busy.front().first) - unionUs;
        const double eventUs = result.steps.back().totalMs * 1e3;
        qInfo(
            "step %.1f us (CUDA events), kernels %.1f us, idle %.1f us (%.1f before the first), "
            "%d kernels",
            eventUs, kernelUs, idleUs, leadingUs, kernels);
        QVERIFY(leadingUs >= 0);
        QVERIFY2(std::abs(kernelUs - (eventUs - idleUs)) < 0.05 * eventUs,
                 qPrintable(QString("kernels %1 us vs %2 us").arg(kernelUs).arg(eventUs - idleUs)));

        // Matmul kernels dominate a forward pass of small.
        std::map<std::string, double> byCategory;
        double total = 0;
        for (const auto& row : result.kernels) {
            if (row.phase == "forward") {
                byCategory[row.category] += row.totalMs;
                total += row.totalMs;
            }
        }
        const auto top =
            std::max_element(byCategory.begin(), byCategory.end(),
                             [](const auto& a, const auto& b) { return a.second < b.second; });
        qInfo("matmul share of forward kernel time: %.1f%%", 100 * byCategory["matmul"] / total);
        QCOMPARE(top->first, std::string("matmul"));
        QVERIFY(byCategory["matmul"] > 0.5 * total);
    }

    void cudaRunTimesEveryPhase() {
        if (!probeDevices().cudaAvailable) {
            QSKIP("no CUDA device is available on this machine");
        }
        RunConfig config = test::tinyCpuConfig();
        config.device = DeviceKind::Cuda;
        config.precision = Precision::Bf16;
        const RunResult result = runBenchmark(config);
        QCOMPARE(toString(result.status), std::string("ok"));
        for (const auto& step : result.steps) {
            QVERIFY(*step.forwardMs > 0 && *step.backwardMs > 0 && *step.optimizerMs > 0);
            QVERIFY(*step.forwardMs + *step.backwardMs + *step.optimizerMs <= step.totalMs * 1.001);
        }
        QVERIFY(result.environment.deviceName.find("CPU") == std::string::npos);
    }

    void cudaOutOfMemoryIsAResult() {
        if (!probeDevices().cudaAvailable) {
            QSKIP("no CUDA device is available on this machine");
        }
        RunConfig config;
        config.model = *findPreset("2.7B");
        config.device = DeviceKind::Cuda;
        config.batchSize = 512;
        config.contextLength = 2048;
        config.warmupSteps = 0;
        config.measuredSteps = 1;
        const RunResult result = runBenchmark(config);
        QCOMPARE(toString(result.status), std::string("oom"));
        QVERIFY(!result.message.empty());
        // The memory was released: a small run right after succeeds.
        RunConfig small = test::tinyCpuConfig();
        small.device = DeviceKind::Cuda;
        QCOMPARE(toString(runBenchmark(small).status), std::string("ok"));
    }
};

QTEST_GUILESS_MAIN(TestGpu)
#include "tst_gpu.moc"
