// libFuzzer entry point; the checks live in fuzzsafetensors.cpp (shared with
// tst_safetensors).
#include "fuzzchecks.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    return fuzzchecks::runForFuzzer(fuzzchecks::checkSafetensors, data, size);
}
