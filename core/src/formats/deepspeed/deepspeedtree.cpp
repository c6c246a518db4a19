#include "formats/deepspeed/deepspeedparts.h"

namespace ckptscope::deepspeed {

namespace {

// Appends the nodes of the tree addOptimizerTree builds.
class TreeWriter {
public:
    explicit TreeWriter(ObjectTree& out) : m_out(out) {}

    static ObjectNode node(ObjectKind kind) {
        ObjectNode n;
        n.kind = kind;
        return n;
    }
    uint32_t add(ObjectNode n) { return m_out.add(std::move(n)); }
    uint32_t text(const std::string& value) {
        ObjectNode n = node(ObjectKind::String);
        n.text = value;
        return add(std::move(n));
    }
    uint32_t integer(int64_t value) {
        ObjectNode n = node(ObjectKind::Int);
        n.integer = value;
        return add(std::move(n));
    }
    // A number, string or flag of `from` copied; a tuple or list with its
    // numbers (one level); kNoNode for anything else.
    uint32_t copy(const ObjectTree& from, uint32_t n) {
        const ObjectNode& o = from.at(n);
        switch (o.kind) {
        case ObjectKind::None:
        case ObjectKind::Bool:
        case ObjectKind::Int:
        case ObjectKind::Float:
        case ObjectKind::String: {
            ObjectNode c = node(o.kind);
            c.integer = o.integer;
            c.real = o.real;
            c.text = o.text;
            return add(std::move(c));
        }
        case ObjectKind::Tuple:
        case ObjectKind::List: {
            ObjectNode c = node(o.kind);
            for (uint32_t i : o.items)
                if (const ObjectKind k = from.at(i).kind;
                    k == ObjectKind::Int || k == ObjectKind::Float)
                    c.items.push_back(copy(from, i));
            return add(std::move(c));
        }
        default:
            return kNoNode;
        }
    }

private:
    ObjectTree& m_out;
};

// The names of the module's tensors a consolidation carries from it (no
// optimizer state holds them): `key` is buffer_names (a list) or
// frozen_param_shapes (a dict of name → shape).
uint32_t moduleNames(TreeWriter& w, const Part& model, const char* key) {
    ObjectNode names = TreeWriter::node(ObjectKind::List);
    if (const uint32_t n = model.at({key}); n != kNoNode) {
        const ObjectNode& o = model.index.objects.at(n);
        const bool dict = o.kind == ObjectKind::Dict;
        if (dict || o.kind == ObjectKind::List)
            for (size_t k = 0; k < o.items.size(); k += dict ? 2 : 1)
                if (model.index.objects.at(o.items[k]).kind == ObjectKind::String)
                    names.items.push_back(w.text(model.index.objects.at(o.items[k]).text));
    }
    return w.add(std::move(names));
}

// Rank 0's group `g`: its numbers and flags copied (one level of tuple), its
// parameters' names, its step.
uint32_t group(TreeWriter& w, const ObjectTree& rt, const ObjectNode& src, size_t g,
               const std::vector<Param>& params,
               const std::function<uint32_t(size_t group)>& stepOf) {
    ObjectNode group = TreeWriter::node(ObjectKind::Dict);
    for (size_t k = 0; k + 1 < src.items.size(); k += 2) {
        if (rt.at(src.items[k]).kind != ObjectKind::String || rt.at(src.items[k]).text == "params")
            continue;
        if (const uint32_t v = w.copy(rt, src.items[k + 1]); v != kNoNode) {
            group.items.push_back(w.text(rt.at(src.items[k]).text));
            group.items.push_back(v);
        }
    }
    ObjectNode names = TreeWriter::node(ObjectKind::List);
    for (const Param& p : params)
        if (p.group == g)
            names.items.push_back(w.text(p.name));
    group.items.push_back(w.text("params"));
    group.items.push_back(w.add(std::move(names)));
    if (const uint32_t step = stepOf(g); step != kNoNode) {
        group.items.push_back(w.text("step"));
        group.items.push_back(step);
    }
    return w.add(std::move(group));
}

} // namespace

void addOptimizerTree(ObjectTree& out, const Part& model, const Part& rank0, int64_t stage,
                      size_t worldSize, const std::vector<Param>& params, const std::string& base,
                      const std::function<uint32_t(size_t group)>& stepOf) {
    TreeWriter w(out);
    ObjectNode root = TreeWriter::node(ObjectKind::Dict);
    const auto put = [&root](uint32_t key, uint32_t value) {
        root.items.push_back(key);
        root.items.push_back(value);
    };
    put(w.text("zero_stage"), w.integer(stage));
    put(w.text("buffer_names"), moduleNames(w, model, "buffer_names"));
    put(w.text("frozen_params"), moduleNames(w, model, "frozen_param_shapes"));
    put(w.text("world_size"), w.integer(int64_t(worldSize)));
    const ObjectTree& mt = model.index.objects;
    if (const uint32_t v = model.at({"ds_version"});
        v != kNoNode && mt.at(v).kind == ObjectKind::String)
        put(w.text("ds_version"), w.text(mt.at(v).text));
    if (const auto steps = model.integer(model.at({"global_steps"})))
        put(w.text("global_steps"), w.integer(*steps));
    const ObjectTree& rt = rank0.index.objects;
    const uint32_t groups = rank0.at({"optimizer_state_dict", base.c_str(), "param_groups"});
    ObjectNode list = TreeWriter::node(ObjectKind::List);
    if (groups != kNoNode && rt.at(groups).kind == ObjectKind::List) {
        const std::vector<uint32_t> items = rt.at(groups).items;
        for (size_t g = 0; g < items.size(); ++g)
            if (rt.at(items[g]).kind == ObjectKind::Dict)
                list.items.push_back(group(w, rt, rt.at(items[g]), g, params, stepOf));
    }
    put(w.text("param_groups"), w.add(std::move(list)));
    out.root = w.add(std::move(root));
}

} // namespace ckptscope::deepspeed
