#pragma once

#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>

#include <deque>

#include "models/run_document.h"

class QLabel;
class QListWidget;

namespace stepscope::ui {

class HeadTailDelegate;

// The runs of the session: their documents and the list that shows them,
// each titled by what sets it apart from the others, ticked to be compared.
class RunList final : public QObject {
    Q_OBJECT

public:
    explicit RunList(QObject* parent = nullptr);

    QListWidget* widget() const { return list_; }
    // A line for under the list: what its marks mean ("*": not saved).
    QLabel* legend() const { return legend_; }
    // Row `row`'s text as the list shows it at its width: where it is too
    // long, elided in the middle, keeping what tells the run from those
    // like it and its state ("(running)", "*").
    QString shownText(int row) const;
    const std::deque<RunDocument>& documents() const { return documents_; }

    // A new document, listed last (not selected), given its id here.
    RunDocument& add(RunResult result, const QString& path);
    RunDocument& add(RunDocument document);
    RunDocument* byId(int id);
    const RunDocument* byId(int id) const;
    const RunDocument* current() const;
    // The unmodified document read from `file` (the same file, however
    // named), if any.
    const RunDocument* openedFrom(const QString& file) const;
    void select(int id);
    // Document `id` made again (a snapshot shown on another device): it keeps
    // its id, row and tick; currentChanged() when it is the one selected,
    // comparedChanged() when it is ticked.
    void replace(int id, RunDocument document);
    // Takes document `id` out of the list (a run that never started: no steps,
    // nothing to keep); no other document is selected in its place.
    void remove(int id);
    // The document a run in progress fills (0: none), listed as running.
    // Marks the document `live` too, and the one before no longer.
    void setLive(int id);
    int liveId() const { return liveId_; }
    // Steps of the run in progress, its summary made again (comparedChanged()
    // when it is ticked); the document, or nullptr when no run is in
    // progress (a sweep's points arrive whole).
    const RunDocument* addLiveSteps(const std::vector<StepRecord>& steps);
    // A distributed run's ranks' steps, into the live document's ranks.
    const RunDocument* addLiveRankSteps(const std::vector<RankStep>& steps);
    // Titles, states and tooltips again, after documents changed.
    void refresh();
    // Document `id` changed where it stands (steps arrived, its run ended):
    // comparedChanged() when it is ticked, so that Compare shows it as it is.
    void changedInPlace(int id);
    // Writes document `id` to `path` (saved(), or saveFailed() saying why).
    bool save(int id, const QString& path);

    void setCompared(const QList<int>& ids);
    QList<const RunDocument*> compared() const;
    // Compare columns are narrow: "#id" and what differs among the runs only.
    static QStringList compareLabels(const QList<const RunDocument*>& runs);
    // An exported chart's title for the compared runs: `name`, the runs by
    // what differs, then on a second line what they share.
    QString compareTitle(const QString& name) const;

Q_SIGNALS:
    void currentChanged();
    void comparedChanged();
    void saved(const QString& path);
    void saveFailed(const QString& title, const QString& message);

private:
    QListWidget* list_;
    QLabel* legend_;
    HeadTailDelegate* delegate_;
    std::deque<RunDocument> documents_;  // stable addresses as runs are added
    int nextId_ = 1;
    int liveId_ = 0;
};

}  // namespace stepscope::ui
