#pragma once

class QAbstractItemModel;
class QTableView;

namespace stepscope::ui {

// A table view of a model the user reads but does not edit; its last column
// takes the remaining width.
QTableView* readOnlyTable(QAbstractItemModel* model);

}  // namespace stepscope::ui
