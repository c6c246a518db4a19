#include "ckptscope/run/runseries.h"

#include "ckptscope/run/metadatanumber.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <unordered_map>

namespace ckptscope {

const TensorSummary* TensorSeries::point(const Run& run, size_t checkpoint) const {
    const auto& i = at.at(checkpoint);
    return i ? &run.checkpoints.at(checkpoint).summary.tensors.at(*i) : nullptr;
}

std::vector<TensorSeries> tensorSeries(const Run& run) {
    const size_t n = run.checkpoints.size();
    std::vector<TensorSeries> out;
    // Name → series indices by occurrence.
    std::unordered_map<std::string, std::vector<size_t>> byName;
    for (size_t c = 0; c < n; ++c) {
        std::unordered_map<std::string, size_t> seen; // occurrences in this file
        const auto& tensors = run.checkpoints[c].summary.tensors;
        for (size_t t = 0; t < tensors.size(); ++t) {
            const std::string& name = tensors[t].name;
            const size_t occ = seen[name]++;
            std::vector<size_t>& list = byName[name];
            if (occ >= list.size()) {
                list.push_back(out.size());
                out.push_back({name, occ, std::vector<std::optional<size_t>>(n)});
            }
            out[list[occ]].at[c] = t;
        }
    }
    return out;
}

std::vector<TensorSeries> selectSeries(std::vector<TensorSeries> all,
                                       const std::vector<std::string>& names) {
    if (names.empty())
        return all;
    std::vector<TensorSeries> out;
    for (TensorSeries& s : all)
        if (std::find(names.begin(), names.end(), s.name) != names.end())
            out.push_back(std::move(s));
    return out;
}

std::vector<BlobSeries> blobSeries(const Run& run) {
    const size_t n = run.checkpoints.size();
    std::map<std::string, BlobSeries> byName;
    for (size_t c = 0; c < n; ++c) {
        const auto& blobs = run.checkpoints[c].summary.blobs;
        for (size_t b = 0; b < blobs.size(); ++b) {
            BlobSeries& s = byName[blobs[b].name];
            if (s.at.empty()) {
                s.name = blobs[b].name;
                s.at.resize(n);
            }
            if (!s.at[c]) // a repeated blob name cannot occur (a JSON map)
                s.at[c] = b;
        }
    }
    std::vector<BlobSeries> out;
    for (auto& [name, s] : byName)
        out.push_back(std::move(s));
    return out;
}

namespace {

std::string shortestText(double v) {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

} // namespace

std::vector<MetadataSeries> metadataSeries(const Run& run) {
    const size_t n = run.checkpoints.size();
    std::map<std::string, MetadataSeries> byKey;
    auto put = [&](size_t c, const std::string& k, std::string v) -> MetadataSeries& {
        MetadataSeries& s = byKey[k];
        if (s.values.empty()) {
            s.key = k;
            s.values.resize(n);
        }
        if (!s.values[c])
            s.values[c] = std::move(v);
        return s;
    };
    for (size_t c = 0; c < n; ++c) {
        for (const auto& [k, v] : run.checkpoints[c].trainerLog)
            put(c, k, shortestText(v)).numbers = true;
        for (const auto& [k, v] : run.checkpoints[c].summary.metadata)
            put(c, k, v);
    }
    std::vector<MetadataSeries> out;
    for (auto& [k, s] : byKey) {
        for (const auto& v : s.values)
            s.numbers = s.numbers && (!v || metadataNumber(*v));
        out.push_back(std::move(s));
    }
    return out;
}

std::optional<FirstNonfinite> firstNonfinite(const Run& run,
                                             const std::vector<TensorSeries>& series) {
    for (size_t c = 0; c < run.checkpoints.size(); ++c) {
        std::vector<size_t> hits; // tensor indices in the file
        for (const TensorSeries& s : series) {
            const TensorSummary* t = s.point(run, c);
            if (t && (t->stats.nan + t->stats.posInf + t->stats.negInf) > 0)
                hits.push_back(*s.at[c]);
        }
        if (hits.empty())
            continue;
        std::sort(hits.begin(), hits.end());
        FirstNonfinite f;
        f.index = c;
        f.step = run.checkpoints[c].step;
        for (size_t t : hits)
            f.tensors.push_back(run.checkpoints[c].summary.tensors[t].name);
        return f;
    }
    return std::nullopt;
}

std::vector<L2Change> largestL2Growth(const Run& run, const std::vector<TensorSeries>& series,
                                      size_t limit) {
    std::vector<L2Change> out;
    for (size_t i = 0; i < series.size(); ++i) {
        const TensorSeries& s = series[i];
        std::optional<size_t> first, last;
        for (size_t c = 0; c < s.at.size(); ++c) {
            if (!s.at[c])
                continue;
            if (!first)
                first = c;
            last = c;
        }
        if (!first || *first == *last)
            continue;
        L2Change ch;
        ch.series = i;
        ch.firstIndex = *first;
        ch.lastIndex = *last;
        ch.first = s.point(run, *first)->stats.l2;
        ch.last = s.point(run, *last)->stats.l2;
        if (!(ch.first > 0) || !std::isfinite(ch.first) || !std::isfinite(ch.last))
            continue;
        ch.ratio = ch.last / ch.first;
        if (ch.ratio > 1)
            out.push_back(ch);
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const L2Change& a, const L2Change& b) { return a.ratio > b.ratio; });
    if (out.size() > limit)
        out.resize(limit);
    return out;
}

LoggedSummary summarizeLogged(const std::vector<std::pair<uint64_t, double>>& logged) {
    LoggedSummary s;
    s.logged = logged.size();
    for (const auto& e : logged) {
        if (!s.last || e.first > s.last->first)
            s.last = e;
        if (!std::isfinite(e.second)) {
            ++s.nonFinite;
            continue;
        }
        if (!s.lowest || e.second < s.lowest->second)
            s.lowest = e;
        if (!s.highest || e.second > s.highest->second)
            s.highest = e;
    }
    return s;
}

} // namespace ckptscope
