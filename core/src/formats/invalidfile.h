#pragma once

#include "ckptscope/formats/checkpointerror.h"

#include <string>

namespace ckptscope {

// Throws the Invalid CheckpointError "WHERE: WHAT", `where` naming the file
// (and the item in it): the folder formats' one way to refuse a file.
[[noreturn]] inline void failInvalid(const std::string& where, const std::string& what) {
    throw CheckpointError(CheckpointError::Kind::Invalid, where + ": " + what);
}

} // namespace ckptscope
