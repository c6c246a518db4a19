// libFuzzer entry point; the check lives in fuzzs3.cpp (shared with the
// regression test).
#include "fuzzchecks.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    return fuzzchecks::runForFuzzer(fuzzchecks::checkS3Xml, data, size);
}
