#pragma once

// For the desktop app's suites: a small nano run made by the CLI
// (STEPSCOPE_CLI, defined by tests/CMakeLists.txt), as a user would make one.
#include <QProcess>
#include <QString>
#include <QStringList>

namespace stepscope::test {

// Writes the run file `path`; returns an empty string, or the CLI's stderr.
inline QString cliRun(const QString& path, const QStringList& extra = {}, int steps = 3) {
    QProcess process;
    process.start(
        QStringLiteral(STEPSCOPE_CLI),
        QStringList{"run", "--model", "nano", "--vocab", "97", "--ctx", "16", "--batch", "2",
                    "--warmup", "1", "--steps", QString::number(steps), "--out", path} +
            extra);
    process.waitForFinished(120000);
    return process.exitCode() == 0 ? QString() : QString::fromUtf8(process.readAllStandardError());
}

}  // namespace stepscope::test
