#include "controllers/export_menu.h"

#include <QDialog>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QMenu>
#include <QSpinBox>

#include "controllers/exporter.h"
#include "widgets/file_dialogs.h"

namespace stepscope::ui {

ExportMenu::ExportMenu(QMenu* menu, QWidget* window)
    : QObject(window), menu_(menu), window_(window) {
    connect(menu_, &QMenu::aboutToShow, this, &ExportMenu::aboutToShow);
}

void ExportMenu::offer(const QList<ExportTarget>& targets, const QStringList& chartTitles,
                       const RunDocument* report, const QList<ExportTarget>& reportTargets) {
    report_ = report;
    reportTargets_ = reportTargets;
    menu_->clear();
    for (qsizetype i = 0; i < targets.size(); ++i) {
        const ExportTarget& target = targets[i];
        if (target.plot) {
            menu_->addAction(
                tr("Chart “%1” as PNG or PDF…").arg(target.name), this,
                [this, target, title = chartTitles.value(i)] { exportChart(target, title); });
        } else {
            menu_->addAction(tr("Table “%1” as CSV or Markdown…").arg(target.name), this,
                             [this, target] { exportTable(target); });
        }
    }
    menu_->addSeparator();
    QAction* action =
        menu_->addAction(tr("Report of the current run…"), this, &ExportMenu::exportReport);
    action->setEnabled(report_ != nullptr);
}

void ExportMenu::exportChart(const ExportTarget& target, const QString& title) {
    const QString path = askSaveFile(window_, tr("Export chart"), target.name + ".png",
                                     tr("PNG image (*.png);;PDF (*.pdf)"));
    if (path.isEmpty()) {
        return;
    }
    QDialog dialog(window_);
    dialog.setWindowTitle(tr("Chart size"));
    auto* width = new QSpinBox;
    width->setRange(200, 8000);
    width->setValue(1600);
    auto* height = new QSpinBox;
    height->setRange(150, 8000);
    height->setValue(900);
    auto* form = new QFormLayout(&dialog);
    form->addRow(tr("Width (px)"), width);
    form->addRow(tr("Height (px)"), height);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    if (dialog.exec() != QDialog::Accepted) {
        return;
    }
    if (const QString error =
            exporter::savePlot(target.plot, path, width->value(), height->value(), title);
        !error.isEmpty()) {
        Q_EMIT failed(tr("Export failed"), error);
    }
}

void ExportMenu::exportTable(const ExportTarget& target) {
    const QString path = askSaveFile(window_, tr("Export table"), target.name + ".csv",
                                     tr("CSV (*.csv);;Markdown (*.md)"));
    if (!path.isEmpty()) {
        if (const QString error = exporter::saveTable(target.table, path); !error.isEmpty()) {
            Q_EMIT failed(tr("Export failed"), error);
        }
    }
}

void ExportMenu::exportReport() {
    if (!report_) {
        return;
    }
    const QString path =
        askSaveFile(window_, tr("Export report"), "report.md", tr("Markdown (*.md)"));
    if (path.isEmpty()) {
        return;
    }
    if (const QString error = exporter::saveReport(*report_, reportTargets_, path);
        !error.isEmpty()) {
        Q_EMIT failed(tr("Export failed"), error);
    }
}

}  // namespace stepscope::ui
