#include "pages/config_panel.h"

#include <QAbstractScrollArea>
#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QToolButton>
#include <QVBoxLayout>
#include <QWheelEvent>

#include <algorithm>
#include <climits>
#include <variant>

#include "attention/attention_registry.h"
#include "config/config_field.h"
#include "config/limits.h"
#include "widgets/file_dialogs.h"

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
// The attention box's last item: the user's attention, a MODULE:NAME below it.
const char* kYourOwn = "your own…";

// Ours in-process, ours in the Python worker, then the user's.
std::vector<std::string> attentionItems() {
    std::vector<std::string> items = attentionBackendNames();
    items.insert(items.end(), pythonAttentionBackends().begin(), pythonAttentionBackends().end());
    items.push_back(kYourOwn);
    return items;
}

// The activation-checkpoint box's items, in order.
constexpr CheckpointStrategy::Kind kCheckpointKinds[] = {CheckpointStrategy::Kind::Off,
                                                         CheckpointStrategy::Kind::Groups,
                                                         CheckpointStrategy::Kind::Nested};

// Two fields side by side in one row of the form.
QWidget* pair(QWidget* first, QWidget* second) {
    auto* row = new QWidget;
    auto* layout = new QHBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(4);
    layout->addWidget(first, 1);
    layout->addWidget(second, 1);
    return row;
}

QString text(const std::string& value) {
    return QString::fromStdString(value);
}

bool contains(const std::vector<std::string>& names, const QString& name) {
    return std::find(names.begin(), names.end(), name.toStdString()) != names.end();
}

// The callable a model file most likely means: the first top-level function
// taking the course's keyword arguments (vocab_size, …), else the first
// public top-level function, else the first public class; empty when none.
QString guessCallable(const QString& source) {
    static const QRegularExpression definition(
        R"(^(?:async\s+)?(def|class)\s+([A-Za-z]\w*)\s*(\([^)]*\))?)",
        QRegularExpression::MultilineOption);
    QString firstDef, firstClass;
    for (auto it = definition.globalMatch(source); it.hasNext();) {
        const QRegularExpressionMatch match = it.next();
        const QString name = match.captured(2);
        if (match.captured(1) == "class") {
            firstClass = firstClass.isEmpty() ? name : firstClass;
            continue;
        }
        if (match.captured(3).contains("vocab_size")) {
            return name;
        }
        firstDef = firstDef.isEmpty() ? name : firstDef;
    }
    return firstDef.isEmpty() ? firstClass : firstDef;
}

// The attention a file most likely means: the first autograd Function class,
// else the first function taking q first, else the first public def or class.
QString guessAttention(const QString& source) {
    static const QRegularExpression function(R"(^class\s+([A-Za-z]\w*)\s*\([^)]*Function[^)]*\))",
                                             QRegularExpression::MultilineOption);
    static const QRegularExpression takesQ(R"(^def\s+([A-Za-z]\w*)\s*\(\s*q\b)",
                                           QRegularExpression::MultilineOption);
    for (const auto* pattern : {&function, &takesQ}) {
        if (const auto match = pattern->match(source); match.hasMatch()) {
            return match.captured(1);
        }
    }
    return guessCallable(source);
}

// A whole number for a spin box, which holds an int.
int clampedInt(int64_t value) {
    return int(std::clamp<int64_t>(value, INT_MIN, INT_MAX));
}

// A row's widget from the field's type, holding its default.
QWidget* widgetFor(const ConfigField& field) {
    const QString tip = QString::fromStdString(field.helpText());
    QWidget* widget = nullptr;
    switch (field.type) {
        case FieldType::Integer: {
            // Zero is allowed here so that the engine's validation, not the
            // widget, says what is wrong. The maxima are the table's: a value past
            // them could not run, and a run file within them shows unclamped.
            const ConfigValue initial = field.defaultValue();
            const int64_t value = std::holds_alternative<uint64_t>(initial)
                                      ? int64_t(std::get<uint64_t>(initial))
                                      : std::get<int64_t>(initial);
            widget = spinBox(clampedInt(std::min<int64_t>(0, field.min)),
                             clampedInt(field.maximum()), clampedInt(value));
            break;
        }
        case FieldType::Choice:
            widget = comboBox(field.values);
            static_cast<QComboBox*>(widget)->setCurrentText(text(field.defaultText()));
            break;
        case FieldType::Number: {
            // From 0, as an Integer from its least: validation says what is wrong.
            auto* box = new QDoubleSpinBox;
            box->setRange(0, 1e6);
            box->setDecimals(3);
            box->setValue(std::get<double>(field.defaultValue()));
            widget = box;
            break;
        }
        case FieldType::Switch:
            widget = new QCheckBox(QCoreApplication::translate("ConfigField", field.label.c_str()));
            static_cast<QCheckBox*>(widget)->setChecked(std::get<bool>(field.defaultValue()));
            break;
        default:
            widget = new QLineEdit(text(field.defaultText()));
            break;
    }
    widget->setToolTip(tip);
    return widget;
}

// A row's value as the field holds it.
ConfigValue valueOf(const ConfigField& field, const QWidget* widget) {
    if (const auto* box = qobject_cast<const QSpinBox*>(widget)) {
        if (std::holds_alternative<uint64_t>(field.defaultValue())) {
            return uint64_t(box->value());
        }
        return int64_t(box->value());
    }
    if (const auto* box = qobject_cast<const QDoubleSpinBox*>(widget)) {
        return box->value();
    }
    if (const auto* box = qobject_cast<const QComboBox*>(widget)) {
        return box->currentText().toStdString();
    }
    if (const auto* box = qobject_cast<const QCheckBox*>(widget)) {
        return box->isChecked();
    }
    return static_cast<const QLineEdit*>(widget)->text().trimmed().toStdString();
}

void showValue(QWidget* widget, const ConfigValue& value) {
    if (auto* box = qobject_cast<QSpinBox*>(widget)) {
        box->setValue(clampedInt(std::holds_alternative<uint64_t>(value)
                                     ? int64_t(std::get<uint64_t>(value))
                                     : std::get<int64_t>(value)));
    } else if (auto* number = qobject_cast<QDoubleSpinBox*>(widget)) {
        number->setValue(std::get<double>(value));
    } else if (auto* combo = qobject_cast<QComboBox*>(widget)) {
        combo->setCurrentText(text(std::get<std::string>(value)));
    } else if (auto* check = qobject_cast<QCheckBox*>(widget)) {
        check->setChecked(std::get<bool>(value));
    } else {
        static_cast<QLineEdit*>(widget)->setText(text(std::get<std::string>(value)));
    }
}

}  // namespace

ConfigPanel::ConfigPanel(bool cudaAvailable, QWidget* parent) : QWidget(parent) {
    form_ = new QFormLayout;
    form_->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    // In a narrow dock a field goes under its label rather than widening the form.
    form_->setRowWrapPolicy(QFormLayout::WrapLongRows);
    addRows();
    addItemTips();
    if (!cudaAvailable) {
        disableCudaOnly();
    }
    addCarriedRow();
    attentionChanged();
    addViewingBanner();

    estimate_ = new QLabel;
    estimate_->setWordWrap(true);
    estimate_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    estimate_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    fields_ = new QWidget;
    fields_->setLayout(form_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(viewing_);
    layout->addWidget(fields_);
    layout->addWidget(estimate_);
    layout->addStretch();

    connectFields();
    RunConfig initial;
    initial.model = *findPreset("nano");
    setConfig(initial);
}

// A row for each field with a label, the engine's section first, then the
// others in the table's order. A few rows are made by hand: the model (a
// preset or its dims), the attention (and the user's, below it), the levers
// (each a choice with a number beside it) and the Python model (with "…").
void ConfigPanel::addRows() {
    static const std::map<std::string, void (ConfigPanel::*)()> byHand = {
        {"model", &ConfigPanel::addModelRows},
        {"attention", &ConfigPanel::addAttentionRows},
        {"py-attention", nullptr},  // the attention's second row
        {"activation-checkpoint", &ConfigPanel::addCheckpointRow},
        {"loss", &ConfigPanel::addLossRow},
        {"py-model", &ConfigPanel::addPythonModelRow}};
    for (const FieldSection section :
         {FieldSection::Engine, FieldSection::Model, FieldSection::Workload, FieldSection::Steps,
          FieldSection::Trace, FieldSection::Distributed, FieldSection::Data}) {
        for (const ConfigField& field : configFields()) {
            if (field.section != section) {
                continue;
            }
            if (const auto made = byHand.find(field.name); made != byHand.end()) {
                if (made->second) {
                    (this->*made->second)();
                }
            } else if (!field.label.empty()) {
                addFieldRow(field);
            }
        }
    }
}

void ConfigPanel::addFieldRow(const ConfigField& field) {
    QWidget* widget = widgetFor(field);
    fieldWidgets_[field.name] = widget;
    // A check box says what it is itself.
    const QString label = field.type == FieldType::Switch
                              ? QString()
                              : QCoreApplication::translate("ConfigField", field.label.c_str());
    addField(form_, label, widget, field.name);
}

void ConfigPanel::addModelRows() {
    std::vector<std::string> presets = presetNames();
    presets.push_back(kCustom);
    preset_ = comboBox(presets);
    // Zero is allowed here so that the engine's validation, not the widget, says what is wrong.
    // The maxima are config/limits.h's: a value past them could not run, and a
    // run file within them shows unclamped.
    dModel_ = spinBox(0, int(kDModelLimit.max), 64);
    dFf_ = spinBox(0, int(kDFfLimit.max), 256);
    layers_ = spinBox(0, int(kLayersLimit.max), 2);
    heads_ = spinBox(0, int(kHeadsLimit.max), 4);
    vocab_ = spinBox(0, int(kVocabLimit.max), 10000);
    maxContext_ = spinBox(0, int(kMaxContextLimit.max), 2048);
    addField(form_, tr("Model"), preset_, "model");
    addField(form_, tr("d_model"), dModel_, "d_model");
    addField(form_, tr("d_ff"), dFf_, "d_ff");
    addField(form_, tr("Layers"), layers_, "layers");
    addField(form_, tr("Heads"), heads_, "heads");
    addField(form_, tr("Vocab"), vocab_, "vocab");
    addField(form_, tr("Max context"), maxContext_, "max_context");
}

void ConfigPanel::addAttentionRows() {
    attention_ = comboBox(attentionItems());
    attention_->setItemData(attention_->findText(kYourOwn),
                            tr("Your own attention from a .py file: an autograd Function "
                               "(NAME.apply(q, k, v, is_causal)) or a function (q, k, v, "
                               "is_causal) -> o, called in every block (pytorch engines)"),
                            Qt::ToolTipRole);
    pyAttention_ = new QLineEdit;
    pyAttention_->setPlaceholderText(tr("MODULE:NAME"));
    pyAttention_->setToolTip(
        tr("Your attention, for example my_flash:FlashAttention: a torch.autograd.Function "
           "(NAME.apply(q, k, v, is_causal)) or a function (q, k, v, is_causal) -> o, given "
           "(batch·heads, seq, d) tensors. MODULE is imported from the Python path."));
    pyAttentionBrowse_ = new QToolButton;
    pyAttentionBrowse_->setText(tr("…"));
    pyAttentionBrowse_->setToolTip(
        tr("Choose your attention's .py file: its folder becomes the Python path"));
    pyAttentionRow_ = new QWidget;
    auto* pyAttentionLayout = new QHBoxLayout(pyAttentionRow_);
    pyAttentionLayout->setContentsMargins(0, 0, 0, 0);
    pyAttentionLayout->setSpacing(2);
    pyAttentionLayout->addWidget(pyAttention_, 1);
    pyAttentionLayout->addWidget(pyAttentionBrowse_);
    connect(pyAttentionBrowse_, &QToolButton::clicked, this, &ConfigPanel::browseAttentionFile);
    // Picking "your own…" with nothing named yet asks for the file at once.
    connect(attention_, &QComboBox::activated, this, [this](int index) {
        if (attention_->itemText(index) == kYourOwn && pyAttention_->text().trimmed().isEmpty()) {
            browseAttentionFile();
        }
    });
    addField(form_, tr("Attention"), attention_, "attention");
    yourAttentionField_ =
        addField(form_, tr("Your attention"), pyAttentionRow_, "py-attention")->parentWidget();
}

void ConfigPanel::addCheckpointRow() {
    checkpoint_ = new QComboBox;
    checkpoint_->addItems({tr("off"), tr("groups of"), tr("nested")});  // as kCheckpointKinds
    const QString checkpointTips[] = {
        tr("Every block keeps what its backward needs"),
        tr("Each group of K blocks keeps only its input and recomputes its forward in backward"),
        tr("Recursive halving: the fewest tensors kept, the most recomputation")};
    for (int i = 0; i < checkpoint_->count(); ++i) {
        checkpoint_->setItemData(i, checkpointTips[i], Qt::ToolTipRole);
    }
    checkpointGroup_ = spinBox(0, 4096, 1);
    checkpointGroup_->setSuffix(tr(" block"));
    checkpointGroup_->setToolTip(tr("Blocks per checkpointed group (K)"));
    addField(form_, tr("Activation checkpoint"), pair(checkpoint_, checkpointGroup_),
             "activation-checkpoint");
}

void ConfigPanel::addLossRow() {
    loss_ = comboBox(lossNames());
    loss_->setItemData(0, tr("The LM head's logits for every token at once"), Qt::ToolTipRole);
    loss_->setItemData(1,
                       tr("The LM head and cross-entropy chunk by chunk, each chunk's logits "
                          "recomputed in backward: the full logits never exist at once"),
                       Qt::ToolTipRole);
    const ConfigField& chunk = *findConfigField("loss-chunk");
    lossChunk_ = spinBox(0, clampedInt(chunk.maximum()),
                         clampedInt(std::get<int64_t>(chunk.defaultValue())));
    lossChunk_->setSuffix(tr(" tokens"));
    lossChunk_->setToolTip(tr("Tokens per chunk of the chunked loss"));
    // The chunk size's messages show under the loss row it belongs to.
    errorLabels_["loss-chunk"] = addField(form_, tr("Loss"), pair(loss_, lossChunk_), "loss");
}

void ConfigPanel::addPythonModelRow() {
    const QString signature =
        tr("It is called with the course's keyword arguments: vocab_size, context_length, "
           "d_model, num_layers, num_heads, d_ff, rope_theta (the dims above).");
    pyModel_ = new QLineEdit;
    // Wide enough for a module and callable such as "user_models:tied_bag_lm".
    pyModel_->setMinimumWidth(pyModel_->fontMetrics().horizontalAdvance(QString(16, 'x')));
    pyModel_->setPlaceholderText(tr("the reference model"));
    pyModel_->setToolTip(tr("MODULE:CALLABLE building your nn.Module, for example "
                            "my_model:build. Empty: StepScope's reference model.\n%1")
                             .arg(signature));
    pyBrowse_ = new QToolButton;
    pyBrowse_->setText(tr("…"));
    pyBrowse_->setToolTip(tr("Choose the model's .py file: its folder becomes the Python path"));
    auto* pyModelRow = new QWidget;
    auto* pyModelLayout = new QHBoxLayout(pyModelRow);
    pyModelLayout->setContentsMargins(0, 0, 0, 0);
    pyModelLayout->setSpacing(2);
    pyModelLayout->addWidget(pyModel_, 1);
    pyModelLayout->addWidget(pyBrowse_);
    connect(pyBrowse_, &QToolButton::clicked, this, [this] {
        const QString path =
            askOpenFile(this, tr("Python model file"), tr("Python (*.py)"), pyPathEdit()->text());
        if (!path.isEmpty()) {
            choosePythonFile(path);
        }
    });
    addField(form_, tr("Python model"), pyModelRow, "py-model");
}

// The app's own words where a row made from the table says more than the
// CLI's help: each item of the engine, compile-mode and optimizer boxes, the
// threads' default, the traces' tabs, the Python path.
void ConfigPanel::addItemTips() {
    auto tips = [](QComboBox* box, std::initializer_list<QString> texts) {
        int i = 0;
        for (const QString& tip : texts) {
            box->setItemData(i++, tip, Qt::ToolTipRole);
        }
    };
    tips(optimizerBox(),
         {tr("LibTorch's AdamW: a loop over the parameters, a few kernels each"),
          tr("The multi-tensor (foreach) ops, as PyTorch's default AdamW: few launches, and "
             "sqrt(v) of every parameter at once (one fp32 copy of the parameters)"),
          tr("ATen's fused AdamW kernel (at::_fused_adamw_); unavailable where ATen has none")});
    tips(engineBox(),
         {tr("StepScope's own LibTorch engine, in this process: every attention backend"),
          tr("PyTorch eager in a Python worker process: the reference model, or your own "
             "(Python model)"),
          tr("torch.compile of the model in the Python worker; the first call compiles and is "
             "timed apart from the steps")});
    tips(compileModeBox(),
         {tr("torch.compile's default: a balance of compile time and speed"),
          tr("CUDA graphs to cut Python and kernel-launch overhead per step"),
          tr("Tries many kernel configurations: the longest compile, the fastest steps")});
    static_cast<QSpinBox*>(fieldWidget("threads"))->setSpecialValueText(tr("default"));
    fieldWidget("ops")->setToolTip(
        tr("Record every operator's time per phase (Breakdown, Timeline)"));
    fieldWidget("memory")->setToolTip(tr("Record every allocation and free (Memory view)"));
    fieldWidget("kernels")->setToolTip(
        tr("Record every CUDA kernel through CUPTI (CUDA runs only)"));
    pyPathEdit()->setPlaceholderText(tr("the module's folder"));
    pyPathEdit()->setToolTip(tr("A folder put first on the worker's import path, where MODULE is"));
}

void ConfigPanel::disableCudaOnly() {
    QComboBox* device = deviceBox();
    auto* model = qobject_cast<QStandardItemModel*>(device->model());
    const int cuda = device->findText("cuda");
    model->item(cuda)->setEnabled(false);
    device->setItemData(cuda, tr("No CUDA device is available on this machine"), Qt::ToolTipRole);
    fieldWidget("tf32")->setEnabled(false);
    fieldWidget("tf32")->setToolTip(tr("TF32 needs a CUDA device"));
    fieldWidget("kernels")->setEnabled(false);
    fieldWidget("kernels")->setToolTip(tr("Kernel tracing needs a CUDA device"));
}

// Files a run was made with that the form has no field for (the CLI's
// --weights and --tokens): shown while they are part of the config.
void ConfigPanel::addCarriedRow() {
    carriedLabel_ = new QLabel;
    carriedLabel_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    auto* dropCarried = new QToolButton;
    dropCarried->setText(tr("Drop"));
    dropCarried->setToolTip(tr("Run with initial weights from the seed and random tokens"));
    connect(dropCarried, &QToolButton::clicked, this, [this] {
        carried_.weightsPath.clear();
        carried_.tokensPath.clear();
        showCarried();
        Q_EMIT changed();
    });
    carriedRow_ = new QWidget;
    auto* carriedLayout = new QHBoxLayout(carriedRow_);
    carriedLayout->setContentsMargins(0, 0, 0, 0);
    carriedLayout->addWidget(carriedLabel_, 1);
    carriedLayout->addWidget(dropCarried);
    form_->addRow(tr("Loads"), carriedRow_);
}

void ConfigPanel::addViewingBanner() {
    viewingLabel_ = new QLabel;
    viewingLabel_->setWordWrap(true);
    viewingLabel_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    viewingNote_ = new QLabel;
    viewingNote_->setWordWrap(true);
    viewingNote_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    viewingNote_->setStyleSheet("color: #555;");  // a fact about this machine, not an error
    viewingNote_->hide();
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
    viewingLayout->addWidget(viewingNote_);
    viewingLayout->addLayout(viewingButtons);
    viewing_->hide();
    connect(runAgain_, &QPushButton::clicked, this, &ConfigPanel::runAgainRequested);
    connect(editCopy_, &QPushButton::clicked, this, &ConfigPanel::editCopy);
}

void ConfigPanel::connectFields() {
    connect(preset_, &QComboBox::currentTextChanged, this, &ConfigPanel::presetChanged);
    for (auto* box :
         {dModel_, dFf_, layers_, heads_, vocab_, maxContext_, checkpointGroup_, lossChunk_}) {
        connect(box, &QSpinBox::valueChanged, this, &ConfigPanel::changed);
    }
    for (const auto& [name, widget] : fieldWidgets_) {
        if (auto* spin = qobject_cast<QSpinBox*>(widget)) {
            connect(spin, &QSpinBox::valueChanged, this, &ConfigPanel::changed);
        } else if (auto* check = qobject_cast<QCheckBox*>(widget)) {
            connect(check, &QCheckBox::toggled, this, &ConfigPanel::changed);
        } else if (auto* edit = qobject_cast<QLineEdit*>(widget)) {
            connect(edit, &QLineEdit::textChanged, this, &ConfigPanel::changed);
        } else if (auto* number = qobject_cast<QDoubleSpinBox*>(widget)) {
            // A number field (the bucket size): its changes re-check the config too.
            connect(number, &QDoubleSpinBox::valueChanged, this, &ConfigPanel::changed);
        } else if (auto* box = qobject_cast<QComboBox*>(widget); box && name != "engine") {
            connect(box, &QComboBox::currentIndexChanged, this, &ConfigPanel::changed);
        }
    }
    connect(engineBox(), &QComboBox::currentIndexChanged, this, [this] {
        engineChanged();
        Q_EMIT changed();
    });
    connect(attention_, &QComboBox::currentIndexChanged, this, &ConfigPanel::attentionChanged);
    connect(attention_, &QComboBox::currentIndexChanged, this, &ConfigPanel::changed);
    for (auto* box : {checkpoint_, loss_}) {
        connect(box, &QComboBox::currentIndexChanged, this, [this] {
            leversChanged();
            Q_EMIT changed();
        });
    }
    connect(checkpointGroup_, &QSpinBox::valueChanged, this, [this](int blocks) {
        checkpointGroup_->setSuffix(blocks == 1 ? tr(" block") : tr(" blocks"));
    });
    for (auto* edit : {pyModel_, pyAttention_}) {
        connect(edit, &QLineEdit::textChanged, this, &ConfigPanel::changed);
    }
    // The form scrolls where the screen is short: a wheel over a field it
    // passes scrolls the form, and changes a value only once the field has focus.
    for (QWidget* field : fields_->findChildren<QWidget*>()) {
        if (qobject_cast<QComboBox*>(field) || qobject_cast<QAbstractSpinBox*>(field)) {
            field->setFocusPolicy(Qt::StrongFocus);
            field->installEventFilter(this);
        }
    }
}

QWidget* ConfigPanel::fieldWidget(const std::string& name) const {
    const auto found = fieldWidgets_.find(name);
    return found == fieldWidgets_.end() ? nullptr : found->second;
}
QComboBox* ConfigPanel::deviceBox() const {
    return static_cast<QComboBox*>(fieldWidget("device"));
}
QComboBox* ConfigPanel::engineBox() const {
    return static_cast<QComboBox*>(fieldWidget("engine"));
}
QComboBox* ConfigPanel::compileModeBox() const {
    return static_cast<QComboBox*>(fieldWidget("compile-mode"));
}
QComboBox* ConfigPanel::optimizerBox() const {
    return static_cast<QComboBox*>(fieldWidget("optimizer"));
}
QLineEdit* ConfigPanel::pyPathEdit() const {
    return static_cast<QLineEdit*>(fieldWidget("py-path"));
}

Engine ConfigPanel::engine() const {
    return *parseEngine(engineBox()->currentText().toStdString());
}

bool ConfigPanel::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() == QEvent::Wheel && !static_cast<QWidget*>(watched)->hasFocus()) {
        // On to the scroll area around the form, if there is one. Sent, not
        // left to propagate: Qt propagates only the window system's wheels.
        for (QWidget* up = parentWidget(); up; up = up->parentWidget()) {
            if (auto* area = qobject_cast<QAbstractScrollArea*>(up)) {
                const auto* wheel = static_cast<QWheelEvent*>(event);
                QWheelEvent moved(area->viewport()->mapFromGlobal(wheel->globalPosition()),
                                  wheel->globalPosition(), wheel->pixelDelta(), wheel->angleDelta(),
                                  wheel->buttons(), wheel->modifiers(), wheel->phase(),
                                  wheel->inverted(), wheel->source());
                QCoreApplication::sendEvent(area->viewport(), &moved);
                break;
            }
        }
        return true;
    }
    return QWidget::eventFilter(watched, event);
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
    if (label.isEmpty()) {
        // A check box names itself: across the row, so that a narrow form,
        // its rows wrapped, still has its text's width for it.
        form->addRow(column);
    } else {
        form->addRow(label, column);
    }
    errorLabels_[name] = error;
    if (!label.isEmpty()) {
        fieldLabels_[name] = label;
    }
    return error;
}

// Messages from core/ name the command line's flags ("raise it with
// --max-ctx"); in the app they name the field instead ("“Max context”").
QString ConfigPanel::inPanelTerms(QString message) const {
    for (const auto& [name, label] : fieldLabels_) {
        QString flag = QString::fromStdString(name).replace('_', '-');
        if (flag == "max-context") {
            flag = "max-ctx";
        }
        message.replace(QRegularExpression("--" + QRegularExpression::escape(flag) + "(?![\\w-])"),
                        QString("“%1”").arg(label));
    }
    return message;
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

// The Python fields apply to the worker's engines, compile mode to
// torch.compile; the worker's model has fewer attention backends. A row made
// from the table is enabled where the field's engines say.
void ConfigPanel::engineChanged() {
    const Engine current = engine();
    const bool worker = runsInWorker(current);
    for (const auto& [name, widget] : fieldWidgets_) {
        const ConfigField& field = *findConfigField(name);
        if (field.engines != kAllEngines) {
            widget->setEnabled(field.takenBy(current));
        }
    }
    engineBox()->setToolTip(engineBox()->currentData(Qt::ToolTipRole).toString());
    // The worker runs the reference model as the course's code does: no levers.
    const QString leversTip =
        worker ? tr("The Python worker runs the model without checkpointing and with the full "
                    "loss; use the libtorch engine")
               : QString();
    for (QComboBox* box : {checkpoint_, loss_}) {
        box->setEnabled(!worker);
        box->setToolTip(leversTip);
    }
    // The worker steps torch.optim.AdamW's per-parameter loop.
    optimizerBox()->setToolTip(worker ? tr("The Python worker steps AdamW's per-parameter loop; "
                                           "use the libtorch engine for foreach or fused")
                                      : tr("The train step's AdamW: the same update, stepped as "
                                           "a loop, with multi-tensor ops or by a fused kernel"));
    leversChanged();
    for (QWidget* field :
         {static_cast<QWidget*>(pyModel_), static_cast<QWidget*>(pyBrowse_),
          static_cast<QWidget*>(pyAttention_), static_cast<QWidget*>(pyAttentionBrowse_)}) {
        field->setEnabled(worker);
    }
    // A backend the engine lacks stays chosen if it was, and validation says
    // so beside it; it cannot be newly picked.
    auto* model = qobject_cast<QStandardItemModel*>(attention_->model());
    for (int i = 0; i < attention_->count(); ++i) {
        const QString name = attention_->itemText(i);
        const bool python = name == kYourOwn || contains(pythonAttentionBackends(), name);
        const bool has = worker ? python || contains(workerAttentionBackends(), name) : !python;
        model->item(i)->setEnabled(has);
        if (name == kYourOwn && has) {
            continue;  // keeps its own tip
        }
        attention_->setItemData(
            i,
            has      ? QVariant()
            : worker ? QVariant(tr("The Python worker's model has naive, sdpa, flash-pytorch, "
                                   "flash-triton and your own; use the libtorch engine"))
                     : QVariant(tr("Runs in the Python worker: use the pytorch or "
                                   "pytorch-compile engine")),
            Qt::ToolTipRole);
    }
}

// The user's MODULE:NAME shows only while "your own…" is chosen.
void ConfigPanel::attentionChanged() {
    form_->setRowVisible(yourAttentionField_, attention_->currentText() == kYourOwn);
}

void ConfigPanel::browseAttentionFile() {
    const QString path = askOpenFile(this, tr("Your attention's Python file"), tr("Python (*.py)"),
                                     pyPathEdit()->text());
    if (!path.isEmpty()) {
        chooseAttentionFile(path);
    }
}

void ConfigPanel::chooseAttentionFile(const QString& path) {
    const QFileInfo info(path);
    QString source;
    if (QFile file(path); file.open(QIODevice::ReadOnly)) {
        source = QString::fromUtf8(file.read(1 << 20));
    }
    const QString module = info.completeBaseName();
    const QString name = guessAttention(source);
    attention_->setCurrentText(kYourOwn);
    pyPathEdit()->setText(QDir::toNativeSeparators(info.absolutePath()));
    pyAttention_->setText(module + ":" + name);
    pyAttention_->setFocus();
    if (name.isEmpty()) {
        pyAttention_->setCursorPosition(int(pyAttention_->text().size()));
    } else {
        pyAttention_->setSelection(int(module.size()) + 1, int(name.size()));
    }
}

// A group size only for groups, a chunk size only for the chunked loss.
// From the engine, not from isEnabled(): a run shown read-only disables
// the whole form, and its fields must come back as they were.
void ConfigPanel::leversChanged() {
    const bool libtorch = engine() == Engine::LibTorch;
    checkpointGroup_->setEnabled(libtorch && checkpoint_->currentIndex() == 1);
    lossChunk_->setEnabled(libtorch && loss_->currentText() == "chunked");
}

void ConfigPanel::showCarried() {
    QStringList files, paths;
    if (!carried_.weightsPath.empty()) {
        files << tr("weights %1").arg(QFileInfo(text(carried_.weightsPath)).fileName());
        paths << tr("weights: %1").arg(text(carried_.weightsPath));
    }
    if (!carried_.tokensPath.empty()) {
        files << tr("tokens %1").arg(QFileInfo(text(carried_.tokensPath)).fileName());
        paths << tr("tokens: %1").arg(text(carried_.tokensPath));
    }
    carriedLabel_->setText(files.join(" · "));
    carriedLabel_->setToolTip(paths.join('\n'));
    form_->setRowVisible(carriedRow_, !files.isEmpty());
}

void ConfigPanel::choosePythonFile(const QString& path) {
    const QFileInfo info(path);
    QString source;
    if (QFile file(path); file.open(QIODevice::ReadOnly)) {
        source = QString::fromUtf8(file.read(1 << 20));
    }
    const QString module = info.completeBaseName();
    const QString callable = guessCallable(source);
    pyPathEdit()->setText(QDir::toNativeSeparators(info.absolutePath()));
    pyModel_->setText(module + ":" + callable);
    pyModel_->setFocus();
    if (callable.isEmpty()) {
        pyModel_->setCursorPosition(int(pyModel_->text().size()));
    } else {
        pyModel_->setSelection(int(module.size()) + 1, int(callable.size()));
    }
}

// Each row made from the table whose field the engine takes; the others keep
// what they showed for when their engine returns, but are not part of the config.
void ConfigPanel::readFieldRows(RunConfig& config) const {
    for (const auto& [name, widget] : fieldWidgets_) {
        const ConfigField& field = *findConfigField(name);
        if (field.takenBy(config.engine)) {
            field.set(config, valueOf(field, widget));
        }
    }
}

void ConfigPanel::showFieldRows(const RunConfig& config) {
    for (const auto& [name, widget] : fieldWidgets_) {
        showValue(widget, findConfigField(name)->get(config));
    }
}

RunConfig ConfigPanel::config() const {
    RunConfig config;
    config.weightsPath = carried_.weightsPath;
    config.tokensPath = carried_.tokensPath;
    config.python = carried_.python;
    config.engine = engine();
    readFieldRows(config);
    // The hand-made rows, each read where its field's engines take it.
    const auto taken = [&config](const char* field) {
        return findConfigField(field)->takenBy(config.engine);
    };
    if (taken("py-model")) {
        config.pyModel = pyModel_->text().trimmed().toStdString();
    }
    if (taken("activation-checkpoint")) {
        config.activationCheckpoint.kind = kCheckpointKinds[checkpoint_->currentIndex()];
        if (config.activationCheckpoint.kind == CheckpointStrategy::Kind::Groups) {
            config.activationCheckpoint.groupSize = checkpointGroup_->value();
        }
    }
    if (taken("loss")) {
        config.loss = *parseLossKind(loss_->currentText().toStdString());
        config.lossChunkTokens = lossChunk_->value();  // its row is the loss's
    }
    if (const auto preset = findPreset(preset_->currentText().toStdString())) {
        config.model = *preset;
    } else {
        config.model.dModel = dModel_->value();
        config.model.dFf = dFf_->value();
        config.model.layers = layers_->value();
        config.model.heads = heads_->value();
        config.model.name = customModelName(config.model);
    }
    config.model.vocabSize = vocab_->value();
    config.model.maxContext = maxContext_->value();
    config.attention = attention_->currentText().toStdString();
    if (attention_->currentText() == kYourOwn) {
        // As the CLI's --py-attention: the run's attention is named after NAME.
        config.pyAttention = pyAttention_->text().trimmed().toStdString();
        if (isPythonTarget(config.pyAttention)) {
            config.attention = pythonTargetName(config.pyAttention);
        }
    }
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
        showFieldRows(config);
        const int attention = attention_->findText(
            config.pyAttention.empty() ? text(config.attention) : QString(kYourOwn));
        attention_->setCurrentIndex(attention >= 0 ? attention : 0);
        pyAttention_->setText(text(config.pyAttention));
        attentionChanged();
        checkpoint_->setCurrentIndex(
            int(std::find(std::begin(kCheckpointKinds), std::end(kCheckpointKinds),
                          config.activationCheckpoint.kind) -
                std::begin(kCheckpointKinds)));
        if (config.activationCheckpoint.kind == CheckpointStrategy::Kind::Groups) {
            checkpointGroup_->setValue(int(config.activationCheckpoint.groupSize));
        }
        loss_->setCurrentText(text(toString(config.loss)));
        lossChunk_->setValue(int(config.lossChunkTokens));
        pyModel_->setText(text(config.pyModel));
        engineChanged();
        carried_ = config;
        showCarried();
    }
    Q_EMIT changed();
}

void ConfigPanel::showRunConfig(const RunConfig& config, const QString& who, bool fromFile) {
    readOnly_ = true;  // before its values: they are checked as a past run's
    setConfig(config);
    runAgain_->show();
    editCopy_->setText(tr("Edit a copy"));
    editCopy_->setToolTip(tr("Make the form editable, starting from this run's values"));
    // The container, not each field, is disabled: fields keep their own
    // enabled state (preset dims, CUDA-only options) for when editing resumes.
    fields_->setEnabled(false);
    fields_->show();
    estimate_->show();
    fileCode_ = fromFile ? codeNamedBy(config) : std::vector<NamedCode>();
    QString text = tr("Configuration of run %1 (read-only)").arg(who);
    if (!fileCode_.empty()) {
        text += "\n" + tr("Its file names Python code to import: %1. Running it asks first.")
                           .arg(QString::fromStdString(describeNamedCode(fileCode_)));
    }
    viewingLabel_->setTextFormat(Qt::PlainText);
    viewingLabel_->setText(text);
    viewing_->show();
    revealBanner();
}

std::vector<NamedCode> ConfigPanel::codeFromFile() const {
    std::vector<NamedCode> fromFile;
    for (const NamedCode& item : codeNamedBy(config())) {
        if (std::any_of(fileCode_.begin(), fileCode_.end(), [&](const NamedCode& held) {
                return held.field == item.field && held.value == item.value;
            })) {
            fromFile.push_back(item);
        }
    }
    return fromFile;
}

void ConfigPanel::showNoConfig(const QString& who, const QList<QPair<QString, QString>>& facts) {
    readOnly_ = true;
    fields_->setEnabled(false);
    // Not the user's form under the recording's name: its values would read
    // as the recording's configuration.
    fields_->hide();
    estimate_->hide();
    setViewingNote(QString());
    runAgain_->hide();
    editCopy_->setText(tr("Configure a new run"));
    editCopy_->setToolTip(tr("Show the form again, with the values it had"));
    QString rows;
    for (const auto& [name, value] : facts) {
        rows += QString("<tr><td style='padding-right: 8px'>%1</td><td>%2</td></tr>")
                    .arg(name.toHtmlEscaped(), value.toHtmlEscaped());
    }
    viewingLabel_->setTextFormat(Qt::RichText);
    viewingLabel_->setText(
        tr("<p><b>%1</b> was recorded by PyTorch, not run by StepScope: it has no configuration "
           "of ours to show or run again.</p>")
            .arg(who.toHtmlEscaped()) +
        "<table>" + rows + "</table>");
    viewing_->show();
    revealBanner();
}

void ConfigPanel::revealBanner() {
    for (QWidget* up = parentWidget(); up; up = up->parentWidget()) {
        if (auto* scroll = qobject_cast<QScrollArea*>(up)) {
            scroll->ensureWidgetVisible(viewing_, 0, 0);
            return;
        }
    }
}

QString ConfigPanel::viewingText() const {
    return viewingLabel_->text();
}

void ConfigPanel::setViewingNote(const QString& note) {
    viewingNote_->setText(note);
    viewingNote_->setVisible(!note.isEmpty());
    // What cannot run here is not offered to run again (Edit still is).
    runAgain_->setEnabled(note.isEmpty());
    runAgain_->setToolTip(note);
}

QString ConfigPanel::viewingNote() const {
    return viewingNote_->text();
}

bool ConfigPanel::formShown() const {
    return !fields_->isHidden();
}

void ConfigPanel::editCopy() {
    readOnly_ = false;
    fields_->setEnabled(true);
    fields_->show();
    estimate_->show();
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
    // "your own…" with nothing named yet is not a backend the engine lacks:
    // the attention is asked for beside its own field.
    const bool yourOwnUnnamed =
        attention_->currentText() == kYourOwn && pyAttention_->text().trimmed().isEmpty();
    for (const auto& error : errors) {
        const bool unnamed = yourOwnUnnamed && error.field == "attention";
        auto found = errorLabels_.find(unnamed ? std::string("py-attention") : error.field);
        QLabel* label = found != errorLabels_.end() ? found->second : errorLabels_.at("model");
        const QString text = unnamed
                                 ? tr("name your attention: MODULE:NAME, or its .py file with …")
                                 : inPanelTerms(QString::fromStdString(error.message));
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
