#include "pages/collective_page.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>
#include <map>
#include <set>

#include "models/format.h"
#include "widgets/column_fit.h"
#include "widgets/plot_style.h"
#include "widgets/read_only_table.h"
#include "widgets/table_items.h"
#include "widgets/thinned_ticker.h"

namespace stepscope::ui {

namespace {

// Sizes on a log₂ axis named as sizes: "1.00 MiB", not "1.04858e+06".
class BytesTicker final : public ThinnedTicker<QCPAxisTickerLog> {
public:
    using ThinnedTicker::ThinnedTicker;

protected:
    QString getTickLabel(double tick, const QLocale&, QChar, int) override {
        return bytesText(int64_t(std::llround(tick)));
    }
};

double valueOf(const CollectiveRow& row, int metric) {
    return metric == CollectivePage::Time           ? row.timeUs
           : metric == CollectivePage::AlgBandwidth ? row.algbwGbps
                                                    : row.busbwGbps;
}

QString notesOf(const CollectiveRow& row) {
    QStringList notes;
    if (row.status != "ok") {
        notes << QString::fromStdString(row.message);
    }
    if (!row.emulated.empty()) {
        notes << CollectivePage::tr("%1 runs it as an %2 of the whole size")
                     .arg(QString::fromStdString(row.backend),
                          QString::fromStdString(row.emulated));
    }
    if (row.oversubscribed) {
        notes << CollectivePage::tr("more ranks than cores");
    }
    return notes.join("; ");
}

}  // namespace

CollectivePage::CollectivePage(QWidget* parent) : QWidget(parent) {
    caption_ = new QLabel(tr("Open a file stepscope-cli collective --out wrote (File → Open)."));
    caption_->setWordWrap(true);
    caption_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    op_ = new QComboBox;
    metric_ = new QComboBox;
    metric_->addItem(tr("time (µs)"), Time);
    metric_->addItem(tr("algbw (GB/s)"), AlgBandwidth);
    metric_->addItem(tr("busbw (GB/s)"), BusBandwidth);
    connect(op_, &QComboBox::currentIndexChanged, this, [this] { draw(); });
    connect(metric_, &QComboBox::currentIndexChanged, this, [this] { draw(); });
    plot_ = new QCustomPlot;
    stylePlot(plot_, tr("size"), tr("time (µs)"));
    QSharedPointer<QCPAxisTickerLog> sizes(new BytesTicker(plot_->xAxis));
    sizes->setLogBase(2);
    plot_->xAxis->setScaleType(QCPAxis::stLogarithmic);
    plot_->xAxis->setTicker(sizes);
    useLogAxis(plot_->yAxis, 10);
    keepSaneSize(plot_);
    keepDataReadable(plot_);
    setNoData(plot_, tr("No collective benchmark open"));
    rows_ = new QStandardItemModel(0, ColumnCount, this);
    rows_->setHorizontalHeaderLabels({tr("op"), tr("size"), tr("ranks"), tr("status"),
                                      tr("time\nµs"), tr("algbw\nGB/s"), tr("busbw\nGB/s"),
                                      tr("notes")});
    auto* table = readOnlyTable(rows_);
    table->verticalHeader()->hide();
    table->setSortingEnabled(true);
    new ColumnFit(table, {NotesColumn});

    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Collective")));
    controls->addWidget(op_);
    controls->addWidget(new QLabel(tr("Show")));
    controls->addWidget(metric_);
    controls->addStretch(1);
    auto* splitter = new QSplitter(Qt::Vertical);
    splitter->addWidget(plot_);
    splitter->addWidget(table);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(caption_);
    layout->addLayout(controls);
    layout->addWidget(splitter, 1);
}

QString CollectivePage::captionText() const {
    return caption_->text();
}

void CollectivePage::showFile(const CollectiveFile& file, const QString& source) {
    file_ = file;
    const QSignalBlocker quiet(op_);
    const QString chosen = op_->currentText();
    op_->clear();
    std::set<std::string> ops;
    for (const CollectiveRow& row : file_.rows) {
        if (ops.insert(row.op).second) {
            op_->addItem(QString::fromStdString(row.op));
        }
    }
    if (const int kept = op_->findText(chosen); kept >= 0) {
        op_->setCurrentIndex(kept);
    }
    const QString from = source.isEmpty() ? QString() : QFileInfo(source).fileName() + ": ";
    caption_->setText(
        from + tr("%1 rows, torch %2 on %3 usable cores. A call's time is its slowest rank's, a "
                  "row's the median over its calls; algbw = size ÷ time, busbw = algbw × "
                  "2(n−1)/n for all_reduce, (n−1)/n for all_gather and reduce_scatter, 1 for "
                  "broadcast (nccl-tests'). Rows that did not run are in the table.")
                   .arg(file_.rows.size())
                   .arg(QString::fromStdString(file_.torchVersion))
                   .arg(file_.cores));
    fillTable();
    draw();
}

void CollectivePage::draw() {
    plot_->clearGraphs();
    const std::string op = op_->currentText().toStdString();
    const int metric = metric_->currentData().toInt();
    plot_->yAxis->setLabel(metric_->currentText());
    std::map<int, QCPGraph*> lines;  // by rank count
    for (const CollectiveRow& row : file_.rows) {
        if (row.op != op || row.status != "ok" || !(valueOf(row, metric) > 0)) {
            continue;
        }
        QCPGraph*& line = lines[row.ranks];
        if (!line) {
            line = plot_->addGraph();
            line->setName(tr("%1 ranks").arg(row.ranks));
            const int index = int(lines.size()) - 1;
            line->setPen(QPen(seriesColor(index), 2, seriesStyle(index)));
            line->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
        }
        line->addData(double(row.sizeBytes), valueOf(row, metric));
    }
    if (lines.empty()) {
        setNoData(plot_, file_.rows.empty() ? tr("No collective benchmark open")
                                            : tr("No row of %1 ran").arg(op_->currentText()));
        plot_->replot();
        return;
    }
    setNoData(plot_, QString());
    plot_->legend->setVisible(true);
    plot_->rescaleAxes();
    const QCPRange x = plot_->xAxis->range();
    const QCPRange y = plot_->yAxis->range();
    plot_->xAxis->setRange(x.lower / 1.5, x.upper * 1.5);  // room for the first and last point
    plot_->yAxis->setRange(y.lower / 2, y.upper * 2);
    plot_->replot();
}

void CollectivePage::fillTable() {
    rows_->setRowCount(0);
    for (const CollectiveRow& row : file_.rows) {
        const bool ok = row.status == "ok";
        QList<QStandardItem*> items{new QStandardItem(QString::fromStdString(row.op)),
                                    bytesItem(row.sizeBytes), numberItem(qlonglong(row.ranks)),
                                    new QStandardItem(QString::fromStdString(row.status))};
        const std::pair<double, int> figures[] = {
            {row.timeUs, 1}, {row.algbwGbps, 3}, {row.busbwGbps, 3}};  // µs; GB/s
        for (const auto& [value, decimals] : figures) {
            items << (ok ? numberItem(value, QString::number(value, 'f', decimals))
                         : new QStandardItem("–"));
        }
        items << new QStandardItem(notesOf(row));
        rows_->appendRow(items);
    }
}

QList<ExportTarget> CollectivePage::exportTargets() {
    return {{"collective", plot_, nullptr}, {"collective-table", nullptr, rows_}};
}

}  // namespace stepscope::ui
