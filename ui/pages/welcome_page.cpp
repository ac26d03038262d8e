#include "pages/welcome_page.h"

#include <QDir>
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

// The tab an example opens in, as its icon.
QIcon tabIcon(const QString& tab) {
    const QString name = tab.toLower().replace(' ', '-');
    for (const char* known : {"step-timing", "breakdown", "timeline", "memory", "compare", "sweep",
                              "attention", "precision"}) {
        if (name == QLatin1String(known)) {
            return appIcon("tab-" + name);
        }
    }
    return appIcon("document-open");
}

}  // namespace

WelcomePage::WelcomePage(QWidget* parent) : QWidget(parent) {
    auto* logo = new QLabel;
    logo->setPixmap(applicationIcon().pixmap(64, 64));
    auto* title = new QLabel(tr("StepScope"));
    QFont titleFont = title->font();
    titleFont.setPointSizeF(titleFont.pointSizeF() * 2);
    titleFont.setBold(true);
    title->setFont(titleFont);
    auto* tagline = new QLabel(
        tr("What a Transformer training step costs: time per phase, the operators and kernels "
           "that took it, and memory over time."));
    tagline->setWordWrap(true);
    auto* titles = new QVBoxLayout;
    titles->addWidget(title);
    titles->addWidget(tagline);
    auto* header = new QHBoxLayout;
    header->addWidget(logo, 0, Qt::AlignTop);
    header->addLayout(titles, 1);

    examplesLayout_ = new QVBoxLayout;
    examplesLayout_->setSpacing(2);
    examplesNote_ = note();
    auto* examplesColumn = new QVBoxLayout;
    examplesColumn->addWidget(heading(tr("Open an example")));
    examplesColumn->addLayout(examplesLayout_);
    examplesColumn->addWidget(examplesNote_);
    examplesColumn->addStretch(1);

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
    auto* startColumn = new QVBoxLayout;
    startColumn->addWidget(heading(tr("Start")));
    startColumn->addWidget(newRun_);
    startColumn->addSpacing(12);
    startColumn->addWidget(heading(tr("Recent files")));
    startColumn->addWidget(recent_);
    startColumn->addWidget(recentNote_);
    startColumn->addStretch(1);  // both columns start at the top

    auto* columns = new QGridLayout;
    columns->setHorizontalSpacing(32);
    columns->addLayout(examplesColumn, 0, 0);
    columns->addLayout(startColumn, 0, 1);
    columns->setColumnStretch(0, 1);
    columns->setColumnStretch(1, 1);

    auto* content = new QWidget;
    content->setMaximumWidth(1200);
    auto* contentLayout = new QVBoxLayout(content);
    contentLayout->setContentsMargins(24, 24, 24, 24);
    contentLayout->addLayout(header);
    contentLayout->addSpacing(16);
    contentLayout->addLayout(columns, 1);

    auto* scroll = new QScrollArea;
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    auto* holder = new QWidget;
    auto* holderLayout = new QHBoxLayout(holder);
    holderLayout->addWidget(content, 1, Qt::AlignHCenter | Qt::AlignTop);
    scroll->setWidget(holder);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(scroll);

    connect(newRun_, &LinkCard::clicked, this, &WelcomePage::newRunRequested);
    connect(recent_, &QListWidget::itemClicked, this, [this](QListWidgetItem* item) {
        Q_EMIT recentFileRequested(item->data(kPathRole).toString());
    });
    connect(recent_, &QListWidget::itemActivated, this, [this](QListWidgetItem* item) {
        Q_EMIT recentFileRequested(item->data(kPathRole).toString());
    });
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
