// The compiled parts of spdlog and fmt, built once into tony's own `tony_logging` library.
//
// tony includes spdlog and fmt in their "compiled library" mode (SPDLOG_COMPILED_LIB, no
// FMT_HEADER_ONLY): their headers declare the functions, and exactly one translation unit defines
// them: this one. Debian ships the two libraries only as shared objects, and a self-contained
// binary (TONY_STATIC) cannot link those; compiling their implementations from the headers in
// every file (the header-only mode) costs a third more time per file. So every build, shared or
// static, links this unit instead of libspdlog.so and libfmt.so, and the same object files serve
// both binaries.
//
// What is here is what the library's own sources instantiate for the parts tony uses: the
// registry, the logger and pattern formatter, and the default logger's colour console sink.

#ifndef SPDLOG_COMPILED_LIB
#error "tony_logging is compiled with SPDLOG_COMPILED_LIB (see the top-level CMakeLists.txt)"
#endif

// fmt: the non-template functions of format-inl.h become ordinary definitions here, and the
// templates that format.h declares `extern` are instantiated for char.
#include "fmt/format-inl.h"

FMT_BEGIN_NAMESPACE
namespace detail {
template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template FMT_API locale_ref::locale_ref(const std::locale& loc);
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<wchar_t>;
template FMT_API auto decimal_point_impl(locale_ref) -> wchar_t;
template FMT_API void buffer<char>::append(const char*, const char*);
}  // namespace detail
FMT_END_NAMESPACE

// spdlog: every -inl.h of the parts above, and the sinks' class templates for the mutexes used.
#include "spdlog/common-inl.h"
#include "spdlog/details/backtracer-inl.h"
#include "spdlog/details/log_msg-inl.h"
#include "spdlog/details/log_msg_buffer-inl.h"
#include "spdlog/details/os-inl.h"
#include "spdlog/details/periodic_worker-inl.h"
#include "spdlog/details/registry-inl.h"
#include "spdlog/logger-inl.h"
#include "spdlog/pattern_formatter-inl.h"
#include "spdlog/sinks/ansicolor_sink-inl.h"
#include "spdlog/sinks/base_sink-inl.h"
#include "spdlog/sinks/sink-inl.h"
#include "spdlog/spdlog-inl.h"

template class spdlog::sinks::base_sink<std::mutex>;
template class spdlog::sinks::base_sink<spdlog::details::null_mutex>;
template class spdlog::sinks::ansicolor_sink<spdlog::details::console_mutex>;
template class spdlog::sinks::ansicolor_stdout_sink<spdlog::details::console_mutex>;
template class spdlog::sinks::ansicolor_stderr_sink<spdlog::details::console_mutex>;
