#include "models/category_rules.h"

#include <QSettings>

#include "profile/memory_trace.h"

namespace stepscope::ui {

namespace {

constexpr const char* kRulesKey = "memory/categoryRules";

QString targetKey(RuleTarget target) {
    switch (target) {
        case RuleTarget::Name:
            return "name";
        case RuleTarget::File:
            return "file";
        case RuleTarget::NameOrFile:
            break;
    }
    return "name-or-file";
}

RuleTarget targetOf(const QString& key) {
    if (key == "name") {
        return RuleTarget::Name;
    }
    return key == "file" ? RuleTarget::File : RuleTarget::NameOrFile;
}

}  // namespace

QStringList ruleCategoryNames() {
    QStringList names;
    for (size_t c = 0; c < kMemoryCategories; ++c) {
        names << QString::fromUtf8(toString(MemoryCategory(c)));
    }
    return names;
}

QString categoryRuleError(const CategoryRule& rule) {
    if (rule.pattern.empty()) {
        return QObject::tr("empty: write a regular expression (an empty one matches every frame)");
    }
    const std::string error = ruleRegexError(rule.pattern);
    if (!error.empty()) {
        return QObject::tr("not a regular expression: %1").arg(QString::fromStdString(error));
    }
    if (!ruleCategoryNames().contains(QString::fromStdString(rule.category))) {
        return QObject::tr("no category '%1': one of %2")
            .arg(QString::fromStdString(rule.category), ruleCategoryNames().join(", "));
    }
    return {};
}

std::vector<CategoryRule> loadCategoryRules() {
    QSettings settings;
    std::vector<CategoryRule> rules;
    const int count = settings.beginReadArray(kRulesKey);
    for (int i = 0; i < count; ++i) {
        settings.setArrayIndex(i);
        CategoryRule rule{settings.value("category").toString().toStdString(),
                          settings.value("pattern").toString().toStdString(),
                          targetOf(settings.value("target").toString())};
        // The dialog keeps no bad rule; one edited in by hand is left out,
        // not a reason for every snapshot to fail to open.
        if (categoryRuleError(rule).isEmpty()) {
            rules.push_back(std::move(rule));
        }
    }
    settings.endArray();
    return rules;
}

void saveCategoryRules(const std::vector<CategoryRule>& rules) {
    QSettings settings;
    settings.remove(kRulesKey);
    settings.beginWriteArray(kRulesKey, int(rules.size()));
    for (size_t i = 0; i < rules.size(); ++i) {
        settings.setArrayIndex(int(i));
        settings.setValue("target", targetKey(rules[i].target));
        settings.setValue("pattern", QString::fromStdString(rules[i].pattern));
        settings.setValue("category", QString::fromStdString(rules[i].category));
    }
    settings.endArray();
}

}  // namespace stepscope::ui
