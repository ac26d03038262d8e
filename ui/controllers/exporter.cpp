#include "controllers/exporter.h"

#include <qcustomplot.h>

#include <QFileInfo>
#include <QSaveFile>

#include "models/run_document.h"
#include "results/report.h"
#include "widgets/plot_style.h"

namespace stepscope::ui::exporter {

namespace {

QString writeText(const QString& path, const QByteArray& text) {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(text) != text.size() || !file.commit()) {
        return QObject::tr("cannot write '%1': %2").arg(path, file.errorString());
    }
    return {};
}

QString cell(const QAbstractItemModel* model, int row, int column) {
    return model->data(model->index(row, column), Qt::DisplayRole).toString();
}

// A header on two lines in the table ("fwd\nms") is one in a file.
QString header(const QAbstractItemModel* model, int section, Qt::Orientation orientation) {
    return model->headerData(section, orientation, Qt::DisplayRole).toString().replace('\n', ' ');
}

// Tables whose rows have names (the summary) keep them as a first column.
bool hasRowNames(const QAbstractItemModel* model) {
    return model->rowCount() > 0 && header(model, 0, Qt::Vertical) != QString::number(1) &&
           !header(model, 0, Qt::Vertical).isEmpty();
}

QString csvField(QString text) {
    if (text.contains(',') || text.contains('"') || text.contains('\n')) {
        text.replace("\"", "\"\"");
        return "\"" + text + "\"";
    }
    return text;
}

constexpr int kTitleMargin = 12;

// While alive: a title row above the chart and room at the axes' ends for
// scatter points; the chart is as it was afterwards.
class ExportDressing {
public:
    ExportDressing(QCustomPlot* plot, const QString& title, int width) : plot_(plot) {
        if (!title.isEmpty()) {
            plot->plotLayout()->insertRow(0);
            const QFont font(plot->font().family(), 11, QFont::Bold);
            // Wrapped to the picture's width: a long second line (the whole
            // configuration) was centred and cut at both ends.
            title_ =
                new QCPTextElement(plot, wrapText(title, font, width - 2 * kTitleMargin), font);
            title_->setMargins(QMargins(kTitleMargin, 4, kTitleMargin, 2));
            plot->plotLayout()->addElement(0, 0, title_);
        }
        for (int i = 0; i < plot->graphCount(); ++i) {
            QCPGraph* graph = plot->graph(i);
            if (graph->scatterStyle().isNone() || graph->dataCount() == 0) {
                continue;
            }
            for (QCPAxis* axis : {graph->keyAxis(), graph->valueAxis()}) {
                if (!ranges_.contains(axis)) {
                    ranges_.insert(axis, axis->range());
                    const double pad = axis->range().size() * 0.02;
                    axis->setRange(axis->range().lower - pad, axis->range().upper + pad);
                }
            }
        }
    }
    ~ExportDressing() {
        for (auto it = ranges_.begin(); it != ranges_.end(); ++it) {
            it.key()->setRange(it.value());
        }
        if (title_) {
            plot_->plotLayout()->remove(title_);
            plot_->plotLayout()->simplify();
        }
        plot_->replot(QCustomPlot::rpQueuedReplot);
    }
    ExportDressing(const ExportDressing&) = delete;
    ExportDressing& operator=(const ExportDressing&) = delete;

private:
    QCustomPlot* plot_;
    QCPTextElement* title_ = nullptr;
    QHash<QCPAxis*, QCPRange> ranges_;
};

}  // namespace

QString tableToCsv(const QAbstractItemModel* model) {
    const bool rowNames = hasRowNames(model);
    QStringList lines;
    QStringList head;
    if (rowNames) {
        head << "";
    }
    for (int c = 0; c < model->columnCount(); ++c) {
        head << csvField(header(model, c, Qt::Horizontal));
    }
    lines << head.join(',');
    for (int r = 0; r < model->rowCount(); ++r) {
        QStringList row;
        if (rowNames) {
            row << csvField(header(model, r, Qt::Vertical));
        }
        for (int c = 0; c < model->columnCount(); ++c) {
            row << csvField(cell(model, r, c));
        }
        lines << row.join(',');
    }
    return lines.join('\n') + '\n';
}

QString tableToMarkdown(const QAbstractItemModel* model) {
    const bool rowNames = hasRowNames(model);
    QStringList head, rule;
    if (rowNames) {
        head << "";
        rule << "---";
    }
    for (int c = 0; c < model->columnCount(); ++c) {
        head << header(model, c, Qt::Horizontal);
        rule << "---";
    }
    QStringList lines = {"| " + head.join(" | ") + " |", "|" + rule.join("|") + "|"};
    for (int r = 0; r < model->rowCount(); ++r) {
        QStringList row;
        if (rowNames) {
            row << header(model, r, Qt::Vertical);
        }
        for (int c = 0; c < model->columnCount(); ++c) {
            row << cell(model, r, c).replace('|', "\\|");
        }
        lines << "| " + row.join(" | ") + " |";
    }
    return lines.join('\n') + '\n';
}

QString saveTable(const QAbstractItemModel* model, const QString& path) {
    const bool markdown = QFileInfo(path).suffix().toLower() == "md";
    return writeText(path, (markdown ? tableToMarkdown(model) : tableToCsv(model)).toUtf8());
}

QString savePlot(QCustomPlot* plot, const QString& path, int width, int height,
                 const QString& title) {
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix != "png" && suffix != "pdf") {
        return QObject::tr("'%1': charts export as .png or .pdf").arg(path);
    }
    const ExportDressing dressing(plot, title, width > 0 ? width : plot->width());
    // A first layout at the picture's size, which fits the axis titles to
    // it (fitAxisLabels); the picture is drawn with the margins they need.
    plot->toPixmap(width, height);
    // Render to a temporary name, then rename: a failed export leaves no half file.
    const QString temporary = path + ".part." + suffix;
    const bool ok = suffix == "png" ? plot->savePng(temporary, width, height, 1.0)
                                    : plot->savePdf(temporary, width, height);
    if (!ok) {
        QFile::remove(temporary);
        return QObject::tr("cannot write '%1'").arg(path);
    }
    QFile::remove(path);
    if (!QFile::rename(temporary, path)) {
        QFile::remove(temporary);
        return QObject::tr("cannot write '%1'").arg(path);
    }
    return {};
}

QString saveReport(const RunDocument& document, const QList<ExportTarget>& targets,
                   const QString& path) {
    const QFileInfo info(path);
    const QString base = info.completeBaseName();
    std::vector<std::string> images;
    for (const auto& target : targets) {
        // A chart with nothing to show (no memory trace, no operators) is
        // left out of the report rather than embedded empty.
        if (!target.plot || !noDataText(target.plot).isEmpty()) {
            continue;
        }
        const QString image = base + "-" + target.name + ".png";
        if (QString error =
                savePlot(target.plot, info.dir().filePath(image), 1600, 900,
                         target.name + " — " + document.title + "\n" + document.summary());
            !error.isEmpty()) {
            return error;
        }
        images.push_back(image.toStdString());
    }
    const QString steps = info.dir().filePath(base + "-steps.csv");
    if (QString error =
            writeText(steps, QByteArray::fromStdString(formatStepsCsv(document.result)));
        !error.isEmpty()) {
        return error;
    }
    return writeText(path, QByteArray::fromStdString(formatRunMarkdown(document.result, images)));
}

}  // namespace stepscope::ui::exporter
