// GPU behaviour: the kernels library on a device, CUDA-event timing, and
// out-of-memory recorded as a result. Skips, saying why, without a GPU.
#include <QtTest/QtTest>

#include <vector>

#include "bench/environment.h"
#include "bench/runner.h"
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
