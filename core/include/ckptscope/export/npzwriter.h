#pragma once

#include "ckptscope/document/document.h"
#include "ckptscope/export/exporterror.h"

#include <ostream>
#include <string>
#include <vector>

namespace ckptscope {

// The document's tensors as a NumPy .npz: a ZIP archive of NAME.npy entries,
// stored (no compression), ZIP64 where an entry, an offset or the entry count
// needs it. The stream must be seekable (each entry's CRC-32 is patched into
// its local header after the data). Returns the warnings; throws ExportError.
std::vector<std::string> writeNpz(std::ostream& out, const Document& doc,
                                  const TaskControl& control = {});

} // namespace ckptscope
