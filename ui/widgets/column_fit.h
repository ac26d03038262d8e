#pragma once

#include <QList>
#include <QObject>
#include <QTimer>

#include <vector>

class QAbstractItemModel;
class QTableView;

namespace stepscope::ui {

// Columns as wide as their contents and header, kept so as the table is
// resized and its rows change. Room to spare goes to the `elastic` columns
// (names, paths: text that elides well), or to every column where there is
// none. Short of room, the elastic columns give way first, elided, down to
// `elasticMinimum` px each (their whole text on hover is the model's
// tooltip); past that the figures keep their width and the table scrolls.
// The table owns it; call fit() after hiding or showing a column.
//
// Each column's natural width is measured once per change of the cells (500
// rows take some 13 ms to measure), at the event loop's next turn, and kept:
// the several resizes of a table being laid out, or a window being dragged
// wider, only share out the room.
class ColumnFit final : public QObject {
public:
    ColumnFit(QTableView* table, const QList<int>& elastic = {}, int elasticMinimum = 90);
    // Measures again, then fits, now.
    void fit();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void watch(QAbstractItemModel* model);
    void measure();  // every shown column's natural width
    void place();    // the natural widths fitted to the viewport's
    bool isElastic(int column) const { return elastic_.contains(column); }
    int lastTaker(bool elasticOnly) const;

    QTableView* table_;
    QObject* viewport_ = nullptr;  // the table's, watched for its size
    QList<int> elastic_;
    int elasticMinimum_;
    QTimer refit_;
    // Per column, as wide as its contents and header; empty until measured
    // since the rows last changed, kUnmeasured for a column hidden then.
    std::vector<int> natural_;
    static constexpr int kUnmeasured = -1;
};

}  // namespace stepscope::ui
