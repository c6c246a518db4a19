#include "fuzzchecks.h"

#include "ckptscope/document/document.h"
#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/gradient/gradientcheckpoint.h"
#include "ckptscope/formats/oxck/checkpoint.h"
#include "ckptscope/formats/oxck/metadatacodec.h"
#include "ckptscope/formats/oxck/oxckindex.h"
#include "ckptscope/formats/tensorvalues.h"
#include "ckptscope/io/bytesource.h"
#include "ckptscope/stats/tensorstats.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <vector>

using namespace ckptscope;

namespace fuzzchecks {

namespace {

std::vector<uint8_t> toBytes(std::string_view s) {
    return std::vector<uint8_t>(s.begin(), s.end());
}

uint32_t leU32(std::string_view s, size_t at) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; --i)
        v = v << 8 | uint8_t(s[at + size_t(i)]);
    return v;
}

bool startsWith(const std::string& s, const std::string& prefix) {
    return s.rfind(prefix, 0) == 0;
}

// Reads values [first, first + n) of a tensor and compares them with the bytes.
void checkValues(const ByteSource& source, std::string_view bytes, const TensorEntry& t,
                 uint64_t first, uint64_t n) {
    if (n == 0)
        return; // memcmp/memcpy must not see the null data() of an empty vector
    std::vector<float> got(static_cast<size_t>(n));
    readTensorValues(source, t, first, n, got.data());
    const size_t at = size_t(t.dataOffset + first * 4);
    require(std::memcmp(got.data(), bytes.data() + at, size_t(n) * 4) == 0,
            "readTensorValues returned other bytes than the file holds");
}

bool sameTensors(const Checkpoint& a, const Checkpoint& b) {
    if (a.tensors.size() != b.tensors.size())
        return false;
    for (size_t i = 0; i < a.tensors.size(); ++i) {
        const auto& x = a.tensors[i];
        const auto& y = b.tensors[i];
        if (x.name != y.name || x.shape != y.shape || x.data.size() != y.data.size() ||
            (!x.data.empty() && std::memcmp(x.data.data(), y.data.data(), x.data.size() * 4) != 0))
            return false;
    }
    return true;
}

} // namespace

void checkOxck(std::string_view bytes) {
    const std::string name = "fuzz.oxck";
    const MemorySource source(toBytes(bytes), name);
    OxckIndex index;
    try {
        index = readOxckIndex(source);
    } catch (const CheckpointError& e) {
        require(startsWith(e.what(), name + ": "),
                std::string("message without file: ") + e.what());
        require(!e.offset() || *e.offset() <= bytes.size(), "error offset past the end");
        return;
    } catch (const SourceChangedError& e) {
        // The index checks every count first: a read past the end is a bug.
        throw InvariantViolation(std::string("index read past the end: ") + e.what());
    }
    require(index.fileSize == bytes.size(), "fileSize differs from the input size");
    require(index.endOffset <= bytes.size(), "endOffset past the end");
    uint64_t expectHeader = 28;
    for (const TensorEntry& t : index.tensors) {
        require(t.headerOffset >= expectHeader, "tensor header overlaps the previous tensor");
        require(t.dataOffset <= index.endOffset &&
                    t.dataLen <= (index.endOffset - t.dataOffset) / 4,
                "tensor values reach past the indexed end");
        require(t.elementCount == shapeElementCount(t.shape), "elementCount != product of shape");
        expectHeader = t.dataOffset + t.dataLen * 4;
    }
    require(expectHeader <= index.endOffset, "last tensor ends past endOffset");
    for (const IndexWarning& w : index.warnings)
        require(!w.tensor || *w.tensor < index.tensors.size(), "warning names a tensor not there");

    const size_t limit = std::min<size_t>(index.tensors.size(), 256);
    for (size_t i = 0; i < limit; ++i) {
        const TensorEntry& t = index.tensors[i];
        checkValues(source, bytes, t, 0, std::min<uint64_t>(t.dataLen, 1024));
        if (t.dataLen > 16)
            checkValues(source, bytes, t, t.dataLen - 16, 16);
        float one = 0;
        bool threw = false;
        try {
            readTensorValues(source, t, t.dataLen, 1, &one);
        } catch (const CheckpointError&) {
            threw = true;
        }
        require(threw, "reading one value past a tensor's end did not throw");
    }

    // Reader → writer → reader keeps names, shapes and value bits.
    const bool writable =
        std::all_of(index.tensors.begin(), index.tensors.end(),
                    [](const auto& t) { return t.name.size() <= Checkpoint::kMaxNameBytes; });
    if (writable && bytes.size() <= (1u << 20)) {
        std::istringstream in{std::string(bytes)};
        const Checkpoint ck = Checkpoint::readFrom(in, name);
        require(ck.metadata == index.metadata, "readFrom metadata differs from the index");
        const std::string encoded = ck.encode();
        std::istringstream again(encoded);
        const Checkpoint back = Checkpoint::readFrom(again, "roundtrip");
        require(back.metadata == ck.metadata && sameTensors(ck, back),
                "encode → readFrom changed the checkpoint");
        require(back.encode() == encoded, "encoding is not stable");
    }
}

void checkMetadata(std::string_view bytes) {
    std::string_view text = bytes;
    uint64_t base = 0;
    if (bytes.size() >= 28 && bytes.substr(0, 4) == "OXCK") {
        base = 28;
        text = bytes.substr(28, std::min<size_t>(leU32(bytes, 24), bytes.size() - 28));
    }
    Metadata parsed;
    try {
        parsed = parseMetadata(text, "fuzz", base);
    } catch (const CheckpointError& e) {
        require(e.kind() == CheckpointError::Kind::BadMetadata ||
                    e.kind() == CheckpointError::Kind::InvalidUtf8,
                std::string("unexpected error kind: ") + e.what());
        require(e.offset() && *e.offset() <= base + text.size(), "error offset outside the text");
        require(startsWith(e.what(), "fuzz: "), std::string("message without file: ") + e.what());
        return;
    }
    for (const auto& [k, v] : parsed)
        require(isValidUtf8(k) && isValidUtf8(v), "parsed metadata is not UTF-8");
    const std::string written = serializeMetadata(parsed);
    Metadata back;
    try {
        back = parseMetadata(written, "roundtrip", 0);
    } catch (const CheckpointError& e) {
        throw InvariantViolation(std::string("serialized metadata does not parse: ") + e.what());
    }
    require(back == parsed, "serialize → parse changed the metadata");
    require(serializeMetadata(back) == written, "serialization is not stable");
}

void checkGradient(std::string_view bytes) {
    GradientCheckpoint g;
    try {
        g = GradientCheckpoint::fromJson(bytes, "fuzz.json");
    } catch (const GradientError& e) {
        require(startsWith(e.what(), "fuzz.json"),
                std::string("message without file: ") + e.what());
        return;
    }
    const std::string json = g.toJson();
    GradientCheckpoint back;
    try {
        back = GradientCheckpoint::fromJson(json, "roundtrip.json");
    } catch (const GradientError& e) {
        throw InvariantViolation(std::string("toJson output does not parse: ") + e.what());
    }
    require(back == g, "toJson → fromJson changed the checkpoint");
    require(back.toJson() == json, "toJson is not stable");

    // The graph queries the browser runs on every file.
    const auto order = g.graph.topologicalOrder();
    const auto cycle = g.graph.cycleNodes();
    require(order.size() + cycle.size() == g.graph.nodeCount(),
            "topological order + cycle nodes != node count");
    (void)g.graph.validate();
    if (g.lossCid) {
        const auto chain = g.graph.provenanceChain(*g.lossCid);
        require(chain.empty() == (g.graph.findProducer(*g.lossCid) == nullptr),
                "provenance chain and producer disagree");
        (void)g.graph.findConsumers(*g.lossCid);
    }
}

void checkDocument(std::string_view bytes) {
    std::shared_ptr<const Document> doc;
    try {
        doc = Document::open(std::make_shared<MemorySource>(toBytes(bytes), "fuzz.doc"));
    } catch (const OpenError& e) {
        require(startsWith(e.what(), "fuzz.doc"), std::string("message without file: ") + e.what());
        (void)e.detail();
        return;
    }
    (void)doc->numParams();
    (void)doc->totalBytes();
    for (const IndexWarning& w : doc->warnings())
        require(!w.tensor || *w.tensor < doc->tensors().size(), "warning names a tensor not there");
    require((doc->format() == Format::Gradient) == (doc->gradient() != nullptr),
            "gradient() does not match the format");

    StatsOptions options;
    options.bins = 8;
    options.threads = 1;
    auto checkStats = [&](const StatsResult& r, uint64_t n) {
        const TensorStats& s = r.stats;
        require(s.count == n && s.finite + s.nan + s.posInf + s.negInf == n,
                "statistics do not add up");
        require(s.min.has_value() == (s.finite > 0), "min present without finite values");
        uint64_t binned = 0;
        for (uint64_t c : r.histogram.counts)
            binned += c;
        require(r.histogram.counts.empty() ? s.finite == 0 : binned == s.finite,
                "histogram does not hold every finite value");
    };
    const size_t limit = std::min<size_t>(doc->tensors().size(), 64);
    for (size_t i = 0; i < limit; ++i) {
        const uint64_t n = std::min<uint64_t>(doc->tensors()[i].dataLen, 4096);
        if (!dtypeDecodable(doc->tensors()[i].dtype)) {
            // Complex values and ggml types without a decoder are refused by
            // name; the refusal must be an error naming the file, not a crash.
            float one = 0;
            try {
                doc->readValues(i, 0, std::min<uint64_t>(n, 1), &one);
                require(n == 0, "undecodable values were read");
            } catch (const CheckpointError& e) {
                require(startsWith(e.what(), "fuzz.doc"),
                        std::string("message without file: ") + e.what());
            }
            continue;
        }
        checkStats(computeStats(
                       n,
                       [&](uint64_t first, uint64_t count, float* out) {
                           doc->readValues(i, first, count, out);
                       },
                       options),
                   n);
    }
    if (const GradientCheckpoint* g = doc->gradient()) {
        for (const auto& [name, blob] : g->optimizerState) {
            if (blob.empty() || blob.size() % 4 != 0)
                continue;
            std::vector<float> values(blob.size() / 4);
            std::memcpy(values.data(), blob.data(), blob.size());
            checkStats(computeStats(values.data(), values.size(), 8), values.size());
        }
    }
}

int runForFuzzer(void (*check)(std::string_view), const unsigned char* data, size_t size) {
    try {
        check(std::string_view(reinterpret_cast<const char*>(data), size));
    } catch (const InvariantViolation& e) {
        std::fprintf(stderr, "invariant violated: %s\n", e.what());
        std::abort();
    }
    return 0;
}

} // namespace fuzzchecks
