#include "widgets/form_scroll_area.h"

#include <QEvent>
#include <QScrollBar>

namespace stepscope::ui {

FormScrollArea::FormScrollArea(QWidget* form) {
    setWidget(form);
    setWidgetResizable(true);
    setFrameShape(QFrame::NoFrame);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    form->installEventFilter(this);
}

QSize FormScrollArea::sizeHint() const {
    const QSize form = widget()->sizeHint();
    return {form.width() + verticalScrollBar()->sizeHint().width(), form.height()};
}

QSize FormScrollArea::minimumSizeHint() const {
    return {widget()->minimumSizeHint().width() + verticalScrollBar()->sizeHint().width(),
            kMinimumHeight};
}

bool FormScrollArea::eventFilter(QObject* watched, QEvent* event) {
    if (watched == widget() && event->type() == QEvent::LayoutRequest) {
        updateGeometry();  // an error label or the read-only header came or went
    }
    return QScrollArea::eventFilter(watched, event);
}

}  // namespace stepscope::ui
