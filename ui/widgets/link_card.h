#pragma once

#include <QAbstractButton>

class QLabel;

namespace stepscope::ui {

// A command link (an icon, a bold title, a description below it) whose text
// wraps as a label's does, so that all of it shows at any width.
// QCommandLinkButton measures its description one way and paints it another:
// the welcome page's examples lost their last line.
class LinkCard final : public QAbstractButton {
    Q_OBJECT

public:
    LinkCard(const QString& title, const QString& description, QWidget* parent = nullptr);

    QString description() const;
    QLabel* descriptionLabel() const { return description_; }

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    QLabel* title_;
    QLabel* description_;
};

}  // namespace stepscope::ui
