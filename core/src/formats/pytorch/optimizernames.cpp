#include "formats/pytorch/optimizernames.h"

#include "ckptscope/formats/formatmodule.h"
#include "ckptscope/formats/pytorch/modelbeside.h"
#include "ckptscope/io/filesource.h"

#include <algorithm>
#include <filesystem>
#include <tuple>

namespace ckptscope::pytorch {

namespace {

// Buffers a state dict saves beside parameters (torch.nn, transformers).
bool isBuffer(const std::string& name) {
    const std::string last = name.substr(name.rfind('.') + 1);
    for (const char* b :
         {"running_mean", "running_var", "num_batches_tracked", "inv_freq", "position_ids",
          "token_type_ids", "masked_bias", "mask", "attention_mask", "causal_mask"})
        if (last == b)
            return true;
    return false;
}

// The Trainer's no-decay parameters: biases and the weights of norms.
bool isNoDecay(const std::string& name) {
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    return lower.find("bias") != std::string::npos || lower.find("norm") != std::string::npos ||
           lower.find("ln_") != std::string::npos;
}

bool isInt(const ObjectTree& t, uint32_t n) {
    return n != kNoNode && t.at(n).kind == ObjectKind::Int;
}

struct Group {
    std::vector<int64_t> ids;
};

// One order of parameters for the ids: each group takes the next ids.
using Order = std::vector<size_t>; // parameter index per position in the groups' ids

} // namespace

std::vector<ModelParameter> modelParameters(const FormatIndex& model, const std::string& prefix) {
    std::vector<ModelParameter> out;
    std::vector<std::tuple<uint32_t, uint64_t, std::vector<uint64_t>>> seen;
    for (size_t i = 0; i < model.tensors.size(); ++i) {
        const TensorEntry& t = model.tensors[i];
        if (t.name.compare(0, prefix.size(), prefix) != 0)
            continue;
        const std::string name = t.name.substr(prefix.size());
        if (isBuffer(name))
            continue;
        if (!model.traits.empty() && model.traits[i].sameAs != UINT32_MAX)
            continue;
        if (t.view != kNoView && model.views[t.view].pieces.empty()) {
            const TensorView& v = model.views[t.view];
            auto key = std::make_tuple(v.storage, v.elementOffset, t.shape);
            if (std::find(seen.begin(), seen.end(), key) != seen.end())
                continue; // tied: the very elements of an earlier parameter
            seen.push_back(std::move(key));
        }
        out.push_back({name, t.shape});
    }
    return out;
}

std::string nameOptimizerState(FormatIndex& index, uint32_t optimizer,
                               const std::vector<ModelParameter>& params) {
    const ObjectTree& tree = index.objects;
    const uint32_t state = tree.find(optimizer, "state");
    const uint32_t groupsNode = tree.find(optimizer, "param_groups");
    if (state == kNoNode || groupsNode == kNoNode || tree.at(state).kind != ObjectKind::Dict ||
        tree.at(groupsNode).kind != ObjectKind::List)
        return "not an optimizer state dict (no state and param_groups)";
    std::vector<Group> groups;
    for (uint32_t g : tree.at(groupsNode).items) {
        const uint32_t ids = tree.at(g).kind == ObjectKind::Dict ? tree.find(g, "params") : kNoNode;
        if (ids == kNoNode || tree.at(ids).kind != ObjectKind::List)
            return "a parameter group without a list of params";
        Group group;
        for (uint32_t id : tree.at(ids).items) {
            if (!isInt(tree, id))
                return "a parameter group's params are not ids";
            group.ids.push_back(tree.at(id).integer);
        }
        groups.push_back(std::move(group));
    }
    size_t total = 0;
    for (const Group& g : groups)
        total += g.ids.size();
    if (total != params.size())
        return std::to_string(total) + " parameter ids in the parameter groups, " +
               std::to_string(params.size()) + " parameters in the model";
    // The state tensors of each id: (entry index) per key.
    std::vector<std::pair<int64_t, std::vector<uint32_t>>> tensorsOf;
    const ObjectNode& s = tree.at(state);
    for (size_t i = 0; i + 1 < s.items.size(); i += 2) {
        if (!isInt(tree, s.items[i]) || tree.at(s.items[i + 1]).kind != ObjectKind::Dict)
            continue;
        std::vector<uint32_t> entries;
        const ObjectNode& d = tree.at(s.items[i + 1]);
        for (size_t k = 1; k < d.items.size(); k += 2)
            if (tree.at(d.items[k]).kind == ObjectKind::Tensor &&
                tree.at(d.items[k]).tensor < index.tensors.size())
                entries.push_back(tree.at(d.items[k]).tensor);
        tensorsOf.emplace_back(tree.at(s.items[i]).integer, std::move(entries));
    }
    // The candidate orders: model order; the Trainer's decayed-then-rest.
    std::vector<std::pair<const char*, Order>> orders;
    Order plain(params.size());
    for (size_t i = 0; i < plain.size(); ++i)
        plain[i] = i;
    orders.emplace_back("model order", plain);
    if (groups.size() == 2) {
        Order trainer;
        for (size_t i = 0; i < params.size(); ++i)
            if (!isNoDecay(params[i].name))
                trainer.push_back(i);
        const size_t decayed = trainer.size();
        for (size_t i = 0; i < params.size(); ++i)
            if (isNoDecay(params[i].name))
                trainer.push_back(i);
        if (decayed == groups[0].ids.size())
            orders.emplace_back("the Trainer's grouping", trainer);
    }
    for (const auto& [how, order] : orders) {
        std::vector<std::pair<int64_t, size_t>> paramOfId; // id → parameter
        size_t at = 0;
        for (const Group& g : groups)
            for (int64_t id : g.ids)
                paramOfId.emplace_back(id, order[at++]);
        std::sort(paramOfId.begin(), paramOfId.end());
        bool fits = true;
        for (const auto& [id, entries] : tensorsOf) {
            const auto p =
                std::lower_bound(paramOfId.begin(), paramOfId.end(), std::make_pair(id, size_t(0)));
            if (p == paramOfId.end() || p->first != id) {
                fits = false;
                break;
            }
            for (uint32_t e : entries) {
                const TensorEntry& t = index.tensors[e];
                if (t.elementCount.value_or(0) > 1 && t.shape != params[p->second].shape)
                    fits = false;
            }
            if (!fits)
                break;
        }
        if (!fits)
            continue;
        for (const auto& [id, entries] : tensorsOf) {
            const auto p =
                std::lower_bound(paramOfId.begin(), paramOfId.end(), std::make_pair(id, size_t(0)));
            for (uint32_t e : entries)
                index.traits[e].parameter = params[p->second].name;
        }
        return {};
    }
    return "no order of the model's " + std::to_string(params.size()) +
           " parameters gives every state tensor its parameter's shape";
}

void nameOptimizersInFile(FormatIndex& index) {
    const ObjectTree& tree = index.objects;
    if (tree.empty() || tree.at(tree.root).kind != ObjectKind::Dict)
        return;
    const auto run = [&](const char* modelKey, uint32_t optimizer, const std::string& where) {
        const std::vector<ModelParameter> params =
            modelParameters(index, std::string(modelKey) + ".");
        if (params.empty())
            return;
        const std::string why = nameOptimizerState(index, optimizer, params);
        if (!why.empty())
            index.warnings.push_back(
                {where +
                     ": its tensors keep their ids, the parameter names were not inferred: " + why,
                 std::nullopt});
    };
    const uint32_t root = tree.root;
    if (const uint32_t states = tree.find(root, "optimizer_states");
        states != kNoNode && tree.find(root, "state_dict") != kNoNode &&
        tree.at(states).kind == ObjectKind::List) {
        const std::vector<uint32_t> list = tree.at(states).items;
        for (size_t i = 0; i < list.size(); ++i)
            if (tree.at(list[i]).kind == ObjectKind::Dict)
                run("state_dict", list[i], "optimizer_states." + std::to_string(i));
    }
    if (const uint32_t opt = tree.find(root, "optimizer"); opt != kNoNode &&
                                                           tree.find(root, "model") != kNoNode &&
                                                           tree.at(opt).kind == ObjectKind::Dict)
        run("model", opt, "optimizer");
}

void nameOptimizerFromFolder(FormatIndex& index, const std::string& path) {
    const ObjectTree& tree = index.objects;
    if (tree.empty() || tree.at(tree.root).kind != ObjectKind::Dict ||
        tree.find(tree.root, "state") == kNoNode || tree.find(tree.root, "param_groups") == kNoNode)
        return;
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path file(path);
    if (!fs::is_regular_file(file, ec))
        return; // a URL, or not a file: nothing to look beside
    const std::string model = modelFileIn(file.parent_path().string());
    if (model.empty() || fs::equivalent(model, file, ec))
        return;
    const std::string sibling = fs::path(model).filename().string();
    FormatIndex modelIndex;
    try {
        const auto source = openByteSource(model);
        modelIndex = detectFormat(*source).open(*source);
    } catch (const std::exception& e) {
        index.warnings.push_back({"the model beside it (" + sibling +
                                      ") could not be read to name the optimizer's "
                                      "parameters: " +
                                      e.what(),
                                  std::nullopt});
        return;
    }
    const std::string why = nameOptimizerState(index, tree.root, modelParameters(modelIndex, ""));
    if (!why.empty())
        index.warnings.push_back({"the optimizer's tensors keep their ids: their parameter "
                                  "names could not be inferred from " +
                                      sibling + ": " + why,
                                  std::nullopt});
}

} // namespace ckptscope::pytorch

namespace ckptscope {

std::string modelFileIn(const std::string& folder) {
    namespace fs = std::filesystem;
    std::error_code ec;
    for (const char* name : {"model.safetensors", "model.safetensors.index.json",
                             "pytorch_model.bin", "pytorch_model.bin.index.json"}) {
        const fs::path model = fs::path(folder) / name;
        if (fs::is_regular_file(model, ec))
            return model.string();
    }
    return {};
}

} // namespace ckptscope
