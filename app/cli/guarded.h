#pragma once

#include <iostream>

#include "config/run_config.h"
#include "results/run_file.h"
#include "util/atomic_file.h"

namespace stepscope::cli {

// Exit codes of stepscope-cli.
constexpr int kExitOk = 0;
constexpr int kExitOutputLost = 1;  // stdout could not be written (a full disk, /dev/full)
constexpr int kExitBadInput = 2;
constexpr int kExitRunFailed = 3;

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
    } catch (const OutputPathError& error) {  // --out names a device, a FIFO, a folder
        std::cerr << "stepscope-cli: " << error.what() << "\n";
        return kExitBadInput;
    } catch (const std::exception& error) {
        std::cerr << "stepscope-cli: " << error.what() << "\n";
        return kExitRunFailed;
    }
}

}  // namespace stepscope::cli
