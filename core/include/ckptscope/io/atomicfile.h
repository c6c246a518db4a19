#pragma once

#include <functional>
#include <ostream>
#include <string>

namespace ckptscope {

// Writes a file the safe way: a temporary file in the target's folder is
// filled, flushed to disk and renamed over the target, so a reader never sees
// half a file and a failed write (disk full, quota) leaves the old file intact.
// Throws IoError naming the target on any failure; the temporary is removed.
void writeFileAtomically(const std::string& path, const std::function<void(std::ostream&)>& fill);

} // namespace ckptscope
