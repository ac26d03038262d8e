#pragma once

#include <QColor>
#include <QPointF>
#include <QStringList>
#include <vector>

#include "models/timeline_index.h"
#include "profile/step_timeline.h"
#include "widgets/run_view.h"

class QCustomPlot;
class QCPAbstractItem;
class QCPItemLine;
class QLabel;

namespace stepscope::ui {

class TimelineBars;

// One traced step on a time axis: kernels, memcpys and memsets on their
// streams and operators on their host threads (nested ones inset), under
// bands for the phases; a legend above the chart names each colour. Only the
// spans in view are drawn, those narrower than a pixel merged (TimelineBars),
// so a trace of 100 MB pans and zooms; hover finds any span (TimelineIndex).
// Zoom and pan along time (wheel, drag); hovering names what is under the
// cursor and draws the link from a kernel's launch on its host thread to the
// kernel on its stream (a click keeps it while the mouse moves on). The
// visible time range is shared with other views through
// visibleRangeChanged / setVisibleRange.
class KernelTimelineView final : public RunView {
    Q_OBJECT

public:
    explicit KernelTimelineView(QWidget* parent = nullptr);
    void showRun(const RunDocument* document) override;
    QList<ExportTarget> exportTargets() override;

    QStringList tracks() const { return index_.tracks(); }  // top to bottom
    // At the last draw: the spans in view (each a bar of its own, or merged
    // with its neighbours into a block where narrower than a pixel), those
    // merged, and the colours of the bars.
    int drawnSpans() const;
    int mergedSpans() const;
    std::vector<QColor> barColors() const;
    // The innermost span on a track at a time, whether drawn on its own or
    // not, or nullptr; where none holds the time, the nearest within slackUs.
    const TimelineSpan* spanAt(double timeUs, int track, double slackUs = 0) const;
    // A kernel's launch (a launch call, or our runs' launching operator), or
    // the kernels a launch started, in start order.
    std::vector<const TimelineSpan*> linkedSpans(const TimelineSpan& span) const;
    QString describe(const TimelineSpan& span) const;  // the hover text
    // The span under the mouse, and the one whose links are drawn (hovered,
    // or kept by a click); nullptr for none.
    const TimelineSpan* hoveredSpan() const { return spanPointer(hovered_); }
    const TimelineSpan* linkedFrom() const { return spanPointer(linkedFrom_); }
    std::vector<QCPItemLine*> linkLines() const;  // launch → kernel, as drawn
    QCustomPlot* plot() const { return plot_; }

public Q_SLOTS:
    void setVisibleRange(double startUs, double endUs);

Q_SIGNALS:
    void visibleRangeChanged(double startUs, double endUs);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    double drawPhases();
    void drawSpans();
    int indexOf(const TimelineSpan& span) const;  // -1 for a span not shown
    int spanIndexUnder(const QPointF& pixel) const;
    void showLinks(int span);
    const TimelineSpan* spanPointer(int index) const;

    int shownId_ = -2;  // the document drawn, and its span count
    size_t shownSpans_ = 0;
    bool shownLive_ = false;  // a run under way: its traced step is still to come
    QCustomPlot* plot_;
    QLabel* caption_;
    TimelineIndex index_;
    TimelineBars* bars_ = nullptr;
    int hovered_ = -1;
    int linkedFrom_ = -1;
    bool pinned_ = false;
    QPointF pressedAt_;
    std::vector<QCPAbstractItem*> linkItems_;
};

}  // namespace stepscope::ui
