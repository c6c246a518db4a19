#include "ckptscope/optimizer/optimizercheckpoint.h"

#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/openerror.h"
#include "ckptscope/formats/pytorch/modelbeside.h"

#include <algorithm>
#include <filesystem>
#include <unordered_map>

namespace ckptscope {

const char* updateRuleName(UpdateRule rule) {
    switch (rule) {
    case UpdateRule::Adam:
        return "adam";
    case UpdateRule::Sgd:
        return "sgd";
    case UpdateRule::Other:
        break;
    }
    return "other";
}

namespace {

// An optimizer state dict in the tree and the path its tensors' names start
// with ("", "optimizer_states.0.", "optimizer.").
struct StateDict {
    uint32_t node;
    std::string prefix;
};

bool isStateDict(const ObjectTree& tree, uint32_t node) {
    return node != kNoNode && tree.at(node).kind == ObjectKind::Dict &&
           tree.find(node, "state") != kNoNode && tree.find(node, "param_groups") != kNoNode;
}

std::vector<StateDict> stateDicts(const ObjectTree& tree) {
    std::vector<StateDict> out;
    if (tree.empty() || tree.at(tree.root).kind != ObjectKind::Dict)
        return out;
    if (isStateDict(tree, tree.root))
        out.push_back({tree.root, ""});
    if (const uint32_t list = tree.find(tree.root, "optimizer_states");
        list != kNoNode && tree.at(list).kind == ObjectKind::List) {
        const ObjectItems& items = tree.at(list).items;
        for (size_t i = 0; i < items.size(); ++i)
            if (isStateDict(tree, items[i]))
                out.push_back({items[i], "optimizer_states." + std::to_string(i) + "."});
    }
    // {"optimizer": …}, and DCP's get_state_dict layout {"model", "optim"}.
    for (const char* key : {"optimizer", "optim"})
        if (const uint32_t opt = tree.find(tree.root, key); isStateDict(tree, opt))
            out.push_back({opt, std::string(key) + "."});
    return out;
}

// A number a state dict holds as a Python number or a one-element tensor
// (torch keeps `step`, and with capturable=True `lr`, as tensors).
std::optional<double> numberAt(const Document& doc, uint32_t node) {
    if (node == kNoNode)
        return std::nullopt;
    const ObjectNode& n = doc.objects().at(node);
    switch (n.kind) {
    case ObjectKind::Bool:
    case ObjectKind::Int:
        return double(n.integer);
    case ObjectKind::Float:
        return n.real;
    case ObjectKind::Tensor: {
        if (n.tensor >= doc.tensors().size() || doc.tensors()[n.tensor].dataLen != 1)
            return std::nullopt;
        double value = 0;
        try {
            doc.readValues(n.tensor, 0, 1, &value);
        } catch (const CheckpointError&) {
            return std::nullopt; // an undecodable step: the figure is left out, named
        }
        return value;
    }
    default:
        return std::nullopt;
    }
}

OptimizerGroup readGroup(const Document& doc, uint32_t group, std::vector<std::string>& keys) {
    const ObjectTree& tree = doc.objects();
    OptimizerGroup g;
    const ObjectNode& dict = tree.at(group);
    for (size_t k = 0; k + 1 < dict.items.size(); k += 2)
        if (tree.at(dict.items[k]).kind == ObjectKind::String)
            keys.push_back(tree.at(dict.items[k]).text);
    const auto number = [&](const char* key) { return numberAt(doc, tree.find(group, key)); };
    g.lr = number("lr").value_or(0);
    if (const uint32_t betas = tree.find(group, "betas"); betas != kNoNode) {
        const ObjectNode& b = tree.at(betas);
        if ((b.kind == ObjectKind::Tuple || b.kind == ObjectKind::List) && b.items.size() == 2) {
            g.beta1 = numberAt(doc, b.items[0]).value_or(g.beta1);
            g.beta2 = numberAt(doc, b.items[1]).value_or(g.beta2);
        }
    }
    g.eps = number("eps").value_or(g.eps);
    g.weightDecay = number("weight_decay").value_or(0);
    g.momentum = number("momentum").value_or(0);
    g.amsgrad = number("amsgrad").value_or(0) != 0;
    g.nesterov = number("nesterov").value_or(0) != 0;
    if (const auto bc = number("bias_correction"))
        g.biasCorrection = *bc != 0;
    if (const auto cb = number("correct_bias")) { // transformers.AdamW: decoupled by design
        g.biasCorrection = *cb != 0;
        g.decoupledDecay = true;
    }
    if (const auto d = number("decoupled_weight_decay"))
        g.decoupledDecay = *d != 0;
    g.step = number("step");
    return g;
}

bool hasKey(const std::vector<std::string>& keys, const char* key) {
    return std::find(keys.begin(), keys.end(), key) != keys.end();
}

// Adam's update needs its group's betas and a key only Adam's groups carry
// (RAdam, NAdam and Adamax keep betas too, with other updates).
UpdateRule ruleOf(const std::vector<std::string>& groupKeys, const ParameterState& p) {
    if (p.expAvg && (p.expAvgSq || p.maxExpAvgSq) && hasKey(groupKeys, "betas") &&
        !hasKey(groupKeys, "momentum_decay") &&
        (hasKey(groupKeys, "amsgrad") || hasKey(groupKeys, "bias_correction") ||
         hasKey(groupKeys, "correct_bias")))
        return UpdateRule::Adam;
    if (p.momentumBuffer && hasKey(groupKeys, "momentum") && hasKey(groupKeys, "dampening"))
        return UpdateRule::Sgd;
    return UpdateRule::Other;
}

void readStateDict(const Document& optimizer, const StateDict& sd,
                   const std::unordered_map<std::string, size_t>& modelTensors, bool sameFile,
                   OptimizerCheckpoint& out) {
    const ObjectTree& tree = optimizer.objects();
    // Each id's group.
    std::vector<OptimizerGroup> groups;
    std::vector<std::vector<std::string>> groupKeys;
    // By id (torch's state_dict) or by parameter name (DCP's get_state_dict).
    std::unordered_map<std::string, size_t> groupOf;
    const uint32_t groupList = tree.find(sd.node, "param_groups");
    if (tree.at(groupList).kind != ObjectKind::List)
        return;
    for (uint32_t g : tree.at(groupList).items) {
        if (tree.at(g).kind != ObjectKind::Dict)
            continue;
        groupKeys.emplace_back();
        groups.push_back(readGroup(optimizer, g, groupKeys.back()));
        if (const uint32_t ids = tree.find(g, "params");
            ids != kNoNode && tree.at(ids).kind == ObjectKind::List)
            for (uint32_t id : tree.at(ids).items)
                if (tree.at(id).kind == ObjectKind::Int || tree.at(id).kind == ObjectKind::String)
                    groupOf.emplace(objectKeyText(tree, id), groups.size() - 1);
    }
    const ObjectNode& state = tree.at(tree.find(sd.node, "state"));
    if (state.kind != ObjectKind::Dict)
        return;
    const std::string where =
        sd.prefix.empty() ? "optimizer" : sd.prefix.substr(0, sd.prefix.size() - 1);
    for (size_t i = 0; i + 1 < state.items.size(); i += 2) {
        const ObjectNode& key = tree.at(state.items[i]);
        const uint32_t entry = state.items[i + 1];
        if ((key.kind != ObjectKind::Int && key.kind != ObjectKind::String) ||
            tree.at(entry).kind != ObjectKind::Dict)
            continue;
        ParameterState p;
        const std::string id = objectKeyText(tree, state.items[i]);
        const auto group = groupOf.find(id);
        if (group == groupOf.end()) {
            out.warnings.push_back(where + ": state " + id + " is in no parameter group: left out");
            continue;
        }
        if (key.kind == ObjectKind::String)
            p.parameter = key.text; // keyed by the parameter's own name
        p.group = groups[group->second];
        const ObjectNode& d = tree.at(entry);
        for (size_t k = 0; k + 1 < d.items.size(); k += 2) {
            const ObjectNode& name = tree.at(d.items[k]);
            const ObjectNode& value = tree.at(d.items[k + 1]);
            if (name.kind != ObjectKind::String)
                continue;
            if (name.text == "step")
                p.step = numberAt(optimizer, d.items[k + 1]);
            if (value.kind != ObjectKind::Tensor || value.tensor >= optimizer.tensors().size())
                continue;
            p.stateTensors.push_back(value.tensor);
            if (name.text == "exp_avg")
                p.expAvg = value.tensor;
            else if (name.text == "exp_avg_sq")
                p.expAvgSq = value.tensor;
            else if (name.text == "max_exp_avg_sq")
                p.maxExpAvgSq = value.tensor;
            else if (name.text == "momentum_buffer")
                p.momentumBuffer = value.tensor;
        }
        if (!p.step)
            p.step = p.group.step;
        for (size_t t : p.stateTensors)
            if (t < optimizer.traits().size() && !optimizer.traits()[t].parameter.empty()) {
                p.parameter = optimizer.traits()[t].parameter;
                break;
            }
        if (p.parameter.empty()) {
            p.parameter = sd.prefix + "state." + std::to_string(key.integer);
        } else {
            // The model's own name, or in a file holding both the prefix of
            // its state dict (Lightning's state_dict., a plain model.).
            for (const std::string& name :
                 {p.parameter, std::string("state_dict.") + p.parameter, "model." + p.parameter}) {
                const auto t = modelTensors.find(name);
                if (t != modelTensors.end() && (name == p.parameter || sameFile)) {
                    p.weight = t->second;
                    break;
                }
            }
            if (!p.weight)
                out.warnings.push_back(p.parameter + ": no tensor of that name in the model");
        }
        p.rule = ruleOf(groupKeys[group->second], p);
        out.parameters.push_back(std::move(p));
    }
}

// A DeepSpeed checkpoint opened as one model: its tree's param_groups name
// their parameters, whose master weights and moments are the tensors
// fp32.NAME, exp_avg.NAME and exp_avg_sq.NAME.
bool isZeroTree(const ObjectTree& tree) {
    return !tree.empty() && tree.at(tree.root).kind == ObjectKind::Dict &&
           tree.find(tree.root, "zero_stage") != kNoNode &&
           tree.find(tree.root, "param_groups") != kNoNode;
}

void readZeroGroups(const Document& doc, OptimizerCheckpoint& out) {
    const ObjectTree& tree = doc.objects();
    std::unordered_map<std::string, size_t> tensorOf;
    for (size_t i = 0; i < doc.tensors().size(); ++i)
        tensorOf.emplace(doc.tensors()[i].name, i);
    const auto tensor = [&](const std::string& name) -> std::optional<size_t> {
        const auto it = tensorOf.find(name);
        return it == tensorOf.end() ? std::nullopt : std::optional(it->second);
    };
    const uint32_t groups = tree.find(tree.root, "param_groups");
    if (tree.at(groups).kind != ObjectKind::List)
        return;
    for (uint32_t g : tree.at(groups).items) {
        if (tree.at(g).kind != ObjectKind::Dict)
            continue;
        std::vector<std::string> keys;
        const OptimizerGroup group = readGroup(doc, g, keys);
        const uint32_t names = tree.find(g, "params");
        if (names == kNoNode || tree.at(names).kind != ObjectKind::List)
            continue;
        for (uint32_t n : tree.at(names).items) {
            if (tree.at(n).kind != ObjectKind::String)
                continue;
            ParameterState p;
            p.parameter = tree.at(n).text;
            p.group = group;
            p.step = group.step;
            p.weight = tensor("fp32." + p.parameter);
            p.expAvg = tensor("exp_avg." + p.parameter);
            p.expAvgSq = tensor("exp_avg_sq." + p.parameter);
            for (const auto& t : {p.expAvg, p.expAvgSq})
                if (t)
                    p.stateTensors.push_back(*t);
            p.rule = ruleOf(keys, p);
            out.parameters.push_back(std::move(p));
        }
    }
}

} // namespace

std::optional<OptimizerCheckpoint>
findOptimizerCheckpoint(std::shared_ptr<const Document> model,
                        std::shared_ptr<const Document> optimizer) {
    if (isZeroTree(optimizer->objects())) {
        OptimizerCheckpoint out;
        readZeroGroups(*optimizer, out);
        out.model = optimizer; // the master weights are its own tensors
        out.optimizer = std::move(optimizer);
        return out;
    }
    const std::vector<StateDict> dicts = stateDicts(optimizer->objects());
    if (dicts.empty())
        return std::nullopt;
    OptimizerCheckpoint out;
    std::unordered_map<std::string, size_t> modelTensors;
    if (model)
        for (size_t i = 0; i < model->tensors().size(); ++i)
            modelTensors.emplace(model->tensors()[i].name, i);
    for (const StateDict& sd : dicts)
        readStateDict(*optimizer, sd, modelTensors, model == optimizer, out);
    out.model = std::move(model);
    out.optimizer = std::move(optimizer);
    return out;
}

std::optional<OptimizerCheckpoint> optimizerCheckpointFor(std::shared_ptr<const Document> doc) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const std::string& path = doc->path();
    const bool local = fs::is_regular_file(path, ec);
    if (isStateDict(doc->objects(), doc->objects().root)) { // an optimizer.pt
        const std::string model = local ? modelFileIn(fs::path(path).parent_path().string()) : "";
        return findOptimizerCheckpoint(model.empty() ? nullptr : Document::open(model), doc);
    }
    if (auto own = findOptimizerCheckpoint(doc, doc); own && !own->parameters.empty())
        return own;
    if (!local)
        return std::nullopt;
    const fs::path folder = fs::path(path).parent_path();
    const fs::path optimizer = folder / "optimizer.pt";
    if (!fs::is_regular_file(optimizer, ec) ||
        !fs::equivalent(modelFileIn(folder.string()), path, ec))
        return std::nullopt;
    return findOptimizerCheckpoint(doc, Document::open(optimizer.string()));
}

std::vector<std::optional<size_t>> parameterOfTensors(const OptimizerCheckpoint& checkpoint,
                                                      const Document& doc) {
    std::vector<std::optional<size_t>> out(doc.tensors().size());
    for (size_t k = 0; k < checkpoint.parameters.size(); ++k) {
        const ParameterState& p = checkpoint.parameters[k];
        if (checkpoint.model.get() == &doc && p.weight && *p.weight < out.size())
            out[*p.weight] = k;
        if (checkpoint.optimizer.get() == &doc)
            for (size_t t : p.stateTensors)
                if (t < out.size())
                    out[t] = k;
    }
    return out;
}

OptimizerCheckpoint openOptimizerCheckpoint(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    std::shared_ptr<const Document> optimizer;
    if (fs::is_directory(path, ec)) {
        const fs::path file = fs::path(path) / "optimizer.pt";
        if (!fs::is_regular_file(file, ec)) {
            // A folder that opens as one model holding its state (DeepSpeed).
            std::shared_ptr<const Document> doc;
            try {
                doc = Document::open(path);
            } catch (const OpenError&) {
            }
            if (doc)
                if (auto own = findOptimizerCheckpoint(doc, doc); own && !own->parameters.empty())
                    return *own;
            throw OpenError(path, "a folder without optimizer.pt: no optimizer state to read "
                                  "(a Trainer checkpoint folder holds one, a DeepSpeed folder "
                                  "its ranks' partitions)");
        }
        optimizer = Document::open(file.string());
    } else {
        optimizer = Document::open(path);
    }
    // A local optimizer.pt pairs with the model beside it (optimizerCheckpointFor);
    // any other file holds both, or none.
    const bool besideModel = fs::is_regular_file(optimizer->path(), ec) &&
                             isStateDict(optimizer->objects(), optimizer->objects().root);
    std::optional<OptimizerCheckpoint> state = besideModel
                                                   ? optimizerCheckpointFor(optimizer)
                                                   : findOptimizerCheckpoint(optimizer, optimizer);
    if (!state)
        throw OpenError(optimizer->path(),
                        "holds no optimizer state (no dict with \"state\" and \"param_groups\" at "
                        "its root, in optimizer_states or under \"optimizer\")");
    if (!state->model)
        state->warnings.insert(state->warnings.begin(),
                               "no model beside the optimizer state: update / weight and the "
                               "decay need the weights");
    return *state;
}

} // namespace ckptscope
