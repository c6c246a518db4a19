#include "ckptscope/io/sigbusguard.h"

#include <atomic>
#include <cerrno>
#include <csetjmp>
#include <cstdint>
#include <mutex>
#include <signal.h>

namespace ckptscope {

namespace {

struct Frame {
    sigjmp_buf env;
    const SigbusGuard::Range* ranges;
    int count;
    volatile int hit; // set by the handler: which range faulted
    Frame* outer;     // the enclosing guard on this thread, if any
};

// Read by the signal handler on the faulting thread. initial-exec: no lazy
// TLS allocation can happen inside the handler.
__attribute__((tls_model("initial-exec"))) thread_local Frame* t_frame = nullptr;

struct sigaction g_previous; // written once, before our handler is live
std::once_flag g_installed;
bool g_active = false; // our handler is the one installed (set once)

// Hands a SIGBUS that is not ours to whoever had it before us.
void passOn(int sig, siginfo_t* info, void* context) {
    const struct sigaction& p = g_previous;
    if ((p.sa_flags & SA_SIGINFO) && p.sa_sigaction) {
        p.sa_sigaction(sig, info, context);
        return;
    }
    if (!(p.sa_flags & SA_SIGINFO) && p.sa_handler != SIG_DFL && p.sa_handler != SIG_IGN) {
        p.sa_handler(sig);
        return;
    }
    if (p.sa_handler == SIG_IGN && info->si_code <= 0)
        return; // a SIGBUS sent with kill(), ignored as asked
    // The default action (a fault cannot be ignored: returning would only
    // fault again). Restore it; a fault then recurs when the instruction is
    // retried, a sent signal is sent again and arrives when we return.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    ::sigaction(SIGBUS, &dfl, nullptr);
    if (info->si_code <= 0)
        ::raise(sig);
}

void onSigbus(int sig, siginfo_t* info, void* context) {
    const int savedErrno = errno;
    if (info && info->si_code > 0) { // raised by a memory access, not sent
        const auto addr = uintptr_t(info->si_addr);
        for (Frame* f = t_frame; f; f = f->outer)
            for (int k = 0; k < f->count; ++k)
                if (addr - uintptr_t(f->ranges[k].begin) < f->ranges[k].size) {
                    f->hit = k;
                    t_frame = f->outer;
                    siglongjmp(f->env, 1); // restores the mask saved by sigsetjmp
                }
    }
    errno = savedErrno;
    passOn(sig, info, context);
}

} // namespace

bool SigbusGuard::install() {
    std::call_once(g_installed, [] {
        struct sigaction sa {};
        sa.sa_sigaction = onSigbus;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        ::sigaction(SIGBUS, nullptr, &g_previous);
        ::sigaction(SIGBUS, &sa, nullptr);
        struct sigaction now {};
        g_active = ::sigaction(SIGBUS, nullptr, &now) == 0 && (now.sa_flags & SA_SIGINFO) &&
                   now.sa_sigaction == onSigbus;
    });
    return g_active;
}

int SigbusGuard::run(const Range* ranges, int count, Body body, void* context) {
    install();
    Frame frame;
    frame.ranges = ranges;
    frame.count = count < 0 ? 0 : count > kMaxRanges ? kMaxRanges : count;
    frame.hit = -1;
    frame.outer = t_frame;
    // Saving the signal mask (1) matters: the handler runs with SIGBUS
    // blocked, and the jump out of it must unblock it again.
    if (sigsetjmp(frame.env, 1) != 0)
        return frame.hit; // the handler has popped the frame
    t_frame = &frame;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    body(context);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    t_frame = frame.outer;
    return -1;
}

} // namespace ckptscope
