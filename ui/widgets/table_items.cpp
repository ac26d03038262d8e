#include "widgets/table_items.h"

#include <QStandardItem>

#include "models/format.h"

namespace stepscope::ui {

namespace {

QStandardItem* rightAligned(const QString& text, const QVariant& value) {
    auto* item = new QStandardItem(text);
    item->setData(value, Qt::UserRole);
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
}

}  // namespace

QStandardItem* numberItem(double value, const QString& text) {
    return rightAligned(text, value);
}

QStandardItem* numberItem(qlonglong value) {
    return rightAligned(QString::number(value), value);
}

QStandardItem* bytesItem(int64_t bytes) {
    return rightAligned(bytesText(bytes), qlonglong(bytes));
}

}  // namespace stepscope::ui
