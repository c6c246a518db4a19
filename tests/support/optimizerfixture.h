#pragma once

// A Trainer checkpoint folder written by the tests: model.safetensors (the
// tests' safetensors writer) and optimizer.pt (a torch.save zip of the
// tests' pickle writer) holding Adam's state for every weight, with moments
// and hyperparameters chosen here, so the figures can be computed from the
// formula in the test itself.
#include "picklewriter.h"
#include "safetensorsbuilder.h"

#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace testsupport {

struct AdamParameter {
    std::string name;
    std::vector<uint64_t> shape;
    std::vector<float> weight, expAvg, expAvgSq;
};

struct AdamFixture {
    double lr = 3e-4, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weightDecay = 0.01;
    double step = 50;
    // With amsgrad the state also holds max_exp_avg_sq (here 4 × exp_avg_sq),
    // which takes exp_avg_sq's place in the update.
    bool amsgrad = false;
    // Without Adam's own group keys (amsgrad…) the state is another
    // optimizer's (RAdam keeps exp_avg and exp_avg_sq too).
    bool adamKeys = true;
    std::vector<AdamParameter> params;

    // Parameters of `count` elements each whose values follow a fixed
    // sequence; weights of parameter k scaled by weightScale[k] (1 if not
    // given): a layer 1000× smaller stands out by its update / weight.
    static AdamFixture make(const std::vector<std::string>& names, uint64_t count,
                            const std::vector<double>& weightScale = {}, uint32_t seed = 1) {
        AdamFixture f;
        uint32_t x = seed * 2654435761u + 1;
        auto next = [&x] { // a small LCG in [-1, 1)
            x = x * 1664525u + 1013904223u;
            return float(double(x >> 8) / double(1u << 23) - 1.0);
        };
        for (size_t k = 0; k < names.size(); ++k) {
            AdamParameter p;
            p.name = names[k];
            p.shape = {count / 4, 4};
            const double scale = k < weightScale.size() ? weightScale[k] : 1.0;
            for (uint64_t i = 0; i < count; ++i) {
                p.weight.push_back(float(0.05 * scale * next()));
                p.expAvg.push_back(float(1e-3 * next()));
                const float g = float(2e-3 * next());
                p.expAvgSq.push_back(g * g + 1e-9f);
            }
            f.params.push_back(std::move(p));
        }
        return f;
    }

    std::string modelFile() const {
        std::vector<StTensor> tensors;
        for (const AdamParameter& p : params)
            tensors.push_back({p.name, "F32", p.shape, leBytes(p.weight)});
        std::string data;
        for (const StTensor& t : tensors)
            data += t.bytes;
        return stFile(stHeader(tensors), data);
    }

    // {"state": {k: {"step": tensor(step), "exp_avg", "exp_avg_sq"}},
    //  "param_groups": [{"lr", "betas", "eps", "weight_decay", "amsgrad",
    //  "params": [0..n)}]} as torch.save writes an AdamW's state_dict().
    std::string optimizerFile() const {
        picklewriter::Pickle pk;
        pk.proto(2).emptyDict().mark();
        pk.unicode("state").emptyDict().mark();
        std::vector<std::pair<std::string, std::string>> storages;
        for (size_t k = 0; k < params.size(); ++k) {
            const AdamParameter& p = params[k];
            const std::vector<uint64_t> stride = {p.shape[1], 1};
            const uint64_t n = p.weight.size();
            const std::string base = std::to_string(4 * k);
            pk.binint(int32_t(k)).emptyDict().mark();
            pk.unicode("step").tensor(base, "FloatStorage", 1, 0, {}, {});
            storages.emplace_back(base, leBytes(std::vector<float>{float(step)}));
            const std::string m = std::to_string(4 * k + 1), v = std::to_string(4 * k + 2);
            pk.unicode("exp_avg").tensor(m, "FloatStorage", n, 0, p.shape, stride);
            storages.emplace_back(m, leBytes(p.expAvg));
            pk.unicode("exp_avg_sq").tensor(v, "FloatStorage", n, 0, p.shape, stride);
            storages.emplace_back(v, leBytes(p.expAvgSq));
            if (amsgrad) {
                const std::string mx = std::to_string(4 * k + 3);
                pk.unicode("max_exp_avg_sq").tensor(mx, "FloatStorage", n, 0, p.shape, stride);
                std::vector<float> max = p.expAvgSq;
                for (float& x : max)
                    x *= 4;
                storages.emplace_back(mx, leBytes(max));
            }
            pk.setitems();
        }
        pk.setitems();
        pk.unicode("param_groups").emptyList().mark().emptyDict().mark();
        pk.unicode("lr").binfloat(lr);
        pk.unicode("betas").mark().binfloat(beta1).binfloat(beta2).tuple();
        pk.unicode("eps").binfloat(eps);
        pk.unicode("weight_decay").binfloat(weightDecay);
        if (adamKeys)
            pk.unicode("amsgrad").boolean(amsgrad);
        pk.unicode("params").emptyList().mark();
        for (size_t k = 0; k < params.size(); ++k)
            pk.binint(int32_t(k));
        pk.appends().setitems().appends();
        pk.setitems().stop();
        return picklewriter::torchZip("optimizer", pk.bytes, storages);
    }

    // Writes model.safetensors and optimizer.pt into `dir` (existing).
    void writeTo(const std::string& dir) const {
        std::ofstream(dir + "/model.safetensors", std::ios::binary) << modelFile();
        std::ofstream(dir + "/optimizer.pt", std::ios::binary) << optimizerFile();
    }

    // The formula, in double: RMS and max |u| of Adam's last update, and
    // RMS(u) / RMS(w).
    struct Expected {
        double updateRms = 0, updateMax = 0, updateToWeight = 0, expAvgRms = 0, sqrtVRms = 0,
               decayRms = 0;
    };
    Expected expected(size_t k) const {
        const AdamParameter& p = params[k];
        const double bc1 = 1 - std::pow(beta1, step), bc2 = 1 - std::pow(beta2, step);
        double u2 = 0, umax = 0, w2 = 0, m2 = 0, v = 0;
        for (size_t i = 0; i < p.weight.size(); ++i) {
            const double vs = amsgrad ? double(p.expAvgSq[i] * 4) : double(p.expAvgSq[i]);
            const double mh = double(p.expAvg[i]) / bc1, vh = vs / bc2;
            const double u = lr * mh / (std::sqrt(vh) + eps);
            u2 += u * u;
            umax = std::max(umax, std::abs(u));
            w2 += double(p.weight[i]) * p.weight[i];
            m2 += double(p.expAvg[i]) * p.expAvg[i];
            v += vs;
        }
        const double n = double(p.weight.size());
        Expected e;
        e.updateRms = std::sqrt(u2 / n);
        e.updateMax = umax;
        e.updateToWeight = e.updateRms / std::sqrt(w2 / n);
        e.expAvgRms = std::sqrt(m2 / n);
        e.sqrtVRms = std::sqrt(v / n);
        e.decayRms = lr * weightDecay * std::sqrt(w2 / n);
        return e;
    }
};

} // namespace testsupport
