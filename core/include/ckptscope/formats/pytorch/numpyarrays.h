#pragma once

#include "ckptscope/formats/objecttree.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ckptscope {

// A NumPy array held in a pickle (numpy.core.multiarray._reconstruct with
// its state: version, shape, dtype, Fortran order, the raw data): not a
// tensor, listed apart with what NumPy would rebuild.
struct NumpyArray {
    std::string path;  // the keys to it from the root, joined by '.'
    std::string dtype; // NumPy's type string with its byte order ("<u4", "|b1")
    std::vector<uint64_t> shape;
    bool fortranOrder = false;
    uint32_t data = kNoNode; // the Bytes node of its raw data (kNoNode: object array)
    uint64_t nbytes = 0;     // of the data
    // What the array is part of, when the pickle says (NumPy's RNG state
    // tuple): "NumPy MT19937 state".
    std::string role;
};

// Every NumPy array in the tree, in the order of a walk from the root (a
// shared one once, at its first path).
std::vector<NumpyArray> numpyArrays(const ObjectTree& tree);

// An array's elements, exactly: in `integers` (bool, signed), `unsigned_`
// or `reals` by the dtype's kind.
struct NumpyValues {
    std::vector<int64_t> integers;
    std::vector<uint64_t> unsigned_;
    std::vector<double> reals;
};

// The array's elements in storage order, when its dtype is a number (bool,
// integers, f4, f8) stored little-endian or byte by byte and the data holds
// exactly shape's elements; nullopt otherwise.
std::optional<NumpyValues> numpyValues(const ObjectTree& tree, const NumpyArray& array);

} // namespace ckptscope
