#pragma once

#include <iostream>

#include "cli/commands.h"
#include "config/run_config.h"
#include "results/run_file.h"

namespace stepscope::cli {

// Runs a command's body; what it throws becomes a message on stderr and an
// exit code: a bad config or file is bad input, anything else a failure.
template <typename Body>
int guarded(Body body) {
    try {
        return body();
    } catch (const InvalidConfigError& error) {
        std::cerr << "stepscope-cli: invalid configuration:\n" << error.what();
        return kExitBadInput;
    } catch (const RunFileError& error) {
        std::cerr << "stepscope-cli: " << error.what() << "\n";
        return kExitBadInput;
    } catch (const std::exception& error) {
        std::cerr << "stepscope-cli: " << error.what() << "\n";
        return kExitRunFailed;
    }
}

}  // namespace stepscope::cli
