#include "models/unlike_steps.h"

namespace stepscope::ui {

namespace {
const QStringList kWorkFields = {"Python model", "model", "vocab", "ctx", "batch"};
}

QString differenceText(const FieldDifference& difference) {
    return difference.field + " " + difference.values.join(" vs ");
}

QStringList unlikeFields(const QList<FieldDifference>& differences, int phase) {
    QStringList out;
    for (const FieldDifference& difference : differences) {
        if (kWorkFields.contains(difference.field) || (phase == 0 && difference.field == "mode")) {
            out << differenceText(difference);
        }
    }
    return out;
}

}  // namespace stepscope::ui
