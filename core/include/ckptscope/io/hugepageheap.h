#pragma once

#include <cstddef>

namespace ckptscope {

// Backs the next `bytes` of the malloc heap with transparent 2 MiB pages
// (Linux with glibc; elsewhere it does nothing), for short-lived processes
// that build many small objects: the CLI parsing a gradient checkpoint
// touches ~20 MiB of fresh heap, and on a VM a 4 KiB page fault costs
// 10–20 µs — more than the parse itself. Also lets blocks up to 32 MiB
// (a gradient file's text) come from that heap, and keeps freed memory
// for reuse instead of returning it at once. Call it first thing in main(),
// before threads start; the heap beyond `bytes` grows in normal pages.
// Returns the bytes madvise()d (0 when nothing was done: no brk heap, as
// under a sanitizer, or not Linux).
size_t reserveHugePageHeap(size_t bytes);

} // namespace ckptscope
