#pragma once

// DeepSpeed ZeRO checkpoint folders written by the tests, following the
// layout DeepSpeed saves (docs/FORMATS.md "DeepSpeed"): `latest`, the step
// folder, the model states (the module's fp16 tensors, param_shapes by
// group, shared_params) and one optimizer file per rank holding its
// partition of the fp32 master weights and of Adam's moments — flat groups
// cut in equal partitions (stages 1 and 2) or every parameter cut in
// ceil(n / world) pieces, padded (stage 3). The values are chosen here, so a
// reader's logical tensors can be checked against them.
#include "picklewriter.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace testsupport {

struct DsParam {
    std::string name;
    std::vector<uint64_t> shape;
    size_t group = 0;
    std::vector<float> w, m, v; // fp32 master weight, exp_avg, exp_avg_sq

    uint64_t numel() const {
        uint64_t n = 1;
        for (uint64_t d : shape)
            n *= d;
        return n;
    }
};

struct DeepSpeedFixture {
    int stage = 2;
    uint64_t world = 1;
    size_t groups = 1;
    std::vector<DsParam> params;
    std::vector<std::pair<std::string, std::string>> shared; // alias → parameter
    // Buffers (running statistics): in the module only, named in buffer_names.
    std::vector<std::pair<std::string, std::vector<float>>> buffers;
    double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weightDecay = 0.01;
    double step = 10;
    std::string tag = "global_step10";

    // The saved module's fp16 (truncated: exact for values fp16 holds).
    static std::vector<uint16_t> halves(const std::vector<float>& values) {
        std::vector<uint16_t> half;
        for (float x : values) {
            uint32_t bits;
            std::memcpy(&bits, &x, 4);
            const uint32_t sign = (bits >> 16) & 0x8000, exp = (bits >> 23) & 0xff;
            const uint32_t mant = (bits >> 13) & 0x3ff;
            half.push_back(uint16_t(exp < 113 ? sign : sign | ((exp - 112) << 10) | mant));
        }
        return half;
    }

    // Parameters of these shapes, group by group, values from a fixed sequence.
    static DeepSpeedFixture make(int stage, uint64_t world,
                                 const std::vector<std::vector<std::vector<uint64_t>>>& shapes) {
        DeepSpeedFixture f;
        f.stage = stage;
        f.world = world;
        f.groups = shapes.size();
        uint32_t x = 12345;
        auto next = [&x] {
            x = x * 1664525u + 1013904223u;
            return float(double(x >> 8) / double(1u << 23) - 1.0);
        };
        for (size_t g = 0; g < shapes.size(); ++g)
            for (size_t k = 0; k < shapes[g].size(); ++k) {
                DsParam p;
                p.name = "layers." + std::to_string(f.params.size()) + ".weight";
                p.shape = shapes[g][k];
                p.group = g;
                for (uint64_t i = 0; i < p.numel(); ++i) {
                    p.w.push_back(0.05f * next());
                    p.m.push_back(1e-3f * next());
                    const float gr = 2e-3f * next();
                    p.v.push_back(gr * gr + 1e-9f);
                }
                f.params.push_back(std::move(p));
            }
        return f;
    }

    // The flat vector of group g on rank r for one of the three values.
    std::vector<float> partition(size_t g, uint64_t r, std::vector<float> DsParam::*which) const {
        std::vector<float> out;
        if (stage == 3) {
            for (const DsParam& p : params) {
                if (p.group != g)
                    continue;
                const uint64_t n = p.numel(), part = (n + world - 1) / world;
                for (uint64_t i = r * part; i < (r + 1) * part; ++i)
                    out.push_back(i < n ? (p.*which)[i] : 0.f); // padded
            }
            return out;
        }
        std::vector<float> flat;
        for (const DsParam& p : params)
            if (p.group == g)
                flat.insert(flat.end(), (p.*which).begin(), (p.*which).end());
        while (flat.size() % (2 * world)) // aligned as stage 2 aligns
            flat.push_back(0.f);
        const uint64_t size = flat.size() / world;
        return {flat.begin() + long(r * size), flat.begin() + long((r + 1) * size)};
    }

    std::string stepFolder(const std::string& dir) const { return dir + "/" + tag; }

    void write(const std::string& dir) const {
        namespace fs = std::filesystem;
        fs::create_directories(stepFolder(dir));
        std::ofstream(dir + "/latest", std::ios::binary) << tag;
        writeModelStates(stepFolder(dir) + "/" +
                         (stage == 3 ? "zero_pp_rank_0_mp_rank_00_model_states.pt"
                                     : "mp_rank_00_model_states.pt"));
        for (uint64_t r = 0; r < world; ++r)
            writeRank(r, stepFolder(dir) + "/zero_pp_rank_" + std::to_string(r) +
                             "_mp_rank_00_optim_states.pt");
    }

    std::string rankFile(const std::string& dir, uint64_t r) const {
        return stepFolder(dir) + "/zero_pp_rank_" + std::to_string(r) +
               "_mp_rank_00_optim_states.pt";
    }

    // partition_count as the rank files say it (tests of a disagreeing set
    // change it).
    uint64_t claimedWorld = 0;

private:
    static void save(const std::string& path, const std::string& archive,
                     const picklewriter::Pickle& pk,
                     const std::vector<std::pair<std::string, std::string>>& storages) {
        std::ofstream(path, std::ios::binary)
            << picklewriter::torchZip(archive, pk.bytes, storages);
    }

    static std::vector<uint64_t> strides(const std::vector<uint64_t>& shape) {
        std::vector<uint64_t> s(shape.size(), 1);
        for (size_t i = shape.size(); i-- > 1;)
            s[i - 1] = s[i] * shape[i];
        return s;
    }

    void writeModelStates(const std::string& path) const {
        picklewriter::Pickle pk;
        std::vector<std::pair<std::string, std::string>> storages;
        pk.proto(2).emptyDict().mark();
        pk.unicode("module").orderedDict().mark();
        for (const DsParam& p : params) {
            if (stage == 3) { // partitioned: the module holds empty placeholders
                const std::string key = std::to_string(storages.size());
                pk.unicode(p.name).tensor(key, "HalfStorage", 0, 0, {0}, {1});
                storages.emplace_back(key, std::string());
                continue;
            }
            const std::string key = std::to_string(storages.size());
            pk.unicode(p.name).tensor(key, "HalfStorage", p.numel(), 0, p.shape, strides(p.shape));
            storages.emplace_back(key, picklewriter::leBytes(halves(p.w)));
        }
        for (const auto& [name, values] : buffers) { // fp16, as the module is
            const std::string key = std::to_string(storages.size());
            pk.unicode(name).tensor(key, "HalfStorage", values.size(), 0, {values.size()}, {1});
            storages.emplace_back(key, picklewriter::leBytes(halves(values)));
        }
        pk.setitems();
        pk.unicode("buffer_names").emptyList().mark();
        for (const auto& b : buffers)
            pk.unicode(b.first);
        pk.appends();
        pk.unicode("param_shapes").emptyList().mark();
        for (size_t g = 0; g < groups; ++g) {
            pk.orderedDict().mark();
            for (const DsParam& p : params) {
                if (p.group != g)
                    continue;
                pk.unicode(p.name).global("torch", "Size").mark().mark();
                for (uint64_t d : p.shape)
                    pk.binint(int32_t(d));
                pk.tuple().tuple().reduce();
            }
            pk.setitems();
        }
        pk.appends();
        pk.unicode("shared_params").emptyDict().mark();
        for (const auto& [alias, target] : shared)
            pk.unicode(alias).unicode(target);
        pk.setitems();
        pk.unicode("ds_version").unicode("0.16.5");
        pk.unicode("global_steps").binint(int32_t(step));
        pk.setitems().stop();
        save(path, "archive", pk, storages);
    }

    void writeRank(uint64_t r, const std::string& path) const {
        picklewriter::Pickle pk;
        std::vector<std::pair<std::string, std::string>> storages;
        const auto vector = [&](const std::vector<float>& values) {
            const std::string key = std::to_string(storages.size());
            pk.tensor(key, "FloatStorage", values.size(), 0, {values.size()}, {1});
            storages.emplace_back(key, picklewriter::leBytes(values));
        };
        const char* flatKey = stage == 3 ? "fp32_flat_groups" : "single_partition_of_fp32_groups";
        const char* baseKey = stage == 3 ? "optimizer_state_dict" : "base_optimizer_state";
        pk.proto(2).emptyDict().mark();
        pk.unicode("optimizer_state_dict").emptyDict().mark();
        pk.unicode("zero_stage").binint(stage);
        pk.unicode("partition_count").emptyList().mark();
        for (size_t g = 0; g < groups; ++g)
            pk.binint(int32_t(claimedWorld ? claimedWorld : world));
        pk.appends();
        pk.unicode(flatKey).emptyList().mark();
        for (size_t g = 0; g < groups; ++g)
            vector(partition(g, r, &DsParam::w));
        pk.appends();
        pk.unicode(baseKey).emptyDict().mark();
        pk.unicode("state").emptyDict().mark();
        for (size_t g = 0; g < groups; ++g) {
            pk.binint(int32_t(g)).emptyDict().mark();
            pk.unicode("step");
            vector({float(step)});
            pk.unicode("exp_avg");
            vector(partition(g, r, &DsParam::m));
            pk.unicode("exp_avg_sq");
            vector(partition(g, r, &DsParam::v));
            pk.setitems();
        }
        pk.setitems();
        pk.unicode("param_groups").emptyList().mark();
        for (size_t g = 0; g < groups; ++g) {
            pk.emptyDict().mark();
            pk.unicode("lr").binfloat(lr);
            pk.unicode("betas").mark().binfloat(beta1).binfloat(beta2).tuple();
            pk.unicode("eps").binfloat(eps);
            pk.unicode("weight_decay").binfloat(weightDecay);
            pk.unicode("amsgrad").boolean(false);
            pk.unicode("params").emptyList().mark().binint(int32_t(g)).appends();
            pk.setitems();
        }
        pk.appends();
        pk.setitems(); // the base optimizer's state dict
        pk.setitems(); // optimizer_state_dict
        pk.unicode("ds_version").unicode("0.16.5");
        pk.setitems().stop();
        save(path, "archive", pk, storages);
    }
};

} // namespace testsupport
