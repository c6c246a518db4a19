#include "formats/deepspeed/deepspeedfolder.h"

#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/io/filesource.h"
#include "ckptscope/io/folderlisting.h"

#include "formats/deepspeed/deepspeedparts.h"
#include "formats/pytorch/pytorchformat.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <unordered_map>

namespace ckptscope {

namespace fs = std::filesystem;

namespace {

using deepspeed::Param;
using deepspeed::Part;

const char* const kModelStates = "mp_rank_00_model_states.pt";
const char* const kStage3ModelStates = "zero_pp_rank_0_mp_rank_00_model_states.pt";

// A run of elements of one rank's flat fp32 vector, in the merged index.
struct Segment {
    uint32_t storage;       // FormatIndex::storages of the merged index
    uint64_t elementOffset; // of the segment's first element there
    uint64_t length;        // elements
};

class Builder {
public:
    Builder(std::string folder) : m_folder(std::move(folder)) {}

    FormatIndex build();

private:
    void findFiles();
    void addModule(Part& model);
    uint16_t addShard(const Part& p);
    void checkRanks();
    // Per rank, the F32 vectors of those names in its file, in order.
    std::vector<std::vector<Segment>> segments(const std::vector<std::string>& names);
    uint32_t storageOf(size_t rank, uint32_t storage);
    void cut(const std::vector<Segment>& flat, size_t rank, uint64_t from, uint64_t count,
             uint64_t at, const std::string& tensor, std::vector<TensorPiece>& pieces);
    // One logical tensor per parameter, cut from each rank's flat vectors.
    void addLogical(const std::string& prefix, const std::vector<Param>& params,
                    const std::vector<std::string>& groupTensors, bool moment);
    void addTensor(const std::string& name, const std::vector<uint64_t>& shape,
                   std::vector<TensorPiece> pieces, const std::string& parameter);
    void addTied(const Part& model);
    // Group g's step, a one-element tensor of rank 0, as a node of the
    // merged tree; kNoNode where it holds none in F32.
    uint32_t stepOf(size_t group, const std::string& base);

    std::string m_folder;
    std::string m_modelName;
    std::vector<std::string> m_rankNames;
    std::vector<Part> m_ranks;
    int64_t m_stage = 0;
    FormatIndex m_out;
    std::unordered_map<std::string, uint32_t> m_storageOf; // "shard:key" → merged storage
};

uint16_t Builder::addShard(const Part& p) {
    m_out.shards.push_back({p.source, p.name});
    return uint16_t(m_out.shards.size() - 1);
}

void Builder::findFiles() {
    static const std::regex rank(R"(^(bf16_)?zero_pp_rank_(\d+)_mp_rank_(\d+)_optim_states\.pt$)");
    static const std::regex layer(R"(^layer_\d+-model_states\.pt$)");
    std::map<uint64_t, std::string> ranks;
    std::vector<FolderEntry> entries;
    try {
        entries = listFolder(m_folder);
    } catch (const IoError& e) {
        failInvalid(m_folder, e.what());
    }
    for (const FolderEntry& e : entries) {
        const std::string& name = e.name;
        std::smatch m;
        if (std::regex_match(name, layer))
            failInvalid(m_folder, "pipeline parallelism is not read: found " + name);
        if (name.starts_with("mp_rank_") && name != kModelStates)
            failInvalid(m_folder, "tensor parallelism is not read: found " + name);
        if (!std::regex_match(name, m, rank))
            continue;
        if (m[3] != "00")
            failInvalid(m_folder, "tensor parallelism is not read: found " + name);
        if (m[2].length() > 6)
            failInvalid(m_folder, "rank number too large: " + name);
        if (!ranks.emplace(std::stoull(m[2]), name).second)
            failInvalid(m_folder, "two optimizer files of rank " + std::string(m[2]));
    }
    if (ranks.empty())
        failInvalid(m_folder, "no zero_pp_rank_R_mp_rank_00_optim_states.pt: no rank's partition");
    uint64_t expected = 0;
    for (const auto& [r, name] : ranks) {
        if (r != expected)
            failInvalid(m_folder, "the optimizer file of rank " + std::to_string(expected) +
                                      " is missing (found " + name + ")");
        m_rankNames.push_back(name);
        ++expected;
    }
    m_modelName = folderHoldsFile(m_folder, kModelStates) ? kModelStates : kStage3ModelStates;
}

void Builder::addModule(Part& model) {
    const uint16_t shard = addShard(model);
    const auto base = uint32_t(m_out.storages.size());
    const auto viewBase = uint32_t(m_out.views.size());
    for (TensorStorage s : model.index.storages) {
        s.shard = shard;
        m_out.storages.push_back(std::move(s));
    }
    for (TensorView v : model.index.views) {
        v.storage += base;
        for (TensorPiece& p : v.pieces)
            p.storage += base;
        m_out.views.push_back(std::move(v));
    }
    for (size_t i = 0; i < model.index.tensors.size(); ++i) {
        TensorEntry t = model.index.tensors[i];
        if (!t.name.starts_with("module."))
            continue; // the optimizer's or scheduler's, not the model's
        t.shard = shard;
        if (t.view != kNoView)
            t.view += viewBase;
        m_out.tensors.push_back(std::move(t));
        TensorTraits traits =
            i < model.index.traits.size() ? model.index.traits[i] : TensorTraits{};
        traits.sameAs = UINT32_MAX; // renumbered below by the storages shared
        m_out.traits.push_back(std::move(traits));
    }
}

std::vector<std::vector<Segment>> Builder::segments(const std::vector<std::string>& names) {
    std::vector<std::vector<Segment>> out;
    for (size_t r = 0; r < m_ranks.size(); ++r) {
        const Part& p = m_ranks[r];
        std::vector<Segment> segments;
        for (const std::string& name : names) {
            const auto t = p.tensorOf.find(name);
            if (t == p.tensorOf.end())
                failInvalid(p.name, "tensor " + quotedName(name) + " is missing");
            const TensorEntry& e = p.index.tensors[t->second];
            if (e.view == kNoView || !p.index.views[e.view].strides.empty() ||
                !p.index.views[e.view].pieces.empty() || e.dtype != Dtype::F32 ||
                e.shape.size() != 1)
                failInvalid(p.name,
                            "tensor " + quotedName(name) + " is not a contiguous F32 vector");
            const TensorView& v = p.index.views[e.view];
            segments.push_back({storageOf(r, v.storage), v.elementOffset, e.dataLen});
        }
        out.push_back(std::move(segments));
    }
    return out;
}

// Storage `storage` of rank r's file in the merged index, added once.
uint32_t Builder::storageOf(size_t rank, uint32_t storage) {
    const std::string key = std::to_string(rank) + ":" + std::to_string(storage);
    auto [it, fresh] = m_storageOf.try_emplace(key, uint32_t(m_out.storages.size()));
    if (fresh) {
        TensorStorage st = m_ranks[rank].index.storages.at(storage);
        st.shard = uint32_t(rank + 1); // shard 0 holds the model states
        m_out.storages.push_back(std::move(st));
    }
    return it->second;
}

// Elements [from, from + count) of rank r's flat vector (its segments one
// after another) as pieces of the tensor, from its element `at` on.
void Builder::cut(const std::vector<Segment>& flat, size_t rank, uint64_t from, uint64_t count,
                  uint64_t at, const std::string& tensor, std::vector<TensorPiece>& pieces) {
    uint64_t start = 0;
    for (const Segment& s : flat) {
        if (count == 0)
            return;
        if (from < start + s.length) {
            const uint64_t local = from - start;
            const uint64_t n = std::min(count, s.length - local);
            pieces.push_back({{at}, {n}, s.storage, s.elementOffset + local});
            from += n;
            at += n;
            count -= n;
        }
        start += s.length;
    }
    if (count != 0)
        failInvalid(m_rankNames[rank],
                    "tensor " + quotedName(tensor) + ": its partition ends at element " +
                        std::to_string(start) + ", before the elements the parameter needs");
}

void Builder::addTensor(const std::string& name, const std::vector<uint64_t>& shape,
                        std::vector<TensorPiece> pieces, const std::string& parameter) {
    TensorEntry t;
    t.name = name;
    t.shape = shape;
    uint64_t n = 1;
    for (uint64_t d : shape)
        n *= d;
    t.dataLen = n;
    t.elementCount = n;
    t.dtype = Dtype::F32;
    if (!pieces.empty()) { // where its first element is (a rank's file)
        const TensorStorage& s = m_out.storages[pieces.front().storage];
        t.dataOffset = s.offset + pieces.front().elementOffset * 4;
        t.shard = uint16_t(s.shard);
    }
    TensorView v;
    v.pieces = std::move(pieces);
    t.view = uint32_t(m_out.views.size());
    m_out.views.push_back(std::move(v));
    m_out.tensors.push_back(std::move(t));
    TensorTraits traits;
    traits.parameter = parameter;
    m_out.traits.push_back(std::move(traits));
}

void Builder::addLogical(const std::string& prefix, const std::vector<Param>& params,
                         const std::vector<std::string>& groupTensors, bool moment) {
    const auto flat = segments(groupTensors);
    const uint64_t world = m_ranks.size();
    std::vector<uint64_t> offset(m_stage == 3 ? 1 : groupTensors.size(), 0);
    for (const Param& p : params) {
        const std::string name = prefix + p.name;
        if (p.group >= groupTensors.size())
            failInvalid(m_modelName,
                        "param_shapes has more groups than " + m_rankNames[0] + " holds");
        if (p.shape.empty())
            failInvalid(m_modelName,
                        "parameter " + quotedName(p.name) + " has no dimensions: not read");
        std::vector<TensorPiece> pieces;
        if (m_stage == 3) { // each parameter split over the ranks, ceil(n / world) each
            const uint64_t part = (p.numel + world - 1) / world;
            for (uint64_t r = 0; r < world; ++r) {
                const uint64_t lo = std::min(p.numel, r * part), hi = std::min(p.numel, lo + part);
                if (lo < hi)
                    cut(flat[r], size_t(r), offset[0], hi - lo, lo, name, pieces);
            }
            offset[0] += part;
        } else { // each group's flat vector split over the ranks in equal partitions
            const size_t g = p.group;
            const uint64_t size = flat[0][g].length;
            for (uint64_t r = 0; r < world && size > 0; ++r) {
                if (flat[r][g].length != size)
                    failInvalid(m_rankNames[r], quotedName(groupTensors[g]) + " holds " +
                                                    std::to_string(flat[r][g].length) +
                                                    " elements, rank 0's " + std::to_string(size));
                const uint64_t lo = std::max(offset[g], r * size);
                const uint64_t hi = std::min(offset[g] + p.numel, (r + 1) * size);
                if (lo < hi)
                    cut({flat[r][g]}, size_t(r), lo - r * size, hi - lo, lo - offset[g], name,
                        pieces);
            }
            uint64_t got = 0;
            for (const TensorPiece& piece : pieces)
                got += piece.sizes[0];
            if (got != p.numel)
                failInvalid(m_folder, "tensor " + quotedName(name) +
                                          ": the ranks' partitions of group " + std::to_string(g) +
                                          " hold " + std::to_string(world * size) +
                                          " elements, fewer than its parameters need");
            offset[g] += p.numel;
        }
        addTensor(name, p.shape, std::move(pieces), moment ? p.name : "");
    }
}

// shared_params: a tied parameter's master weight written under both names,
// as zero_to_fp32.py writes it.
void Builder::addTied(const Part& model) {
    const uint32_t shared = model.at({"shared_params"});
    const ObjectTree& t = model.index.objects;
    if (shared == kNoNode || t.at(shared).kind != ObjectKind::Dict)
        return;
    const ObjectNode& d = t.at(shared);
    for (size_t k = 0; k + 1 < d.items.size(); k += 2) {
        const std::string alias = "fp32." + objectKeyText(t, d.items[k]);
        const std::string target = "fp32." + objectKeyText(t, d.items[k + 1]);
        const auto it = std::find_if(m_out.tensors.begin(), m_out.tensors.end(),
                                     [&](const TensorEntry& e) { return e.name == target; });
        if (it == m_out.tensors.end()) {
            m_out.warnings.push_back({"shared_params: " + quotedName(alias) + " is tied to " +
                                          quotedName(target) + ", which no group holds",
                                      std::nullopt});
            continue;
        }
        TensorEntry e = *it;
        e.name = alias;
        TensorTraits traits;
        traits.sameAs = uint32_t(it - m_out.tensors.begin());
        m_out.tensors.push_back(std::move(e));
        m_out.traits.push_back(std::move(traits));
    }
}

uint32_t Builder::stepOf(size_t group, const std::string& base) {
    const Part& r0 = m_ranks[0];
    const std::string step =
        "optimizer_state_dict." + base + ".state." + std::to_string(group) + ".step";
    const auto t = r0.tensorOf.find(step);
    if (t == r0.tensorOf.end())
        return kNoNode;
    const TensorEntry& e = r0.index.tensors[t->second];
    if (e.view == kNoView || e.dataLen != 1)
        return kNoNode;
    const TensorView& v = r0.index.views[e.view];
    TensorPiece piece{{0}, {1}, storageOf(0, v.storage), v.elementOffset};
    if (e.dtype != Dtype::F32)
        return kNoNode;
    addTensor("optimizer.step." + std::to_string(group), {1}, {piece}, "");
    ObjectNode n;
    n.kind = ObjectKind::Tensor;
    n.tensor = uint32_t(m_out.tensors.size() - 1);
    return m_out.objects.add(std::move(n));
}

void Builder::checkRanks() {
    const auto stage = deepspeed::zeroStage(m_ranks[0]);
    if (!stage || *stage < 1 || *stage > 3)
        failInvalid(m_rankNames[0], "no ZeRO stage 1, 2 or 3 in optimizer_state_dict.zero_stage");
    m_stage = *stage;
    for (const Part& p : m_ranks) {
        if (deepspeed::zeroStage(p) != stage)
            failInvalid(p.name, "its zero_stage differs from rank 0's");
        const uint32_t counts = p.at({"optimizer_state_dict", "partition_count"});
        const ObjectTree& t = p.index.objects;
        std::vector<uint32_t> each;
        if (counts != kNoNode && t.at(counts).kind == ObjectKind::List)
            each = t.at(counts).items;
        else if (counts != kNoNode)
            each = {counts};
        for (uint32_t c : each)
            if (const auto n = p.integer(c); !n || uint64_t(*n) != m_ranks.size())
                failInvalid(p.name, "partition_count says " +
                                        (n ? std::to_string(*n) : std::string("nothing readable")) +
                                        " ranks, but " + std::to_string(m_ranks.size()) +
                                        " rank files are here");
    }
}

FormatIndex Builder::build() {
    findFiles();
    Part model = deepspeed::readPart(m_folder, m_modelName);
    addModule(model);
    for (const std::string& name : m_rankNames) {
        m_ranks.push_back(deepspeed::readPart(m_folder, name));
        addShard(m_ranks.back());
    }
    checkRanks();
    const std::vector<Param> params = deepspeed::paramShapes(model);
    const bool stage3 = m_stage == 3;
    const std::string fp32 = stage3 ? "fp32_flat_groups" : "single_partition_of_fp32_groups";
    const std::string base = stage3 ? "optimizer_state_dict" : "base_optimizer_state";
    const uint32_t list = m_ranks[0].at({"optimizer_state_dict", fp32.c_str()});
    if (list == kNoNode || m_ranks[0].index.objects.at(list).kind != ObjectKind::List)
        failInvalid(m_rankNames[0], "no optimizer_state_dict." + fp32);
    const size_t groups = m_ranks[0].index.objects.at(list).items.size();
    std::vector<std::string> weights, expAvg, expAvgSq;
    for (size_t g = 0; g < groups; ++g) {
        weights.push_back("optimizer_state_dict." + fp32 + "." + std::to_string(g));
        const std::string state =
            "optimizer_state_dict." + base + ".state." + std::to_string(g) + ".";
        expAvg.push_back(state + "exp_avg");
        expAvgSq.push_back(state + "exp_avg_sq");
    }
    addLogical("fp32.", params, weights, false);
    const auto holds = [&](const std::vector<std::string>& names) {
        return std::all_of(m_ranks.begin(), m_ranks.end(), [&](const Part& p) {
            return std::all_of(names.begin(), names.end(),
                               [&](const std::string& n) { return p.tensorOf.count(n) != 0; });
        });
    };
    if (holds(expAvg) && holds(expAvgSq)) {
        addLogical("exp_avg.", params, expAvg, true);
        addLogical("exp_avg_sq.", params, expAvgSq, true);
    } else {
        m_out.warnings.push_back({"the optimizer's moments (" + base +
                                      ".state.G.exp_avg, exp_avg_sq) are not in every rank's "
                                      "file: only the weights are read",
                                  std::nullopt});
    }
    addTied(model);
    deepspeed::addOptimizerTree(m_out.objects, model, m_ranks[0], m_stage, m_ranks.size(), params,
                                base, [&](size_t group) { return stepOf(group, base); });
    for (IndexWarning& w : model.index.warnings)
        m_out.warnings.push_back({model.name + ": " + w.message, std::nullopt});
    return std::move(m_out);
}

} // namespace

std::string deepSpeedStepFolder(const std::string& folder) {
    if (folderHoldsFile(folder, kModelStates) || folderHoldsFile(folder, kStage3ModelStates))
        return folder;
    if (!folderHoldsFile(folder, "latest"))
        return {};
    const std::string latest = pathInFolder(folder, "latest");
    const auto source = openByteSource(latest);
    if (source->size() > 256)
        failInvalid(latest, "more than 256 bytes: not a DeepSpeed tag");
    std::string tag(size_t(source->size()), '\0');
    source->read(0, tag.data(), tag.size());
    while (!tag.empty() && std::isspace(static_cast<unsigned char>(tag.back())))
        tag.pop_back();
    // A plain name of a folder beside `latest`: never a path leaving it.
    if (tag.empty() || tag == "." || tag == ".." || tag.find_first_of("/\\") != std::string::npos ||
        tag.find('\0') != std::string::npos)
        failInvalid(latest, "the tag " + quotedName(tag) + " is not a folder name");
    if (!isFolder(pathInFolder(folder, tag)))
        failInvalid(latest, "names " + quotedName(tag) + ", which is not a folder beside it");
    return pathInFolder(folder, tag);
}

FormatIndex openDeepSpeed(const std::string& stepFolder) {
    return Builder(stepFolder).build();
}

namespace {

// A conversion writes the fp32 master weights under the parameters' names,
// as zero_to_fp32.py consolidates them (or the module as saved), and with
// the optimizer's state the moments under their own names.
std::vector<ConvertedTensor> masterWeights(const FormatIndex& index, const ConvertChoice& choice) {
    std::vector<ConvertedTensor> out;
    const std::string weights = choice.moduleWeights ? "module." : "fp32.";
    for (size_t i = 0; i < index.tensors.size(); ++i) {
        const std::string& name = index.tensors[i].name;
        if (name.starts_with(weights))
            out.push_back({uint32_t(i), name.substr(weights.size())});
        else if (choice.includeOptimizer && !name.starts_with("fp32.") &&
                 !name.starts_with("module."))
            out.push_back({uint32_t(i), name});
    }
    if (choice.moduleWeights) {
        // Stage 3 saves placeholders in the module: no weights to write.
        for (const ConvertedTensor& c : out)
            for (const TensorEntry& t : index.tensors)
                if (t.name == "fp32." + c.name && t.shape != index.tensors[c.tensor].shape)
                    throw CheckpointError(
                        CheckpointError::Kind::Invalid,
                        "the module holds " + quotedName(index.tensors[c.tensor].name) +
                            " as a placeholder (ZeRO stage 3 partitions the weights): only the "
                            "fp32 master weights can be written");
        return out; // the module holds its buffers and frozen parameters
    }
    // Buffers (in F32, as zero_to_fp32.py's `.float()` gives them) and
    // frozen parameters (as saved), from the module.
    const ObjectTree& t = index.objects;
    const std::pair<const char*, bool> kept[] = {{"buffer_names", true}, {"frozen_params", false}};
    for (const auto& [key, asF32] : kept) {
        const uint32_t names = t.empty() ? kNoNode : t.find(t.root, key);
        if (names == kNoNode)
            continue;
        for (uint32_t n : t.at(names).items)
            for (size_t i = 0; i < index.tensors.size(); ++i)
                if (index.tensors[i].name == "module." + t.at(n).text) {
                    out.push_back({uint32_t(i), t.at(n).text, asF32});
                    break;
                }
    }
    return out;
}

} // namespace

FormatModule deepSpeedFormat() {
    FormatModule m =
        folderModule("deepspeed", "DeepSpeed ZeRO checkpoint",
                     "a folder with latest, or mp_rank_00_model_states.pt and the ranks' "
                     "zero_pp_rank_R_mp_rank_00_optim_states.pt");
    m.converted = masterWeights;
    return m;
}

} // namespace ckptscope
