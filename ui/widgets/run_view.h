#pragma once

// ui/widgets: what views and pages are built from. The interface of a view
// of one run (here), the plot style, table items, icons, list input.
// Includes ui/models and core/.

#include <QList>
#include <QString>
#include <QWidget>

class QAbstractItemModel;
class QCustomPlot;

namespace stepscope::ui {

struct RunDocument;

// Something the Export menu can write: a chart (PNG, PDF) or a table (CSV,
// Markdown). `name` becomes the default file name.
struct ExportTarget {
    QString name;
    QCustomPlot* plot = nullptr;
    QAbstractItemModel* table = nullptr;
};

// A tab that shows one run: the window shows it every selected run. Adding
// a view to the app is: subclass this, and add it to the window's table of
// tabs (MainWindow::defaultTabs(), docs/developing.md "Adding a tab").
class RunView : public QWidget {
    Q_OBJECT

public:
    using QWidget::QWidget;
    // Shows `document` (nullptr clears). Called again as a live run grows.
    virtual void showRun(const RunDocument* document) = 0;
    virtual QList<ExportTarget> exportTargets() = 0;
};

}  // namespace stepscope::ui
