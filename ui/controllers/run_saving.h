#pragma once

#include <QObject>
#include <QString>

class QWidget;

namespace stepscope::ui {

class RunList;
class RunWorkflow;

// Saving the session's runs: the selected one (Save, Save as…), and on
// quitting those not saved yet, as document apps do: Save all (into a folder
// the user picks, under names that overwrite nothing), Discard or Cancel.
class RunSaving final : public QObject {
    Q_OBJECT

public:
    // Dialogs are modal on `window`.
    RunSaving(RunList* runs, RunWorkflow* workflow, QWidget* window);

    bool save(int id, const QString& path);
    // The selected run into its file, or where the user says (`askForPath`,
    // or a run never saved). Nothing while it is the run in progress.
    void saveCurrent(bool askForPath);
    // Asks what becomes of the runs not saved; false: the user cancelled, or
    // one could not be saved (the message says why), and the window stays.
    bool keepUnsaved();
    // Where Save all writes (empty: ask for a folder). For tests and demonstrations.
    void setUnsavedRunsFolder(const QString& folder) { unsavedRunsFolder_ = folder; }

private:
    QString saveAllFolder() const;

    RunList* runs_;
    RunWorkflow* workflow_;
    QWidget* window_;
    QString unsavedRunsFolder_;
};

}  // namespace stepscope::ui
