#pragma once

#include "ckptscope/document/document.h"
#include "ckptscope/export/exporterror.h"

#include <optional>
#include <string>
#include <vector>

namespace ckptscope {

enum class ConvertTarget { Oxck, Safetensors, Npz };

// The target a file name asks for (.oxck, .safetensors, .npz); nullopt for
// any other extension.
std::optional<ConvertTarget> convertTargetFor(const std::string& path);

// Why `doc` cannot be converted to `target` ("" when it can): the same
// format, a gradient checkpoint, or `outPath` naming the input file.
std::string conversionRefusal(const Document& doc, ConvertTarget target,
                              const std::string& outPath);

// Writes the conversion atomically (temporary file, fsync, rename); a failure
// or cancellation leaves no file behind. Returns the warnings. Throws
// ExportError, IoError, Cancelled, and read errors of the input.
std::vector<std::string> convertDocument(const Document& doc, ConvertTarget target,
                                         const std::string& outPath,
                                         const TaskControl& control = {});

// True when both paths name the same file (or the same path when neither
// exists yet): writes never go over the file being read.
bool sameFile(const std::string& a, const std::string& b);

} // namespace ckptscope
