// stepscope-ui-bench: two figures of the desktop app, printed as Markdown.
//  1. Responsiveness: while a run streams steps into the main window, a 1 ms
//     probe timer on the UI thread records the gaps between its ticks; the
//     longest gap is the longest time the UI thread was busy (or starved).
//  2. Opening and drawing a run file with 100,000 step records.
#include <qcustomplot.h>

#include <QApplication>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <random>

#include "config_panel.h"
#include "main_window.h"
#include "results/run_file.h"
#include "step_timing_view.h"

using namespace stepscope;

namespace {

struct Gaps {
    double maxMs = 0;
    double p99Ms = 0;
    size_t ticks = 0;
};

Gaps measureRun(const RunConfig& config) {
    ui::MainWindow window;
    window.resize(1400, 900);
    window.show();
    window.configPanel()->setConfig(config);
    std::vector<double> gaps;
    QElapsedTimer clock;
    QTimer probe;
    probe.setTimerType(Qt::PreciseTimer);
    probe.setInterval(1);
    QObject::connect(&probe, &QTimer::timeout, [&] {
        gaps.push_back(double(clock.nsecsElapsed()) / 1e6);
        clock.restart();
    });
    QSignalSpy finished(&window, &ui::MainWindow::runFinished);
    clock.start();
    probe.start();
    window.startRun();
    finished.wait(600000);
    probe.stop();
    std::sort(gaps.begin(), gaps.end());
    Gaps result;
    result.ticks = gaps.size();
    if (!gaps.empty()) {
        result.maxMs = gaps.back();
        result.p99Ms = gaps[gaps.size() * 99 / 100];
    }
    return result;
}

RunResult syntheticRun(int steps) {
    RunResult run;
    run.config.model = *findPreset("small");
    run.config.measuredSteps = steps - 5;
    run.config.warmupSteps = 5;
    run.parameterCount = parameterCount(run.config.model);
    run.environment.libtorchVersion = "synthetic";
    std::mt19937 random(1);
    std::normal_distribution<double> noise(0, 1);
    for (int i = 0; i < steps; ++i) {
        StepRecord step;
        step.index = i;
        step.warmup = i < 5;
        step.forwardMs = 20 + noise(random);
        step.backwardMs = 40 + noise(random);
        step.optimizerMs = 5 + 0.1 * noise(random);
        step.totalMs = *step.forwardMs + *step.backwardMs + *step.optimizerMs + 0.2;
        step.loss = 9.0 - 1e-5 * i;
        run.steps.push_back(step);
    }
    run.summary = summarizeSteps(run.steps, run.config, std::nullopt);
    return run;
}

}  // namespace

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    QApplication app(argc, argv);
    QApplication::setOrganizationName("StepScopeBench");
    QApplication::setApplicationName("StepScopeBench");
    QTemporaryDir dir;
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, dir.filePath("settings"));

    std::printf(
        "## UI thread while steps stream in (1 ms probe timer)\n\n"
        "| run | steps | probe ticks | longest gap ms | p99 gap ms |\n"
        "|---|---:|---:|---:|---:|\n");
    struct Case {
        const char* name;
        const char* preset;
        int64_t context;
        int steps;
    };
    for (const Case& c : {Case{"nano ctx 16 (fast steps)", "nano", 16, 3000},
                          Case{"tiny ctx 128", "tiny", 128, 200}}) {
        RunConfig config;
        config.model = *findPreset(c.preset);
        config.contextLength = c.context;
        config.batchSize = 2;
        config.warmupSteps = 2;
        config.measuredSteps = c.steps;
        const Gaps gaps = measureRun(config);
        std::printf("| %s | %d | %zu | %.1f | %.1f |\n", c.name, c.steps + 2, gaps.ticks,
                    gaps.maxMs, gaps.p99Ms);
        std::fflush(stdout);
    }

    const QString path = dir.filePath("100k.json");
    writeRunFile(syntheticRun(100000), path.toStdString());
    std::printf(
        "\n## Open and draw a run file with 100,000 steps (%.1f MB)\n\n"
        "| attempt | read file ms | open + draw ms |\n|---:|---:|---:|\n",
        double(QFileInfo(path).size()) / 1e6);
    for (int attempt = 1; attempt <= 3; ++attempt) {
        QElapsedTimer timer;
        timer.start();
        readRunFile(path.toStdString());
        const double readMs = double(timer.nsecsElapsed()) / 1e6;
        ui::MainWindow window;
        window.resize(1400, 900);
        window.show();
        QApplication::processEvents();
        timer.restart();
        window.openRunFile(path);
        window.stepTimingView()->plot()->replot(QCustomPlot::rpImmediateRefresh);
        QApplication::processEvents();
        std::printf("| %d | %.0f | %.0f |\n", attempt, readMs, double(timer.nsecsElapsed()) / 1e6);
        std::fflush(stdout);
    }
    return 0;
}
