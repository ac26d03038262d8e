#include "widgets/head_tail_delegate.h"

#include <QAbstractItemView>
#include <QApplication>
#include <QFontMetrics>
#include <QStyle>

#include <algorithm>

namespace stepscope::ui {

QString HeadTailDelegate::elide(const QString& text, int head, int tail,
                                const QFontMetrics& metrics, int width) {
    if (metrics.horizontalAdvance(text) <= width) {
        return text;
    }
    head = std::clamp(head, 0, int(text.size()));
    tail = std::clamp(tail, 0, int(text.size()) - head);
    const QString first = text.left(head);
    const QString last = text.right(tail);
    const QString middle = text.mid(head, text.size() - head - tail);
    const int room = width - metrics.horizontalAdvance(first) - metrics.horizontalAdvance(last);
    if (room >= metrics.horizontalAdvance(QChar(0x2026))) {
        return first + metrics.elidedText(middle, Qt::ElideRight, room) + last;
    }
    const int headRoom = width - metrics.horizontalAdvance(last);
    return metrics.elidedText(first, Qt::ElideRight, std::max(headRoom, 0)) + last;
}

void HeadTailDelegate::initStyleOption(QStyleOptionViewItem* option,
                                       const QModelIndex& index) const {
    QStyledItemDelegate::initStyleOption(option, index);
    if (!index.data(HeadRole).isValid()) {
        return;
    }
    const QWidget* widget = option->widget;
    const QStyle* style = widget ? widget->style() : QApplication::style();
    const int margin = style->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, widget) + 1;
    const int width =
        style->subElementRect(QStyle::SE_ItemViewItemText, option, widget).width() - 2 * margin;
    option->text = elide(option->text, index.data(HeadRole).toInt(), index.data(TailRole).toInt(),
                         option->fontMetrics, width);
}

QSize HeadTailDelegate::sizeHint(const QStyleOptionViewItem& option,
                                 const QModelIndex& index) const {
    QSize size = QStyledItemDelegate::sizeHint(option, index);
    if (const auto* view = qobject_cast<const QAbstractItemView*>(parent())) {
        size.setWidth(std::min(size.width(), view->viewport()->width()));
    }
    return size;
}

QString HeadTailDelegate::shownText(const QModelIndex& index) const {
    auto* view = qobject_cast<const QAbstractItemView*>(parent());
    QStyleOptionViewItem option;
    if (view) {
        option.initFrom(view->viewport());
        option.widget = view;
        option.rect = view->visualRect(index);
    }
    initStyleOption(&option, index);
    return option.text;
}

}  // namespace stepscope::ui
