#pragma once

#include <QString>

#include "results/run_result.h"

namespace stepscope::ui {

// A run as the desktop app holds it: the result, where it lives on disk (if
// anywhere) and a title for lists and legends.
struct RunDocument {
    int id = 0;  // unique in the session
    RunResult result;
    QString path;  // empty until saved or when made in this session
    QString title;
    bool modified = false;  // made or changed since last saved
};

QString defaultTitle(const RunResult& result);

}  // namespace stepscope::ui
