#pragma once

#include "ckptscope/run/runscan.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ckptscope {

// Tells the files a training job is still writing from finished ones. A
// file counts as complete once it has not changed for `quiet`: its size and
// ctime the same at two looks that far apart (ctime moves with every write
// and cannot be set back), or a ctime already that old at the first look.
// Keep one object per watched run and call holdBack() at every poll, one
// call at a time.
class WriteSettle {
public:
    explicit WriteSettle(int64_t quietNs) : m_quietNs(quietNs) {}

    // Takes out of `found` the checkpoints with a file changed within the
    // last `quiet` of nowNs (the system clock, as ctime), and the skipped
    // paths likewise (an empty file has no magic yet); returns the paths
    // held back, to be looked at again after `quiet`.
    std::vector<std::string> holdBack(Discovery& found, int64_t nowNs);
    static int64_t nowNs();

private:
    struct Look {
        uint64_t size = 0;
        int64_t ctimeNs = 0;
        int64_t firstSeenNs = 0; // when this size and ctime were first seen
    };
    bool settled(const std::string& path, int64_t nowNs, std::map<std::string, Look>& looks) const;

    int64_t m_quietNs;
    std::map<std::string, Look> m_looks; // the last poll's look at each path
};

} // namespace ckptscope
