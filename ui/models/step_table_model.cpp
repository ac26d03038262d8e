#include "models/step_table_model.h"

#include <algorithm>

namespace stepscope::ui {

namespace {
// A distributed run's wait for communication comes last, where there is one,
// so that the others keep their places.
enum Column {
    Index,
    Kind,
    Total,
    Forward,
    Backward,
    Optimizer,
    Loss,
    ColumnCount,
    CommWait = ColumnCount
};

bool anyWait(const std::vector<StepRecord>& steps) {
    return std::any_of(steps.begin(), steps.end(),
                       [](const StepRecord& step) { return step.communicationWaitMs.has_value(); });
}
}  // namespace

void StepTableModel::setSteps(int documentId, const std::vector<StepRecord>& steps) {
    if (documentId == documentId_ && steps.size() >= steps_.size() && !steps_.empty() &&
        anyWait(steps) == waits_ &&
        std::equal(steps_.begin(), steps_.end(), steps.begin(),
                   [](const StepRecord& a, const StepRecord& b) { return a.index == b.index; })) {
        // A live run grew: append only the new rows.
        if (steps.size() > steps_.size()) {
            beginInsertRows({}, int(steps_.size()), int(steps.size()) - 1);
            steps_.assign(steps.begin(), steps.end());
            endInsertRows();
        }
        return;
    }
    beginResetModel();
    documentId_ = documentId;
    steps_ = steps;
    waits_ = anyWait(steps);
    endResetModel();
}

int StepTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(steps_.size());
}

int StepTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount + (waits_ ? 1 : 0);
}

QVariant StepTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= int(steps_.size())) {
        return {};
    }
    const StepRecord& step = steps_[size_t(index.row())];
    if (role == Qt::TextAlignmentRole) {
        return index.column() == Kind ? QVariant() : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    }
    if (role != Qt::DisplayRole) {
        return {};
    }
    auto ms = [](const std::optional<double>& value) {
        return value ? QVariant(QString::number(*value, 'f', 3)) : QVariant();
    };
    switch (index.column()) {
        case Index:
            return step.index;
        case Kind:
            return step.warmup ? tr("warm-up") : tr("measured");
        case Total:
            return QString::number(step.totalMs, 'f', 3);
        case Forward:
            return ms(step.forwardMs);
        case Backward:
            return ms(step.backwardMs);
        case Optimizer:
            return ms(step.optimizerMs);
        case Loss:
            return step.loss ? QVariant(QString::number(*step.loss, 'f', 5)) : QVariant();
        case CommWait:
            return ms(step.communicationWaitMs);
        default:
            return {};
    }
}

QVariant StepTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return QAbstractTableModel::headerData(section, orientation, role);
    }
    static const char* names[] = {"step",        "kind",         "total ms", "forward ms",
                                  "backward ms", "optimizer ms", "loss",     "comm wait ms"};
    return section >= 0 && section < columnCount() ? QVariant(tr(names[section])) : QVariant();
}

}  // namespace stepscope::ui
