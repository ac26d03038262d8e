#pragma once

#include <QWidget>

#include <cstdint>
#include <vector>

#include "models/memory_run_data.h"

class QCPBars;
class QCustomPlot;
class QLabel;
class QStandardItemModel;
class QTableView;

namespace stepscope::ui {

class MemoryIndex;

// What each Transformer block keeps for backward, from a run's memory
// trace: a bar per block (saved bytes beside the gradients its backward
// makes), and the tensors of the block picked with a click, with the ops
// that made them. Part of the Memory tab, which highlights the picked
// block's tensors on its timeline.
class SavedView final : public QWidget {
    Q_OBJECT

public:
    explicit SavedView(QWidget* parent = nullptr);

    // `index` holds the same run's allocations; the picked block's tensors
    // are named by their place in it. Both nullptr: nothing to show.
    // `prepared`: savedBlocks(*run, *index), worked out before (else here).
    void showRun(const RunResult* run, const MemoryIndex* index,
                 const SavedBlocks* prepared = nullptr);
    const SavedForBackward& saved() const { return saved_; }
    QString caption() const;  // the figures' source, or why there are none

    void selectBlock(int block);  // as a click on its bar; -1 picks none
    int selectedBlock() const { return selected_; }
    // The block whose bar is under a point of the chart (widget pixels), or -1.
    int blockAt(const QPointF& position) const;

    QCustomPlot* plot() const { return plot_; }
    QCPBars* savedBars() const { return savedBars_; }
    QStandardItemModel* blocksModel() const { return blocks_; }    // a row per block
    QStandardItemModel* tensorsModel() const { return tensors_; }  // the picked block's

Q_SIGNALS:
    // The picked block's saved allocations, as places in the index (empty: none).
    void blockPicked(const std::vector<uint32_t>& allocations);

private:
    void fillBlocks();
    void fillTensors();

    const MemoryIndex* index_ = nullptr;
    SavedForBackward saved_;
    std::vector<std::vector<uint32_t>> members_;  // per block, into the index
    int selected_ = -1;

    QLabel* caption_;
    QLabel* picked_;
    QCustomPlot* plot_;
    QCPBars* savedBars_;
    QCPBars* gradientBars_;
    QStandardItemModel* blocks_;
    QStandardItemModel* tensors_;
    QTableView* tensorTable_;
};

}  // namespace stepscope::ui
