#include "formats/pytorch/pytorchformat.h"

#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/pytorch/picklescan.h"
#include "ckptscope/io/filesource.h"
#include "formats/objectsize.h"
#include "formats/pytorch/optimizernames.h"
#include "formats/pytorch/pickleimports.h"
#include "formats/pytorch/torchnames.h"
#include "formats/pytorch/torchunpickler.h"
#include "formats/pytorch/ziparchive.h"
#include "formats/safetensors/shardedmodel.h"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace ckptscope {

namespace {

using pytorch::TorchUnpickler;
using K = CheckpointError::Kind;

constexpr uint64_t kObjectBudget = 1000000;
// The legacy format's first pickle: this number (torch/serialization.py's
// MAGIC_NUMBER), pickled by protocol 2 as LONG1 of 10 bytes.
constexpr uint8_t kLegacyStart[] = {0x80, 0x02, 0x8a, 0x0a};
constexpr const char* kLegacyMagic = "119547037146038801333356";

[[noreturn]] void fail(const ByteSource& source, K kind, const std::string& what,
                       std::optional<uint64_t> at = {}) {
    throw CheckpointError(
        kind, source.name() + ": " + (at ? "byte " + std::to_string(*at) + ": " : "") + what, at);
}

// The first local header's record name: "archive/data.pkl" for torch.save.
std::string firstRecordName(const ByteSource& source) {
    uint8_t h[30];
    if (!pytorch::looksLikeZip(source) || source.size() < 30)
        return {};
    source.read(0, h, 30);
    const size_t len = size_t(h[26] | h[27] << 8);
    if (source.size() < 30 + len)
        return {};
    std::string name(len, '\0');
    source.read(30, name.data(), len);
    return name;
}

bool probe(const ByteSource& source) {
    uint8_t b[4] = {};
    if (source.size() >= 4) {
        source.read(0, b, 4);
        if (std::memcmp(b, kLegacyStart, 4) == 0)
            return true;
    }
    return firstRecordName(source).ends_with("/data.pkl");
}

std::string probeFailure(const ByteSource& source) {
    if (pytorch::looksLikeZip(source))
        return "a zip archive whose first record is \"" + firstRecordName(source) +
               "\", not a torch.save archive's data.pkl";
    return {};
}

// The storages as the index lists them (in file order) and the pickled
// storage each came from.
struct Storages {
    std::vector<TensorStorage> list;
    std::vector<uint32_t> indexOfPickled;
};

Storages fileOrder(std::vector<TensorStorage> byPickle) {
    std::vector<uint32_t> order(byPickle.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        return byPickle[a].offset < byPickle[b].offset;
    });
    Storages s;
    s.indexOfPickled.resize(byPickle.size());
    for (uint32_t i = 0; i < order.size(); ++i) {
        s.indexOfPickled[order[i]] = i;
        s.list.push_back(std::move(byPickle[order[i]]));
    }
    return s;
}

// What every layout shares once its pickle ran and its storages are found:
// the depth check, the tensors by name, the imports and their warnings.
void finish(const ByteSource& source, FormatIndex& index, TorchUnpickler& u, uint32_t root,
            std::vector<TensorStorage> storages) {
    if (u.depthWithin(kMaxObjectDepth) > kMaxObjectDepth)
        fail(source, K::Invalid,
             "the pickled object nests more than " + std::to_string(kMaxObjectDepth) +
                 " levels deep (too deep to show)");
    index.objects.root = root;
    Storages s = fileOrder(std::move(storages));
    index.storages = std::move(s.list);
    pytorch::nameTensors(index, u, s.indexOfPickled);
    index.imports = pytorch::classifyImports(index.objects, u);
    std::vector<std::string> names;
    names.reserve(index.tensors.size());
    for (const TensorEntry& t : index.tensors)
        names.push_back(t.name);
    for (std::string& w : pytorch::importWarnings(index.objects, index.imports, names))
        index.warnings.push_back({std::move(w), std::nullopt});
    if (objectPathBytes(index.objects, root, kMaxPathBytes) > kMaxPathBytes)
        fail(source, K::Invalid,
             "the paths to the pickled object's values take more than " +
                 std::to_string(kMaxPathBytes >> 20) + " MiB (long keys shared at many places)");
    const std::optional<uint64_t> kept = u.expandedSize(root, kObjectBudget);
    const uint64_t expanded = kept ? *kept : objectExpandedSize(index.objects, root, kObjectBudget);
    if (expanded > kObjectBudget)
        index.warnings.push_back(
            {"shared references: the object tree expands to more than " +
                 std::to_string(kObjectBudget) +
                 " nodes when every shared value is written out; repeated values are shown once",
             std::nullopt});
}

// The torch.save archive in bytes [begin, end) of the source (the whole
// file, or a DCP chunk inside one).
FormatIndex openZip(const ByteSource& source, uint64_t begin, uint64_t end) {
    const pytorch::ZipArchive zip(source, begin, end);
    if (zip.records().empty())
        fail(source, K::Invalid, "an empty zip archive, not a torch.save archive");
    const std::string& first = zip.records().front().name;
    const std::string archive = first.substr(0, first.find('/'));
    const pytorch::ZipRecord* pkl = zip.find(archive + "/data.pkl");
    if (!pkl)
        fail(source, K::Invalid,
             zip.find(archive + "/constants.pkl")
                 ? "a TorchScript archive (torch.jit.save: code/ and constants.pkl), not a "
                   "torch.save checkpoint"
                 : "a zip archive without " + archive + "/data.pkl, not a torch.save checkpoint");
    bool bigEndian = false;
    if (const pytorch::ZipRecord* order = zip.find(archive + "/byteorder")) {
        const std::string text = zip.read(*order, 64);
        if (text == "big")
            bigEndian = true;
        else if (text != "little")
            fail(source, K::Invalid,
                 "unknown byteorder \"" + text.substr(0, 16) + "\" (expected little or big)",
                 order->dataOffset);
    }
    FormatIndex index;
    TorchUnpickler u(index.objects, source.name() + ": " + pkl->name);
    const std::string bytes = zip.read(*pkl, end - begin);
    const uint32_t root = u.run(bytes, pkl->dataOffset);
    std::vector<TensorStorage> storages;
    std::string name = archive + "/data/";
    const size_t prefix = name.size();
    size_t next = 0; // the record after the last storage's
    for (const pytorch::PickledStorage& p : u.storages) {
        name.resize(prefix);
        name += p.key; // one buffer: an optimizer names 200 000 storages
        const pytorch::ZipRecord* r = zip.find(name, next);
        next = r ? size_t(r - zip.records().data()) + 1 : next;
        if (!r)
            fail(source, K::Invalid,
                 "missing storage \"" + p.key + "\": the pickle names it, the archive has no " +
                     name + " record");
        const uint64_t nbytes = p.numel * dtypeSize(p.dtype); // checked below 2^63 by the unpickler
        if (r->size < nbytes)
            fail(source, K::Invalid,
                 "storage \"" + p.key + "\" is too short: " + std::to_string(r->size) +
                     " bytes for " + std::to_string(p.numel) + " elements of " +
                     std::to_string(dtypeSize(p.dtype)) + " bytes",
                 r->dataOffset);
        storages.push_back({p.key, 0, r->dataOffset, nbytes, p.dtype, bigEndian});
    }
    finish(source, index, u, root, std::move(storages));
    return index;
}

// Runs one pickle of the legacy layout at `offset`, reading more of the file
// while the pickle is cut short by the bytes read so far.
uint32_t legacyPickle(const ByteSource& source, TorchUnpickler& u, uint64_t& offset) {
    for (uint64_t want = 1 << 20;; want *= 4) {
        const uint64_t n = std::min(want, source.size() - offset);
        std::string bytes(n, '\0');
        source.read(offset, bytes.data(), n);
        try {
            uint64_t used = 0;
            const uint32_t v = u.run(bytes, offset, &used);
            offset += used;
            return v;
        } catch (const CheckpointError& e) {
            if (e.kind() != K::Truncated || offset + n >= source.size())
                throw;
        }
    }
}

FormatIndex openLegacy(const ByteSource& source) {
    FormatIndex index;
    ObjectTree scratch;
    TorchUnpickler header(scratch, source.name() + ": legacy header");
    uint64_t at = 0;
    const ObjectNode magic = scratch.at(legacyPickle(source, header, at));
    if (magic.kind != ObjectKind::BigInt || magic.text != kLegacyMagic)
        fail(source, K::InvalidMagic,
             "wrong magic number: a legacy torch.save file starts with the pickled number " +
                 std::string(kLegacyMagic),
             0);
    const ObjectNode version = scratch.at(legacyPickle(source, header, at));
    if (version.kind != ObjectKind::Int || version.integer != 1001)
        fail(source, K::UnsupportedVersion, "legacy protocol version is not 1001", at);
    const uint32_t sysInfo = legacyPickle(source, header, at);
    bool bigEndian = false;
    if (scratch.at(sysInfo).kind == ObjectKind::Dict) {
        const uint32_t little = scratch.find(sysInfo, "little_endian");
        bigEndian = little != kNoNode && scratch.at(little).kind == ObjectKind::Bool &&
                    scratch.at(little).integer == 0;
    }
    TorchUnpickler u(index.objects, source.name() + ": legacy object");
    const uint32_t root = legacyPickle(source, u, at);
    const ObjectNode keys = scratch.at(legacyPickle(source, header, at));
    if (keys.kind != ObjectKind::List)
        fail(source, K::Invalid, "the legacy storage key list is not a list", at);
    // The storages follow in the list's order: an int64 element count, then
    // the elements.
    std::vector<TensorStorage> storages(u.storages.size());
    std::vector<bool> found(u.storages.size(), false);
    for (uint32_t keyNode : keys.items) {
        const ObjectNode& k = scratch.at(keyNode);
        const auto it =
            std::find_if(u.storages.begin(), u.storages.end(),
                         [&](const pytorch::PickledStorage& p) { return p.key == k.text; });
        if (k.kind != ObjectKind::String || it == u.storages.end())
            fail(source, K::Invalid,
                 "the legacy key list names storage \"" + k.text +
                     "\", which the object does not use",
                 at);
        const size_t i = size_t(it - u.storages.begin());
        if (source.size() - at < 8)
            fail(source, K::Truncated, "truncated: storage \"" + k.text + "\"'s count is missing",
                 at);
        uint8_t c[8];
        source.read(at, c, 8);
        uint64_t count = 0;
        for (int b = 7; b >= 0; --b)
            count = count << 8 | c[b];
        const size_t item = dtypeSize(it->dtype);
        if (count > (source.size() - at - 8) / item)
            fail(source, K::Truncated,
                 "truncated: storage \"" + k.text + "\" claims " + std::to_string(count) +
                     " elements, more than the file holds",
                 at);
        if (count < it->numel)
            fail(source, K::Invalid,
                 "storage \"" + k.text + "\" is too short: " + std::to_string(count) +
                     " elements stored, " + std::to_string(it->numel) + " named",
                 at);
        storages[i] = {it->key, 0, at + 8, it->numel * item, it->dtype, bigEndian};
        found[i] = true;
        at += 8 + count * item;
    }
    for (size_t i = 0; i < found.size(); ++i)
        if (!found[i])
            fail(source, K::Invalid,
                 "missing storage \"" + u.storages[i].key + "\": the legacy key list omits it");
    finish(source, index, u, root, std::move(storages));
    return index;
}

FormatIndex open(const ByteSource& source) {
    FormatIndex index = openPytorchFile(source);
    pytorch::nameOptimizerFromFolder(index, source.name());
    // A shard opened alone is only part of a model: say where the rest is.
    if (auto lone = loneShardWarning(source.name()))
        index.warnings.push_back(std::move(*lone));
    return index;
}

} // namespace

FormatIndex openPytorchFile(const ByteSource& source) {
    const DeferredChangeCheck changes(source);
    FormatIndex index =
        pytorch::looksLikeZip(source) ? openZip(source, 0, source.size()) : openLegacy(source);
    changes.finish();
    pytorch::nameOptimizersInFile(index);
    return index;
}

FormatIndex openPytorchArchive(const ByteSource& source, uint64_t begin, uint64_t end) {
    if (begin > end || end > source.size())
        fail(source, K::Truncated,
             "truncated: a torch.save archive of " + std::to_string(end - begin) +
                 " bytes at byte " + std::to_string(begin) + " reaches past the end (" +
                 std::to_string(source.size()) + " bytes)");
    if (!pytorch::looksLikeZip(source, begin))
        fail(source, K::Invalid, "expected a torch.save archive (a zip: \"PK\\3\\4\")", begin);
    return openZip(source, begin, end);
}

PickleScan scanPickle(const ByteSource& source) {
    PickleScan scan;
    if (!probe(source))
        return scan;
    scan.holdsPickle = true;
    TorchUnpickler u(scan.objects, source.name());
    std::string bytes; // the object's pickle, to walk on past a damaged spot
    uint64_t base = 0;
    std::optional<uint64_t> stoppedAt;
    std::vector<std::string> pastBreak; // globals named only after it
    try {
        if (pytorch::looksLikeZip(source)) {
            const pytorch::ZipArchive zip(source, 0, source.size());
            const std::string first = zip.records().empty() ? "" : zip.records().front().name;
            const pytorch::ZipRecord* pkl =
                zip.find(first.substr(0, first.find('/')) + "/data.pkl");
            if (!pkl)
                fail(source, K::Invalid, "a zip archive without data.pkl");
            bytes = zip.read(*pkl, source.size());
            base = pkl->dataOffset;
            scan.objects.root = u.run(bytes, base);
        } else {
            ObjectTree scratch;
            TorchUnpickler header(scratch, source.name() + ": legacy header");
            uint64_t at = 0;
            for (int i = 0; i < 3; ++i) // magic, protocol, sys_info
                legacyPickle(source, header, at);
            base = at;
            bytes.resize(size_t(std::min<uint64_t>(source.size() - at, uint64_t(64) << 20)));
            source.read(at, bytes.data(), bytes.size());
            scan.objects.root = legacyPickle(source, u, at);
        }
    } catch (const CheckpointError& e) {
        scan.error = e.what();
        stoppedAt = e.offset();
    }
    scan.imports = pytorch::classifyImports(scan.objects, u);
    // A pickle broken on purpose may hide its payload past the break: the
    // opcodes after it are walked (not run) for the globals they name.
    if (stoppedAt && *stoppedAt >= base && *stoppedAt - base < bytes.size()) {
        for (const std::string& name :
             pytorch::globalsByOpcodes(bytes, size_t(*stoppedAt - base))) {
            auto it = std::find_if(scan.imports.begin(), scan.imports.end(),
                                   [&](const PickleImport& i) { return i.name == name; });
            if (it == scan.imports.end()) {
                PickleImport imp;
                imp.name = name;
                imp.risk = pytorch::globalTier(name);
                scan.imports.push_back(std::move(imp));
                it = scan.imports.end() - 1;
                pastBreak.push_back(name);
            }
            ++it->count;
        }
        std::sort(scan.imports.begin(), scan.imports.end(),
                  [](const PickleImport& x, const PickleImport& y) { return x.name < y.name; });
    }
    if (pytorch::objectDepth(scan.objects, kMaxObjectDepth) > kMaxObjectDepth) {
        // Too deep to render arguments without recursion that deep: the
        // names and risks stand, the calls go.
        if (scan.error.empty())
            scan.error = source.name() + ": the pickled object nests more than " +
                         std::to_string(kMaxObjectDepth) + " levels deep (too deep to show)";
        for (PickleImport& imp : scan.imports) {
            if (imp.risk == ImportRisk::Unsafe)
                scan.warnings.push_back("unsafe import " + imp.name);
            imp.calls.clear();
        }
        scan.objects.root = kNoNode;
        return scan;
    }
    scan.warnings = pytorch::importWarnings(scan.objects, scan.imports, {});
    for (std::string& w : scan.warnings)
        for (const std::string& name : pastBreak)
            if (w == "unsafe import " + name)
                w += " after the damaged spot at byte " + std::to_string(*stoppedAt) +
                     " (read, not evaluated: its arguments are not known)";
    return scan;
}

namespace {

// The Overview's row for a pickle whose object is a class's instance, not a
// container of tensors: the class torch.load would rebuild (a Trainer's
// TrainingArguments, a whole nn.Module saved by torch.save(model)).
std::vector<std::pair<std::string, std::string>> summary(const FormatIndex& index) {
    if (index.objects.empty())
        return {};
    const ObjectNode& root = index.objects.at(index.objects.root);
    if (root.kind != ObjectKind::Object)
        return {};
    return {{"Object", root.text}};
}

} // namespace

FormatModule pytorchFormat() {
    FormatModule m{Format::Pytorch,        "pytorch", "PyTorch checkpoint", ".pt",
                   "a torch.save archive", probe,     probeFailure,         open};
    m.patterns = "*.pt *.pth *.ckpt";
    m.mimeType = "application/x-pytorch";
    m.pickled = true;
    m.summary = summary;
    // No magic: a zip's "PK\3\4" is every zip's (detected by its data.pkl).
    return m;
}

} // namespace ckptscope
