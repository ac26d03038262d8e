#pragma once

#include <QStringList>

class QWidget;

namespace stepscope::ui {

enum class UnsavedRunsAnswer { SaveAll, Discard, Cancel };

// Asks, as document apps do when they quit, what becomes of the runs of this
// session not saved (listed by title, the first six), saying that a run in
// progress stops after the step under way.
UnsavedRunsAnswer askAboutUnsavedRuns(QWidget* parent, const QStringList& titles,
                                      bool runInProgress);

}  // namespace stepscope::ui
