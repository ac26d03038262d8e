// Built as a file of core/config (tests/CMakeLists.txt, layering_probe_downward):
// the control for config_includes_engines.cpp. Including its own layer and
// the one below compiles, so a failure there is the upward include's.
#include "config/run_config.h"
#include "util/strings.h"

int layeringProbeDownward() {
    return 0;
}
