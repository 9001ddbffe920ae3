// Linked into the self-contained binary only (TONY_STATIC, cmake/StaticLink.cmake).
//
// libarchive's zip writer shares an object file with the table of every writer, so the static
// link would pull in the XAR writer, which needs libxml2, which needs ICU and its 30 MB of data.
// tony writes only zip archives; this definition takes the XAR writer's place.

#include <archive.h>
#include <errno.h>

extern "C" int archive_write_set_format_xar(struct archive* a) {
  archive_set_error(a, EINVAL, "this tony binary was built without the XAR writer");
  return ARCHIVE_FATAL;
}
