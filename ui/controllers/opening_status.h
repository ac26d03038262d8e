#pragma once

#include <QObject>
#include <QString>

class QAbstractButton;
class QLabel;

namespace stepscope::ui {

class CategoryRulesControl;
class FileOpener;

// What the window does in the background, said in the status label: while
// files are read "Opening …", while category rules are applied to the open
// snapshots "Applying …"; when the newest of them ends, what the label said
// before comes back, unless something else was said meanwhile (an older
// open's end is ignored: the newer one speaks). The cancel button shows
// while either is under way: it drops the opens (nothing of them is shown)
// and the apply (the rules stay as they were).
class OpeningStatus : public QObject {
    Q_OBJECT

public:
    OpeningStatus(FileOpener* opener, CategoryRulesControl* rules, QLabel* label,
                  QAbstractButton* cancel, QObject* parent);

Q_SIGNALS:
    // The newest open ended; `opened`: every path of it opened.
    void newestFinished(bool opened);

private:
    void say(const QString& text);
    void ended(const QString& text = QString());

    FileOpener* opener_;
    CategoryRulesControl* rules_;
    QLabel* label_;
    QAbstractButton* cancel_;
    bool opening_ = false;
    QString openingPaths_;  // of the newest open
    QString applyingText_;  // what the category rules' apply says, before its percent
    QString shown_;         // "Opening …" or "Applying …"
    QString before_;        // and what it replaced
};

}  // namespace stepscope::ui
