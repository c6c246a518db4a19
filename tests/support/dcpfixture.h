#pragma once

// PyTorch distributed checkpoint (DCP) folders written by the tests, in the
// layout torch.distributed.checkpoint's FileSystemWriter saves
// (docs/FORMATS.md "PyTorch DCP"): `.metadata`, a protocol 4 pickle of
// Metadata(state_dict_metadata, planner_data, storage_data) built of
// dataclasses (NEWOBJ + BUILD, memoized class globals), and one .distcp file
// per rank holding one torch.save archive per chunk or non-tensor item. The
// values are chosen here, so a reader's logical tensors can be checked
// against a plain assembly of the same chunks.
#include "picklewriter.h"
#include "safetensorsbuilder.h"

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace testsupport {

struct DcpChunk {
    std::vector<uint64_t> offsets, sizes;
    uint64_t rank = 0;
};

struct DcpTensor {
    std::string fqn;
    std::vector<std::string> path; // planner_data's key path
    std::vector<uint64_t> shape;
    bool bf16 = false;
    std::vector<float> values; // the logical tensor, C order (bf16-exact when bf16)
    std::vector<DcpChunk> chunks;

    uint64_t numel() const {
        uint64_t n = 1;
        for (uint64_t d : shape)
            n *= d;
        return n;
    }
};

// A non-tensor item: the pickle (protocol 2, no STOP) of its value.
struct DcpItem {
    std::string fqn;
    std::vector<std::string> path;
    std::string pickle;
    uint64_t rank = 0;
};

struct DcpFixture {
    uint64_t world = 1;
    std::vector<DcpTensor> tensors;
    std::vector<DcpItem> items;
    std::string version = "1.0.0";
    // Hooks for damaged sets: a file name a chunk's storage_data gives
    // instead of its rank's, transform descriptors written for every chunk.
    std::map<std::string, std::string> fileOverride; // fqn → relative_path
    bool transforms = false;
    // Rank files as SerializationFormat.SAFETENSORS writes them: the
    // non-tensor items, then one safetensors blob of the rank's chunks, each
    // under its tensor's name, every chunk's _StorageInfo at the blob's first
    // byte with the length of its values.
    bool safetensors = false;
    // planner_data entries naming no item (a plan written by hand).
    std::map<std::string, std::vector<std::string>> strayPaths;
    std::string planDtype; // when set, the dtype the plan names for every tensor
    // Every 2-D chunk saved as torch saves a transposed whole tensor: its
    // storage in column order, strides (1, rows) — plus `strideOverrun` on
    // the second, reaching past the storage (a damaged set).
    bool transposedChunks = false;
    uint64_t strideOverrun = 0;

    // The float the bf16 of f (its top 16 bits) stands for. Not inlined:
    // GCC 12 at -O2 dropped the mask when it was, inside make()'s loops.
    [[gnu::noinline]] static float bf16Exact(float f) {
        uint32_t b;
        std::memcpy(&b, &f, 4);
        b &= 0xffff0000u;
        std::memcpy(&f, &b, 4);
        return f;
    }

    // Dimension 0 split as FSDP / DTensor Shard(0) split it: ceil(n / world)
    // rows per rank, the last ranks holding fewer (or none).
    static std::vector<DcpChunk> rowChunks(const std::vector<uint64_t>& shape, uint64_t world) {
        std::vector<DcpChunk> out;
        if (shape.empty()) {
            out.push_back({{}, {}, 0});
            return out;
        }
        const uint64_t per = (shape[0] + world - 1) / world;
        for (uint64_t r = 0; r < world; ++r) {
            const uint64_t lo = std::min(shape[0], r * per), hi = std::min(shape[0], lo + per);
            if (lo == hi)
                continue;
            DcpChunk c{std::vector<uint64_t>(shape.size(), 0), shape, r};
            c.offsets[0] = lo;
            c.sizes[0] = hi - lo;
            out.push_back(std::move(c));
        }
        return out;
    }

    // A model and an Adam state by parameter name (get_state_dict's layout:
    // model.NAME, optim.state.NAME.{exp_avg, exp_avg_sq, step},
    // optim.param_groups), every tensor split by rows over `world` ranks.
    static DcpFixture make(uint64_t world, const std::vector<std::vector<uint64_t>>& shapes,
                           bool bf16 = false) {
        DcpFixture f;
        f.world = world;
        uint32_t x = 2024;
        auto next = [&x] {
            x = x * 1664525u + 1013904223u;
            return float(double(x >> 8) / double(1u << 23) - 1.0);
        };
        for (size_t k = 0; k < shapes.size(); ++k) {
            const std::string name = "layers." + std::to_string(k) + ".weight";
            for (const char* part : {"", "exp_avg", "exp_avg_sq"}) {
                DcpTensor t;
                t.shape = shapes[k];
                t.bf16 = bf16 && *part == '\0';
                if (*part == '\0') {
                    t.fqn = "model." + name;
                    t.path = {"model", name};
                } else {
                    t.fqn = "optim.state." + name + "." + part;
                    t.path = {"optim", "state", name, part};
                }
                for (uint64_t i = 0; i < t.numel(); ++i) {
                    const float v = t.bf16 ? bf16Exact(0.5f * next()) : 0.01f * next();
                    // exp_avg_sq is a mean of squares: positive.
                    t.values.push_back(std::string_view(part) == "exp_avg_sq" ? v * v + 1e-9f : v);
                }
                t.chunks = rowChunks(t.shape, world);
                f.tensors.push_back(std::move(t));
            }
            DcpTensor step;
            step.fqn = "optim.state." + name + ".step";
            step.path = {"optim", "state", name, "step"};
            step.values = {10.f};
            step.chunks = rowChunks({}, world);
            f.tensors.push_back(std::move(step));
        }
        // A tensor split by columns and rows (a 2-D grid of boxes, as
        // DTensor places Shard(0) × Shard(1)): pieces that are not runs.
        DcpTensor grid;
        grid.fqn = "model.proj.weight";
        grid.path = {"model", "proj.weight"};
        grid.shape = {5, 7};
        grid.bf16 = bf16;
        for (uint64_t i = 0; i < 35; ++i)
            grid.values.push_back(bf16 ? bf16Exact(0.25f * next()) : 0.25f * next());
        const uint64_t cols[] = {0, 3, 7}, rowsAt[] = {0, 2, 5};
        for (int a = 0; a < 2; ++a)
            for (int b = 0; b < 2; ++b)
                grid.chunks.push_back({{rowsAt[a], cols[b]},
                                       {rowsAt[a + 1] - rowsAt[a], cols[b + 1] - cols[b]},
                                       uint64_t(2 * a + b) % world});
        f.tensors.push_back(std::move(grid));
        // param_groups: [{"lr": 0.001, "betas": (0.9, 0.999), "eps": 1e-08,
        // "weight_decay": 0.0, "amsgrad": False, "params": [names]}], AdamW's
        // keys as get_state_dict gives them (parameters by name).
        picklewriter::Pickle g;
        g.proto(2).emptyList().mark().emptyDict().mark();
        g.shortBinstring("lr").binfloat(1e-3);
        g.shortBinstring("betas").mark().binfloat(0.9).binfloat(0.999).tuple();
        g.shortBinstring("eps").binfloat(1e-8);
        g.shortBinstring("weight_decay").binfloat(0.0);
        g.shortBinstring("amsgrad").boolean(false);
        g.shortBinstring("params").emptyList().mark();
        for (size_t k = 0; k < shapes.size(); ++k)
            g.unicode("layers." + std::to_string(k) + ".weight");
        g.appends().setitems().appends();
        f.items.push_back({"optim.param_groups", {"optim", "param_groups"}, g.bytes, 0});
        return f;
    }

    // ---- the .metadata pickle
    struct Meta {
        picklewriter::Pickle p;
        std::map<std::string, uint32_t> memo;
        uint32_t next = 0;

        void global(const std::string& module, const std::string& name) {
            const std::string key = module + "." + name;
            if (auto it = memo.find(key); it != memo.end()) {
                if (it->second < 256)
                    p.binget(uint8_t(it->second));
                else
                    p.longBinget(it->second);
                return;
            }
            p.stackGlobal(module, name).memoize();
            memo[key] = next++;
        }
        // A dataclass: cls.__new__(cls), then BUILD of the dict from `fields`.
        template <typename Fields>
        void dataclass(const std::string& module, const std::string& name, Fields fields) {
            global(module, name);
            p.emptyTuple().op(uint8_t(0x81)).memoize();
            ++next;
            p.emptyDict().memoize();
            ++next;
            p.mark();
            fields();
            p.setitems().build();
        }
        void integer(uint64_t v) {
            if (v < (uint64_t(1) << 31))
                p.binint(int32_t(v));
            else
                p.long1(std::string(reinterpret_cast<const char*>(&v), 8) + std::string(1, '\0'));
        }
        void key(const std::string& k) {
            p.shortUnicode(k).memoize();
            ++next;
        }
        void size(const std::vector<uint64_t>& v) {
            global("torch", "Size");
            p.mark().mark();
            for (uint64_t x : v)
                integer(x);
            p.tuple().tuple().reduce();
        }
    };

    // A chunk's stored values (little-endian f32 or bf16) and their strides
    // in the box.
    struct ChunkData {
        std::string bytes;
        std::vector<uint64_t> stride;
        uint64_t count = 1;
    };
    ChunkData chunkData(const DcpTensor& t, const DcpChunk& c) const {
        // The chunk's values in C order of its box.
        std::vector<float> box;
        const size_t rank = t.shape.size();
        uint64_t n = 1;
        for (uint64_t s : c.sizes)
            n *= s;
        for (uint64_t i = 0; i < n; ++i) {
            uint64_t rest = i, at = 0, stride = 1;
            std::vector<uint64_t> idx(rank);
            for (size_t k = rank; k-- > 0;) {
                idx[k] = rest % c.sizes[k] + c.offsets[k];
                rest /= c.sizes[k];
            }
            bool inside = true; // a damaged set's chunk may reach outside
            for (size_t k = rank; k-- > 0;) {
                inside = inside && idx[k] < t.shape[k];
                at += idx[k] * stride;
                stride *= t.shape[k];
            }
            box.push_back(inside ? t.values[at] : 0.f);
        }
        std::vector<uint64_t> stride(rank);
        uint64_t s = 1;
        for (size_t k = rank; k-- > 0;) {
            stride[k] = s;
            s *= c.sizes[k];
        }
        if (transposedChunks && rank == 2) {
            std::vector<float> columns;
            for (uint64_t j = 0; j < c.sizes[1]; ++j)
                for (uint64_t i = 0; i < c.sizes[0]; ++i)
                    columns.push_back(box[i * c.sizes[1] + j]);
            box = std::move(columns);
            stride = {1, c.sizes[0] + strideOverrun};
        }
        std::string data;
        if (t.bf16) {
            std::vector<uint16_t> b;
            for (float v : box) {
                uint32_t u;
                std::memcpy(&u, &v, 4);
                b.push_back(uint16_t(u >> 16));
            }
            data = picklewriter::leBytes(b);
        } else {
            data = picklewriter::leBytes(box);
        }
        return {std::move(data), std::move(stride), n};
    }

    std::string chunkArchive(const DcpTensor& t, const DcpChunk& c) const {
        const ChunkData d = chunkData(t, c);
        picklewriter::Pickle p;
        p.proto(2)
            .tensor("0", t.bf16 ? "BFloat16Storage" : "FloatStorage", d.count, 0, c.sizes, d.stride)
            .stop();
        return picklewriter::torchZip("archive", p.bytes, {{"0", d.bytes}});
    }

    void write(const std::string& dir) const {
        namespace fs = std::filesystem;
        fs::create_directories(dir);
        struct Placed {
            std::string file;
            uint64_t offset, length;
        };
        std::vector<std::string> files(world);
        std::vector<std::vector<Placed>> where(tensors.size());
        std::vector<Placed> itemWhere;
        auto fileName = [](uint64_t r) { return "__" + std::to_string(r) + "_0.distcp"; };
        for (size_t i = 0; i < items.size(); ++i) {
            picklewriter::Pickle p;
            p.raw(items[i].pickle).stop();
            const std::string a = picklewriter::torchZip("archive", p.bytes, {});
            itemWhere.push_back({fileName(items[i].rank), files[items[i].rank].size(), a.size()});
            files[items[i].rank] += a;
        }
        if (safetensors && (transposedChunks || !fileOverride.empty()))
            throw std::logic_error("DcpFixture: safetensors rank files write C-order chunks "
                                   "under their rank's name");
        if (safetensors) {
            std::vector<std::vector<StTensor>> blobs(world);
            std::vector<std::string> sharding(world);
            for (size_t i = 0; i < tensors.size(); ++i)
                for (const DcpChunk& c : tensors[i].chunks) {
                    ChunkData d = chunkData(tensors[i], c);
                    where[i].push_back({fileName(c.rank), files[c.rank].size(), d.bytes.size()});
                    std::string offsets;
                    for (uint64_t o : c.offsets)
                        offsets += (offsets.empty() ? "" : ", ") + std::to_string(o);
                    sharding[c.rank] += (sharding[c.rank].empty() ? "" : ", ") +
                                        jsonString(tensors[i].fqn) + ": {\"saved_offsets\": [" +
                                        offsets + "]}";
                    blobs[c.rank].push_back(
                        {tensors[i].fqn, tensors[i].bf16 ? "BF16" : "F32", c.sizes, d.bytes});
                }
            for (uint64_t r = 0; r < world; ++r)
                files[r] += stFile(blobs[r], {{"DCP_SHARDING_INFO", "{" + sharding[r] + "}"},
                                              {"DCP_VERSION", "1.0"},
                                              {"format", "pt"}});
        }
        for (size_t i = 0; i < tensors.size() && !safetensors; ++i)
            for (const DcpChunk& c : tensors[i].chunks) {
                const std::string a = chunkArchive(tensors[i], c);
                std::string file = fileName(c.rank);
                if (auto o = fileOverride.find(tensors[i].fqn); o != fileOverride.end())
                    file = o->second;
                where[i].push_back({file, files[c.rank].size(), a.size()});
                files[c.rank] += a;
            }
        for (uint64_t r = 0; r < world; ++r)
            std::ofstream(dir + "/" + fileName(r), std::ios::binary) << files[r];

        const std::string md = "torch.distributed.checkpoint.metadata";
        Meta m;
        m.p.proto(4);
        m.dataclass(md, "Metadata", [&] {
            m.key("state_dict_metadata");
            m.p.emptyDict().mark();
            for (size_t i = 0; i < items.size(); ++i) {
                m.key(items[i].fqn);
                m.global(md, "BytesStorageMetadata");
                m.p.emptyTuple().op(uint8_t(0x81));
            }
            for (const DcpTensor& t : tensors) {
                m.key(t.fqn);
                m.dataclass(md, "TensorStorageMetadata", [&] {
                    m.key("properties");
                    m.global("torch.distributed._shard.sharded_tensor.metadata",
                             "TensorProperties");
                    m.p.emptyTuple().op(uint8_t(0x81)).mark();
                    m.global("torch", !planDtype.empty() ? planDtype
                                      : t.bf16           ? "bfloat16"
                                                         : "float32");
                    m.global("torch", "strided");
                    m.p.boolean(false);
                    m.global("torch.distributed._shard.sharded_tensor.metadata",
                             "MEM_FORMAT_ENCODING");
                    m.p.mark().binint1(0).tuple().reduce();
                    m.p.boolean(false).tuple().build();
                    m.key("size");
                    m.size(t.shape);
                    m.key("chunks");
                    m.p.emptyList().mark();
                    for (const DcpChunk& c : t.chunks)
                        m.dataclass(md, "ChunkStorageMetadata", [&] {
                            m.key("offsets");
                            m.size(c.offsets);
                            m.key("sizes");
                            m.size(c.sizes);
                        });
                    m.p.appends();
                });
            }
            m.p.setitems();
            m.key("planner_data");
            m.p.emptyDict().mark();
            auto path = [&](const std::string& fqn, const std::vector<std::string>& keys) {
                m.key(fqn);
                m.p.mark();
                for (const std::string& k : keys)
                    m.key(k);
                m.p.tuple();
            };
            for (const DcpItem& i : items)
                path(i.fqn, i.path);
            for (const DcpTensor& t : tensors)
                path(t.fqn, t.path);
            for (const auto& [fqn, keys] : strayPaths)
                path(fqn, keys);
            m.p.setitems();
            m.key("storage_data");
            m.p.emptyDict().mark();
            auto info = [&](const Placed& w) {
                m.dataclass("torch.distributed.checkpoint.filesystem", "_StorageInfo", [&] {
                    m.key("relative_path");
                    m.key(w.file);
                    m.key("offset");
                    m.integer(w.offset);
                    m.key("length");
                    m.integer(w.length);
                    if (transforms) {
                        m.key("transform_descriptors");
                        m.p.emptyList().mark();
                        m.key("zstd");
                        m.p.appends();
                    }
                });
            };
            for (size_t i = 0; i < items.size(); ++i) {
                m.dataclass(md, "MetadataIndex", [&] {
                    m.key("fqn");
                    m.key(items[i].fqn);
                    m.key("offset");
                    m.p.none();
                    m.key("index");
                    m.p.none();
                });
                info(itemWhere[i]);
            }
            for (size_t i = 0; i < tensors.size(); ++i)
                for (size_t c = 0; c < tensors[i].chunks.size(); ++c) {
                    m.dataclass(md, "MetadataIndex", [&] {
                        m.key("fqn");
                        m.key(tensors[i].fqn);
                        m.key("offset");
                        m.size(tensors[i].chunks[c].offsets);
                        m.key("index");
                        m.integer(c);
                    });
                    info(where[i][c]);
                }
            m.p.setitems();
            m.key("storage_meta");
            m.p.none();
            m.key("version");
            m.key(version);
        });
        m.p.stop();
        std::ofstream(dir + "/.metadata", std::ios::binary) << m.p.bytes;
    }
};

} // namespace testsupport
