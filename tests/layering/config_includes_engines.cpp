// Built as a file of core/config (tests/CMakeLists.txt, layering_probe_upward):
// config is the second layer, engines the ninth, so this include must not be
// found and the build must fail on it.
#include "config/run_config.h"
#include "engines/runner.h"

int layeringProbeUpward() {
    return 0;
}
