#pragma once
// The URL unescaping of tony's libmicrohttpd servers (MHD_OPTION_UNESCAPE_CALLBACK): as
// libmicrohttpd's own, except that a URI with "%00" is left as it came. Unescaped, the NUL would
// end the path early ("/status.json%00" would be served as "/status.json"); left escaped, it
// names no page. Header-only, for the modules that link libmicrohttpd.

#include <microhttpd.h>

#include <cstring>

namespace tony {

inline size_t UnescapeRefusingNul(void* /*cls*/, MHD_Connection* /*connection*/, char* uri) {
  for (const char* at = uri; *at != '\0'; ++at) {
    if (at[0] == '%' && at[1] == '0' && at[2] == '0') return std::strlen(uri);
  }
  return MHD_http_unescape(uri);
}

}  // namespace tony
