#pragma once
// A process's resident pages of its program's and libraries' code: letting go of those it need
// not hold.
//
// Why: a resource manager that sums the RSS of a container's processes (YARN's NodeManager by
// default) counts every page of a shared library that a process has touched, including the
// one-time code of starting up, whose pages stay mapped. They cost the machine nothing (they are
// the page cache's, shared with every process that maps the file), but they count against the
// container's memory limit, which is the user's.

namespace tony {

// Unmaps this process's resident pages of the read-only segments (code, read-only data) of the
// program and of every library loaded, as the dynamic loader lists them (dl_iterate_phdr). Such a
// segment is never written, so it holds no page of the process's own, and nothing is lost: a page
// touched again is mapped again from the page cache (or read back from the file). The loader's
// lock is held meanwhile, so no library is loaded or unloaded between the look and the unmapping;
// writable segments (data, relocated read-only data), a read-only one that ends in zeros past its
// file's part (the loader wrote them into its last file page) and every other mapping are left
// alone.
// Safe with other threads running. A debugger's breakpoints in the code are lost, as they are
// when a library is loaded again. Returns the kilobytes of the segments let go of (their size, not
// what of it was resident).
long ReleaseCleanFilePages();

// Asks the kernel to map this process's pages of those same segments one by one, as each is
// touched. By default a read fault in a file's mapping maps the pages around it that are in the
// page cache too (fault-around: 64 kB, on newer kernels a whole large folio), which counts as the
// process's RSS although the process never touches most of them: for code spread over a large
// program, several times what it runs. The means is a userfaultfd registration of the segments
// in asynchronous write-protect mode (Linux 6.7), which turns fault-around off for them and
// changes nothing else: the segments are never written, no fault is ever reported to the process,
// and nothing reads the descriptor (each segment's mapping is registered whole, so none is split
// but at a page it shares with another segment, and the kernel does not collapse them into huge
// pages). The descriptor stays open for the
// process's life (not across an exec: it is close-on-exec, and never 0-2). A forked child's
// mappings are not registered: the child calls this again for its own. Libraries loaded later are
// not covered.
// Returns false, having changed nothing, where the kernel does not allow it (before 6.7), and
// does not try under a seccomp filter (which may kill the process for the call rather than refuse
// it) or a debugger. (With pages of 64 kB there is no fault-around, and nothing to gain.) Not
// thread-safe: call it while the process has one thread, or from one thread only.
bool MapCodePagesAsTouched();

// For a forked child of a process that MapCodePagesAsTouched registered, between the fork and an
// exec: registers the same segments for the child, which has inherited none of the registration,
// so that what it touches before the exec maps page by page too. Async-signal-safe: no allocation,
// no lock (the parent's list of segments, as it was at the fork). Does nothing in the child of a
// process not registered.
void MapInheritedCodePagesAsTouched();

}  // namespace tony
