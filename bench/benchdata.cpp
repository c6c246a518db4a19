#include "benchdata.h"

#include "ckptscope/export/samplegenerator.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>

namespace benchdata {

namespace fs = std::filesystem;

namespace {

std::string sizeText(uint64_t bytes) {
    if (bytes % (uint64_t(1) << 30) == 0 && bytes)
        return std::to_string(bytes >> 30) + "G";
    if (bytes % (uint64_t(1) << 20) == 0 && bytes)
        return std::to_string(bytes >> 20) + "M";
    return std::to_string(bytes);
}

// A synthetic OXCK model at path, unless one is there already.
void writeModelOnce(const std::string& path, uint64_t tensors, uint64_t bytes, uint64_t seed) {
    if (fs::exists(path))
        return;
    std::cerr << "benchdata: writing " << path << "\n";
    ckptscope::SyntheticModelSpec spec;
    spec.tensorCount = tensors;
    spec.totalBytes = bytes;
    spec.seed = seed;
    ckptscope::writeSyntheticModel(path, spec);
}

} // namespace

std::string dataDir() {
    const char* env = std::getenv("CKPTSCOPE_BENCH_DATA");
    const fs::path dir = env && *env ? fs::path(env) : fs::path(CKPTSCOPE_BENCH_DATA_DEFAULT);
    fs::create_directories(dir);
    return dir.string();
}

std::string oxckFile(uint64_t tensors, uint64_t bytes, uint64_t seed) {
    const std::string path = dataDir() + "/model-" + std::to_string(tensors) + "t-" +
                             sizeText(bytes) + (seed == 1 ? "" : "-s" + std::to_string(seed)) +
                             ".oxck";
    writeModelOnce(path, tensors, bytes, seed);
    return path;
}

std::string runFolder(uint64_t files, uint64_t tensors, uint64_t bytesPerFile) {
    const std::string dir = dataDir() + "/run-" + std::to_string(files) + "x" +
                            std::to_string(tensors) + "t-" + sizeText(bytesPerFile);
    fs::create_directories(dir);
    for (uint64_t k = 1; k <= files; ++k) {
        writeModelOnce(dir + "/checkpoint-" + std::to_string(k) + ".oxck", tensors, bytesPerFile,
                       k);
    }
    return dir;
}

std::string gradientFile(uint64_t nodes, uint64_t optimizerBytes) {
    // "nodes": exactly that many (files from before the count was exact were
    // named "…n-" and are not reused).
    const std::string path = dataDir() + "/gradient-" + std::to_string(nodes) + "nodes-" +
                             sizeText(optimizerBytes) + "opt.json";
    if (!fs::exists(path)) {
        std::cerr << "benchdata: writing " << path << "\n";
        ckptscope::SyntheticGraphSpec spec;
        spec.nodeCount = nodes;
        spec.optimizerBytes = optimizerBytes;
        ckptscope::makeSyntheticGradient(spec).save(path);
    }
    return path;
}

std::string readAll(const std::string& path) {
    // One buffer of the file's size, one read: as Document::open does.
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::runtime_error(path + ": cannot open");
    std::string text(size_t(fs::file_size(path)), '\0');
    if (!in.read(text.data(), std::streamsize(text.size())))
        throw std::runtime_error(path + ": cannot read");
    return text;
}

} // namespace benchdata
