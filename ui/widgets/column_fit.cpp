#include "widgets/column_fit.h"

#include <QAbstractItemModel>
#include <QEvent>
#include <QHeaderView>
#include <QTableView>

#include <algorithm>
#include <vector>

namespace stepscope::ui {

ColumnFit::ColumnFit(QTableView* table, const QList<int>& elastic, int elasticMinimum)
    : QObject(table), table_(table), elastic_(elastic), elasticMinimum_(elasticMinimum) {
    table->horizontalHeader()->setStretchLastSection(false);
    table->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    viewport_ = table->viewport();
    viewport_->installEventFilter(this);
    // Several changes in one turn of the loop fit once, after them.
    refit_.setSingleShot(true);
    refit_.setInterval(0);
    connect(&refit_, &QTimer::timeout, this, &ColumnFit::fit);
    watch(table->model());
    refit_.start();
}

bool ColumnFit::eventFilter(QObject* watched, QEvent* event) {
    // The viewport as it was when watched: while the table is destroyed, its
    // children get events after its scroll-area part is gone (asking it for
    // its viewport then is undefined, UBSan says).
    if (watched != viewport_) {
        return false;
    }
    if (event->type() == QEvent::Resize) {
        // At once, so that the width shown next is the fitted one; unless the
        // cells changed since they were measured: then the refit on its way
        // measures them, in a turn of its own (a table laid out after 500
        // new rows would measure them in the middle of its paint).
        if (!natural_.empty()) {
            place();
        }
    } else if (event->type() == QEvent::FontChange || event->type() == QEvent::StyleChange) {
        natural_.clear();  // the same text, another width
        refit_.start();
    }
    return false;
}

void ColumnFit::watch(QAbstractItemModel* model) {
    if (!model) {
        return;
    }
    const auto later = [this] {
        natural_.clear();
        refit_.start();
    };
    connect(model, &QAbstractItemModel::modelReset, this, later);
    connect(model, &QAbstractItemModel::layoutChanged, this, later);
    connect(model, &QAbstractItemModel::rowsInserted, this, later);
    connect(model, &QAbstractItemModel::rowsRemoved, this, later);
    connect(model, &QAbstractItemModel::columnsInserted, this, later);
    connect(model, &QAbstractItemModel::columnsRemoved, this, later);
    connect(model, &QAbstractItemModel::dataChanged, this, later);
    connect(model, &QAbstractItemModel::headerDataChanged, this, later);
}

void ColumnFit::fit() {
    refit_.stop();  // this is the refit asked for, if any
    natural_.clear();
    place();
}

void ColumnFit::measure() {
    QHeaderView* header = table_->horizontalHeader();
    natural_.resize(size_t(header->count()), kUnmeasured);
    for (int column = 0; column < header->count(); ++column) {
        if (!header->isSectionHidden(column) && natural_[size_t(column)] == kUnmeasured) {
            natural_[size_t(column)] =
                std::max(static_cast<const QAbstractItemView*>(table_)->sizeHintForColumn(column),
                         header->sectionSizeHint(column));
        }
    }
}

void ColumnFit::place() {
    measure();  // what is not measured yet: all of it, or a column shown since
    QHeaderView* header = table_->horizontalHeader();
    const int count = header->count();
    std::vector<int> width(size_t(count), 0);
    int total = 0;
    int shown = 0;
    int elasticShown = 0;
    for (int column = 0; column < count; ++column) {
        if (header->isSectionHidden(column)) {
            continue;
        }
        width[size_t(column)] = natural_[size_t(column)];
        total += width[size_t(column)];
        ++shown;
        elasticShown += isElastic(column) ? 1 : 0;
    }
    if (shown == 0) {
        return;
    }
    const int room = table_->viewport()->width();
    if (total < room) {
        // The spare room to the elastic columns, else to all, in equal parts.
        const int takers = elasticShown > 0 ? elasticShown : shown;
        int spare = room - total;
        for (int column = 0; column < count && takers > 0; ++column) {
            if (header->isSectionHidden(column) || (elasticShown > 0 && !isElastic(column))) {
                continue;
            }
            const int share =
                spare / takers + (column == lastTaker(elasticShown > 0) ? spare % takers : 0);
            width[size_t(column)] += share;
        }
    } else if (total > room && elasticShown > 0) {
        // The elastic columns give up what they have above their minimum,
        // each in proportion to it, until the table fits or none is left.
        int above = 0;
        for (int column : elastic_) {
            if (column < count && !header->isSectionHidden(column)) {
                above += std::max(0, width[size_t(column)] - elasticMinimum_);
            }
        }
        const int cut = std::min(above, total - room);
        for (int column : elastic_) {
            if (column >= count || header->isSectionHidden(column) || above == 0) {
                continue;
            }
            const int own = std::max(0, width[size_t(column)] - elasticMinimum_);
            width[size_t(column)] -= int(qint64(cut) * own / above);
        }
    }
    for (int column = 0; column < count; ++column) {
        if (!header->isSectionHidden(column) &&
            header->sectionSize(column) != width[size_t(column)]) {
            header->resizeSection(column, width[size_t(column)]);
        }
    }
}

// The last shown column that takes spare room: it takes the remainder too.
int ColumnFit::lastTaker(bool elasticOnly) const {
    const QHeaderView* header = table_->horizontalHeader();
    for (int column = header->count() - 1; column >= 0; --column) {
        if (!header->isSectionHidden(column) && (!elasticOnly || isElastic(column))) {
            return column;
        }
    }
    return -1;
}

}  // namespace stepscope::ui
