#include "ckptscope/run/writesettle.h"

#include "ckptscope/run/summarycache.h"

#include <algorithm>
#include <chrono>

namespace ckptscope {

int64_t WriteSettle::nowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

bool WriteSettle::settled(const std::string& path, int64_t nowNs,
                          std::map<std::string, Look>& looks) const {
    const auto id = fileIdentity(path);
    if (!id)
        return true; // gone: the reader reports it
    Look look{id->size, id->ctimeNs, nowNs};
    const auto before = m_looks.find(path);
    if (before != m_looks.end() && before->second.size == look.size &&
        before->second.ctimeNs == look.ctimeNs)
        look.firstSeenNs = before->second.firstSeenNs;
    looks[path] = look;
    // Unchanged between two looks `quiet` apart, or not changed since long
    // before the first (a clock ahead of ours makes ctime look young; the
    // two looks still settle it).
    return nowNs - look.firstSeenNs >= m_quietNs || nowNs - look.ctimeNs >= m_quietNs;
}

std::vector<std::string> WriteSettle::holdBack(Discovery& found, int64_t nowNs) {
    std::map<std::string, Look> looks;
    std::vector<std::string> held;
    auto& c = found.candidates;
    c.erase(std::remove_if(c.begin(), c.end(),
                           [&](const CheckpointCandidate& candidate) {
                               bool all = true;
                               for (const CandidateFile& f : candidate.files)
                                   if (!settled(f.path, nowNs, looks)) {
                                       held.push_back(f.path);
                                       all = false;
                                   }
                               return !all;
                           }),
            c.end());
    auto& s = found.skipped;
    s.erase(std::remove_if(s.begin(), s.end(),
                           [&](const SkippedPath& p) {
                               if (settled(p.path, nowNs, looks))
                                   return false;
                               held.push_back(p.path);
                               return true;
                           }),
            s.end());
    m_looks = std::move(looks); // paths gone since are forgotten
    return held;
}

} // namespace ckptscope
