#pragma once

#include <QStyledItemDelegate>

class QFontMetrics;

namespace stepscope::ui {

// Draws an item whose text is too long for its row with the middle elided,
// not the end: its first `HeadRole` characters (what tells it from the
// rows beside it) and its last `TailRole` characters (a state, an unsaved
// "*") stay in view. A run list's labels end alike and differ near their
// start; Qt's right elision cut the difference and the marker off.
class HeadTailDelegate final : public QStyledItemDelegate {
    Q_OBJECT

public:
    static constexpr int HeadRole = Qt::UserRole + 40;
    static constexpr int TailRole = Qt::UserRole + 41;

    using QStyledItemDelegate::QStyledItemDelegate;

    // `text` in `width` pixels: whole if it fits, else head + elided middle
    // + tail; where head and tail do not fit, the head elided and the tail.
    static QString elide(const QString& text, int head, int tail, const QFontMetrics& metrics,
                         int width);
    // The text as an item of `view` at `index` shows it.
    QString shownText(const QModelIndex& index) const;
    // No wider than the view: a list then never scrolls sideways to show
    // what the elision leaves out (the tooltip has it).
    QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override;

protected:
    void initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const override;
};

}  // namespace stepscope::ui
