#pragma once

#include <string>

namespace ckptscope {

class ByteSource;

// A file's first (up to) four bytes as text a user can read, for "found …"
// in a magic's error: printable ASCII as is, the rest as \xNN.
std::string magicBytes(const ByteSource& source);

} // namespace ckptscope
