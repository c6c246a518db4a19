#pragma once

#include <cstdint>
#include <string>

// Inputs for the benchmarks, generated once with the project's own writers
// and kept in a cache folder ($CKPTSCOPE_BENCH_DATA, else
// <build dir>/bench-data). A file is rewritten only when missing.
namespace benchdata {

// The cache folder, created on first use.
std::string dataDir();

// OXCK file with `tensors` tensors and about `bytes` bytes of values; the
// seed draws the values (same names and shapes whatever the seed).
std::string oxckFile(uint64_t tensors, uint64_t bytes, uint64_t seed = 1);

// Gradient checkpoint of about `nodes` nodes with `optimizerBytes` bytes of
// optimizer state.
std::string gradientFile(uint64_t nodes, uint64_t optimizerBytes);

// The files the targets are about.
inline std::string smallOxck() {
    return oxckFile(256, uint64_t(1) << 20);
}
inline std::string largeOxck() {
    return oxckFile(256, uint64_t(1) << 30);
}
// The large file with other values in every tensor: `diff` compares it
// with largeOxck(), every element differing.
inline std::string largeOxckOther() {
    return oxckFile(256, uint64_t(1) << 30, 2);
}
// One 256 MiB tensor: statistics larger than the in-memory budget.
inline std::string singleTensorOxck() {
    return oxckFile(1, uint64_t(256) << 20);
}
// A folder of `files` OXCK checkpoints (a run), `tensors` tensors and about
// `bytesPerFile` bytes of values each; file k (1-based) has seed k (other
// values) and metadata step 1000 + k.
std::string runFolder(uint64_t files, uint64_t tensors, uint64_t bytesPerFile);
// The run the run-summary target is about: 8 files × 256 MiB, 64 tensors
// of 4 MiB each.
inline std::string run8x256M() {
    return runFolder(8, 64, uint64_t(256) << 20);
}
inline std::string graphGradient() {
    return gradientFile(10'000, 0);
}
inline std::string optimizerGradient() {
    return gradientFile(100, uint64_t(4) << 20);
}

// Whole file into a string (benchmarks time parsing apart from reading).
std::string readAll(const std::string& path);

} // namespace benchdata
