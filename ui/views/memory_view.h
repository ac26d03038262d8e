#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/memory_index.h"
#include "models/memory_run_data.h"
#include "profile/memory_trace.h"
#include "widgets/run_view.h"

class QCheckBox;
class QComboBox;
class QCPGraph;
class QCPItemLine;
class QCPItemText;
class QCPRange;
class QCustomPlot;
class QLabel;
class QLayout;
class QModelIndex;
class QToolButton;
class QSlider;
class QStackedWidget;
class QStandardItemModel;
class QTabWidget;
class QTableView;
class QTimer;

namespace stepscope::ui {

class AllocationBands;
class AnnotationBands;
class CategoryStack;
class TimeTintBands;
class SnapshotStackPanel;
struct SnapshotRecording;
class ElidedLabel;
class RankMemoryPanel;
class SavedView;

// The active-memory timeline of a run made with --memory, beside PyTorch's
// memory_viz: bytes alive over time stacked by category (a decimated series
// keeps a million events smooth; every event stays for queries), or each
// allocation its own band (coloured by category or by module; a detail
// slider sums the smallest into one grey band). Phase bands, the peak
// marked; the allocation under the cursor highlighted and described; zoom
// and pan bounded by the run, Fit or a double-click to see all of it, and an
// optional link to the Timeline's zoom. Below: allocation sites alive in
// view (the same module and op over all steps is one row; a click shows
// them on the chart), and the estimator against the measurement.
class MemoryView final : public RunView {
    Q_OBJECT

public:
    static constexpr int kMaxPoints = 1500;          // per category series, in view
    static constexpr size_t kMaxBands = 3000;        // allocations drawn as bands
    static constexpr size_t kMaxVertices = 3000000;  // their corners, all together
    static constexpr int kMaxSiteRows = 500;
    static constexpr int kMaxHighlighted = 200;
    static constexpr double kPeakRoom = 44;  // pixels above the peak for its label
    static constexpr int kMinimumChartHeight = 220;

    enum class Mode { Categories, Allocations };
    enum class Colouring { ByCategory, ByModule };

    explicit MemoryView(QWidget* parent = nullptr);
    ~MemoryView() override;
    void showRun(const RunDocument* document) override;
    QList<ExportTarget> exportTargets() override;

    void setMode(Mode mode);
    Mode mode() const { return mode_; }
    void setColouring(Colouring colouring);
    Colouring colouring() const { return colouring_; }
    // Allocations smaller than this are summed into the grey band (per-allocation
    // mode); the floor in use may be higher when more than kMaxBands would be drawn.
    void setSizeFloor(int64_t bytes);
    int64_t sizeFloor() const;  // in use
    size_t drawnBandCount() const;
    size_t hiddenAllocationCount() const;
    // Where an allocation is drawn at a time: bottom and top in bytes, as the
    // chart stacks it in the present mode; false when it is not drawn then.
    bool bandExtent(const MemoryAllocation& allocation, double timeUs, int64_t* bottom,
                    int64_t* top) const;
    // The grey band's bottom and top at a time (per-allocation mode).
    bool smallerBandExtent(double timeUs, int64_t* bottom, int64_t* top) const;

    // The allocation drawn at a time and height (bytes), or nullptr.
    const MemoryAllocation* allocationAt(double timeUs, double bytes) const;
    // Size, category, phase and step, times, then the stack (allocationStack)
    // one frame a line, outermost first. A snapshot's: size, category, when
    // it was made and freed, its site, then its stack as memory_viz prints
    // it (innermost first, PyTorch's internal frames left out).
    QString describe(const MemoryAllocation& allocation) const;
    // Hover at a point of the chart (widget pixels): highlights what is there.
    void hoverAt(const QPointF& position);
    const MemoryAllocation* hovered() const;
    // A click on the chart (widget pixels), as memory_viz's: the band there
    // is selected with its site (the table's row too) and its details stay
    // under the chart while the mouse moves on; a click on no band lets go.
    void clickAt(const QPointF& position);
    const MemoryAllocation* pinned() const;
    // The two lines under the chart: the pinned allocation's, else the hovered one's.
    QString detailsText() const;
    // Where the chart marks the selected allocations' lifetimes: a strip per
    // allocation along its top edge (widget pixels).
    QList<QRectF> lifetimeMarks() const;
    // Outlined on the chart: a site picked in the table or a block in the saved view.
    std::vector<const MemoryAllocation*> highlighted() const;

    void setTimeRange(double startUs, double endUs);  // narrows the table too
    std::pair<double, double> timeRange() const;      // µs
    void fit();                                       // the whole run
    bool followsTimeline() const;
    void setFollowsTimeline(bool follow);

    QStandardItemModel* topModel() const { return sites_; }  // the sites list
    QStandardItemModel* sitesModel() const { return sites_; }
    QString caption() const;
    QStandardItemModel* estimateModel() const { return estimate_; }
    QTableView* sitesTable() const { return sitesTable_; }
    QTableView* estimateTable() const { return estimateTable_; }
    void selectSite(int row);                        // as a click on the row does
    SavedView* savedView() const { return saved_; }  // what each block keeps for backward
    QTabWidget* lowerTabs() const { return lower_; }
    // A distributed run's memory per rank at the marks; hidden for one process.
    RankMemoryPanel* rankMemory() const { return rankMemory_; }
    QCustomPlot* plot() const { return plot_; }
    const MemoryIndex* index() const { return index_; }
    int plottedPoints() const;  // per category series

    // Reserved memory (the allocator's segments) beside what is allocated: a
    // step line where the recording has it (a snapshot's segment events, a
    // CUDA run's allocator totals), else none and the caption says so.
    const QCPGraph* reservedGraph() const { return reserved_; }
    std::optional<int64_t> reservedAt(double timeUs) const;  // the line's value then
    // Reserved just after the allocated peak's event; less the peak, the
    // fragmentation the caption states. nullopt without reserved memory.
    std::optional<int64_t> reservedAtPeak() const { return reservedAtPeak_; }
    QToolButton* categoryRulesButton() const { return rulesButton_; }

    // A PyTorch memory snapshot shown (RunDocument::snapshot): the devices it
    // holds, the shown one current (hidden when it holds one);
    // snapshotDeviceRequested() when the user picks another.
    QComboBox* deviceBox() const { return deviceBox_; }
    // The stack of the allocation clicked, a tab of the lower half.
    SnapshotStackPanel* stackPanel() const { return stackPanel_; }
    // record_function ranges as labelled strips along the chart's top: name
    // and place (widget pixels) of each drawn now.
    QList<QPair<QString, QRectF>> annotationStrips() const;

Q_SIGNALS:
    // The user asks to edit the category rules of PyTorch memory snapshots.
    void categoryRulesRequested();
    void snapshotDeviceRequested(int device);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    QLayout* createControls();
    void createSnapshotRow();
    void createPlot();
    void createLowerTabs();
    void connectControls();
    void clearShown();
    void showNoTrace(const RunDocument* document);
    void drawPhaseBands();
    void createPeakMarker();
    void fillEstimate(const RunDocument& document);
    void showCaption(const RunDocument& document);
    void drawCategories();
    // The index of the allocation under a widget position, -1 for none; the
    // position's time (µs) and bytes on the axes where asked for.
    int64_t allocationIndexAt(const QPointF& position, double* time = nullptr,
                              double* bytes = nullptr) const;
    // A snapshot's own parts: its devices, its record_function ranges, the
    // Stack tab (hidden for our runs).
    void showSnapshot(const RunDocument* document);
    QString describeSnapshot(const MemoryAllocation& allocation) const;
    void showPinnedStack();
    void sampleCategories(double fromUs, double toUs);
    void sampleSmaller(double fromUs, double toUs);
    void drawAllocations();
    // The chart again in the mode shown, drawn now or at the event loop's
    // next turn: a run being shown is not drawn in the same handler that
    // hands it over (at a million events each is some 10 ms on the UI thread).
    enum class Draw { Now, AtNextTurn };
    void redraw(Draw when = Draw::Now);
    void fillSitesTable();  // the sites alive in the range shown
    void showSelection(const std::vector<uint32_t>& allocations);  // outlined on the chart
    void keepRangeInRun(const QCPRange& range, const QCPRange& old);
    void fitValueAxis();
    void placePeakMarker();
    void updateHighlights();
    void updateDetailLabel();
    void updateDetails();
    int siteRowOf(uint32_t allocation) const;
    void updateFollowToolTip();
    QColor bandColour(size_t allocation) const;
    StackOrder order() const;
    int64_t floorInUse() const;
    int64_t largestAllocation() const;
    QToolButton* makeRulesButton();
    void drawReserved(const RunDocument& document);
    QString reservedCaption(const RunDocument& document) const;
    int64_t reservedMaxBetween(double fromUs, double toUs) const;

    int shownId_ = -2;
    size_t shownEvents_ = 0;
    bool shownLive_ = false;  // a run under way: its memory trace is still to come
    const MemoryRunData* shownData_ = nullptr;  // a snapshot categorised again has new data
    const MemoryTrace* trace_ = nullptr;
    static constexpr size_t kCheckpoint = 4096;
    // What is drawn of the run shown: its document's, prepared where it was
    // read, or worked out here; index_ points into it.
    std::shared_ptr<const MemoryRunData> data_;
    std::shared_ptr<const SnapshotRecording> snapshot_;  // null for our runs
    const MemoryIndex* index_ = nullptr;
    std::vector<CategoryBytes> categoryCheckpoints_;
    std::map<std::string, size_t> moduleRank_;  // kind of module → colour
    AllocationLayout layout_;
    bool layoutValid_ = false;
    Mode mode_ = Mode::Categories;
    Colouring colouring_ = Colouring::ByCategory;
    int64_t requestedFloor_ = 0;
    int64_t peakBytes_ = 0;
    double peakTimeUs_ = 0;
    QString peakText_;
    int64_t hovered_ = -1;
    int64_t pinned_ = -1;
    QPoint pressedAt_;       // a press and release this close together is a click, not a pan
    int fittedHeight_ = -1;  // the axis rect height the value axis was last fitted to
    std::vector<uint32_t> siteSelection_;
    std::vector<std::vector<uint32_t>> siteMembers_;  // per row of the sites table
    bool clamping_ = false;

    QLabel* caption_;
    QComboBox* deviceBox_;
    QComboBox* modeBox_;
    QComboBox* colourBox_;
    QSlider* detail_;
    ElidedLabel* detailLabel_;
    QToolButton* fitButton_;
    QCheckBox* follow_;
    ElidedLabel* details_;
    QCustomPlot* plot_;
    AllocationBands* bands_ = nullptr;
    AllocationBands* highlight_ = nullptr;
    AllocationBands* selection_ = nullptr;
    AnnotationBands* annotations_ = nullptr;
    CategoryStack* stack_ = nullptr;       // the categories' fills
    TimeTintBands* phaseBands_ = nullptr;  // a run's phases behind the chart
    QCPGraph* smallerBottom_ = nullptr;
    QCPGraph* smallerTop_ = nullptr;
    QCPItemText* peakLabel_ = nullptr;
    QCPItemLine* peakArrow_ = nullptr;
    QStandardItemModel* sites_;
    QStandardItemModel* estimate_;
    QTableView* sitesTable_;
    QTableView* estimateTable_;
    SavedView* saved_;
    SnapshotStackPanel* stackPanel_;
    QTabWidget* lower_;
    RankMemoryPanel* rankMemory_;
    QStackedWidget* chartOrRanks_;
    QTimer* narrow_;
    QToolButton* rulesButton_;
    QWidget* snapshotRow_;  // the device box and the rules button, for snapshots
    QCPGraph* reserved_ = nullptr;
    std::vector<double> reservedUs_;  // the reserved line's steps
    std::vector<int64_t> reservedBytes_;
    std::optional<int64_t> reservedAtPeak_;
};

}  // namespace stepscope::ui
