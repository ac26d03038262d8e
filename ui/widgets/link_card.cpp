#include "widgets/link_card.h"

#include <QLabel>
#include <QStyleOptionButton>
#include <QStylePainter>
#include <QVBoxLayout>

namespace stepscope::ui {

namespace {

constexpr int kMargin = 8;
constexpr int kIconSide = 20;

QLabel* cardLabel(const QString& text) {
    auto* label = new QLabel(text);
    label->setWordWrap(true);
    label->setAttribute(Qt::WA_TransparentForMouseEvents);  // the card takes the click
    return label;
}

}  // namespace

LinkCard::LinkCard(const QString& title, const QString& description, QWidget* parent)
    : QAbstractButton(parent), title_(cardLabel(title)), description_(cardLabel(description)) {
    setText(title);
    setIconSize(QSize(kIconSide, kIconSide));
    setAttribute(Qt::WA_Hover);
    setFocusPolicy(Qt::StrongFocus);
    setCursor(Qt::PointingHandCursor);
    QFont bold = title_->font();
    bold.setBold(true);
    title_->setFont(bold);
    // Room for the icon on the left; the labels' word wrap gives the height
    // for any width (the layout's heightForWidth).
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(kIconSide + 2 * kMargin, kMargin, kMargin, kMargin);
    layout->setSpacing(2);
    layout->addWidget(title_);
    layout->addWidget(description_);
}

QString LinkCard::description() const {
    return description_->text();
}

void LinkCard::paintEvent(QPaintEvent*) {
    QStylePainter painter(this);
    if (underMouse() || isDown() || hasFocus()) {
        QStyleOptionButton option;
        option.initFrom(this);
        option.state |= isDown() ? QStyle::State_Sunken : QStyle::State_Raised;
        painter.drawPrimitive(QStyle::PE_PanelButtonCommand, option);
    }
    if (!icon().isNull()) {
        painter.drawPixmap(kMargin, kMargin + 2, icon().pixmap(iconSize()));
    }
}

}  // namespace stepscope::ui
