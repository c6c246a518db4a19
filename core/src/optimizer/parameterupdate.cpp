#include "ckptscope/optimizer/parameterupdate.h"

#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/openerror.h"
#include "ckptscope/io/bytesource.h"

#include "optimizer/updatekernels.h"
#include "stats/blockworkers.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

namespace ckptscope {

namespace {

// Elements read per block of each tensor: three 64 KiB buffers per worker.
constexpr uint64_t kBlock = 16384;

uint64_t elementsOf(const Document& doc, std::optional<size_t> tensor) {
    return tensor ? doc.tensors()[*tensor].dataLen : 0;
}

// The tensor whose values give v̂: max_exp_avg_sq with amsgrad.
std::optional<size_t> secondMoment(const ParameterState& p) {
    return p.group.amsgrad && p.maxExpAvgSq ? p.maxExpAvgSq : p.expAvgSq;
}

// What rules out the update's figures, "" when they can be computed.
std::string whyNoUpdate(const OptimizerCheckpoint& s, const ParameterState& p) {
    const Document& opt = *s.optimizer;
    switch (p.rule) {
    case UpdateRule::Other: {
        std::string keys; // its state, by key (the last part of each tensor's name)
        for (size_t t : p.stateTensors) {
            const std::string& name = opt.tensors()[t].name;
            keys += (keys.empty() ? "" : ", ") + name.substr(name.rfind('.') + 1);
        }
        return "no update is derived for this optimizer's state (" +
               (keys.empty() ? std::string("no tensors") : keys) +
               "): neither Adam's exp_avg and exp_avg_sq with a group of Adam's keys nor SGD's "
               "momentum_buffer";
    }
    case UpdateRule::Sgd:
        return {};
    case UpdateRule::Adam:
        break;
    }
    if (p.group.biasCorrection && (!p.step || !(*p.step >= 1)))
        return p.step ? "step " + std::to_string(*p.step) + " is not a count of updates"
                      : "no step in its state or group: the bias correction is unknown";
    if (elementsOf(opt, p.expAvg) != elementsOf(opt, secondMoment(p)))
        return "exp_avg and exp_avg_sq differ in size";
    return {};
}

// What the pass over a parameter whose update can be computed reads: its
// first moment (SGD: momentum buffer), Adam's second moment, and the weight
// when it holds as many elements. (A plain index and flag for the weight,
// not an optional: GCC 12 warns on the latter read in the loop.)
struct Reads {
    size_t first = 0;
    std::optional<size_t> second;
    uint64_t n = 0;
    bool weight = false;
    size_t weightTensor = 0;

    uint64_t bytesPerElement() const { return 4 * (1 + (second ? 1 : 0) + (weight ? 1 : 0)); }
};

Reads readsOf(const OptimizerCheckpoint& s, const ParameterState& p) {
    Reads r;
    r.first = p.rule == UpdateRule::Adam ? *p.expAvg : *p.momentumBuffer;
    if (p.rule == UpdateRule::Adam)
        r.second = secondMoment(p);
    r.n = s.optimizer->tensors()[r.first].dataLen;
    r.weightTensor = p.weight.value_or(0);
    r.weight = p.weight && s.model->tensors()[r.weightTensor].dataLen == r.n;
    return r;
}

ParameterUpdate computeOne(const OptimizerCheckpoint& s, const ParameterState& p,
                           const TaskControl& control, std::atomic<uint64_t>& done,
                           uint64_t total) {
    const Document& opt = *s.optimizer;
    ParameterUpdate r;
    r.parameter = p.parameter;
    if (p.weight)
        r.tensor = s.model->tensors()[*p.weight].name;
    r.rule = p.rule;
    r.lr = p.group.lr;
    r.step = p.step;
    r.note = whyNoUpdate(s, p);
    if (!r.note.empty())
        return r;
    const Reads reads = readsOf(s, p);
    const size_t first = reads.first, weightTensor = reads.weightTensor;
    const std::optional<size_t> second = reads.second;
    const uint64_t n = reads.n;
    const bool weight = reads.weight;
    if (p.weight && !weight)
        r.note = "the weight holds " + std::to_string(s.model->tensors()[weightTensor].dataLen) +
                 " elements, its optimizer state " + std::to_string(n);
    else if (!weight)
        r.note = "no weight in the model: update / weight and the decay are unknown";
    const double bc1 = p.group.biasCorrection ? 1 - std::pow(p.group.beta1, *p.step) : 1;
    const double bc2 = p.group.biasCorrection ? 1 - std::pow(p.group.beta2, *p.step) : 1;
    std::vector<float> w(weight ? kBlock : 0), m(kBlock), v(second ? kBlock : 0);
    optimizer::UpdateSums sum;
    for (uint64_t at = 0; at < n; at += kBlock) {
        control.throwIfCancelled();
        const uint64_t count = std::min(kBlock, n - at);
        opt.readValues(first, at, count, m.data());
        if (second)
            opt.readValues(*second, at, count, v.data());
        if (weight)
            s.model->readValues(weightTensor, at, count, w.data());
        const float* wp = weight ? w.data() : nullptr;
        if (second)
            optimizer::addAdamSums(m.data(), v.data(), wp, size_t(count), p.group.lr / bc1, 1 / bc2,
                                   p.group.eps, sum);
        else
            optimizer::addSgdSums(m.data(), wp, size_t(count), p.group.lr, sum);
        const uint64_t bytes = count * reads.bytesPerElement();
        control.report(done.fetch_add(bytes) + bytes, total);
    }
    if (sum.nan)
        sum.umax = std::numeric_limits<double>::quiet_NaN();
    r.count = n;
    if (p.rule == UpdateRule::Sgd && p.group.nesterov)
        r.note = "Nesterov momentum: the update also held that step's gradient, which is not "
                 "saved; lr · momentum_buffer is given";
    if (n == 0)
        return r;
    const double dn = double(n);
    r.updateRms = std::sqrt(sum.u2 / dn);
    r.updateMax = sum.umax;
    if (p.rule == UpdateRule::Adam) {
        r.expAvgRms = std::sqrt(sum.m2 / dn);
        r.expAvgSqSqrtRms = std::sqrt(sum.v / dn); // RMS of √v is √(mean v)
    }
    if (weight) {
        r.weightRms = std::sqrt(sum.w2 / dn);
        if (*r.weightRms > 0)
            r.updateToWeight = *r.updateRms / *r.weightRms;
        if (p.rule == UpdateRule::Adam && p.group.weightDecay != 0 &&
            p.group.decoupledDecay.value_or(true))
            r.decayRms = p.group.lr * p.group.weightDecay * *r.weightRms;
    }
    return r;
}

// The file an error message is about: the model's or the optimizer's.
const std::string& fileNamedBy(const OptimizerCheckpoint& s, const std::string& message) {
    if (s.model && message.rfind(s.model->path() + ":", 0) == 0)
        return s.model->path();
    return s.optimizer->path();
}

} // namespace

uint64_t parameterUpdateBytes(const OptimizerCheckpoint& state) {
    uint64_t total = 0;
    for (const ParameterState& p : state.parameters)
        if (whyNoUpdate(state, p).empty()) { // what computeOne reads, and only that
            const Reads r = readsOf(state, p);
            total += r.n * r.bytesPerElement();
        }
    return total;
}

std::vector<ParameterUpdate> computeParameterUpdates(const OptimizerCheckpoint& state,
                                                     const TaskControl& control, unsigned threads) {
    std::vector<ParameterUpdate> out(state.parameters.size());
    std::atomic<uint64_t> done{0};
    const uint64_t total = parameterUpdateBytes(state);
    try {
        forEachTask(out.size(), workerCount(threads, out.size()), [&](size_t k, unsigned) {
            out[k] = computeOne(state, state.parameters[k], control, done, total);
        });
    } catch (const SourceChangedError& e) {
        throw OpenError(fileNamedBy(state, e.what()), e.what());
    } catch (const CheckpointError& e) {
        throw OpenError(fileNamedBy(state, e.what()), e.what());
    }
    return out;
}

} // namespace ckptscope
