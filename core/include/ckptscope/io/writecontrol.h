#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

namespace ckptscope {

// Progress and cancellation of a long write (export, conversion). A
// cancelled write throws Cancelled (tensorstats.h); atomic writes then leave
// no file behind.
struct WriteControl {
    const std::atomic<bool>* cancel = nullptr;
    std::function<void(double)> progress; // 0..1

    void check() const;                               // throws Cancelled when asked to stop
    void report(uint64_t done, uint64_t total) const; // progress(done / total)
};

// A file that cannot be written in the asked format (a name safetensors
// cannot hold, a value outside f32's range…). The message names the input
// file and the tensor.
class ExportError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

} // namespace ckptscope
