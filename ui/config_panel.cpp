#include "config_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QVBoxLayout>

#include "attention/attention_registry.h"

namespace stepscope::ui {

namespace {

QSpinBox* spinBox(int minimum, int maximum, int value) {
    auto* box = new QSpinBox;
    box->setRange(minimum, maximum);
    box->setValue(value);
    box->setAccelerated(true);
    return box;
}

QComboBox* comboBox(const std::vector<std::string>& items) {
    auto* box = new QComboBox;
    for (const auto& item : items) {
        box->addItem(QString::fromStdString(item));
    }
    return box;
}

const char* kCustom = "custom";

}  // namespace

ConfigPanel::ConfigPanel(bool cudaAvailable, QWidget* parent) : QWidget(parent) {
    auto* form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);

    std::vector<std::string> presets = presetNames();
    presets.push_back(kCustom);
    preset_ = comboBox(presets);
    // Zero is allowed here so that the engine's validation, not the widget, says what is wrong.
    dModel_ = spinBox(0, 65536, 64);
    dFf_ = spinBox(0, 262144, 256);
    layers_ = spinBox(0, 512, 2);
    heads_ = spinBox(0, 512, 4);
    vocab_ = spinBox(0, 1 << 24, 10000);
    maxContext_ = spinBox(0, 1 << 20, 2048);
    context_ = spinBox(0, 1 << 20, 128);
    batch_ = spinBox(0, 1 << 16, 4);
    mode_ = comboBox(runModeNames());
    precision_ = comboBox(precisionNames());
    tf32_ = new QCheckBox(tr("TF32 matmuls (CUDA)"));
    attention_ = comboBox(attentionBackendNames());
    warmup_ = spinBox(0, 100000, 2);
    steps_ = spinBox(0, 1000000, 5);
    device_ = comboBox(deviceNames());
    seed_ = spinBox(0, INT32_MAX, 0);
    threads_ = spinBox(0, 1024, 0);
    threads_->setSpecialValueText(tr("default"));
    traceOps_ = new QCheckBox(tr("Trace operators"));
    traceOps_->setToolTip(tr("Record every operator's time per phase (Breakdown, Timeline)"));
    traceMemory_ = new QCheckBox(tr("Trace memory"));
    traceMemory_->setToolTip(tr("Record every allocation and free (Memory view)"));
    traceKernels_ = new QCheckBox(tr("Trace CUDA kernels"));
    traceKernels_->setToolTip(tr("Record every CUDA kernel through CUPTI (CUDA runs only)"));

    if (!cudaAvailable) {
        auto* model = qobject_cast<QStandardItemModel*>(device_->model());
        const int cuda = device_->findText("cuda");
        model->item(cuda)->setEnabled(false);
        device_->setItemData(cuda, tr("No CUDA device is available on this machine"),
                             Qt::ToolTipRole);
        tf32_->setEnabled(false);
        tf32_->setToolTip(tr("TF32 needs a CUDA device"));
        traceKernels_->setEnabled(false);
        traceKernels_->setToolTip(tr("Kernel tracing needs a CUDA device"));
    }

    addField(form, tr("Model"), preset_, "model");
    addField(form, tr("d_model"), dModel_, "d_model");
    addField(form, tr("d_ff"), dFf_, "d_ff");
    addField(form, tr("Layers"), layers_, "layers");
    addField(form, tr("Heads"), heads_, "heads");
    addField(form, tr("Vocab"), vocab_, "vocab");
    addField(form, tr("Max context"), maxContext_, "max_context");
    addField(form, tr("Context length"), context_, "ctx");
    addField(form, tr("Batch"), batch_, "batch");
    addField(form, tr("Mode"), mode_, "mode");
    addField(form, tr("Precision"), precision_, "precision");
    addField(form, QString(), tf32_, "tf32");
    addField(form, tr("Attention"), attention_, "attention");
    addField(form, tr("Warm-up steps"), warmup_, "warmup");
    addField(form, tr("Measured steps"), steps_, "steps");
    addField(form, tr("Device"), device_, "device");
    addField(form, tr("Seed"), seed_, "seed");
    addField(form, tr("CPU threads"), threads_, "threads");
    addField(form, QString(), traceOps_, "ops");
    addField(form, QString(), traceKernels_, "kernels");
    addField(form, QString(), traceMemory_, "memory");

    viewingLabel_ = new QLabel;
    viewingLabel_->setWordWrap(true);
    viewingLabel_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    runAgain_ = new QPushButton(tr("Run again with this configuration"));
    editCopy_ = new QPushButton(tr("Edit a copy"));
    editCopy_->setToolTip(tr("Make the form editable, starting from this run's values"));
    auto* viewingButtons = new QVBoxLayout;  // stacked: as narrow as the form
    viewingButtons->setContentsMargins(0, 0, 0, 0);
    viewingButtons->addWidget(runAgain_);
    viewingButtons->addWidget(editCopy_);
    viewing_ = new QWidget;
    viewing_->setStyleSheet("QWidget#viewing { background: #eef5fb; }");
    viewing_->setObjectName("viewing");
    auto* viewingLayout = new QVBoxLayout(viewing_);
    viewingLayout->addWidget(viewingLabel_);
    viewingLayout->addLayout(viewingButtons);
    viewing_->hide();
    connect(runAgain_, &QPushButton::clicked, this, &ConfigPanel::runAgainRequested);
    connect(editCopy_, &QPushButton::clicked, this, &ConfigPanel::editCopy);

    estimate_ = new QLabel;
    estimate_->setWordWrap(true);
    estimate_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    estimate_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    fields_ = new QWidget;
    fields_->setLayout(form);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(viewing_);
    layout->addWidget(fields_);
    layout->addWidget(estimate_);
    layout->addStretch();

    connect(preset_, &QComboBox::currentTextChanged, this, &ConfigPanel::presetChanged);
    for (auto* box : {dModel_, dFf_, layers_, heads_, vocab_, maxContext_, context_, batch_,
                      warmup_, steps_, seed_, threads_}) {
        connect(box, &QSpinBox::valueChanged, this, &ConfigPanel::changed);
    }
    for (auto* box : {mode_, precision_, attention_, device_}) {
        connect(box, &QComboBox::currentIndexChanged, this, &ConfigPanel::changed);
    }
    for (auto* box : {tf32_, traceOps_, traceKernels_, traceMemory_}) {
        connect(box, &QCheckBox::toggled, this, &ConfigPanel::changed);
    }
    RunConfig initial;
    initial.model = *findPreset("nano");
    setConfig(initial);
}

QLabel* ConfigPanel::addField(QFormLayout* form, const QString& label, QWidget* field,
                              const std::string& name) {
    auto* column = new QWidget;
    auto* layout = new QVBoxLayout(column);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(1);
    layout->addWidget(field);
    auto* error = new QLabel;
    error->setObjectName(QString::fromStdString("error_" + name));
    error->setWordWrap(true);
    // A long message wraps within the form's width rather than widening it.
    error->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    error->setStyleSheet("color: #c0392b;");
    error->hide();
    layout->addWidget(error);
    form->addRow(label, column);
    errorLabels_[name] = error;
    return error;
}

void ConfigPanel::presetChanged() {
    const auto preset = findPreset(preset_->currentText().toStdString());
    const bool custom = !preset.has_value();
    for (auto* box : {dModel_, dFf_, layers_, heads_}) {
        box->setEnabled(custom);
    }
    if (preset) {
        const QSignalBlocker a(dModel_), b(dFf_), c(layers_), d(heads_);
        dModel_->setValue(int(preset->dModel));
        dFf_->setValue(int(preset->dFf));
        layers_->setValue(int(preset->layers));
        heads_->setValue(int(preset->heads));
    }
    Q_EMIT changed();
}

RunConfig ConfigPanel::config() const {
    RunConfig config;
    if (const auto preset = findPreset(preset_->currentText().toStdString())) {
        config.model = *preset;
    } else {
        config.model.name =
            "custom-d" + std::to_string(dModel_->value()) + "-ff" + std::to_string(dFf_->value()) +
            "-l" + std::to_string(layers_->value()) + "-h" + std::to_string(heads_->value());
        config.model.dModel = dModel_->value();
        config.model.dFf = dFf_->value();
        config.model.layers = layers_->value();
        config.model.heads = heads_->value();
    }
    config.model.vocabSize = vocab_->value();
    config.model.maxContext = maxContext_->value();
    config.contextLength = context_->value();
    config.batchSize = batch_->value();
    config.mode = *parseRunMode(mode_->currentText().toStdString());
    config.precision = *parsePrecision(precision_->currentText().toStdString());
    config.tf32 = tf32_->isChecked();
    config.attention = attention_->currentText().toStdString();
    config.warmupSteps = warmup_->value();
    config.measuredSteps = steps_->value();
    config.device = *parseDeviceKind(device_->currentText().toStdString());
    config.seed = uint64_t(seed_->value());
    config.threads = threads_->value();
    config.traceOps = traceOps_->isChecked();
    config.traceKernels = traceKernels_->isChecked();
    config.traceMemory = traceMemory_->isChecked();
    return config;
}

void ConfigPanel::setConfig(const RunConfig& config) {
    {
        const QSignalBlocker blocker(this);
        const bool isPreset = findPreset(config.model.name).has_value();
        preset_->setCurrentText(isPreset ? QString::fromStdString(config.model.name) : kCustom);
        presetChanged();
        dModel_->setValue(int(config.model.dModel));
        dFf_->setValue(int(config.model.dFf));
        layers_->setValue(int(config.model.layers));
        heads_->setValue(int(config.model.heads));
        vocab_->setValue(int(config.model.vocabSize));
        maxContext_->setValue(int(config.model.maxContext));
        context_->setValue(int(config.contextLength));
        batch_->setValue(int(config.batchSize));
        mode_->setCurrentText(QString::fromStdString(toString(config.mode)));
        precision_->setCurrentText(QString::fromStdString(toString(config.precision)));
        tf32_->setChecked(config.tf32);
        const int attention = attention_->findText(QString::fromStdString(config.attention));
        attention_->setCurrentIndex(attention >= 0 ? attention : 0);
        warmup_->setValue(config.warmupSteps);
        steps_->setValue(config.measuredSteps);
        device_->setCurrentText(QString::fromStdString(toString(config.device)));
        seed_->setValue(int(config.seed));
        threads_->setValue(config.threads);
        traceOps_->setChecked(config.traceOps);
        traceKernels_->setChecked(config.traceKernels);
        traceMemory_->setChecked(config.traceMemory);
    }
    Q_EMIT changed();
}

void ConfigPanel::showRunConfig(const RunConfig& config, const QString& who) {
    setConfig(config);
    readOnly_ = true;
    // The container, not each field, is disabled: fields keep their own
    // enabled state (preset dims, CUDA-only options) for when editing resumes.
    fields_->setEnabled(false);
    viewingLabel_->setText(tr("Configuration of run %1 (read-only)").arg(who));
    viewing_->show();
}

void ConfigPanel::editCopy() {
    readOnly_ = false;
    fields_->setEnabled(true);
    viewing_->hide();
    Q_EMIT changed();
}

void ConfigPanel::showEstimate(const QString& text, const QString& details,
                               std::optional<bool> fits) {
    estimate_->setText(text);
    estimate_->setToolTip(details);
    estimate_->setStyleSheet(!fits   ? "padding: 4px;"
                             : *fits ? "padding: 4px; background: #eaf6ea;"
                                     : "padding: 4px; background: #fdecea; color: #8a1f11;");
}

QString ConfigPanel::estimateText() const {
    return estimate_->text();
}

bool ConfigPanel::showErrors(const std::vector<ConfigError>& errors) {
    for (auto& [name, label] : errorLabels_) {
        label->clear();
        label->hide();
    }
    for (const auto& error : errors) {
        auto found = errorLabels_.find(error.field);
        QLabel* label = found != errorLabels_.end() ? found->second : errorLabels_.at("model");
        const QString text = QString::fromStdString(error.message);
        label->setText(label->text().isEmpty() ? text : label->text() + "\n" + text);
        label->show();
    }
    return !errors.empty();
}

QString ConfigPanel::errorText(const QString& field) const {
    const auto found = errorLabels_.find(field.toStdString());
    return found == errorLabels_.end() ? QString() : found->second->text();
}

}  // namespace stepscope::ui
