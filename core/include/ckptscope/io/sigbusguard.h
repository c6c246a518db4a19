#pragma once

#include <cstddef>

namespace ckptscope {

// Turns the SIGBUS raised by touching a memory-mapped page that is no
// longer backed by the file (the file was truncated under the reader) into
// a return value, so the caller can throw SourceChangedError instead of the
// process dying.
//
// One SA_SIGINFO handler is installed for the whole process, once (on first
// use, thread-safe). A thread running a guarded body has a recovery point
// (sigsetjmp) and the address ranges it guards in thread-local storage; the
// handler jumps back there (siglongjmp) when the fault's si_addr lies in one
// of them. Every other SIGBUS — another thread's, an address outside the
// ranges, one sent with kill() — goes on to the handler installed before
// ours, or gets the default action (the process dies), so genuine bugs still
// crash.
class SigbusGuard {
public:
    struct Range {
        const void* begin = nullptr;
        size_t size = 0;
    };
    static constexpr int kMaxRanges = 4;
    using Body = void (*)(void* context) noexcept;

    // Runs body(context) with `ranges` (at most kMaxRanges) guarded. Returns
    // -1 when the body ran to its end, else the index of the range whose
    // bytes raised SIGBUS: the body was abandoned there.
    //
    // The body is left by siglongjmp, which skips destructors, releases no
    // lock and frees nothing: it must only run plain loops over the bytes
    // and trivially destructible locals (no std::vector, std::string,
    // lock_guard, allocation or exception inside). Nested guards are allowed.
    static int run(const Range* ranges, int count, Body body, void* context);

    // Installs the handler now (run() does it on first use). The handler it
    // replaces is the one a foreign SIGBUS is passed on to. False when the
    // handler did not take (e.g. AddressSanitizer with handle_sigbus=2 keeps
    // SIGBUS to itself): then nothing may be read through a map.
    static bool install();
};

} // namespace ckptscope
