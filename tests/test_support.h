#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

#include "config/run_config.h"
#include "results/run_result.h"

namespace stepscope::test {

// The venv's Python (the one whose torch LibTorch came from) and the repository.
QString pythonExecutable();
QString sourcePath(const QString& relative);

// Runs the Python interpreter with `arguments`; fails the calling test (via
// the returned message) when it cannot start or exits non-zero.
// Returns an empty string on success, else what went wrong with its stderr.
QString runPython(const QStringList& arguments);

// Calls of operator `name` in `phase` over a traced run's measured steps.
int64_t operatorCalls(const RunResult& run, const std::string& name, const std::string& phase);

// What a stepscope-cli process said.
struct CliResult {
    int exitCode = -1;
    QByteArray out;
    QString err;  // or why it did not finish
};
// Runs the stepscope-cli this build made with `arguments` and waits for it (5 minutes at most).
CliResult runCli(const QStringList& arguments);

// A small, fast config on CPU: nano dims, vocab 97, ctx 16, batch 2.
RunConfig tinyCpuConfig();

}  // namespace stepscope::test
