#include "pages/precision_page.h"

#include <QComboBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPointer>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTableView>
#include <QThread>
#include <QVBoxLayout>
#include <exception>

#include "config/model_dims.h"
#include "config/run_config.h"
#include "experiments/accumulation_lab.h"
#include "models/dtype_flow_file.h"
#include "widgets/column_fit.h"
#include "widgets/read_only_table.h"

namespace stepscope::ui {

namespace {

// A dtype autocast lowered from fp32. LibTorch names fp32 "Float" (Python's
// name is float32): neither is lowered.
bool isLoweredDtype(const QString& dtype) {
    for (const char* low : {"BFloat16", "Half", "bfloat16", "float16"}) {
        if (dtype.contains(QLatin1String(low))) {
            return true;
        }
    }
    return false;
}

QStandardItem* dtypeItem(const std::string& dtype) {
    auto* item = new QStandardItem(QString::fromStdString(dtype));
    if (isLoweredDtype(item->text())) {  // what autocast lowered stands out
        item->setBackground(QColor(252, 233, 79, 90));
    }
    return item;
}

// Numbers whole, on one line; the first column's names give way on a narrow page.
QTableView* fittedTable(QAbstractItemModel* model) {
    QTableView* view = readOnlyTable(model);
    view->setWordWrap(false);
    new ColumnFit(view, {0});
    view->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    return view;
}

}  // namespace

PrecisionPage::PrecisionPage(QWidget* parent) : QWidget(parent) {
    model_ = new QComboBox;
    for (const auto& name : presetNames()) {
        // One forward and backward on the CPU: the larger presets need tens of GB.
        if (parameterCount(*findPreset(name)) < 500'000'000) {
            model_->addItem(QString::fromStdString(name));
        }
    }
    model_->setCurrentText("nano");
    precision_ = new QComboBox;
    precision_->addItems({"bf16", "fp16"});
    inspect_ = new QPushButton(tr("Inspect"));
    count_ = new QSpinBox;
    count_->setRange(1, 1000000);
    count_->setValue(1000);
    sum_ = new QPushButton(tr("Sum"));
    status_ = new QLabel;
    status_->setWordWrap(true);
    sumNote_ = new QLabel;
    sumNote_->setWordWrap(true);
    sumNote_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    dtypes_ = new QStandardItemModel(this);
    sums_ = new QStandardItemModel(this);

    // Short titles, the detail wrapped beneath: a group box is at least as
    // wide as its title, and the long ones made the window too wide for 1024 px.
    auto* flowBox = new QGroupBox(tr("Dtype flow under autocast"));
    auto* flowAbout = new QLabel(tr("One forward and backward, on the CPU."));
    flowAbout->setWordWrap(true);
    auto* flowControls = new QHBoxLayout;
    flowControls->addWidget(new QLabel(tr("Model")));
    flowControls->addWidget(model_);
    flowControls->addWidget(new QLabel(tr("Precision")));
    flowControls->addWidget(precision_);
    flowControls->addWidget(inspect_);
    flowControls->addStretch();
    auto* flowLayout = new QVBoxLayout(flowBox);
    flowLayout->addWidget(flowAbout);
    flowLayout->addLayout(flowControls);
    flowLayout->addWidget(fittedTable(dtypes_));

    auto* sumBox = new QGroupBox(tr("Accumulation lab"));
    auto* sumAbout = new QLabel(tr("0.01 added N times."));
    sumAbout->setWordWrap(true);
    auto* sumControls = new QHBoxLayout;
    sumControls->addWidget(new QLabel(tr("N")));
    sumControls->addWidget(count_);
    sumControls->addWidget(sum_);
    sumControls->addStretch();
    auto* sumLayout = new QVBoxLayout(sumBox);
    sumLayout->addWidget(sumAbout);
    sumLayout->addLayout(sumControls);
    sumLayout->addWidget(fittedTable(sums_));
    sumLayout->addWidget(sumNote_);

    auto* layout = new QHBoxLayout;
    layout->addWidget(flowBox, 3);
    layout->addWidget(sumBox, 2);
    auto* page = new QVBoxLayout(this);
    page->addLayout(layout, 1);
    page->addWidget(status_);

    connect(inspect_, &QPushButton::clicked, this,
            [this] { inspectDtypes(model_->currentText(), precision_->currentText()); });
    connect(sum_, &QPushButton::clicked, this, [this] { accumulate(count_->value()); });
}

void PrecisionPage::runInBackground(std::function<std::function<void()>()> work) {
    ++running_;
    inspect_->setEnabled(false);
    sum_->setEnabled(false);
    QPointer<PrecisionPage> self(this);
    QThread* thread = QThread::create([self, work] {
        std::function<void()> done;
        try {
            done = work();
        } catch (const std::exception& error) {
            const QString message = QString::fromUtf8(error.what());
            done = [self, message] { self->status_->setText(tr("Failed: %1").arg(message)); };
        }
        QMetaObject::invokeMethod(qApp, [self, done] {
            if (!self) {
                return;
            }
            done();
            if (--self->running_ == 0) {
                self->inspect_->setEnabled(true);
                self->sum_->setEnabled(true);
            }
            Q_EMIT self->finished();
        });
    });
    connect(thread, &QThread::finished, thread, &QObject::deleteLater);
    thread->start();
}

void PrecisionPage::inspectDtypes(const QString& model, const QString& precision) {
    RunConfig config;
    config.model = findPreset(model.toStdString()).value_or(*findPreset("nano"));
    config.contextLength = 16;
    config.batchSize = 2;
    config.precision = *parsePrecision(precision.toStdString());
    status_->setText(tr("Inspecting %1 under %2 autocast…").arg(model, precision));
    runInBackground([this, config] {
        const std::vector<DtypeRow> rows = inspectDtypeFlow(config);
        return std::function<void()>([this, rows] { showDtypeRows(rows, QString()); });
    });
}

void PrecisionPage::showDtypeRows(const std::vector<DtypeRow>& rows, const QString& source) {
    dtypes_->clear();
    dtypes_->setHorizontalHeaderLabels({tr("what"), tr("kind"), tr("dtype")});
    for (const auto& row : rows) {
        dtypes_->appendRow({new QStandardItem(QString::fromStdString(row.what)),
                            new QStandardItem(QString::fromStdString(row.kind)),
                            dtypeItem(row.dtype)});
    }
    const QString from = source.isEmpty() ? QString() : tr(" from %1").arg(source);
    status_->setText(
        tr("%1 rows%2: highlighted dtypes are what autocast lowered.").arg(rows.size()).arg(from));
}

void PrecisionPage::showDtypeFlow(const std::vector<DtypeRow>& rows, const QString& path) {
    showDtypeRows(rows, QFileInfo(path).fileName());
}

bool PrecisionPage::openDtypeFlowFile(const QString& path, QString* error) {
    const std::vector<DtypeRow> rows = readDtypeFlowFile(path, error);
    if (rows.empty()) {
        return false;
    }
    showDtypeFlow(rows, path);
    return true;
}

QString PrecisionPage::accumulationText() const {
    return sumNote_->text();
}

void PrecisionPage::accumulate(int count) {
    status_->setText(tr("Summing 0.01 %1 times…").arg(count));
    runInBackground([this, count] {
        const std::vector<AccumulationRow> rows = runAccumulationLab(0.01, count);
        return std::function<void()>([this, rows, count] {
            sums_->clear();
            sums_->setHorizontalHeaderLabels(
                {tr("accumulator"), tr("addend"), tr("result"), tr("exact"), tr("abs. error")});
            for (const auto& row : rows) {
                auto* result = new QStandardItem(QString::number(row.result, 'g', 8));
                result->setData(row.result, Qt::UserRole);
                sums_->appendRow({new QStandardItem(QString::fromStdString(row.accumulator)),
                                  new QStandardItem(QString::fromStdString(row.addend)), result,
                                  new QStandardItem(QString::number(row.exact, 'g', 8)),
                                  new QStandardItem(QString::number(row.absoluteError, 'g', 4))});
            }
            // Said from the rows above it, never written beside them.
            sumNote_->setText(QString::fromStdString(accumulationNote(rows)));
            status_->setText(tr("Summed 0.01 %1 times.").arg(count));
        });
    });
}

}  // namespace stepscope::ui
