#pragma once

// The checks each libFuzzer target runs on one input, shared with the Qt test
// that replays tests/data/regressions/: a crash the fuzzer found stays fixed.
// Expected failures (a clear error for a bad file) return quietly; a broken
// invariant throws InvariantViolation (the fuzz targets turn that into an
// abort, the Qt test into a failure); anything else escapes as a crash.

#include <stdexcept>
#include <string>
#include <string_view>

namespace fuzzchecks {

class InvariantViolation : public std::logic_error {
public:
    using std::logic_error::logic_error;
};

// Throws InvariantViolation(what) unless ok: the one way every check states
// an invariant.
inline void require(bool ok, const std::string& what) {
    if (!ok)
        throw InvariantViolation(what);
}

// readOxckIndex + readTensorValues over a MemorySource.
void checkOxck(std::string_view bytes);
// parseMetadata; on success serialize → parse gives the same map. An input
// that starts with an OXCK header is reduced to its metadata block first, so
// the corpus files seed this target too.
void checkMetadata(std::string_view bytes);
// GradientCheckpoint::fromJson; on success toJson → fromJson is equal.
void checkGradient(std::string_view bytes);
// Document::open over a MemorySource, then a few value reads and statistics.
void checkDocument(std::string_view bytes);
// readSafetensorsIndex and Document over a MemorySource: values match the
// bytes, a write-back reads as the same tensors. In fuzzsafetensors.cpp.
void checkSafetensors(std::string_view bytes);
// readGgufHeader over a MemorySource: a refusal names the file; an accepted
// header places its tensors in order, aligned and inside the file; array
// items list; values read in pieces equal values read at once. In fuzzgguf.cpp.
void checkGguf(std::string_view bytes);
// The bytes as a pickle (after a legacy torch.save head) through the
// scanner and the PyTorch module: nothing run, errors name the file, views
// stay inside their storages. In fuzzpytorch.cpp.
void checkPickle(std::string_view bytes);
// The bytes as a torch.save file (zip or legacy): refusals name the file;
// an accepted file's views lie in their storages, its values read the same
// in pieces, its pickle scans to the same imports. In fuzzpytorch.cpp.
void checkPytorch(std::string_view bytes);
// A small LayoutInput built from the bytes (≤ 200 nodes, edges from byte
// pairs) through layoutGraph: forward edges go down, reported crossings ==
// countCrossings. Defined in fuzzlayout.cpp.
void checkLayout(std::string_view bytes);

// The bytes laid over the plan (.metadata) of a PyTorch DCP folder written
// once per process (each byte XORed onto the plan's at its place, the rest
// appended: an empty input is the valid folder): refused naming the folder,
// or its tensors read the same in pieces as whole. In fuzzdcp.cpp.
void checkDcp(std::string_view bytes);

// The bytes as S3's XML answers (a ListObjectsV2 page, an <Error>): parsed,
// or refused naming the prefix; a cut page carries its token. In fuzzs3.cpp.
void checkS3Xml(std::string_view bytes);

// Runs one check for a libFuzzer entry point: an InvariantViolation aborts
// with its message, so libFuzzer records the input as a crash.
int runForFuzzer(void (*check)(std::string_view), const unsigned char* data, size_t size);

} // namespace fuzzchecks
