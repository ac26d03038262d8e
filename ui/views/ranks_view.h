#pragma once

#include <QString>
#include <memory>
#include <optional>
#include <vector>

#include "models/rank_timeline.h"
#include "widgets/run_view.h"

class QCheckBox;
class QCPItemRect;
class QCustomPlot;
class QLabel;
class QStandardItemModel;
class QTableView;

namespace stepscope::ui {

class RankBars;

// A distributed run rank by rank: a row per rank on one time axis (each
// step aligned to rank 0's, or on the ranks' own clock), its phases, its
// collectives and, in red, where its communication ran exposed. Hover names
// the collective (its bytes, transfer and this rank's wait) and outlines it
// on every rank. Under it a row per rank: its figures per measured step.
// Wheel zooms and drag pans along time, live as the ranks' steps arrive.
class RanksView final : public RunView {
    Q_OBJECT

public:
    enum Column {
        RankColumn,
        StepColumn,
        ComputeColumn,
        CommunicationColumn,
        ExposedColumn,
        OverlapColumn,
        WaitColumn,
        CollectivesColumn,
        BytesColumn,
        PeakColumn,
        ColumnCount
    };

    explicit RanksView(QWidget* parent = nullptr);
    ~RanksView() override;
    void showRun(const RunDocument* document) override;
    QList<ExportTarget> exportTargets() override;

    QCustomPlot* plot() const { return plot_; }
    QStandardItemModel* ranksModel() const { return table_; }
    const RankTimeline& timeline() const { return timeline_; }
    QString captionText() const;
    QCheckBox* alignBox() const { return align_; }
    // Hovering at a point of the chart (widget pixels): what the tooltip
    // says (empty over nothing) and the outlines drawn, one per rank.
    QString hoverAt(const QPointF& pixel);
    int highlighted() const { return int(outlines_.size()); }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void draw();
    const DistributedRun* shownRun();
    void addLegend();
    QString caption(const DistributedRun& run) const;
    void drawStepMarks();
    void fillTable(const DistributedRun& run);
    void clearHighlight();
    QString describe(RankTimeline::Place place) const;
    QString describePhase(int lane, double ms) const;

    QLabel* caption_;
    QCheckBox* align_;
    QCustomPlot* plot_;
    QStandardItemModel* table_;
    QTableView* tableView_;
    RankTimeline timeline_;
    const RunDocument* document_ = nullptr;
    // A profiler trace's ranks as a run's (distributedRunOfTrace), made once
    // for the recording `traceOf_` names.
    std::optional<DistributedRun> traceRun_;
    const void* traceOf_ = nullptr;
    std::vector<QCPItemRect*> outlines_;
    std::pair<double, double> fullRange_;  // the whole run's time, as last drawn
    int shownId_ = -1;
    size_t shownSteps_ = 0;
};

}  // namespace stepscope::ui
