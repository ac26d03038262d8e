#include "widgets/elided_label.h"

#include <QAction>
#include <QClipboard>
#include <QGuiApplication>
#include <QPainter>

#include <algorithm>

namespace stepscope::ui {

namespace {
constexpr int kMinimumCharacters = 6;  // "12 dr…": enough to see that text is there
}

ElidedLabel::ElidedLabel(int lines, QWidget* parent) : QWidget(parent), lines_(std::max(1, lines)) {
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
    // What a selectable QLabel offered: the whole text, elided or not, to paste.
    auto* copy = new QAction(tr("Copy"), this);
    connect(copy, &QAction::triggered, this,
            [this] { QGuiApplication::clipboard()->setText(text_); });
    addAction(copy);
    setContextMenuPolicy(Qt::ActionsContextMenu);
}

void ElidedLabel::setText(const QString& text) {
    if (text == text_) {
        return;
    }
    text_ = text;
    updateToolTip();
    updateGeometry();  // the hint follows the text; the minimum does not
    update();
}

void ElidedLabel::setElideMode(Qt::TextElideMode mode) {
    mode_ = mode;
    updateToolTip();
    update();
}

QStringList ElidedLabel::shownLines() const {
    QStringList shown;
    const QFontMetrics metrics(font());
    const QStringList lines = text_.split('\n');
    for (int i = 0; i < lines.size() && i < lines_; ++i) {
        shown << metrics.elidedText(lines[i], mode_, contentsRect().width());
    }
    return shown;
}

bool ElidedLabel::isElided() const {
    const QStringList lines = text_.split('\n');
    return lines.size() > lines_ || shownLines() != lines.mid(0, lines_);
}

QSize ElidedLabel::sizeHint() const {
    const QFontMetrics metrics(font());
    int width = 0;
    for (const QString& line : text_.split('\n')) {
        width = std::max(width, metrics.horizontalAdvance(line));
    }
    return {width + 2, metrics.lineSpacing() * lines_ + 2};
}

QSize ElidedLabel::minimumSizeHint() const {
    const QFontMetrics metrics(font());
    return {metrics.averageCharWidth() * kMinimumCharacters, metrics.lineSpacing() * lines_ + 2};
}

void ElidedLabel::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.setPen(
        palette().color(isEnabled() ? QPalette::Active : QPalette::Disabled, QPalette::WindowText));
    const QFontMetrics metrics(font());
    const QRect area = contentsRect();
    int y = area.top() + 1;
    for (const QString& line : shownLines()) {
        painter.drawText(QRect(area.left(), y, area.width(), metrics.lineSpacing()),
                         Qt::AlignLeft | Qt::AlignVCenter, line);
        y += metrics.lineSpacing();
    }
}

void ElidedLabel::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    updateToolTip();
}

void ElidedLabel::updateToolTip() {
    setToolTip(isElided() ? text_ : QString());
}

}  // namespace stepscope::ui
