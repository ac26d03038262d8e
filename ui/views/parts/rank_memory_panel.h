#pragma once

#include <QWidget>

class QComboBox;
class QCustomPlot;
class QLabel;
class QStandardItemModel;

namespace stepscope::ui {

struct RunDocument;

// The Memory tab of a distributed run: each rank's memory at the marks the
// course reads (after init, before the optimizer step, after it) and its
// peak, a bar per rank (or the one chosen in the rank box) at each mark;
// beside it the bytes by category after the last step. Hidden for a run on
// one process.
class RankMemoryPanel final : public QWidget {
    Q_OBJECT

public:
    explicit RankMemoryPanel(QWidget* parent = nullptr);
    // True when the document is a distributed run whose ranks it now shows.
    bool showRun(const RunDocument* document);

    QComboBox* rankBox() const { return rankBox_; }
    QCustomPlot* plot() const { return plot_; }
    QStandardItemModel* categoriesModel() const { return categories_; }
    int barsShown() const;  // one per rank shown

private:
    void draw();

    QLabel* caption_;
    QComboBox* rankBox_;
    QCustomPlot* plot_;
    QStandardItemModel* categories_;
    const RunDocument* document_ = nullptr;
};

}  // namespace stepscope::ui
