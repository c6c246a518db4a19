// libFuzzer entry point; the checks live in fuzzpytorch.cpp (shared with the
// regression test).
#include "fuzzchecks.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    return fuzzchecks::runForFuzzer(fuzzchecks::checkPytorch, data, size);
}
