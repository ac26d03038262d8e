#pragma once

#include <QString>

#include <cstdint>

class QStandardItem;

namespace stepscope::ui {

// Table cells for numbers: right-aligned, sorting (and exporting) by the
// value kept in Qt::UserRole, not by the text shown.
QStandardItem* numberItem(double value, const QString& text);
QStandardItem* numberItem(qlonglong value);  // shown as the number
QStandardItem* bytesItem(int64_t bytes);     // shown as "1.50 GiB"

}  // namespace stepscope::ui
