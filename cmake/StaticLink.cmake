# TONY_STATIC: a tony binary that YARN can ship to nodes that have nothing of tony's installed.
# Every library is linked from its static archive wherever Debian ships one (and libstdc++ and
# libgcc with -static-lib*); the few without an archive stay shared and are listed, one name a
# line, in <build>/dynamic-libraries.txt. glibc stays shared too, as glibc expects (NSS).
#
# Debian ships no archives of spdlog and fmt, so both are compiled in from their headers.
# Included from the top-level CMakeLists.txt after every find_package.

if(TONY_BUILD_TESTS OR TONY_BUILD_BENCH OR TONY_BUILD_FUZZERS)
  message(FATAL_ERROR "TONY_STATIC builds only the tony binary: configure with "
                      "-DTONY_BUILD_TESTS=OFF -DTONY_BUILD_BENCH=OFF (scripts/build-static does)")
endif()

target_compile_definitions(tony_logging INTERFACE SPDLOG_FMT_EXTERNAL FMT_HEADER_ONLY=1)
target_link_libraries(tony_logging INTERFACE Threads::Threads)

set(TONY_DYNAMIC_LIBRARIES "")
# Part of glibc (or of the compiler's runtime): never looked for as archives.
set(_tony_system_libs c m dl rt pthread atomic)
# Shared even though Debian has an archive: libsasl2.a (which libldap, inside libcurl, needs)
# carries its database plugins, and with them SQLite, MySQL, PostgreSQL and Berkeley DB.
set(_tony_keep_shared sasl2)

# `lib<name>.a` in the linker's directories, or "" in `out`.
function(_tony_find_archive name out)
  set(found "")
  foreach(dir IN LISTS CMAKE_CXX_IMPLICIT_LINK_DIRECTORIES)
    if(EXISTS "${dir}/lib${name}.a")
      set(found "${dir}/lib${name}.a")
      break()
    endif()
  endforeach()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

# Libraries found by find_package as shared imported targets (abseil, protobuf, pugixml): point
# them at the archive beside the shared object.
get_property(_tony_imported DIRECTORY PROPERTY IMPORTED_TARGETS)
foreach(target IN LISTS _tony_imported)
  get_target_property(type ${target} TYPE)
  if(NOT type MATCHES "^(SHARED|UNKNOWN|STATIC)_LIBRARY$")
    continue()
  endif()
  foreach(prop IMPORTED_LOCATION IMPORTED_LOCATION_NONE IMPORTED_LOCATION_RELEASE
               IMPORTED_LOCATION_RELWITHDEBINFO IMPORTED_LOCATION_DEBUG)
    get_target_property(location ${target} ${prop})
    if(NOT location OR NOT location MATCHES "\\.so(\\.[0-9.]+)?$")
      continue()
    endif()
    string(REGEX REPLACE "\\.so(\\.[0-9.]+)?$" ".a" archive "${location}")
    if(EXISTS "${archive}")
      set_target_properties(${target} PROPERTIES ${prop} "${archive}")
    endif()
  endforeach()
endforeach()

# Libraries found with pkg-config: their --static link lines (private dependencies included), each
# library from its archive where there is one. `extra` names more pkg-config modules whose
# private dependencies the archives need but the .pc files do not list.
function(_tony_static_pkg prefix)
  set(items "")
  set(dynamic "${TONY_DYNAMIC_LIBRARIES}")
  foreach(name IN LISTS ${prefix}_STATIC_LIBRARIES ARGN)
    if(name IN_LIST _tony_system_libs)
      list(APPEND items "-l${name}")
      continue()
    endif()
    set(archive "")
    if(NOT name IN_LIST _tony_keep_shared)
      _tony_find_archive(${name} archive)
    endif()
    if(archive)
      list(APPEND items "${archive}")
    else()
      list(APPEND items "-l${name}")
      list(APPEND dynamic ${name})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES dynamic)
  set_target_properties(PkgConfig::${prefix} PROPERTIES INTERFACE_LINK_LIBRARIES "${items}"
                                                        INTERFACE_LINK_OPTIONS "")
  set(TONY_DYNAMIC_LIBRARIES "${dynamic}" PARENT_SCOPE)
endfunction()

# What the archives of libcurl, libldap and librtmp need beyond their .pc files.
pkg_check_modules(TONY_STATIC_EXTRA REQUIRED gnutls libsasl2 libpsl libidn2 libbrotlidec)
_tony_static_pkg(GRPCPP)
_tony_static_pkg(LIBARCHIVE)
_tony_static_pkg(KRB5)
_tony_static_pkg(MHD)
_tony_static_pkg(CURL ${TONY_STATIC_EXTRA_STATIC_LIBRARIES})

file(WRITE ${PROJECT_BINARY_DIR}/dynamic-libraries.txt "")
foreach(name IN LISTS TONY_DYNAMIC_LIBRARIES)
  file(APPEND ${PROJECT_BINARY_DIR}/dynamic-libraries.txt "${name}\n")
endforeach()
message(STATUS "TONY_STATIC: shared besides glibc: ${TONY_DYNAMIC_LIBRARIES}")

add_link_options(-static-libstdc++ -static-libgcc)
# Archives in any order: the linker rescans the group until nothing is left undefined.
set(CMAKE_CXX_LINK_EXECUTABLE
    "<CMAKE_CXX_COMPILER> <FLAGS> <CMAKE_CXX_LINK_FLAGS> <LINK_FLAGS> <OBJECTS> -o <TARGET> -Wl,--start-group <LINK_LIBRARIES> -Wl,--end-group")
