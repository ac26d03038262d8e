#pragma once

#include <QList>
#include <QStringList>
#include <QWidget>

#include "pages/example_runs.h"

class QLabel;
class QLayout;
class QListWidget;
class QVBoxLayout;

namespace stepscope::ui {

class LinkCard;

// What the app shows on first start, and whenever it is asked for (Help →
// Examples → Welcome page): the example runs to open, a way to start a new
// run, and the recent files. It only asks; the main window opens and runs.
class WelcomePage final : public QWidget {
    Q_OBJECT

public:
    explicit WelcomePage(QWidget* parent = nullptr);

    // `searched`: where the examples were looked for, named when none were found.
    void setExamples(const QList<ExampleRun>& examples, const QString& directory,
                     const QStringList& searched);
    void setRecentFiles(const QStringList& paths);

    const QList<ExampleRun>& examples() const { return examples_; }
    QList<LinkCard*> exampleButtons() const { return exampleButtons_; }
    LinkCard* newRunButton() const { return newRun_; }
    QListWidget* recentList() const { return recent_; }

Q_SIGNALS:
    void exampleRequested(const stepscope::ui::ExampleRun& example);
    void recentFileRequested(const QString& path);
    void newRunRequested();

private:
    QLayout* createExamplesColumn();
    QLayout* createStartColumn();

    QVBoxLayout* examplesLayout_;
    QLabel* examplesNote_;
    LinkCard* newRun_;
    QListWidget* recent_;
    QLabel* recentNote_;
    QList<ExampleRun> examples_;
    QList<LinkCard*> exampleButtons_;
};

}  // namespace stepscope::ui
