#include "controllers/sweep_launch.h"

#include <QDateTime>
#include <QStandardPaths>

#include "experiments/study.h"
#include "pages/sweep_page.h"

namespace stepscope::ui {

QString sweepsFolder() {
    return QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation) +
           "/stepscope/sweeps";
}

SweepLaunch sweepLaunchFor(const SweepPage& page, const RunConfig& base,
                           const std::string& pointCli) {
    const QString outDir =
        sweepsFolder() + "/" + QDateTime::currentDateTime().toString("yyyyMMdd-HHmmss");
    SweepLaunch launch;
    launch.isolated = page.isolated();
    if (page.study() == SweepPage::Study::Warmup) {
        launch.kind = SweepLaunch::Kind::Warmup;
        launch.warmup = page.warmupSpec(base, outDir);
        launch.warmup.cli = pointCli;
        launch.spec = warmupStudySweep(launch.warmup);
    } else {
        launch.kind = page.study() == SweepPage::Study::Precision ? SweepLaunch::Kind::Precision
                                                                  : SweepLaunch::Kind::Sweep;
        launch.spec = page.spec(base, outDir);
    }
    RunController::validateSweep(launch.spec);
    return launch;
}

}  // namespace stepscope::ui
