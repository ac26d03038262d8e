#include "models/dtype_flow_file.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QObject>

namespace stepscope::ui {

std::vector<DtypeRow> readDtypeFlowFile(const QString& path, QString* error) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = QObject::tr("cannot open '%1': %2").arg(path, file.errorString());
        return {};
    }
    QJsonParseError parseError{};
    const QJsonDocument document = QJsonDocument::fromJson(file.readAll(), &parseError);
    std::vector<DtypeRow> rows;
    for (const QJsonValue& value : document.array()) {
        const QJsonObject object = value.toObject();
        if (!object.value("what").isString() || !object.value("dtype").isString()) {
            rows.clear();
            break;
        }
        rows.push_back({object.value("what").toString().toStdString(),
                        object.value("kind").toString().toStdString(),
                        object.value("dtype").toString().toStdString()});
    }
    if (parseError.error != QJsonParseError::NoError || !document.isArray() || rows.empty()) {
        *error = QObject::tr(
                     "'%1' is not a dtype flow (a JSON array of {\"what\", \"kind\", "
                     "\"dtype\"}, as stepscope-cli dtypes --json prints it).")
                     .arg(path);
        return {};
    }
    return rows;
}

}  // namespace stepscope::ui
