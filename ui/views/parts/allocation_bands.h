#pragma once

// ui/views/parts: what the tabs of a run are built from: allocation and
// annotation bands (here), timeline bars, the snapshot's stack panel, the
// trace's ranks and steps panels, and the pages inside a tab (saved for
// backward, memory compare). Includes ui/widgets, ui/models and core/.

#include <qcustomplot.h>

#include <vector>

#include "models/memory_index.h"

namespace stepscope::ui {

// Allocations drawn as bands stacked over time, as memory_viz draws them:
// each band a polygon whose bottom steps down when something under it is
// freed. Times in µs and sizes in bytes go in; the chart's axes are ms and
// MiB. Vertices closer than a pixel are merged while drawing, so a band that
// moves a hundred thousand times costs what its pixels cost.
class AllocationBands final : public QCPAbstractPlottable {
    Q_OBJECT

public:
    struct Band {
        uint32_t allocation;  // in the MemoryIndex
        int64_t bytes;
        double endUs;
        size_t firstVertex;
        size_t vertexCount;
        QColor colour;
    };

    AllocationBands(QCPAxis* keyAxis, QCPAxis* valueAxis);

    void setBands(std::vector<Band> bands, std::vector<BandVertex> vertices);
    void clearBands() { setBands({}, {}); }
    void addBand(uint32_t allocation, int64_t bytes, double endUs,
                 const std::vector<BandVertex>& vertices, const QColor& colour);
    const std::vector<Band>& bands() const { return bands_; }
    size_t vertexCount() const { return vertices_.size(); }
    // Bottom and top (bytes) of a band at a time; false when it is not drawn then.
    bool extentAt(uint32_t allocation, double timeUs, int64_t* bottom, int64_t* top) const;
    // Every band gets this outline (a highlight); else a darker edge of its own colour.
    void setOutline(const QPen& pen) { outline_ = pen; }

    double selectTest(const QPointF&, bool, QVariant* = nullptr) const override { return -1; }
    QCPRange getKeyRange(bool& foundRange, QCP::SignDomain = QCP::sdBoth) const override;
    QCPRange getValueRange(bool& foundRange, QCP::SignDomain = QCP::sdBoth,
                           const QCPRange& = QCPRange()) const override;

protected:
    void draw(QCPPainter* painter) override;
    void drawLegendIcon(QCPPainter* painter, const QRectF& rect) const override;

private:
    std::vector<Band> bands_;
    std::vector<BandVertex> vertices_;
    QPen outline_ = Qt::NoPen;
};

}  // namespace stepscope::ui
