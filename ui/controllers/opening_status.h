#pragma once

#include <QObject>
#include <QString>

class QLabel;

namespace stepscope::ui {

class FileOpener;

// While files are read, the status label says "Opening …"; when the newest
// open ends, what the label said before comes back, unless something else
// was said meanwhile. An older open's end is ignored: the newer one speaks.
class OpeningStatus : public QObject {
    Q_OBJECT

public:
    OpeningStatus(FileOpener* opener, QLabel* label, QObject* parent);

Q_SIGNALS:
    // The newest open ended; `opened`: every path of it opened.
    void newestFinished(bool opened);

private:
    QLabel* label_;
    QString shown_;   // "Opening …"
    QString before_;  // and what it replaced
};

}  // namespace stepscope::ui
