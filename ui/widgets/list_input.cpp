#include "widgets/list_input.h"

#include <QStringList>

namespace stepscope::ui {

std::vector<std::string> splitList(const QString& text) {
    std::vector<std::string> items;
    for (const QString& part : text.split(',', Qt::SkipEmptyParts)) {
        items.push_back(part.trimmed().toStdString());
    }
    return items;
}

std::vector<int64_t> positiveList(const QString& text, const std::string& field,
                                  std::vector<ConfigError>& errors) {
    std::vector<int64_t> values;
    for (const auto& item : splitList(text)) {
        bool ok = false;
        const qlonglong value = QString::fromStdString(item).toLongLong(&ok);
        if (!ok || value <= 0) {
            errors.push_back({field, "'" + item + "' is not a positive integer"});
        }
        values.push_back(value);
    }
    return values;
}

}  // namespace stepscope::ui
