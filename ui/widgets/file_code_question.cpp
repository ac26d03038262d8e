#include "widgets/file_code_question.h"

#include <QMessageBox>
#include <QPushButton>

namespace stepscope::ui {

bool askToRunFileCode(QWidget* parent, const QString& where, const std::vector<NamedCode>& code) {
    QString text = QObject::tr(
                       "%1 came from a file, and the file names Python code that this run "
                       "imports and runs with your permissions:")
                       .arg(where);
    text += "\n";
    for (const NamedCode& item : code) {
        text += "\n    " + QString::fromStdString(describeNamedCode({item}));
    }
    text += "\n\n" + QObject::tr(
                         "Run it only if you trust whoever made the file and have read "
                         "the code.");
    QMessageBox box(QMessageBox::Warning, QObject::tr("Run code a file names?"), text,
                    QMessageBox::Cancel, parent);
    QPushButton* run = box.addButton(QObject::tr("Run the code"), QMessageBox::AcceptRole);
    box.setDefaultButton(QMessageBox::Cancel);
    box.setEscapeButton(QMessageBox::Cancel);
    box.exec();
    return box.clickedButton() == run;
}

}  // namespace stepscope::ui
