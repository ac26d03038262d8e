#include "test_support.h"

#include <QProcess>

namespace stepscope::test {

QString pythonExecutable() {
    return QStringLiteral(STEPSCOPE_PYTHON);
}

QString sourcePath(const QString& relative) {
    return QStringLiteral(STEPSCOPE_SOURCE_DIR) + "/" + relative;
}

QString runPython(const QStringList& arguments) {
    QProcess process;
    process.start(pythonExecutable(), arguments);
    if (!process.waitForFinished(300000)) {
        return "python did not finish: " + process.errorString();
    }
    if (process.exitStatus() != QProcess::NormalExit || process.exitCode() != 0) {
        return "python failed (exit " + QString::number(process.exitCode()) +
               "): " + QString::fromUtf8(process.readAllStandardError());
    }
    return {};
}

int64_t operatorCalls(const RunResult& run, const std::string& name, const std::string& phase) {
    int64_t calls = 0;
    for (const auto& row : run.operators) {
        if (row.name == name && row.phase == phase) {
            calls += row.calls;
        }
    }
    return calls;
}

CliResult runCli(const QStringList& arguments) {
    QProcess process;
    process.start(QStringLiteral(STEPSCOPE_CLI), arguments);
    CliResult result;
    if (!process.waitForFinished(300000)) {
        result.err = "did not finish: " + process.errorString();
        return result;
    }
    result.exitCode = process.exitCode();
    result.out = process.readAllStandardOutput();
    result.err = QString::fromUtf8(process.readAllStandardError());
    return result;
}

RunConfig tinyCpuConfig() {
    RunConfig config;
    config.model = *findPreset("nano");
    config.model.vocabSize = 97;
    config.contextLength = 16;
    config.batchSize = 2;
    config.warmupSteps = 1;
    config.measuredSteps = 3;
    config.device = DeviceKind::Cpu;
    return config;
}

}  // namespace stepscope::test
