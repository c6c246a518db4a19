// Checks of the PyTorch DCP reader for fuzz_dcp and the replay in
// tst_fuzzregressions. The corpus holds no DCP folder, so the input is laid
// over the plan of one written here: every mutation starts from a plan the
// reader accepts, and reaches what the plan says of chunks, files and
// offsets, not only the pickle machine (fuzz_pickle's).
#include "fuzzchecks.h"

#include "dcpfixture.h"
#include "sameplanvalues.h"

#include "formats/pytorch/torchunpickler.h"

#include "ckptscope/document/document.h"
#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/openerror.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

using namespace ckptscope;

namespace fuzzchecks {

namespace {

constexpr uint64_t kMaxValues = 1 << 14; // per tensor, to keep runs fast

// A DCP folder written once per process (two ranks, tensors split by rows
// and a bf16 one), removed at exit, and its valid plan.
struct Folder {
    std::string path, plan;

    Folder() {
        char pattern[] = "/tmp/ckptscope-fuzz-dcp-XXXXXX";
        const char* made = mkdtemp(pattern);
        if (!made)
            throw std::runtime_error("fuzz_dcp: no temporary folder");
        path = made;
        testsupport::DcpFixture::make(2, {{4, 3}, {5}}, true).write(path);
        std::ifstream in(path + "/.metadata", std::ios::binary);
        plan.assign(std::istreambuf_iterator<char>(in), {});
    }
    ~Folder() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
};

const Folder& folder() {
    static const Folder f;
    return f;
}

} // namespace

void checkDcp(std::string_view bytes) {
    const Folder& f = folder();
    // Each input byte XORed onto the plan's byte at its place; those past
    // its end appended. An empty input is the valid plan.
    std::string plan = f.plan;
    for (size_t i = 0; i < bytes.size(); ++i) {
        if (i < plan.size())
            plan[i] = char(plan[i] ^ bytes[i]);
        else
            plan += bytes[i];
    }
    // A plan the compact machine reads, the general one reads alike.
    if (const std::optional<dcp::PlanTree> compact = dcp::PlanTree::read(plan)) {
        ObjectTree general;
        pytorch::TorchUnpickler u(general, "plan");
        try {
            general.root = u.run(plan, 0);
        } catch (const CheckpointError& e) {
            require(false, std::string("the compact machine read what the general one refuses: ") +
                               e.what());
        }
        testsupport::SamePlanValues same{general, *compact};
        require(same(general.root, compact->root()), "the two machines differ: " + same.why);
    }
    {
        std::ofstream out(f.path + "/.metadata", std::ios::binary | std::ios::trunc);
        out.write(plan.data(), std::streamsize(plan.size()));
    }
    std::shared_ptr<const Document> doc;
    try {
        doc = Document::open(f.path);
    } catch (const std::exception& e) { // OpenError, CheckpointError: named
        require(!bytes.empty(), std::string("the valid plan is refused: ") + e.what());
        require(std::string(e.what()).rfind(f.path, 0) == 0,
                std::string("error without the folder's name: ") + e.what());
        return;
    }
    require(!bytes.empty() || !doc->tensors().empty(), "the valid plan lists no tensor");
    for (size_t i = 0; i < doc->tensors().size(); ++i) {
        const TensorEntry& t = doc->tensors()[i];
        const uint64_t n = std::min(t.dataLen, kMaxValues);
        if (n == 0 || !dtypeDecodable(t.dtype))
            continue;
        std::vector<float> all(n), parts(n);
        try {
            doc->readValues(i, 0, n, all.data());
        } catch (const std::exception& e) { // a plan's chunk the files do not hold
            require(std::strstr(e.what(), f.path.c_str()) != nullptr,
                    std::string("read error without the folder's name: ") + e.what());
            continue;
        }
        const uint64_t half = n / 2;
        doc->readValues(i, 0, half, parts.data());
        doc->readValues(i, half, n - half, parts.data() + half);
        require(std::memcmp(all.data(), parts.data(), n * sizeof(float)) == 0,
                "tensor \"" + t.name + "\": values read in pieces differ");
    }
}

} // namespace fuzzchecks
