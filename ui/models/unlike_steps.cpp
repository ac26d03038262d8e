#include "models/unlike_steps.h"

#include <algorithm>

namespace stepscope::ui {

QList<ComparedField> comparedFields(const QList<RunConfig>& configs) {
    QList<ComparedField> out;
    for (qsizetype i = 1; i < configs.size(); ++i) {
        for (const ConfigDifference& difference : configFieldDifferences(configs[0], configs[i])) {
            auto known = std::find_if(out.begin(), out.end(), [&](const ComparedField& f) {
                return f.first.field == difference.field;
            });
            if (known == out.end()) {
                // Until now every config held the first's value.
                known = out.insert(
                    out.end(), {difference,
                                QStringList(configs.size(), QString::fromStdString(difference.a))});
            }
            known->values[i] = QString::fromStdString(difference.b);
        }
    }
    return out;
}

QString differenceText(const ComparedField& field) {
    return QString::fromStdString(field.first.field) + " " + field.values.join(" vs ");
}

QStringList unlikeFields(const QList<ComparedField>& fields, StepPhase phase) {
    QStringList out;
    for (const ComparedField& field : fields) {
        if (unlikeIn(field.first, phase)) {
            out << differenceText(field);
        }
    }
    return out;
}

}  // namespace stepscope::ui
