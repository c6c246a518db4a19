// The pickle machine (issues 39 and 40): a DCP folder's plan (`.metadata`,
// 64 tensors in 512 chunks: 38 000 opcodes of dataclasses) and an
// optimizer's data.pkl (100 000 parameters, 200 000 tensors) evaluated into
// an object tree from memory; the same plan read by the compact plan
// machine (dcp::PlanTree, what opening the folder uses); and the DCP folder
// opened as a model (the plan read into logical tensors). The files are bench/makept.py's, written
// into $CKPTSCOPE_BENCH_DATA by bench/dcpbench.sh and bench/pytorchbench.sh.
#include "benchdata.h"

#include "ckptscope/document/document.h"
#include "ckptscope/io/filesource.h"

#include "formats/dcp/plantree.h"
#include "formats/pytorch/torchunpickler.h"
#include "formats/pytorch/ziparchive.h"

#include <benchmark/benchmark.h>

#include <filesystem>

namespace {

using namespace ckptscope;

std::string dcpFolder() {
    return benchdata::dataDir() + "/dcp/model/ckpt";
}

bool present(benchmark::State& state, const std::string& path, const char* script) {
    if (std::filesystem::exists(path))
        return true;
    state.SkipWithError((path + " is missing: run " + script + " once").c_str());
    return false;
}

void unpickle(benchmark::State& state, const std::string& pickle) {
    uint64_t nodes = 0;
    for (auto _ : state) {
        ObjectTree tree;
        pytorch::TorchUnpickler u(tree, "bench");
        tree.root = u.run(pickle, 0);
        nodes = tree.nodes.size();
        benchmark::DoNotOptimize(tree.root);
    }
    state.counters["nodes"] = double(nodes);
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(pickle.size()));
}

void BM_UnpickleDcpPlan(benchmark::State& state) {
    const std::string path = dcpFolder() + "/.metadata";
    if (present(state, path, "bench/dcpbench.sh"))
        unpickle(state, benchdata::readAll(path));
}
BENCHMARK(BM_UnpickleDcpPlan)->Unit(benchmark::kMicrosecond);

void BM_ReadDcpPlan(benchmark::State& state) {
    const std::string path = dcpFolder() + "/.metadata";
    if (!present(state, path, "bench/dcpbench.sh"))
        return;
    const std::string pickle = benchdata::readAll(path);
    uint64_t nodes = 0;
    for (auto _ : state) {
        const std::optional<dcp::PlanTree> plan = dcp::PlanTree::read(pickle);
        if (!plan) {
            state.SkipWithError("the plan machine did not read the plan");
            return;
        }
        nodes = plan->size();
        benchmark::DoNotOptimize(plan->root());
    }
    state.counters["nodes"] = double(nodes);
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(pickle.size()));
}
BENCHMARK(BM_ReadDcpPlan)->Unit(benchmark::kMicrosecond);

void BM_UnpickleOptimizer100k(benchmark::State& state) {
    const std::string path = benchdata::dataDir() + "/pytorch/optimizer-100k.pt";
    if (!present(state, path, "bench/pytorchbench.sh"))
        return;
    const FileSource source(path);
    const pytorch::ZipArchive zip(source, 0, source.size());
    std::string pickle;
    for (const pytorch::ZipRecord& r : zip.records())
        if (r.name.ends_with("/data.pkl"))
            pickle = zip.read(r, r.size);
    unpickle(state, pickle);
}
BENCHMARK(BM_UnpickleOptimizer100k)->Unit(benchmark::kMillisecond);

void BM_OpenDcpFolder(benchmark::State& state) {
    const std::string folder = dcpFolder();
    if (!present(state, folder, "bench/dcpbench.sh"))
        return;
    for (auto _ : state) {
        auto doc = Document::open(folder);
        benchmark::DoNotOptimize(doc.get());
    }
}
BENCHMARK(BM_OpenDcpFolder)->Unit(benchmark::kMicrosecond);

} // namespace
