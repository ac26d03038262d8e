#pragma once

// ui/pages: the configuration panel (here) and the tabs that are not views
// of one run: the sweep, attention, precision and welcome pages, the example
// runs. Includes ui/views, ui/widgets, ui/models and core/.

#include <QList>
#include <QPair>
#include <QWidget>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/config_field.h"
#include "config/run_config.h"

class QCheckBox;
class QComboBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QToolButton;

namespace stepscope::ui {

// The run configuration form: a row for each field of the table
// (config/config_field.h) that has a label, its widget from the field's type
// (a combo box for a choice, a spin box for a range, a check box for a
// switch, a line edit for a name or path); the model, the attention, the
// memory levers and the Python model have rows made by hand. Each field has
// an error label beside it that shows the engine's own validation message
// for that field. It either edits the next run or shows a selected run's
// configuration read-only.
class ConfigPanel final : public QWidget {
    Q_OBJECT

public:
    explicit ConfigPanel(bool cudaAvailable, QWidget* parent = nullptr);

    RunConfig config() const;
    void setConfig(const RunConfig& config);

    // Shows each error next to its field (clearing the others); returns
    // whether any was shown.
    bool showErrors(const std::vector<ConfigError>& errors);
    QString errorText(const QString& field) const;  // what a field's label says now
    // `message` with the command line's flags ("--max-ctx") named as this
    // panel's fields ("“Max context”").
    QString inPanelTerms(QString message) const;

    // Shows the configuration a run was made with, read-only, under a line
    // naming the run (`who`, e.g. "#3 nano · ctx 128 · …"), with "Run again
    // with this configuration" and "Edit a copy". `fromFile`: the run was
    // read from a file, not made in this session: the code its config names
    // (a Python model, its folder) is the file's, said under the line, and
    // codeFromFile() until the user types other values or trusts it.
    void showRunConfig(const RunConfig& config, const QString& who, bool fromFile = true);
    // The code the config now shown names that a file gave it (codeNamedBy()
    // values as a run read from a file had them): what may run only with the
    // user's say-so. Empty when there is none.
    std::vector<NamedCode> codeFromFile() const;
    // The user said yes to it: it runs from now on without asking.
    void trustCodeFromFile() { fileCode_.clear(); }
    // A recording StepScope did not make (a PyTorch memory snapshot or
    // profiler trace) has no configuration: what it is and holds (`facts`,
    // RunDocument::recordingFacts) in place of the form, which keeps the
    // user's values, hidden, for "Configure a new run".
    void showNoConfig(const QString& who, const QList<QPair<QString, QString>>& facts);
    // Why the shown run cannot run here, under the read-only banner ("it ran
    // on a CUDA device; this machine has none"), Run again disabled while it
    // stands; empty hides it.
    void setViewingNote(const QString& note);
    QString viewingNote() const;
    // Makes the form editable again, keeping the values it shows.
    void editCopy();
    bool isReadOnly() const { return readOnly_; }
    // The memory estimate of the config shown, below the form; `fits` colours it.
    void showEstimate(const QString& text, const QString& details, std::optional<bool> fits);
    QString estimateText() const;
    // Fills the Python model from a model file, as its "…" button does after
    // the file chooser: the file's folder becomes the Python path and its
    // module the model's, with a guess at the callable selected to be typed
    // over (the first top-level def taking vocab_size, else the first def or
    // class), or the cursor after the colon when there is nothing to guess.
    void choosePythonFile(const QString& path);
    // Makes the attention the user's own from a .py file, as "your own…" does
    // after the file chooser: its folder becomes the Python path and MODULE:NAME
    // names its first autograd Function (else the first function taking q),
    // selected to be typed over.
    void chooseAttentionFile(const QString& path);
    QPushButton* runAgainButton() const { return runAgain_; }
    QString viewingText() const;
    // Whether the form's rows are shown (not while a recording of PyTorch's is).
    bool formShown() const;
    QPushButton* editCopyButton() const { return editCopy_; }

    // The widget of a field's row made from its declaration, by the field's
    // name; nullptr for a field without one.
    QWidget* fieldWidget(const std::string& name) const;
    // Named fields, for tests and the main window.
    QComboBox* presetBox() const { return preset_; }
    QSpinBox* headsBox() const { return heads_; }
    QComboBox* deviceBox() const;
    QComboBox* engineBox() const;
    QComboBox* compileModeBox() const;
    QComboBox* attentionBox() const { return attention_; }
    QComboBox* checkpointBox() const { return checkpoint_; }
    QSpinBox* checkpointGroupBox() const { return checkpointGroup_; }
    QComboBox* lossBox() const { return loss_; }
    QSpinBox* lossChunkBox() const { return lossChunk_; }
    QComboBox* optimizerBox() const;
    QLineEdit* pyModelEdit() const { return pyModel_; }
    QLineEdit* pyPathEdit() const;
    QToolButton* pyModelBrowseButton() const { return pyBrowse_; }
    QLineEdit* pyAttentionEdit() const { return pyAttention_; }
    // The row of the user's MODULE:NAME, shown while "your own…" is chosen.
    QWidget* yourAttentionField() const { return yourAttentionField_; }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

Q_SIGNALS:
    void changed();
    void runAgainRequested();

private:
    // The form, in named steps: the rows in the table's order, their tips,
    // what needs CUDA, the row of carried files, the banner over a shown run.
    void addRows();
    void addFieldRow(const ConfigField& field);
    void addModelRows();
    void addAttentionRows();
    void addCheckpointRow();
    void addLossRow();
    void addPythonModelRow();
    void addItemTips();
    void disableCudaOnly();
    void addCarriedRow();
    void addViewingBanner();
    // The banner in view, wherever the panel's scroll area was scrolled to.
    void revealBanner();
    void connectFields();
    // The rows made from a declaration: their values into and out of a config.
    void readFieldRows(RunConfig& config) const;
    void showFieldRows(const RunConfig& config);
    Engine engine() const;

    void presetChanged();
    void engineChanged();
    void attentionChanged();
    void browseAttentionFile();
    void leversChanged();
    void showCarried();
    QLabel* addField(QFormLayout* form, const QString& label, QWidget* field,
                     const std::string& name);

    QWidget* fields_;
    QWidget* viewing_;
    QLabel* viewingLabel_;
    QLabel* viewingNote_;
    QLabel* estimate_;
    QPushButton *runAgain_, *editCopy_;
    bool readOnly_ = false;
    // The rows made from a field's declaration, by field name.
    std::map<std::string, QWidget*> fieldWidgets_;
    QComboBox* preset_;
    QSpinBox *dModel_, *dFf_, *layers_, *heads_, *vocab_, *maxContext_;
    QComboBox* attention_;
    // The memory levers: activation checkpointing (off, groups of K blocks,
    // nested) and the loss (full or chunked, tokens per chunk).
    QComboBox *checkpoint_, *loss_;
    QSpinBox *checkpointGroup_, *lossChunk_;
    QLineEdit* pyModel_;
    QToolButton* pyBrowse_;
    QLineEdit* pyAttention_;  // the user's MODULE:NAME, with "your own…"
    QToolButton* pyAttentionBrowse_;
    QWidget *pyAttentionRow_, *yourAttentionField_;
    // What the form has no field for, kept from setConfig so that a run shown
    // here runs again as it was: its weights and tokens files (shown, with a
    // button to drop them) and the machine's Python.
    RunConfig carried_;
    std::vector<NamedCode> fileCode_;  // what a run read from a file named (codeFromFile())
    QFormLayout* form_;
    QWidget* carriedRow_;
    QLabel* carriedLabel_;
    std::map<std::string, QLabel*> errorLabels_;
    std::map<std::string, QString> fieldLabels_;  // the row's label, by field name
};

}  // namespace stepscope::ui
