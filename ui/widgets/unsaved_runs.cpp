#include "widgets/unsaved_runs.h"

#include <QMessageBox>
#include <QPushButton>

#include <algorithm>

#include "models/format.h"

namespace stepscope::ui {

UnsavedRunsAnswer askAboutUnsavedRuns(QWidget* parent, const QStringList& titles,
                                      bool runInProgress) {
    const int listed = std::min<int>(int(titles.size()), 6);
    QString text =
        QObject::tr("%1 not saved: they are lost when StepScope quits.")
            .arg(countText(titles.size(), "run of this session is", "runs of this session are"));
    text += "\n\n" + titles.mid(0, listed).join('\n');
    if (titles.size() > listed) {
        text += "\n" + QObject::tr("… and %1 more").arg(titles.size() - listed);
    }
    if (runInProgress) {
        text += "\n\n" + QObject::tr("The run in progress stops after the step under way.");
    }
    QMessageBox box(QMessageBox::Warning, QObject::tr("Unsaved runs"), text, QMessageBox::Cancel,
                    parent);
    QPushButton* saveAll = box.addButton(QObject::tr("Save all…"), QMessageBox::AcceptRole);
    QPushButton* discard = box.addButton(QObject::tr("Discard"), QMessageBox::DestructiveRole);
    box.setDefaultButton(saveAll);
    box.setEscapeButton(QMessageBox::Cancel);
    box.exec();
    if (box.clickedButton() == discard) {
        return UnsavedRunsAnswer::Discard;
    }
    return box.clickedButton() == saveAll ? UnsavedRunsAnswer::SaveAll : UnsavedRunsAnswer::Cancel;
}

}  // namespace stepscope::ui
