#include "models/file_filters.h"

#include <QCoreApplication>

namespace stepscope::ui {

namespace {

QString text(std::string_view value) {
    return QString::fromUtf8(value.data(), qsizetype(value.size()));
}

QString capitalised(QString name) {
    if (!name.isEmpty()) {
        name[0] = name[0].toUpper();
    }
    return name;
}

QString filter(const QString& name, const QStringList& patterns) {
    return QString("%1 (%2)").arg(name, patterns.join(' '));
}

// "a, b or c"
QString listed(const QStringList& names) {
    if (names.size() < 2) {
        return names.join(QString());
    }
    return names.mid(0, names.size() - 1).join(", ") +
           QCoreApplication::translate("FileFilters", " or ") + names.back();
}

}  // namespace

QStringList openFileFilters(const std::vector<FileKind>& kinds) {
    QStringList all, perKind;
    bool folders = false;
    for (const FileKind kind : kinds) {
        const FileKindInfo& info = fileKindInfo(kind);
        folders |= info.folder;
        if (info.folder || info.patterns.empty()) {
            continue;
        }
        const QStringList patterns = text(info.patterns).split(' ', Qt::SkipEmptyParts);
        perKind << filter(capitalised(text(info.name)), patterns);
        for (const QString& pattern : patterns) {
            if (!all.contains(pattern)) {
                all << pattern;
            }
        }
    }
    QStringList standIns;
    if (folders) {
        for (const std::string_view name : folderStandIns()) {
            standIns << text(name);
        }
        all << standIns;
        perKind << filter(
            QCoreApplication::translate("FileFilters", "A sweep's or attention folder's table"),
            standIns);
    }
    return QStringList{filter(
               QCoreApplication::translate("FileFilters", "Everything StepScope opens"), all)} +
           perKind +
           QStringList{filter(QCoreApplication::translate("FileFilters", "All files"), {"*"})};
}

QString openFolderCaption(const std::vector<FileKind>& kinds) {
    QStringList names;
    for (const FileKind kind : kinds) {
        const FileKindInfo& info = fileKindInfo(kind);
        if (info.folder) {
            names << text(info.name);
        }
    }
    return QCoreApplication::translate("FileFilters", "Open a %1").arg(listed(names));
}

}  // namespace stepscope::ui
