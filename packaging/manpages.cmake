# Man pages for both executables, generated at build time from their --help
# by help2man (so they never go stale), gzipped as Debian wants them.
# Included from CPackConfig.cmake; ckptscope --help needs no display.
find_program(HELP2MAN_EXECUTABLE help2man)
find_program(GZIP_EXECUTABLE gzip)
if(NOT HELP2MAN_EXECUTABLE OR NOT GZIP_EXECUTABLE)
  message(STATUS "help2man or gzip not found: no man pages (packaging/install-deps.sh installs them)")
  return()
endif()

set(_man_dir ${CMAKE_BINARY_DIR}/man)
set(_man_pages)
set(_man_names
  "ckptscope-cli=inspect OXCK and gradient checkpoints from the command line")
if(CKPTSCOPE_BUILD_GUI)
  list(APPEND _man_names "ckptscope=browse machine-learning training checkpoints")
endif()
foreach(_entry IN LISTS _man_names)
  string(REGEX MATCH "^[^=]+" _prog "${_entry}")
  string(REGEX REPLACE "^[^=]+=" "" _what "${_entry}")
  set(_page ${_man_dir}/${_prog}.1)
  add_custom_command(
    OUTPUT ${_page}.gz
    COMMAND ${CMAKE_COMMAND} -E make_directory ${_man_dir}
    # A fixed date (the release's, as in the metainfo) and the version given:
    # the page is the same on every build.
    COMMAND ${CMAKE_COMMAND} -E env SOURCE_DATE_EPOCH=1795953600
            ${HELP2MAN_EXECUTABLE} --no-info --no-discard-stderr --section=1
            --version-string=${PROJECT_VERSION} --name=${_what}
            --output=${_page} $<TARGET_FILE:${_prog}>
    COMMAND ${GZIP_EXECUTABLE} -9nf ${_page}
    DEPENDS ${_prog}
    COMMENT "Man page for ${_prog} from its --help"
    VERBATIM)
  list(APPEND _man_pages ${_page}.gz)
endforeach()
add_custom_target(manpages ALL DEPENDS ${_man_pages})
install(FILES ${_man_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
