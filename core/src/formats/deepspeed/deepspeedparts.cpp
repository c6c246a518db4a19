#include "formats/deepspeed/deepspeedparts.h"

#include "ckptscope/io/filesource.h"
#include "ckptscope/io/folderlisting.h"

#include "formats/pytorch/pytorchformat.h"

#include <map>

namespace ckptscope::deepspeed {

Part readPart(const std::string& folder, const std::string& name) {
    Part p;
    p.name = name;
    const std::string path = pathInFolder(folder, name);
    try {
        p.source = openByteSource(path);
    } catch (const IoError& e) {
        failInvalid(path, e.what());
    }
    p.index = openPytorchFile(*p.source);
    for (size_t i = 0; i < p.index.tensors.size(); ++i)
        p.tensorOf.emplace(p.index.tensors[i].name, i);
    return p;
}

std::optional<int64_t> zeroStage(const Part& p) {
    const uint32_t n = p.at({"optimizer_state_dict", "zero_stage"});
    if (const auto i = p.integer(n))
        return i;
    if (n == kNoNode)
        return std::nullopt;
    const ObjectTree& t = p.index.objects;
    const ObjectNode& o = t.at(n);
    if (o.kind != ObjectKind::Object || o.items.size() != 2 ||
        t.at(o.items[1]).kind != ObjectKind::String)
        return std::nullopt;
    static const std::map<std::string, int64_t> members = {
        {"disabled", 0}, {"optimizer_states", 1}, {"gradients", 2}, {"weights", 3}};
    const auto m = members.find(t.at(o.items[1]).text);
    return m == members.end() ? std::nullopt : std::optional(m->second);
}

std::vector<Param> paramShapes(const Part& model) {
    const uint32_t list = model.at({"param_shapes"});
    const ObjectTree& t = model.index.objects;
    if (list == kNoNode || t.at(list).kind != ObjectKind::List)
        failInvalid(model.name, "no param_shapes list (the parameters' names and shapes by group)");
    std::vector<Param> out;
    for (size_t g = 0; g < t.at(list).items.size(); ++g) {
        const ObjectNode& d = t.at(t.at(list).items[g]);
        if (d.kind != ObjectKind::Dict)
            failInvalid(model.name, "param_shapes[" + std::to_string(g) + "] is not a dict");
        for (size_t k = 0; k + 1 < d.items.size(); k += 2) {
            Param p;
            p.name = objectKeyText(t, d.items[k]);
            const auto shape = objectSizes(t, d.items[k + 1]);
            p.shape = shape.value_or(std::vector<uint64_t>{});
            p.group = g;
            if (!shape)
                failInvalid(model.name, "param_shapes: parameter " + quotedName(p.name) +
                                            ": its shape is not a list of sizes");
            for (uint64_t s : p.shape) {
                if (s != 0 && p.numel > UINT64_MAX / s)
                    failInvalid(model.name, "param_shapes: parameter " + quotedName(p.name) +
                                                ": its shape holds more than 2^64 elements");
                p.numel *= s;
            }
            out.push_back(std::move(p));
        }
    }
    return out;
}

} // namespace ckptscope::deepspeed
