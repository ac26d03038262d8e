#pragma once

#include <QList>
#include <QString>

#include "widgets/run_view.h"

class QAbstractItemModel;
class QCustomPlot;

namespace stepscope::ui {

struct RunDocument;

// Writes what the views show, for reports. Every function writes atomically
// (temporary file, then rename) and returns an empty string or the error.
namespace exporter {

// PNG or PDF by the path's suffix, at width × height pixels (points for PDF),
// with `title` (lines split at '\n') above the chart when not empty. Points
// at the edges of the axes get room so that none is cut.
QString savePlot(QCustomPlot* plot, const QString& path, int width, int height,
                 const QString& title = {});
// CSV or Markdown (.md) by the path's suffix: header row, then every row.
QString saveTable(const QAbstractItemModel* model, const QString& path);
QString tableToCsv(const QAbstractItemModel* model);
QString tableToMarkdown(const QAbstractItemModel* model);
// `path`.md with the run's configuration and summary, each chart of `targets`
// as a PNG beside it, and the run's steps as `path`-steps.csv.
QString saveReport(const RunDocument& document, const QList<ExportTarget>& targets,
                   const QString& path);

}  // namespace exporter
}  // namespace stepscope::ui
