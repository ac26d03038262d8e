#pragma once

#include <QScrollArea>

namespace stepscope::ui {

// A form in a scroll area that asks for the form's whole height: all of it
// shows where the screen has room; where it has not, the form scrolls rather
// than the window outgrowing the screen (the configuration panel).
class FormScrollArea final : public QScrollArea {
public:
    explicit FormScrollArea(QWidget* form);
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    static constexpr int kMinimumHeight = 160;
};

}  // namespace stepscope::ui
