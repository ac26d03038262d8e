#include "pages/welcome_page.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QScrollArea>
#include <QVBoxLayout>

#include "widgets/app_icons.h"
#include "widgets/link_card.h"

namespace stepscope::ui {

namespace {

constexpr int kPathRole = Qt::UserRole + 1;

QLabel* heading(const QString& text) {
    auto* label = new QLabel(text);
    QFont font = label->font();
    font.setPointSizeF(font.pointSizeF() * 1.25);
    font.setBold(true);
    label->setFont(font);
    return label;
}

QLabel* note(const QString& text = QString()) {
    auto* label = new QLabel(text);
    label->setWordWrap(true);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    label->setStyleSheet("color: palette(mid);");
    return label;
}

// The tab an example opens in, as its icon (resources/icons/tab-*.svg).
QIcon tabIcon(const QString& tab) {
    const QString name = "tab-" + tab.toLower().replace(' ', '-');
    return appIcon(QFile::exists(":/icons/" + name + ".svg") ? name : QString("document-open"));
}

// The logo, the name and what StepScope is for.
QLayout* titleHeader() {
    auto* logo = new QLabel;
    logo->setPixmap(applicationIcon().pixmap(64, 64));
    auto* title = new QLabel(WelcomePage::tr("StepScope"));
    QFont titleFont = title->font();
    titleFont.setPointSizeF(titleFont.pointSizeF() * 2);
    titleFont.setBold(true);
    title->setFont(titleFont);
    auto* tagline = new QLabel(
        WelcomePage::tr("What a Transformer training step costs: time per phase, the operators "
                        "and kernels that took it, and memory over time."));
    tagline->setWordWrap(true);
    auto* titles = new QVBoxLayout;
    titles->addWidget(title);
    titles->addWidget(tagline);
    auto* header = new QHBoxLayout;
    header->addWidget(logo, 0, Qt::AlignTop);
    header->addLayout(titles, 1);
    return header;
}

// `content` centred at the top, scrolled when the window is smaller.
QScrollArea* centredScroll(QWidget* content) {
    auto* scroll = new QScrollArea;
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    auto* holder = new QWidget;
    auto* holderLayout = new QHBoxLayout(holder);
    holderLayout->addWidget(content, 1, Qt::AlignHCenter | Qt::AlignTop);
    scroll->setWidget(holder);
    return scroll;
}

}  // namespace

WelcomePage::WelcomePage(QWidget* parent) : QWidget(parent) {
    auto* columns = new QGridLayout;
    columns->setHorizontalSpacing(32);
    columns->addLayout(createExamplesColumn(), 0, 0);
    columns->addLayout(createStartColumn(), 0, 1);
    columns->setColumnStretch(0, 1);
    columns->setColumnStretch(1, 1);

    auto* content = new QWidget;
    content->setMaximumWidth(1200);
    auto* contentLayout = new QVBoxLayout(content);
    contentLayout->setContentsMargins(24, 24, 24, 24);
    contentLayout->addLayout(titleHeader());
    contentLayout->addSpacing(16);
    contentLayout->addLayout(columns, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(centredScroll(content));

    connect(newRun_, &LinkCard::clicked, this, &WelcomePage::newRunRequested);
    connect(recent_, &QListWidget::itemClicked, this, [this](QListWidgetItem* item) {
        Q_EMIT recentFileRequested(item->data(kPathRole).toString());
    });
    connect(recent_, &QListWidget::itemActivated, this, [this](QListWidgetItem* item) {
        Q_EMIT recentFileRequested(item->data(kPathRole).toString());
    });
}

QLayout* WelcomePage::createExamplesColumn() {
    examplesLayout_ = new QVBoxLayout;
    examplesLayout_->setSpacing(2);
    examplesNote_ = note();
    auto* column = new QVBoxLayout;
    column->addWidget(heading(tr("Open an example")));
    column->addLayout(examplesLayout_);
    column->addWidget(examplesNote_);
    column->addStretch(1);
    return column;
}

QLayout* WelcomePage::createStartColumn() {
    newRun_ = new LinkCard(tr("New run"),
                           tr("Choose a model, context, mode and precision on the left, then Run: "
                              "the steps appear here as they are measured."));
    newRun_->setIcon(appIcon("run"));
    recent_ = new QListWidget;
    recent_->setObjectName("welcomeRecentFiles");
    recent_->setToolTip(tr("Click to open"));
    recent_->setMinimumHeight(120);
    recent_->setTextElideMode(Qt::ElideRight);  // the name whole, the folder cut short
    recent_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    recentNote_ = note(tr("Files and folders you open are listed here."));
    auto* column = new QVBoxLayout;
    column->addWidget(heading(tr("Start")));
    column->addWidget(newRun_);
    column->addSpacing(12);
    column->addWidget(heading(tr("Recent files")));
    column->addWidget(recent_);
    column->addWidget(recentNote_);
    column->addStretch(1);  // both columns start at the top
    return column;
}

void WelcomePage::setExamples(const QList<ExampleRun>& examples, const QString& directory,
                              const QStringList& searched) {
    for (LinkCard* button : exampleButtons_) {
        delete button;
    }
    exampleButtons_.clear();
    examples_ = examples;
    for (const ExampleRun& example : examples_) {
        auto* button = new LinkCard(example.title, example.description);
        button->setIcon(tabIcon(example.tab));
        button->setToolTip(example.path);
        connect(button, &LinkCard::clicked, this,
                [this, example] { Q_EMIT exampleRequested(example); });
        examplesLayout_->addWidget(button);
        exampleButtons_ << button;
    }
    if (examples_.isEmpty()) {
        examplesNote_->setText(
            tr("No examples found. Looked in: %1. Set STEPSCOPE_EXAMPLES to a folder holding "
               "examples.json, or install StepScope (cmake --install).")
                .arg(searched.join(", ")));
    } else {
        examplesNote_->setText(tr("From %1.").arg(QDir::toNativeSeparators(directory)));
    }
}

void WelcomePage::setRecentFiles(const QStringList& paths) {
    recent_->clear();
    for (const QString& path : paths) {
        const QFileInfo info(path);
        auto* item = new QListWidgetItem(
            appIcon(info.isDir() ? "folder-open" : "document-open"),
            tr("%1  —  %2").arg(info.fileName(), QDir::toNativeSeparators(info.path())));
        item->setData(kPathRole, path);
        item->setToolTip(path);
        recent_->addItem(item);
    }
    recent_->setVisible(!paths.isEmpty());
    recentNote_->setVisible(paths.isEmpty());
}

}  // namespace stepscope::ui
