#pragma once

// ui/controllers: the work the window asks for, each a QObject driven from
// outside the window that signals it: runs, sweeps and grids (here, and the
// run controller on its worker thread), opening files (open workflow, file
// opener, folder watch), saving, the run list, exports, messages, recent
// files, category rules. Includes ui/views, ui/pages, what they include,
// and core/.

#include <QObject>
#include <QString>

#include <vector>

#include "results/run_result.h"

class QLabel;
class QProgressBar;

namespace stepscope::ui {

class AttentionPage;
class ConfigPanel;
class FolderWatch;
class Messages;
class RunController;
class RunList;
class SweepPage;

// Runs, sweeps and attention grids from start to finish, driven from
// outside the window: checks the configuration panel's config, asks the
// pre-flight question, makes the live run's document, feeds it steps as
// they arrive and finishes it; starts what the Sweep and Attention tabs ask
// for and fills them as points finish; says how it goes in the status line,
// its progress bar and the banner. The window only wires it.
class RunWorkflow final : public QObject {
    Q_OBJECT

public:
    // What it works with; the window owns each of them.
    struct Parts {
        RunController* runner;
        RunList* runs;
        ConfigPanel* config;
        SweepPage* sweep;
        AttentionPage* attention;
        FolderWatch* folders;
        Messages* messages;
        QLabel* status;
        QProgressBar* progress;
    };
    RunWorkflow(const Parts& parts, QObject* parent);

    bool isRunning() const;
    // Validates the panel's config and starts it. False when the config is
    // invalid (errors shown beside their fields), a run is under way, or the
    // user declined the CPU pre-flight prompt.
    bool startRun();
    void stopRun();  // after the step under way
    // What the Sweep tab's form asks for (its attention study: the grid).
    void startSweep();
    void startAttention();
    // Stops a run in progress and waits (the window answering) until its
    // document is whole: before saving it on quitting.
    void finishRunInProgress();
    // The panel's config changed: its errors beside their fields, the
    // memory estimate, the sweep's base.
    void configChanged();
    // The panel's config as the settings left it: the estimate and the
    // sweep's base, its errors not shown until it changes.
    void configLoaded();

Q_SIGNALS:
    void busyChanged(bool busy);
    // A run's document was made and selected: its steps arrive live.
    void runStarted();
    // The attention grid starts from the Sweep tab's study: its tab in front.
    void attentionStarted();
    // The selected document changed in place (steps arrived, a run ended)
    // or went (a run refused before its first step): show it again.
    void shownRunChanged();
    void runFinished(const stepscope::RunResult& result);
    void sweepFinished();
    void attentionFinished();

private:
    void connectRunner();
    void connectPages();
    void updateEstimate(bool configValid);
    // Code the configuration has from a file runs only with the user's
    // say-so (the CLI's --trust-code): asked here; false for no.
    bool fileCodeAllowed();
    void onBusyChanged(bool busy);
    void onStepsArrived(const std::vector<StepRecord>& steps);
    void onRankStepsArrived(const std::vector<RankStep>& steps);
    void onRunFinished(const RunResult& result);
    void refuseAttention(const RunResult& result, const QString& why);
    void batchFinished(const QString& error, const QString& done, const QString& early);

    Parts parts_;
    QString progressShown_;  // the last progress line: ticks replace only it
};

}  // namespace stepscope::ui
