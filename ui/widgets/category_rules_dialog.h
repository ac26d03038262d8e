#pragma once

#include <QDialog>

#include <vector>

#include "analysis/snapshot_stacks.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QTableWidget;

namespace stepscope::ui {

// The user's own category rules for PyTorch memory snapshots, a row each,
// in the order they are tried: whether the regex searches each frame's
// function name, its file or either, the regex, and the category it names. A row that
// cannot be kept (a regex std::regex refuses, an empty one) says why beside
// it, and Save stays off until none does. The caller keeps what rules()
// gives on accept (MainWindow: the settings, the open snapshots).
class CategoryRulesDialog final : public QDialog {
    Q_OBJECT

public:
    enum Column { Target, Pattern, Category, Error, ColumnCount };

    explicit CategoryRulesDialog(const std::vector<CategoryRule>& rules, QWidget* parent = nullptr);

    std::vector<CategoryRule> rules() const;  // the rows, in order
    void setRules(const std::vector<CategoryRule>& rules);
    int rowCount() const;
    void addRule(const CategoryRule& rule);  // a row at the end
    void removeRule(int row);
    void moveRule(int row, int by);  // -1: up, +1: down
    // What a row's fields hold, as a user would change them.
    QComboBox* targetBox(int row) const;
    QLineEdit* patternEdit(int row) const;
    QComboBox* categoryBox(int row) const;
    QString errorText(int row) const;  // empty when the row can be kept
    QPushButton* saveButton() const { return save_; }
    QTableWidget* table() const { return table_; }

private:
    void checkRows();
    int selectedRow() const;

    QTableWidget* table_;
    QPushButton* save_;
    QLabel* summary_;
};

}  // namespace stepscope::ui
