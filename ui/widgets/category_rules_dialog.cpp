#include "widgets/category_rules_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

#include "models/category_rules.h"

namespace stepscope::ui {

namespace {

// What a rule searches, in the order of the row's box.
constexpr RuleTarget kTargets[] = {RuleTarget::Name, RuleTarget::File, RuleTarget::NameOrFile};

}  // namespace

CategoryRulesDialog::CategoryRulesDialog(const std::vector<CategoryRule>& rules, QWidget* parent)
    : QDialog(parent) {
    setWindowTitle(tr("Memory category rules"));
    auto* intro = new QLabel(
        tr("Your own categories for PyTorch memory snapshots. Each rule's regex (ECMAScript, "
           "searched anywhere in the text) is tried on every frame of an allocation's stack, "
           "on the function's name or on its file; the first rule that matches names the "
           "category. Your rules come first, in this order, then StepScope's own (Mosaic's: "
           "forward → activations, parameters, backward → gradients, optimizer). On Save they "
           "apply to the snapshots open now and to those opened later."));
    intro->setWordWrap(true);
    table_ = new QTableWidget(0, ColumnCount);
    table_->setHorizontalHeaderLabels({tr("searches"), tr("regex"), tr("category"), tr("")});
    table_->verticalHeader()->hide();
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    // The boxes are cell widgets, which ResizeToContents does not measure:
    // each column as wide as its box with its longest choice.
    QComboBox widest;
    widest.addItems(ruleCategoryNames() + QStringList{tr("function name"), tr("name or file")});
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    table_->setColumnWidth(Target, widest.sizeHint().width());
    table_->setColumnWidth(Category, widest.sizeHint().width());
    table_->horizontalHeader()->setSectionResizeMode(Pattern, QHeaderView::Stretch);
    table_->horizontalHeader()->setSectionResizeMode(Error, QHeaderView::Stretch);
    auto* add = new QPushButton(tr("Add rule"));
    auto* remove = new QPushButton(tr("Remove"));
    auto* up = new QPushButton(tr("Up"));
    auto* down = new QPushButton(tr("Down"));
    auto* rowButtons = new QHBoxLayout;
    for (QPushButton* button : {add, remove, up, down}) {
        rowButtons->addWidget(button);
    }
    rowButtons->addStretch(1);
    summary_ = new QLabel;
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Save | QDialogButtonBox::Cancel);
    save_ = buttons->button(QDialogButtonBox::Save);
    save_->setText(tr("Save and apply"));
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(intro);
    layout->addWidget(table_, 1);
    layout->addLayout(rowButtons);
    layout->addWidget(summary_);
    layout->addWidget(buttons);
    resize(860, 360);

    connect(add, &QPushButton::clicked, this, [this] {
        addRule({"activations", "", RuleTarget::Name});
        patternEdit(rowCount() - 1)->setFocus();
    });
    connect(remove, &QPushButton::clicked, this, [this] { removeRule(selectedRow()); });
    connect(up, &QPushButton::clicked, this, [this] { moveRule(selectedRow(), -1); });
    connect(down, &QPushButton::clicked, this, [this] { moveRule(selectedRow(), +1); });
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    setRules(rules);
}

int CategoryRulesDialog::rowCount() const {
    return table_->rowCount();
}

int CategoryRulesDialog::selectedRow() const {
    const QModelIndexList rows = table_->selectionModel()->selectedRows();
    return rows.isEmpty() ? table_->currentRow() : rows.front().row();
}

QComboBox* CategoryRulesDialog::targetBox(int row) const {
    return qobject_cast<QComboBox*>(table_->cellWidget(row, Target));
}

QLineEdit* CategoryRulesDialog::patternEdit(int row) const {
    return qobject_cast<QLineEdit*>(table_->cellWidget(row, Pattern));
}

QComboBox* CategoryRulesDialog::categoryBox(int row) const {
    return qobject_cast<QComboBox*>(table_->cellWidget(row, Category));
}

QString CategoryRulesDialog::errorText(int row) const {
    const auto* label = qobject_cast<QLabel*>(table_->cellWidget(row, Error));
    return label ? label->text() : QString();
}

void CategoryRulesDialog::addRule(const CategoryRule& rule) {
    const int row = table_->rowCount();
    table_->insertRow(row);
    auto* target = new QComboBox;
    target->addItems({tr("function name"), tr("file"), tr("name or file")});
    target->setCurrentIndex(int(std::find(std::begin(kTargets), std::end(kTargets), rule.target) -
                                std::begin(kTargets)));
    auto* pattern = new QLineEdit(QString::fromStdString(rule.pattern));
    pattern->setPlaceholderText(tr("e.g. kv_cache|attention"));
    pattern->setMaxLength(256);  // ruleRegexError's limit: a pasted wall of text stops here
    auto* category = new QComboBox;
    category->addItems(ruleCategoryNames());
    const int known = category->findText(QString::fromStdString(rule.category));
    category->setCurrentIndex(std::max(known, 0));
    auto* error = new QLabel;
    error->setStyleSheet("color: #b00020");
    error->setAutoFillBackground(true);  // readable on a selected row too
    error->setWordWrap(true);
    table_->setCellWidget(row, Target, target);
    table_->setCellWidget(row, Pattern, pattern);
    table_->setCellWidget(row, Category, category);
    table_->setCellWidget(row, Error, error);
    connect(pattern, &QLineEdit::textChanged, this, &CategoryRulesDialog::checkRows);
    connect(category, &QComboBox::currentIndexChanged, this, &CategoryRulesDialog::checkRows);
    checkRows();
}

void CategoryRulesDialog::removeRule(int row) {
    if (row >= 0 && row < rowCount()) {
        table_->removeRow(row);
        checkRows();
    }
}

void CategoryRulesDialog::moveRule(int row, int by) {
    const int to = row + by;
    if (row < 0 || row >= rowCount() || to < 0 || to >= rowCount()) {
        return;
    }
    std::vector<CategoryRule> all = rules();
    std::swap(all[size_t(row)], all[size_t(to)]);
    setRules(all);
    table_->selectRow(to);
}

void CategoryRulesDialog::setRules(const std::vector<CategoryRule>& rules) {
    table_->setRowCount(0);
    for (const CategoryRule& rule : rules) {
        addRule(rule);
    }
    checkRows();
}

std::vector<CategoryRule> CategoryRulesDialog::rules() const {
    std::vector<CategoryRule> out;
    for (int row = 0; row < rowCount(); ++row) {
        out.push_back({categoryBox(row)->currentText().toStdString(),
                       patternEdit(row)->text().toStdString(),
                       kTargets[std::clamp(targetBox(row)->currentIndex(), 0,
                                           int(std::size(kTargets)) - 1)]});
    }
    return out;
}

void CategoryRulesDialog::checkRows() {
    const std::vector<CategoryRule> all = rules();
    int refused = 0;
    for (int row = 0; row < rowCount(); ++row) {
        const QString error = categoryRuleError(all[size_t(row)]);
        auto* label = qobject_cast<QLabel*>(table_->cellWidget(row, Error));
        label->setText(error);
        label->setToolTip(error);
        refused += error.isEmpty() ? 0 : 1;
    }
    table_->resizeRowsToContents();
    save_->setEnabled(refused == 0);
    summary_->setText(
        refused == 0 ? tr("%n rule(s).", "", rowCount())
                     : tr("%n rule(s) cannot be kept as written: see beside them.", "", refused));
}

}  // namespace stepscope::ui
