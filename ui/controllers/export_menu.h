#pragma once

#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>

#include "widgets/run_view.h"

class QMenu;
class QWidget;

namespace stepscope::ui {

struct RunDocument;

// The Export menu: the charts and tables of the tab in front, each written
// where the user picks (a chart with its title, at the size asked), and the
// report of the current run. Before it shows it asks (aboutToShow) what to
// offer; what fails to write is said through failed().
class ExportMenu final : public QObject {
    Q_OBJECT

public:
    // Dialogs are modal on `window`.
    ExportMenu(QMenu* menu, QWidget* window);

    // What the menu offers until asked again: `targets` with their chart
    // titles (in the same order), and the report of `report` (nullptr: none)
    // drawn from `reportTargets`.
    void offer(const QList<ExportTarget>& targets, const QStringList& chartTitles,
               const RunDocument* report, const QList<ExportTarget>& reportTargets);

Q_SIGNALS:
    void aboutToShow();
    void failed(const QString& title, const QString& message);

private:
    void exportChart(const ExportTarget& target, const QString& title);
    void exportTable(const ExportTarget& target);
    void exportReport();

    QMenu* menu_;
    QWidget* window_;
    const RunDocument* report_ = nullptr;
    QList<ExportTarget> reportTargets_;
};

}  // namespace stepscope::ui
