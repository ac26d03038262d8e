#pragma once

#include <QString>
#include <QStringList>
#include <QWidget>

namespace stepscope::ui {

// Text that never widens its layout: each line that does not fit is elided
// (at the right, or where setElideMode says), and the whole text is the
// tooltip then. A QLabel asks its layout for its whole text's width, so a
// long line (a hover's module path, a count of bands) pushed the window
// past the screen. Lines are '\n'-separated; the height is that of
// `lines` lines whatever the text, so nothing below moves as it changes.
// Its context menu copies the whole text.
class ElidedLabel final : public QWidget {
    Q_OBJECT

public:
    explicit ElidedLabel(int lines = 1, QWidget* parent = nullptr);

    void setText(const QString& text);
    QString text() const { return text_; }
    void clear() { setText(QString()); }
    void setElideMode(Qt::TextElideMode mode);
    // The lines as drawn at the present width.
    QStringList shownLines() const;
    bool isElided() const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void updateToolTip();

    QString text_;
    int lines_;
    Qt::TextElideMode mode_ = Qt::ElideRight;
};

}  // namespace stepscope::ui
