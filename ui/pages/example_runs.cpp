#include "pages/example_runs.h"

#include <QAction>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMenu>

namespace stepscope::ui {

namespace {

constexpr const char* kIndexFile = "examples.json";

}  // namespace

QString examplesDirectory(QStringList* searched) {
    QStringList candidates;
    if (const QString fromEnvironment = qEnvironmentVariable("STEPSCOPE_EXAMPLES");
        !fromEnvironment.isEmpty()) {
        candidates << fromEnvironment;
    }
    candidates << QCoreApplication::applicationDirPath() + "/../share/stepscope/examples";
#ifdef STEPSCOPE_SOURCE_EXAMPLES_DIR
    candidates << QStringLiteral(STEPSCOPE_SOURCE_EXAMPLES_DIR);
#endif
    for (QString& candidate : candidates) {
        candidate = QDir::cleanPath(QFileInfo(candidate).absoluteFilePath());
    }
    if (searched) {
        *searched = candidates;
    }
    for (const QString& candidate : candidates) {
        if (QFileInfo(QDir(candidate).filePath(kIndexFile)).isFile()) {
            return candidate;
        }
    }
    return {};
}

QList<ExampleRun> readExampleRuns(const QString& directory) {
    QList<ExampleRun> examples;
    if (directory.isEmpty()) {
        return examples;
    }
    const QDir dir(directory);
    QFile index(dir.filePath(kIndexFile));
    if (!index.open(QIODevice::ReadOnly)) {
        return examples;
    }
    const QJsonArray entries =
        QJsonDocument::fromJson(index.readAll()).object().value("examples").toArray();
    for (const QJsonValue& value : entries) {
        const QJsonObject entry = value.toObject();
        ExampleRun example;
        example.title = entry.value("title").toString();
        example.description = entry.value("description").toString();
        example.path = QDir::cleanPath(dir.absoluteFilePath(entry.value("path").toString()));
        example.tab = entry.value("tab").toString();
        if (!example.title.isEmpty() && !entry.value("path").toString().isEmpty() &&
            QFileInfo::exists(example.path)) {
            examples << example;
        }
    }
    return examples;
}

void fillExamplesMenu(QMenu* menu, const QList<ExampleRun>& examples,
                      const std::function<void(const ExampleRun&)>& open) {
    menu->clear();
    for (const ExampleRun& example : examples) {
        QAction* action = menu->addAction(example.title, menu, [open, example] { open(example); });
        action->setToolTip(example.description);
    }
    if (examples.isEmpty()) {
        menu->addAction(QObject::tr("No examples found"))->setEnabled(false);
    }
}

}  // namespace stepscope::ui
