#pragma once

#include <QStringList>
#include <vector>

#include "profile/step_timeline.h"
#include "widgets/run_view.h"

class QCustomPlot;
class QLabel;

namespace stepscope::ui {

// One traced step on a time axis: kernels, memcpys and memsets on their
// streams and operators on their host threads, under bands for the phases;
// a legend above the chart names each colour (categories, phase bands).
// Zoom and pan along time (wheel, drag); hovering names what is under the
// cursor. The visible time range is shared with other views through
// visibleRangeChanged / setVisibleRange.
class KernelTimelineView final : public RunView {
    Q_OBJECT

public:
    static constexpr int kMaxSpans = 50000;  // beyond this, the longest are drawn

    explicit KernelTimelineView(QWidget* parent = nullptr);
    QString title() const override { return tr("Timeline"); }
    void showRun(const RunDocument* document) override;
    QList<ExportTarget> exportTargets() override;

    QStringList tracks() const { return tracks_; }  // top to bottom
    int drawnSpans() const { return int(drawn_.size()); }
    // The span drawn at a time on a track, or nullptr.
    const TimelineSpan* spanAt(double timeUs, int track) const;
    QString describe(const TimelineSpan& span) const;  // the hover text
    QCustomPlot* plot() const { return plot_; }

public Q_SLOTS:
    void setVisibleRange(double startUs, double endUs);

Q_SIGNALS:
    void visibleRangeChanged(double startUs, double endUs);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    struct Drawn {
        const TimelineSpan* span;
        int track;
    };
    int shownId_ = -2;  // the document drawn, and its span count
    size_t shownSpans_ = 0;
    QCustomPlot* plot_;
    QLabel* caption_;
    QStringList tracks_;
    std::vector<Drawn> drawn_;  // sorted by track, then start
};

}  // namespace stepscope::ui
