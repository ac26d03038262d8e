#include "pages/sweep_page.h"

#include <qcustomplot.h>

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <set>

#include "config/config_field.h"
#include "engines/runner.h"
#include "estimate/cost_model.h"
#include "estimate/memory_estimate.h"
#include "models/format.h"
#include "models/sweep_chart_data.h"
#include "profile/memory_trace.h"
#include "widgets/column_fit.h"
#include "widgets/list_input.h"
#include "widgets/plot_style.h"
#include "widgets/thinned_ticker.h"

namespace stepscope::ui {

namespace {

const QStringList kStudyNames = {QObject::tr("Sweep"), QObject::tr("Warm-up study"),
                                 QObject::tr("Precision study"), QObject::tr("Attention study")};

const std::vector<std::string> kTypedFields = {"model", "ctx", "mode", "precision"};

QString meanStd(const std::optional<Stats>& stats) {
    if (!stats) {
        return "–";
    }
    return QString("%1 ± %2").arg(formatMs(stats->mean),
                                  hasSpread(*stats) ? formatMs(stats->std) : QString("–"));
}

QString msText(const std::optional<double>& ms) {
    return ms ? formatMs(*ms) : QString("–");
}

// What the table and chart read of a run: everything but its traces (the
// run list keeps the whole run; a sweep of traced runs would hold them twice).
RunResult withoutTraces(const RunResult& run) {
    RunResult kept;
    kept.config = run.config;
    kept.environment = run.environment;
    kept.status = run.status;
    kept.message = run.message;
    kept.parameterCount = run.parameterCount;
    kept.steps = run.steps;
    kept.compileMs = run.compileMs;
    kept.summary = run.summary;
    return kept;
}

QString axisLabel(const std::string& field) {
    if (field == "ctx") {
        return QObject::tr("context length (tokens)");
    }
    if (field == kMeasuredStepAxis) {
        return QObject::tr("measured step");
    }
    return QString::fromStdString(field);
}

}  // namespace

SweepPage::SweepPage(QWidget* parent) : QWidget(parent) {
    createFields();
    createForm();
    createTable();
    auto* splitter = new QSplitter(Qt::Vertical);
    splitter->addWidget(table_);
    splitter->addWidget(createChart());
    // The chart gets two thirds: on a 720 px screen, below the form, a
    // table's default minimum left it a strip too short for its axis title.
    table_->setMinimumHeight(64);  // its header and most of a row: it scrolls
    splitter->setSizes({200, 400});
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form_);
    layout->addLayout(createButtons());
    layout->addWidget(splitter, 1);

    connect(study_, &QComboBox::currentIndexChanged, this, &SweepPage::onStudyChanged);
    connect(axesToggle_, &QPushButton::toggled, this, [this](bool open) {
        form_->setRowVisible(axesBox_, open);
        axesToggle_->setText(open ? tr("Other axes ▾") : tr("Other axes ▸"));
    });
    connect(xAxis_, &QComboBox::currentIndexChanged, this, [this] {
        rebuildChartControls();
        redrawChart();
    });
    connect(start_, &QPushButton::clicked, this, &SweepPage::startRequested);
    connect(stop_, &QPushButton::clicked, this, &SweepPage::stopRequested);
    onStudyChanged();
    rebuildTable();
    rebuildChartControls();
    redrawChart();
}

// The study, its axes as comma lists, and the run's own buttons and status.
void SweepPage::createFields() {
    study_ = new QComboBox;
    study_->addItems(kStudyNames);
    studyHelp_ = new QLabel;
    studyHelp_->setWordWrap(true);
    models_ = new QLineEdit("nano,tiny");
    contexts_ = new QLineEdit("32,64,128");
    modes_ = new QLineEdit("forward,train-step");
    precisions_ = new QLineEdit("fp32");
    warmups_ = new QLineEdit("0,1,2,5");
    warmups_->setToolTip(tr("Warm-up step counts, whole numbers from 0; each in a fresh process"));
    isolate_ = new QCheckBox(tr("Each point in a fresh process"));
    isolate_->setToolTip(
        tr("Runs each point as its own stepscope-cli process, so that no point inherits the "
           "first step's one-off costs, warm caches or allocator state of the one before."));
    start_ = new QPushButton(tr("Run sweep"));
    stop_ = new QPushButton(tr("Stop"));
    stop_->setEnabled(false);
    status_ = new QLabel;
    status_->setWordWrap(true);
}

// Every other field a run takes, as a comma list; empty means the
// configuration panel's value (shown greyed). Hidden behind a toggle.
QWidget* SweepPage::createOtherAxes() {
    axesToggle_ = new QPushButton(tr("Other axes ▸"));
    axesToggle_->setCheckable(true);
    axesToggle_->setFlat(true);
    axesToggle_->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
    axesBox_ = new QWidget;
    auto* axesGrid = new QGridLayout(axesBox_);  // three fields a row: there are many
    axesGrid->setContentsMargins(0, 0, 0, 0);
    int slot = 0;
    for (const auto& field : sweepAxisFields()) {
        auto* edit = new QLineEdit;
        edit->setObjectName(QString::fromStdString("axis-" + field));
        axisEdits_[field] = edit;
        axesGrid->addWidget(new QLabel(QString::fromStdString(field)), slot / 3, 2 * (slot % 3));
        axesGrid->addWidget(edit, slot / 3, 2 * (slot % 3) + 1);
        ++slot;
    }
    axesBox_->hide();
    return axesBox_;
}

void SweepPage::createForm() {
    QWidget* otherAxes = createOtherAxes();
    form_ = new QFormLayout;
    form_->addRow(tr("Study"), study_);
    form_->addRow(studyHelp_);
    form_->addRow(tr("Models"), models_);
    form_->addRow(tr("Context lengths"), contexts_);
    form_->addRow(tr("Modes"), modes_);
    form_->addRow(tr("Precisions"), precisions_);
    form_->addRow(tr("Warm-up counts"), warmups_);
    axesToggleRow_ = new QHBoxLayout;  // the toggle at the left, not centred
    axesToggleRow_->addWidget(axesToggle_);
    axesToggleRow_->addStretch();
    form_->addRow(axesToggleRow_);
    form_->addRow(otherAxes);
}

QLayout* SweepPage::createButtons() {
    // The fresh-process switch and the status beside the buttons, not under
    // them: rows more for the chart on a 720 px screen.
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(start_, 0, Qt::AlignTop);
    buttons->addWidget(stop_, 0, Qt::AlignTop);
    buttons->addWidget(isolate_, 0, Qt::AlignTop);
    buttons->addWidget(status_, 1);
    return buttons;
}

// The points, a row each.
void SweepPage::createTable() {
    table_ = new QTableWidget(0, 0);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    // Values whole on one line ("1430.30 ± 522.53"); the model's and mode's names give way.
    table_->setWordWrap(false);
    new ColumnFit(table_, {Model, Mode}, 60);
    table_->verticalHeader()->hide();
}

// The chart and what it pivots on: the x axis, and a value for each other varying field.
QWidget* SweepPage::createChart() {
    xAxis_ = new QComboBox;
    pivots_ = new QHBoxLayout;
    auto* chartControls = new QHBoxLayout;
    chartControls->addWidget(new QLabel(tr("x axis")));
    chartControls->addWidget(xAxis_);
    chartControls->addLayout(pivots_);
    chartControls->addStretch();
    plot_ = new QCustomPlot;
    stylePlot(plot_, axisLabel("ctx"), tr("mean time per step (ms)"));
    keepSaneSize(plot_);
    keepDataReadable(plot_);
    auto* chart = new QWidget;
    auto* chartLayout = new QVBoxLayout(chart);
    chartLayout->setContentsMargins(0, 0, 0, 0);
    chartLayout->addLayout(chartControls);
    chartLayout->addWidget(plot_, 1);
    return chart;
}

SweepPage::Study SweepPage::study() const {
    return Study(study_->currentIndex());
}

void SweepPage::setStudy(Study study) {
    study_->setCurrentIndex(int(study));
}

bool SweepPage::isolated() const {
    return isolate_->isChecked();
}

void SweepPage::onStudyChanged() {
    const Study chosen = study();
    const bool lists = chosen == Study::Sweep || chosen == Study::Precision;
    for (QWidget* field : {models_, contexts_, modes_, precisions_}) {
        form_->setRowVisible(field, lists);
    }
    form_->setRowVisible(warmups_, chosen == Study::Warmup);
    form_->setRowVisible(axesToggleRow_, lists);
    form_->setRowVisible(axesBox_, lists && axesToggle_->isChecked());
    isolate_->setVisible(chosen != Study::Attention);
    // The warm-up study exists to see start-up costs: only fresh processes show them.
    isolate_->setEnabled(chosen != Study::Warmup);
    if (chosen == Study::Warmup) {
        isolate_->setChecked(true);
    }
    if (chosen == Study::Precision) {
        precisions_->setText("fp32,bf16,fp16");
    }
    // What each study does, and its button; in Study's order.
    static const std::pair<const char*, const char*> texts[] = {
        {QT_TR_NOOP("Every combination of the lists below; any other field (batch, attention, "
                    "warm-up, …) under Other axes. Empty fields take the configuration panel's "
                    "value."),
         QT_TR_NOOP("Run sweep")},
        {QT_TR_NOOP("The configuration panel's run at each warm-up count, each in a fresh "
                    "process: mean, std, the first and second measured step, and every step's "
                    "time (x axis: measured step)."),
         QT_TR_NOOP("Run warm-up study")},
        {QT_TR_NOOP("fp32 against bf16 and fp16 autocast for each model, context and mode: the "
                    "speed-up over fp32 and, with Trace memory on, the measured peak."),
         QT_TR_NOOP("Run precision study")},
        {QT_TR_NOOP("The course's attention grid (naive, tiled, sdpa and compiled; head dims "
                    "16…128; batch 8; causal) on the configuration panel's device, in the "
                    "Attention tab."),
         QT_TR_NOOP("Run attention study")},
    };
    studyHelp_->setText(tr(texts[int(chosen)].first));
    start_->setText(tr(texts[int(chosen)].second));
    if (status_->text().isEmpty() || configs_.empty()) {
        status_->setText(
            tr("Other fields (batch, steps, device, …) come from the "
               "configuration panel."));
    }
}

// Every input's errors at once (the lists', then the axes'), not the first
// list's alone: a user fixes them in one pass.
SweepSpec SweepPage::spec(const RunConfig& base, const QString& outDir) const {
    std::vector<ConfigError> errors;
    const auto keep = [&errors](const auto& check) {
        try {
            check();
        } catch (const InvalidConfigError& error) {
            errors.insert(errors.end(), error.errors().begin(), error.errors().end());
        }
    };
    const std::vector<int64_t> contexts = positiveList(contexts_->text(), "ctx", errors);
    const bool badContexts = !errors.empty();
    SweepSpec spec;
    keep([&] {
        // The other lists are checked too, with the base's context for a bad list.
        spec = makeSweepSpec(base, splitList(models_->text()),
                             badContexts ? std::vector<int64_t>{base.contextLength} : contexts,
                             splitList(modes_->text()), splitList(precisions_->text()),
                             outDir.toStdString());
    });
    for (const auto& field : sweepAxisFields()) {
        const std::vector<std::string> values = splitList(axisEdits_.at(field)->text());
        if (!values.empty()) {
            spec.axes.push_back({field, values});
        }
    }
    keep([&] { checkSweepAxes(spec.axes); });
    if (!errors.empty()) {
        throw InvalidConfigError(errors);
    }
    return spec;
}

WarmupStudySpec SweepPage::warmupSpec(const RunConfig& base, const QString& outDir) const {
    WarmupStudySpec spec;
    spec.base = base;
    spec.outDir = outDir.toStdString();
    spec.warmups.clear();
    for (const auto& text : splitList(warmups_->text())) {
        bool ok = false;
        const int count = QString::fromStdString(text).toInt(&ok);
        if (!ok || count < 0) {
            throw InvalidConfigError(std::vector<ConfigError>{
                {"warmup", "'" + text + "' is not allowed; allowed: whole numbers from 0"}});
        }
        spec.warmups.push_back(count);
    }
    if (spec.warmups.empty()) {
        throw InvalidConfigError(std::vector<ConfigError>{
            {"warmup", "no warm-up counts; allowed: a comma list of whole numbers from 0"}});
    }
    return spec;
}

void SweepPage::setBaseConfig(const RunConfig& base) {
    for (const auto& [field, edit] : axisEdits_) {
        edit->setPlaceholderText(QString::fromStdString(configFieldText(base, field)));
    }
}

QLineEdit* SweepPage::axisEdit(const std::string& field) const {
    const auto found = axisEdits_.find(field);
    return found == axisEdits_.end() ? nullptr : found->second;
}

QComboBox* SweepPage::heldBox(const std::string& field) const {
    const auto found = heldBoxes_.find(field);
    return found == heldBoxes_.end() ? nullptr : found->second;
}

void SweepPage::begin(const SweepSpec& spec, std::optional<int64_t> availableBytes) {
    configs_ = expandSweep(spec);
    results_.assign(configs_.size(), std::nullopt);
    peaks_.assign(configs_.size(), std::nullopt);
    availableBytes_ = availableBytes;
    fits_.clear();
    int misfits = 0;
    for (const RunConfig& c : configs_) {
        const bool fits =
            c.device != DeviceKind::Cpu || !availableBytes || preflightBytes(c) <= *availableBytes;
        fits_.push_back(fits);
        misfits += !fits;
    }
    done_ = 0;
    outDir_ = QString::fromStdString(spec.outDir);
    status_->setText(
        tr("Running %1 points into %2")
            .arg(configs_.size())
            .arg(QString::fromStdString(spec.outDir)) +
        (misfits ? tr("; %1 will not fit and will be refused").arg(misfits) : QString()));
    rebuildTable();
    rebuildChartControls();
    redrawChart();
}

void SweepPage::addPoint(int index, const RunResult& r) {
    if (index < 0 || index >= int(configs_.size())) {
        index = int(configs_.size());  // not listed by begin()
        configs_.push_back(r.config);
        results_.emplace_back();
        peaks_.emplace_back();
        fits_.push_back(true);
    }
    keepResult(size_t(index), r);
    status_->setText(tr("%1 of %2 points").arg(++done_).arg(configs_.size()));
    rebuildTable();
    rebuildChartControls();
    redrawChart();
}

void SweepPage::showPoints(const QString& directory, const std::vector<Row>& rows, bool watching) {
    configs_.clear();
    results_.assign(rows.size(), std::nullopt);
    peaks_.assign(rows.size(), std::nullopt);
    fits_.assign(rows.size(), true);
    int finished = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
        configs_.push_back(rows[i].config);
        if (rows[i].result) {
            keepResult(i, *rows[i].result);
            ++finished;
        }
    }
    // The form shows what the folder spans: the four lists, and each other
    // field that varies as an axis.
    if (!rows.empty()) {
        const auto valuesOf = [&](const std::string& field) {
            QStringList values;
            for (const RunConfig& c : configs_) {
                const QString value = QString::fromStdString(configFieldText(c, field));
                if (!values.contains(value)) {
                    values << value;
                }
            }
            return values.join(',');
        };
        models_->setText(valuesOf("model"));
        contexts_->setText(valuesOf("ctx"));
        modes_->setText(valuesOf("mode"));
        precisions_->setText(valuesOf("precision"));
        const std::vector<std::string> varying = varyingFields(configs_);
        for (const auto& [field, edit] : axisEdits_) {
            const bool varies = std::count(varying.begin(), varying.end(), field) > 0;
            edit->setText(varies ? valuesOf(field) : QString());
        }
    }
    done_ = finished;
    const QString shown = finished == int(rows.size())
                              ? countText(finished, "point")
                              : tr("%1 of %2 points").arg(finished).arg(rows.size());
    status_->setText(
        (watching ? tr("%1 from %2; watched: points appear as their run files arrive there.")
                  : tr("%1 from %2."))
            .arg(shown, directory));
    rebuildTable();
    rebuildChartControls();
    redrawChart();
}

int SweepPage::column(Column column) const {
    const int axes = int(axisColumns_.size());
    return column <= Precision ? int(column) : int(column) + axes;
}

int SweepPage::column(const QString& header) const {
    for (int c = 0; c < table_->columnCount(); ++c) {
        // A header shown on two lines reads as one: "total\nms" is "total ms".
        if (table_->horizontalHeaderItem(c)->text().replace('\n', ' ') == header) {
            return c;
        }
    }
    return -1;
}

void SweepPage::rebuildTable() {
    const std::vector<std::string> varying = varyingFields(configs_);
    axisColumns_.clear();
    for (const auto& field : varying) {
        if (std::find(kTypedFields.begin(), kTypedFields.end(), field) == kTypedFields.end()) {
            axisColumns_.push_back(field);
        }
    }
    const StudyColumns study = studyColumns(varying);
    QStringList headers = {tr("model"), tr("ctx"), tr("mode"), tr("precision")};
    for (const auto& field : axisColumns_) {
        headers << QString::fromStdString(field);
    }
    headers << tr("status") << tr("est.\npeak") << tr("forward\nms") << tr("backward\nms")
            << tr("total\nms");
    if (study.warmup) {
        headers << tr("1st step\nms") << tr("2nd step\nms");
    }
    if (study.speedup) {
        headers << tr("× fp32");
    }
    if (study.peak) {
        headers << tr("peak");
    }
    table_->setRowCount(0);
    table_->setColumnCount(int(headers.size()));
    table_->setHorizontalHeaderLabels(headers);
    for (size_t i = 0; i < configs_.size(); ++i) {
        addTableRow(i, study);
    }
}

// The studies' own columns, wherever their field varies (an opened study
// folder shows them too), and the measured peak where any point has one.
SweepPage::StudyColumns SweepPage::studyColumns(const std::vector<std::string>& varying) const {
    const auto varies = [&](const std::string& field) {
        return std::find(varying.begin(), varying.end(), field) != varying.end();
    };
    StudyColumns study;
    study.warmup = varies("warmup");
    study.speedup = varies("precision");
    study.peak = std::any_of(peaks_.begin(), peaks_.end(),
                             [](const auto& peak) { return peak.has_value(); });
    if (study.speedup) {
        std::vector<RunResult> runs;
        for (size_t i = 0; i < configs_.size(); ++i) {
            RunResult pending;
            pending.config = configs_[i];
            pending.status = RunStatus::Failed;  // not measured yet: no speed-up
            runs.push_back(results_[i] ? *results_[i] : pending);
        }
        study.precision = precisionStudyRows(runs, {});
    }
    return study;
}

// Point `i`'s row: its fields, its state or result, coloured where it will
// not fit or did not end well.
void SweepPage::addTableRow(size_t i, const StudyColumns& study) {
    const RunConfig& c = configs_[i];
    const std::optional<RunResult>& r = results_[i];
    QStringList cells = {QString::fromStdString(c.model.name), QString::number(c.contextLength),
                         QString::fromStdString(toString(c.mode)),
                         QString::fromStdString(toString(c.precision))};
    for (const auto& field : axisColumns_) {
        cells << QString::fromStdString(configFieldText(c, field));
    }
    cells << (r          ? QString::fromStdString(toString(r->status))
              : fits_[i] ? tr("pending")
                         : tr("will not fit"))
          << bytesText(predictMemory(c).peakBytes) << (r ? meanStd(r->summary.forward) : "–")
          << (r ? meanStd(r->summary.backward) : "–")
          << (r && r->summary.total.count ? meanStd(r->summary.total) : "–");
    if (study.warmup) {
        const WarmupStudyRow row = r ? warmupStudyRow(*r, {}) : WarmupStudyRow{};
        cells << msText(row.firstMs) << msText(row.secondMs);
    }
    if (study.speedup) {
        const auto& speedup = study.precision[i].speedup;
        cells << (speedup ? QString::number(*speedup, 'f', 2) + "×" : QString("–"));
    }
    if (study.peak) {
        cells << (peaks_[i] ? bytesText(*peaks_[i]) : QString("–"));
    }
    const int row = table_->rowCount();
    table_->insertRow(row);
    for (int column = 0; column < cells.size(); ++column) {
        auto* item = new QTableWidgetItem(cells[column]);
        if (!r && !fits_[i]) {
            item->setBackground(QColor(250, 210, 210));
            item->setToolTip(
                tr("The estimate plus its margin (%1) exceeds the %2 free; "
                   "the runner will refuse this point.")
                    .arg(bytesText(preflightBytes(c)), bytesText(availableBytes_.value_or(0))));
        } else if (r && r->status != RunStatus::Ok) {
            item->setBackground(r->status == RunStatus::Oom ? QColor(250, 210, 210)
                                                            : QColor(240, 230, 200));
            item->setToolTip(QString::fromStdString(r->message));
        }
        table_->setItem(row, column, item);
    }
}

void SweepPage::keepResult(size_t row, const RunResult& result) {
    results_[row] = withoutTraces(result);
    peaks_[row] = result.memory.empty()
                      ? std::nullopt
                      : std::optional(summarizeMemory(result.memory, 0).peakBytes);
}

std::vector<const RunResult*> SweepPage::finishedPoints() const {
    std::vector<const RunResult*> points;
    for (const auto& result : results_) {
        if (result) {
            points.push_back(&*result);
        }
    }
    return points;
}

// The x axis offers every field that varies and the measured step; each
// other varying field gets a box: a line per value, or one value held.
void SweepPage::rebuildChartControls() {
    const std::vector<std::string> varying = varyingFields(configs_);
    std::string x = xAxis_->currentData().toString().toStdString();
    if (varying != chartFields_ || xAxis_->count() == 0) {
        chartFields_ = varying;
        std::vector<std::string> choices = varying;
        if (choices.empty()) {
            choices.push_back("ctx");
        }
        choices.push_back(kMeasuredStepAxis);
        if (std::find(choices.begin(), choices.end(), x) == choices.end()) {
            // Context length where it varies; the steps of a warm-up study.
            const bool ctx = std::count(varying.begin(), varying.end(), "ctx") > 0;
            const bool warmupOnly = varying == std::vector<std::string>{"warmup"};
            x = ctx ? "ctx" : warmupOnly ? kMeasuredStepAxis : choices.front();
        }
        const QSignalBlocker blocker(xAxis_);
        xAxis_->clear();
        for (const auto& field : choices) {
            xAxis_->addItem(axisLabel(field), QString::fromStdString(field));
        }
        xAxis_->setCurrentIndex(xAxis_->findData(QString::fromStdString(x)));
    }

    // The pivots: kept where the field and its values are the same as before.
    std::map<std::string, QString> kept;
    for (const auto& [field, box] : heldBoxes_) {
        kept[field] = box->currentData().toString();
    }
    std::map<std::string, QStringList> values;
    for (const auto& field : varying) {
        for (const RunConfig& c : configs_) {
            const QString value = QString::fromStdString(configFieldText(c, field));
            if (!values[field].contains(value)) {
                values[field] << value;
            }
        }
    }
    while (QLayoutItem* item = pivots_->takeAt(0)) {
        delete item->widget();
        delete item;
    }
    heldBoxes_.clear();
    for (const auto& field : varying) {
        if (field == x) {
            continue;
        }
        auto* box = new QComboBox;
        box->setObjectName(QString::fromStdString("held-" + field));
        box->addItem(tr("a line each"), QString());
        for (const QString& value : values[field]) {
            box->addItem(value, value);
        }
        if (const auto was = kept.find(field); was != kept.end()) {
            box->setCurrentIndex(std::max(0, box->findData(was->second)));
        }
        connect(box, &QComboBox::currentIndexChanged, this, &SweepPage::redrawChart);
        pivots_->addWidget(new QLabel(QString::fromStdString(field)));
        pivots_->addWidget(box);
        heldBoxes_[field] = box;
    }
}

void SweepPage::redrawChart() {
    plot_->clearGraphs();
    const std::string x = xAxis_->currentData().toString().toStdString();
    std::map<std::string, std::string> held;
    for (const auto& [field, box] : heldBoxes_) {
        if (!box->currentData().toString().isEmpty()) {
            held[field] = box->currentData().toString().toStdString();
        }
    }
    const SweepChartData data = sweepChartData(finishedPoints(), x, held);
    setNoData(plot_, data.series.empty() ? tr("No finished points yet: run a sweep, or open a "
                                              "sweep's folder (File → Open folder…).")
                                         : QString());
    plot_->xAxis->setLabel(axisLabel(x));
    plot_->yAxis->setLabel(x == kMeasuredStepAxis ? tr("time of the step (ms)")
                                                  : tr("mean time per step (ms)"));
    if (data.numericX && data.logX) {
        plot_->xAxis->setScaleType(QCPAxis::stLogarithmic);
        auto ticker = QSharedPointer<ThinnedTicker<QCPAxisTickerLog>>::create(plot_->xAxis);
        ticker->setLogBase(2);
        plot_->xAxis->setTicker(ticker);
    } else if (data.numericX) {
        plot_->xAxis->setScaleType(QCPAxis::stLinear);
        useIntegerTicks(plot_->xAxis);
    } else {
        plot_->xAxis->setScaleType(QCPAxis::stLinear);
        auto ticker = QSharedPointer<ThinnedTicker<QCPAxisTickerText>>::create(plot_->xAxis);
        for (size_t i = 0; i < data.categories.size(); ++i) {
            ticker->addTick(double(i), QString::fromStdString(data.categories[i]));
        }
        plot_->xAxis->setTicker(ticker);
    }
    int index = 0;
    for (const auto& series : data.series) {
        auto* graph = plot_->addGraph();
        graph->setName(QString::fromStdString(series.name));
        graph->setPen(QPen(seriesColor(index), 2, seriesStyle(index)));
        ++index;
        graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 6));
        for (const auto& [key, ms] : series.points) {
            graph->addData(key, ms);
        }
    }
    if (!data.series.empty()) {
        fitAxesWithRoom(plot_, 1.3, true);
        if (!data.numericX) {  // categories sit inside the axis, not on its ends
            plot_->xAxis->setRange(-0.5, double(data.categories.size()) - 0.5);
        }
    }
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

QString SweepPage::statusText() const {
    return status_->text();
}

void SweepPage::finish(const QString& message) {
    const auto finished =
        std::count_if(results_.begin(), results_.end(), [](const auto& r) { return bool(r); });
    status_->setText(message.isEmpty() ? tr("Done: %1 of %2 points, their files in %3")
                                             .arg(finished)
                                             .arg(configs_.size())
                                             .arg(outDir_)
                                       : message);
}

void SweepPage::setRunning(bool running) {
    start_->setEnabled(!running);
    stop_->setEnabled(running);
    study_->setEnabled(!running);
}

QList<ExportTarget> SweepPage::exportTargets() {
    return {{"sweep", plot_, nullptr}, {"sweep-table", nullptr, table_->model()}};
}

}  // namespace stepscope::ui
