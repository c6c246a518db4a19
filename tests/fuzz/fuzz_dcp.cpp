// libFuzzer entry point; the checks live in fuzzdcp.cpp (shared with the
// regression test).
#include "fuzzchecks.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    return fuzzchecks::runForFuzzer(fuzzchecks::checkDcp, data, size);
}
