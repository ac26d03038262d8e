#pragma once

#include <QString>

#include <vector>

#include "config/config_field.h"

class QWidget;

namespace stepscope::ui {

// Asks before StepScope runs code a file names (a Python model, attention,
// the folder they are imported from): the app's --trust-code. Names each
// module and folder; Cancel is the default. True when the user says run it.
bool askToRunFileCode(QWidget* parent, const QString& where, const std::vector<NamedCode>& code);

}  // namespace stepscope::ui
