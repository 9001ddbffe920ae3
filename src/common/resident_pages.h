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
// writable segments (data, relocated read-only data) and every other mapping are left alone.
// Safe with other threads running. A debugger's breakpoints in the code are lost, as they are
// when a library is loaded again. Returns the kilobytes of the segments let go of (their size, not
// what of it was resident).
long ReleaseCleanFilePages();

}  // namespace tony
