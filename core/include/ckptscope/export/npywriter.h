#pragma once

#include "ckptscope/document/document.h"
#include "ckptscope/export/exporterror.h"

#include <ostream>
#include <string>
#include <vector>

namespace ckptscope {

// How a tensor is laid out in an .npy file (NPY format 1.0, C order).
struct NpyLayout {
    std::string descr;              // "<f4", "<i8", "|b1"…
    std::vector<uint64_t> shape;    // () for a scalar
    bool converted = false;         // values written as f32 (BF16, F8: no NumPy type)
    std::vector<std::string> notes; // warnings to show (1-D fallback, conversion)
};

// The tensor's own dtype where NumPy has one, else <f4 with a note; the
// tensor's shape, an OXCK empty shape with one value as a scalar, any other
// mismatch between stored values and shape as 1-D with a note.
NpyLayout npyLayout(const Document& doc, size_t index);

// "\x93NUMPY", version, header length and the dict, padded with spaces and a
// newline so the data starts at a multiple of 64 bytes. Version 2.0 only
// when the dict does not fit in 65 535 bytes.
std::string npyHeader(const std::string& descr, const std::vector<uint64_t>& shape);

// Header and values (the tensor's dtype, or f32 when converted).
void writeNpy(std::ostream& out, const Document& doc, size_t index, const NpyLayout& layout,
              const TaskControl& control = {});
// Values little-endian in the tensor's dtype, no header.
void writeRaw(std::ostream& out, const Document& doc, size_t index,
              const TaskControl& control = {});

} // namespace ckptscope
