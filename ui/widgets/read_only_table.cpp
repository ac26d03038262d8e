#include "widgets/read_only_table.h"

#include <QHeaderView>
#include <QTableView>

namespace stepscope::ui {

QTableView* readOnlyTable(QAbstractItemModel* model) {
    auto* view = new QTableView;
    view->setModel(model);
    view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    view->horizontalHeader()->setStretchLastSection(true);
    return view;
}

}  // namespace stepscope::ui
