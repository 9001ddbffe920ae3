# TONY_STATIC: beside the regular tony, `static/tony`, a binary that YARN can ship to nodes that
# have nothing of tony's installed. It links the very object files of the regular binary (the
# OBJECT library tony_cli and the modules' archives), so it costs one link, not a second build.
# Every other library comes from its static archive wherever Debian ships one (and libstdc++ and
# libgcc with -static-lib*); the few without an archive stay shared and are listed, one name a
# line, in <build>/static/dynamic-libraries.txt. glibc stays shared too, as glibc expects (NSS).
# spdlog and fmt are compiled into tony_common (src/common/logging_library.cc).
#
# The regular binary and the tests link the shared libraries as usual: nothing here changes the
# imported targets. This file walks what tony_cli links, transitively, and writes the archives
# down. Included from src/cli/CMakeLists.txt once tony_cli exists.

# Part of glibc (or of the compiler's runtime): never looked for as archives.
set(_tony_system_libs c m dl rt pthread atomic)
# Shared even though Debian has an archive: libsasl2.a (which libldap, inside libcurl, needs)
# carries its database plugins, and with them SQLite, MySQL, PostgreSQL and Berkeley DB.
set(_tony_keep_shared sasl2)
# What the archives of libcurl, libldap and librtmp need beyond their .pc files.
pkg_check_modules(TONY_STATIC_EXTRA REQUIRED gnutls libsasl2 libpsl libidn2 libbrotlidec)

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

# One library by name (as in -l<name>): its archive into TONY_STATIC_ARCHIVES, or the name into
# TONY_STATIC_SHARED (glibc's, and those without a usable archive). Global properties, so that
# the recursive walk below can add to them.
function(_tony_static_by_name name)
  set(archive "")
  if(NOT name IN_LIST _tony_system_libs AND NOT name IN_LIST _tony_keep_shared)
    _tony_find_archive(${name} archive)
  endif()
  if(archive)
    set_property(GLOBAL APPEND PROPERTY TONY_STATIC_ARCHIVES "${archive}")
  else()
    set_property(GLOBAL APPEND PROPERTY TONY_STATIC_SHARED "${name}")
  endif()
endfunction()

# One link item of a target: a target of this build (its archive), an imported library (the
# archive beside its shared object), a pkg-config module (its --static libraries, private
# dependencies included), a -l flag or a library path; then, for targets, what they link in turn.
function(_tony_static_walk item)
  if(item MATCHES "^\\$<LINK_ONLY:(.+)>$")
    set(item "${CMAKE_MATCH_1}")
  endif()
  get_property(seen GLOBAL PROPERTY TONY_STATIC_SEEN)
  if(item IN_LIST seen)
    return()
  endif()
  set_property(GLOBAL APPEND PROPERTY TONY_STATIC_SEEN "${item}")

  if(TARGET ${item})
    get_target_property(type ${item} TYPE)
    get_target_property(imported ${item} IMPORTED)
    if(item MATCHES "^PkgConfig::(.+)$")
      set(prefix "${CMAKE_MATCH_1}")
      foreach(name IN LISTS ${prefix}_STATIC_LIBRARIES)
        _tony_static_by_name(${name})
      endforeach()
      if(prefix STREQUAL "CURL")
        foreach(name IN LISTS TONY_STATIC_EXTRA_STATIC_LIBRARIES)
          _tony_static_by_name(${name})
        endforeach()
      endif()
      return()
    endif()
    if(NOT imported AND type STREQUAL "STATIC_LIBRARY")
      set_property(GLOBAL APPEND PROPERTY TONY_STATIC_ARCHIVES "$<TARGET_FILE:${item}>")
      set_property(GLOBAL APPEND PROPERTY TONY_STATIC_TARGETS "${item}")
    elseif(imported AND type MATCHES "^(SHARED|UNKNOWN|STATIC)_LIBRARY$")
      set(location "")
      foreach(prop IMPORTED_LOCATION IMPORTED_LOCATION_NONE IMPORTED_LOCATION_NOCONFIG
                   IMPORTED_LOCATION_RELEASE IMPORTED_LOCATION_RELWITHDEBINFO
                   IMPORTED_LOCATION_DEBUG)
        get_target_property(location ${item} ${prop})
        if(location)
          break()
        endif()
      endforeach()
      string(REGEX REPLACE "\\.so(\\.[0-9.]+)?$" ".a" archive "${location}")
      if(EXISTS "${archive}")
        set_property(GLOBAL APPEND PROPERTY TONY_STATIC_ARCHIVES "${archive}")
      else()
        message(FATAL_ERROR "TONY_STATIC: no archive of ${item} (${location})")
      endif()
    endif()
    get_target_property(links ${item} INTERFACE_LINK_LIBRARIES)
    if(links)
      foreach(link IN LISTS links)
        _tony_static_walk("${link}")
      endforeach()
    endif()
  elseif(item MATCHES "^-l(.+)$")
    _tony_static_by_name(${CMAKE_MATCH_1})
  elseif(item MATCHES "/lib([^/]+)\\.(so|a)(\\.[0-9.]+)?$")
    _tony_static_by_name(${CMAKE_MATCH_1})
  elseif(item MATCHES "^-pthread$")
    set_property(GLOBAL APPEND PROPERTY TONY_STATIC_SHARED "pthread")
  endif()
  # Anything else is a linker flag of a library's own link line (abseil's --as-needed around
  # -latomic): the link below puts every shared library after --as-needed itself.
endfunction()

get_target_property(_tony_cli_links tony_cli LINK_LIBRARIES)
foreach(link IN LISTS _tony_cli_links)
  _tony_static_walk("${link}")
endforeach()
get_property(_tony_archives GLOBAL PROPERTY TONY_STATIC_ARCHIVES)
get_property(_tony_shared GLOBAL PROPERTY TONY_STATIC_SHARED)
get_property(_tony_targets GLOBAL PROPERTY TONY_STATIC_TARGETS)
list(REMOVE_DUPLICATES _tony_archives)
list(REMOVE_DUPLICATES _tony_shared)
set(_tony_dynamic "${_tony_shared}")
list(REMOVE_ITEM _tony_dynamic ${_tony_system_libs})

set(_tony_static_dir ${PROJECT_BINARY_DIR}/static)
file(MAKE_DIRECTORY ${_tony_static_dir})
file(WRITE ${_tony_static_dir}/dynamic-libraries.txt "")
foreach(name IN LISTS _tony_dynamic)
  file(APPEND ${_tony_static_dir}/dynamic-libraries.txt "${name}\n")
endforeach()
message(STATUS "TONY_STATIC: static/tony, shared besides glibc: ${_tony_dynamic}")

# libarchive's zip writer shares an object file with the table of every writer, so the static
# link would pull in the XAR writer and with it libxml2 and ICU: static_link_stubs.cc replaces it.
add_executable(tony_static $<TARGET_OBJECTS:tony_cli> ${CMAKE_CURRENT_SOURCE_DIR}/static_link_stubs.cc)
add_dependencies(tony_static ${_tony_targets})
set(_tony_shared_flags "")
foreach(name IN LISTS _tony_shared)
  list(APPEND _tony_shared_flags "-l${name}")
endforeach()
# Archives in any order: the linker rescans the group until nothing is left undefined.
target_link_libraries(tony_static PRIVATE -Wl,--start-group ${_tony_archives} -Wl,--end-group
                      -Wl,--as-needed ${_tony_shared_flags})
target_link_options(tony_static PRIVATE -static-libstdc++ -static-libgcc -s)
if(TONY_LINKER_PACKS_RELOCS)
  target_link_options(tony_static PRIVATE -Wl,-z,pack-relative-relocs)
endif()
set_target_properties(tony_static PROPERTIES OUTPUT_NAME tony
                      RUNTIME_OUTPUT_DIRECTORY ${_tony_static_dir})
