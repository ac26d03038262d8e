// memory FILE --saved: what each block keeps for backward, from the run's memory trace.
#include <iostream>

#include "cli/commands.h"
#include "cli/guarded.h"
#include "results/run_file.h"
#include "results/saved_for_backward.h"

namespace stepscope::cli {

int commandMemorySaved(const std::string& file, bool json) {
    return guarded([&] {
        const RunResult result = readRunFile(file);
        try {
            const SavedForBackward saved = savedForBackward(result);
            if (json) {
                std::cout << savedForBackwardJson(saved).dump(2) << "\n";
            } else {
                std::cout << formatSavedForBackward(saved);
            }
        } catch (const std::invalid_argument& error) {
            std::cerr << "stepscope-cli: " << error.what() << " ('" << file << "')\n";
            return kExitBadInput;
        }
        return kExitOk;
    });
}

}  // namespace stepscope::cli
