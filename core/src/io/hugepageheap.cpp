#include "ckptscope/io/hugepageheap.h"

#include <climits>
#include <cstdint>
#include <cstdlib>

#if defined(__linux__) && defined(__GLIBC__)
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace ckptscope {

size_t reserveHugePageHeap(size_t bytes) {
#if defined(__linux__) && defined(__GLIBC__)
    constexpr uintptr_t kHugePage = uintptr_t(2) << 20;
    if (bytes == 0 || bytes > size_t(INT_MAX) / 2)
        return 0;
    // Every heap extension is padded by `bytes`, so the first one below maps
    // the whole reserve in one brk; trimming stays away from it.
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, int(2 * bytes));
    mallopt(M_TOP_PAD, int(bytes));
    const auto before = uintptr_t(sbrk(0));
    void* volatile probe = std::malloc(kHugePage); // volatile: the pair is not elided
    const auto after = uintptr_t(sbrk(0));
    std::free(probe);
    if (before == uintptr_t(-1) || after == uintptr_t(-1) || after <= before)
        return 0;
    // Only whole 2 MiB pages inside the heap mapping can be huge.
    const uintptr_t start = (before + kHugePage - 1) & ~(kHugePage - 1);
    if (after <= start)
        return 0;
    // Advice only: if the kernel refuses, the heap keeps its 4 KiB pages.
    if (madvise(reinterpret_cast<void*>(start), after - start, MADV_HUGEPAGE) != 0)
        return 0;
    return size_t(after - start);
#else
    (void)bytes;
    return 0;
#endif
}

} // namespace ckptscope
