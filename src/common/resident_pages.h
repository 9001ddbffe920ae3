#pragma once
// A process's resident pages of files it maps: letting go of those it need not hold.
//
// Why: a resource manager that sums the RSS of a container's processes (YARN's NodeManager by
// default) counts every page of a shared library that a process has touched, including the
// one-time code of starting up, whose pages stay mapped. They cost the machine nothing (they are
// the page cache's, shared with every process that maps the file), but they count against the
// container's memory limit, which is the user's.

namespace tony {

// Unmaps this process's resident pages of file mappings that are read-only and hold no page of
// its own (no copy-on-write copy): code and read-only data of the program and its libraries.
// Nothing is lost: a page touched again is mapped again from the page cache (or read back from
// the file). Writable mappings are left alone, since another thread could write to one between
// the look and the unmapping. Returns the kilobytes that were resident in the mappings let go.
long ReleaseCleanFilePages();

}  // namespace tony
