#include "controllers/run_list.h"

#include <QFileInfo>
#include <QLabel>
#include <QListWidget>

#include <algorithm>
#include <map>

#include "models/memory_run_data.h"
#include "models/release_elsewhere.h"
#include "models/run_label.h"
#include "results/run_file.h"
#include "widgets/head_tail_delegate.h"

namespace stepscope::ui {

namespace {
constexpr int kIdRole = Qt::UserRole + 1;
}

RunList::RunList(QObject* parent) : QObject(parent), list_(new QListWidget) {
    list_->setMinimumHeight(150);  // several runs visible beside a tall form
    list_->setToolTip(tr("Runs of this session. Tick two or more to compare them."));
    delegate_ = new HeadTailDelegate(list_);
    list_->setItemDelegate(delegate_);
    // Labels elide in the middle at the list's width; it never scrolls sideways.
    list_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    list_->setResizeMode(QListView::Adjust);
    // What the list's marks mean, where a newcomer sees it (not in a tooltip).
    legend_ = new QLabel(tr("* not saved yet · tick two or more to compare"));
    legend_->setWordWrap(true);
    legend_->setEnabled(false);  // a quiet grey: a key, not a message
    connect(list_, &QListWidget::currentItemChanged, this, &RunList::currentChanged);
    connect(list_, &QListWidget::itemChanged, this, &RunList::comparedChanged);
}

RunDocument& RunList::add(RunResult result, const QString& path) {
    RunDocument document;
    document.kind = kindOfRunFile(result);  // a sweep's point, or a run made here
    document.result = std::move(result);
    document.path = path;
    document.modified = path.isEmpty();
    return add(std::move(document));
}

RunDocument& RunList::add(RunDocument document) {
    document.id = nextId_++;
    document.title = QString("#%1 %2")
                         .arg(document.id)
                         .arg(document.ownTitle().isEmpty() ? defaultTitle(document.result)
                                                            : document.ownTitle());
    documents_.push_back(std::move(document));
    if (MemoryRunData* memory = documents_.back().memoryData.get()) {
        memory->follow(documents_.back().result);  // the run moved in here
    }
    auto* item = new QListWidgetItem(documents_.back().title);
    item->setData(kIdRole, documents_.back().id);
    item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
    item->setCheckState(Qt::Unchecked);
    list_->addItem(item);
    refresh();
    return documents_.back();
}

RunDocument* RunList::byId(int id) {
    for (auto& document : documents_) {
        if (document.id == id) {
            return &document;
        }
    }
    return nullptr;
}

const RunDocument* RunList::byId(int id) const {
    return const_cast<RunList*>(this)->byId(id);
}

const RunDocument* RunList::current() const {
    const QListWidgetItem* item = list_->currentItem();
    if (!item) {
        return nullptr;
    }
    const int id = item->data(kIdRole).toInt();
    for (const auto& document : documents_) {
        if (document.id == id) {
            return &document;
        }
    }
    return nullptr;
}

const RunDocument* RunList::openedFrom(const QString& file) const {
    // The same file however it was named: relative, through "..", a link.
    const QString canonical = QFileInfo(file).canonicalFilePath();
    const auto known =
        std::find_if(documents_.begin(), documents_.end(), [&](const RunDocument& d) {
            // A snapshot's document has no path until saved (Save must not
            // write over the snapshot): the file it was read from counts too.
            const auto same = [&](const QString& from) {
                return !from.isEmpty() && QFileInfo(from).canonicalFilePath() == canonical;
            };
            return !d.modified && !canonical.isEmpty() && (same(d.path) || same(d.recordingFile()));
        });
    return known != documents_.end() ? &*known : nullptr;
}

void RunList::setLive(int id) {
    if (RunDocument* before = byId(liveId_)) {
        before->live = false;
    }
    liveId_ = id;
    if (RunDocument* now = byId(id)) {
        now->live = true;
    }
}

const RunDocument* RunList::addLiveSteps(const std::vector<StepRecord>& steps) {
    RunDocument* document = byId(liveId_);
    if (!document) {
        return nullptr;
    }
    document->result.steps.insert(document->result.steps.end(), steps.begin(), steps.end());
    document->result.summary =
        summarizeSteps(document->result.steps, document->result.config, std::nullopt);
    changedInPlace(document->id);
    return document;
}

const RunDocument* RunList::addLiveRankSteps(const std::vector<RankStep>& steps) {
    RunDocument* document = byId(liveId_);
    if (!document) {
        return nullptr;
    }
    if (!document->result.distributed) {
        document->result.distributed.emplace();
    }
    for (const RankStep& step : steps) {
        addRankStep(*document->result.distributed, step);
    }
    analyzeRanks(*document->result.distributed);
    changedInPlace(document->id);
    return document;
}

void RunList::refresh() {
    // Titles name what differs among the runs of the session; a recording
    // with a title of its own (a snapshot, a trace) keeps it and takes no part.
    QList<RunConfig> configs;
    for (const RunDocument& document : documents_) {
        if (document.ownTitle().isEmpty()) {
            configs << document.result.config;
        }
    }
    const QList<LabelParts> labels = listLabelParts(configs);
    std::map<int, int> heads;  // characters kept in view, by id: "#12 warm-up 2"
    int next = 0;
    for (RunDocument& document : documents_) {
        const QString id = QString("#%1").arg(document.id);
        if (const QString own = document.ownTitle(); !own.isEmpty()) {
            document.title = id + " " + own;
            heads[document.id] = int(id.size());
            continue;
        }
        const LabelParts& label = labels[next++];
        document.title = id + " " + label.joined();
        heads[document.id] =
            int(id.size()) + (label.distinct.isEmpty() ? 0 : 1 + int(label.distinct.size()));
    }
    const QSignalBlocker blocker(list_);
    for (int row = 0; row < list_->count(); ++row) {
        QListWidgetItem* item = list_->item(row);
        const RunDocument* document = byId(item->data(kIdRole).toInt());
        QString tail;
        if (document->id == liveId_) {
            tail += tr(" (running)");
        } else if (document->result.status != RunStatus::Ok) {
            tail += " [" + QString::fromStdString(toString(document->result.status)) + "]";
        }
        if (document->modified) {
            tail += " *";
        }
        item->setText(document->title + tail);
        // Elided in the middle where the list is narrow: the head tells the
        // run from those like it, the tail says its state.
        item->setData(HeadTailDelegate::HeadRole, heads[document->id]);
        item->setData(HeadTailDelegate::TailRole, int(tail.size()));
        item->setToolTip(document->title + "\n" + document->summary() + "\n" +
                         (document->path.isEmpty() ? tr("not saved") : document->path));
    }
}

QString RunList::shownText(int row) const {
    return row >= 0 && row < list_->count() ? delegate_->shownText(list_->model()->index(row, 0))
                                            : QString();
}

bool RunList::save(int id, const QString& path) {
    RunDocument* document = byId(id);
    if (!document) {
        return false;
    }
    try {
        writeRunFile(document->result, path.toStdString());
    } catch (const std::exception& error) {
        Q_EMIT saveFailed(tr("Cannot save run"), QString::fromUtf8(error.what()));
        return false;
    }
    document->path = path;
    document->modified = false;
    Q_EMIT saved(path);
    refresh();
    return true;
}

void RunList::replace(int id, RunDocument document) {
    RunDocument* old = byId(id);
    if (!old) {
        return;
    }
    document.id = id;
    auto replaced = std::make_shared<RunDocument>(std::move(*old));
    *old = std::move(document);
    releaseElsewhere(std::move(replaced));
    if (MemoryRunData* memory = old->memoryData.get()) {
        memory->follow(old->result);  // the run moved in here
    }
    refresh();
    const RunDocument* shown = current();
    if (shown && shown->id == id) {
        Q_EMIT currentChanged();
    }
    changedInPlace(id);
}

void RunList::changedInPlace(int id) {
    const QList<const RunDocument*> ticked = compared();
    if (std::any_of(ticked.begin(), ticked.end(),
                    [id](const RunDocument* d) { return d->id == id; })) {
        Q_EMIT comparedChanged();
    }
}

void RunList::select(int id) {
    for (int row = 0; row < list_->count(); ++row) {
        if (list_->item(row)->data(kIdRole).toInt() == id) {
            list_->setCurrentRow(row);
            return;
        }
    }
}

void RunList::remove(int id) {
    const QSignalBlocker blocker(list_);
    for (int row = 0; row < list_->count(); ++row) {
        if (list_->item(row)->data(kIdRole).toInt() == id) {
            delete list_->takeItem(row);
            break;
        }
    }
    list_->setCurrentItem(nullptr);
    std::erase_if(documents_, [id](const RunDocument& document) { return document.id == id; });
    if (liveId_ == id) {
        liveId_ = 0;
    }
    refresh();
    Q_EMIT comparedChanged();
}

void RunList::setCompared(const QList<int>& ids) {
    {
        const QSignalBlocker blocker(list_);
        for (int row = 0; row < list_->count(); ++row) {
            QListWidgetItem* item = list_->item(row);
            item->setCheckState(ids.contains(item->data(kIdRole).toInt()) ? Qt::Checked
                                                                          : Qt::Unchecked);
        }
    }
    Q_EMIT comparedChanged();
}

QList<const RunDocument*> RunList::compared() const {
    QList<const RunDocument*> runs;
    for (int row = 0; row < list_->count(); ++row) {
        const QListWidgetItem* item = list_->item(row);
        const int id = item->data(kIdRole).toInt();
        const auto found = std::find_if(documents_.begin(), documents_.end(),
                                        [id](const RunDocument& d) { return d.id == id; });
        if (item->checkState() == Qt::Checked && found != documents_.end()) {
            runs << &*found;
        }
    }
    return runs;
}

QStringList RunList::compareLabels(const QList<const RunDocument*>& runs) {
    // A snapshot's or trace's default config would make every field differ:
    // such a recording is named by its title, the runs by what differs among them.
    QList<RunConfig> configs;
    for (const RunDocument* run : runs) {
        if (run->comparesByConfig()) {
            configs << run->result.config;
        }
    }
    const QStringList differing = differingFields(configs);
    QStringList labels;
    int configured = 0;
    for (const RunDocument* run : runs) {
        labels << (run->comparesByConfig()
                       ? QString("#%1 %2").arg(run->id).arg(differing[configured++]).trimmed()
                       : run->title);  // "#3 x.pickle · PyTorch memory snapshot · device 0"
    }
    return labels;
}

QString RunList::compareTitle(const QString& name) const {
    const QList<const RunDocument*> runs = compared();
    QList<RunConfig> configs;  // a recording of PyTorch's has none to share
    for (const RunDocument* run : runs) {
        if (run->comparesByConfig()) {
            configs << run->result.config;
        }
    }
    return name + " — " + compareLabels(runs).join(" vs ") + "\n" +
           sharedFields(configs).join(" · ");
}

}  // namespace stepscope::ui
