#include "widgets/kernel_type_colors.h"

#include <utility>

#include "widgets/plot_style.h"

namespace stepscope::ui {

std::optional<QColor> traceCategoryColor(const QString& name) {
    // Computation blue, communication orange, memory green; an overlap takes a
    // hue between its parts, darker with each part, so the three read apart.
    static const std::pair<const char*, QColor> colors[] = {
        {"COMPUTATION", QColor(52, 101, 164)},
        {"COMMUNICATION", QColor(245, 121, 0)},
        {"MEMORY", QColor(78, 154, 6)},
        {"OTHER", QColor(186, 189, 182)},
        {"COMPUTATION overlapping COMMUNICATION", QColor(117, 80, 123)},
        {"COMPUTATION overlapping MEMORY", QColor(6, 152, 154)},
        {"COMMUNICATION overlapping MEMORY", QColor(196, 160, 0)},
        {"COMPUTATION overlapping COMMUNICATION overlapping MEMORY", QColor(46, 52, 54)},
        {"cuda_runtime", QColor(239, 41, 41)},
        {"cuda_driver", QColor(164, 0, 0)},
    };
    for (const auto& [known, color] : colors) {
        if (name == QLatin1String(known)) {
            return color;
        }
    }
    return std::nullopt;
}

QColor categoryOrKernelTypeColor(const QString& name) {
    return traceCategoryColor(name).value_or(categoryColor(name));
}

}  // namespace stepscope::ui
