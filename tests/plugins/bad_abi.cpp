// A plugin that claims another plugin ABI: the registry must refuse it with a
// message naming both ABI versions, before calling anything in it.
#include <accel/plugin.hpp>

extern "C" __attribute__((visibility("default"))) const accel_plugin_info* accel_backend_plugin() {
    static const accel_plugin_info info{ACCEL_PLUGIN_ABI + 1000, "cuda", nullptr};
    return &info;
}
