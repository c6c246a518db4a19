# Desktop integration install rules and the Debian package (make package).
# Included from the top CMakeLists.txt; paths are relative to this folder.
include(GNUInstallDirs)
set(_pkg ${CMAKE_CURRENT_LIST_DIR})
set(_appid io.github.ckptscope.Ckptscope)

if(CKPTSCOPE_BUILD_GUI)
  install(FILES ${_pkg}/${_appid}.desktop
          DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
  install(FILES ${_pkg}/${_appid}.metainfo.xml
          DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo)
  install(FILES ${PROJECT_SOURCE_DIR}/resources/icons/ckptscope.svg
          DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps
          RENAME ${_appid}.svg)
endif()
install(FILES ${_pkg}/ckptscope-mime.xml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/mime/packages
        RENAME ckptscope.xml)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/resources/samples/
        DESTINATION ${CMAKE_INSTALL_DATADIR}/ckptscope/samples)

# What Debian policy asks of every package: the copyright (machine-readable,
# the LICENSE's terms) and the changelog, gzipped, in /usr/share/doc/PACKAGE.
install(FILES ${_pkg}/debian/copyright DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/ckptscope)
file(STRINGS ${_pkg}/debian/changelog _changelog_head LIMIT_COUNT 1)
if(NOT _changelog_head MATCHES "^ckptscope \\(${PROJECT_VERSION}\\) ")
  message(FATAL_ERROR "packaging/debian/changelog: the first entry is '${_changelog_head}', "
                      "not version ${PROJECT_VERSION}; add an entry for this version")
endif()
find_program(GZIP_EXECUTABLE gzip)
if(GZIP_EXECUTABLE)
  # A native package (no Debian revision): changelog.gz, compressed without a
  # timestamp so the package is reproducible.
  set(_changelog_gz ${CMAKE_BINARY_DIR}/debian/changelog.gz)
  add_custom_command(
    OUTPUT ${_changelog_gz}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/debian
    COMMAND ${GZIP_EXECUTABLE} -9n -c ${_pkg}/debian/changelog > ${_changelog_gz}
    DEPENDS ${_pkg}/debian/changelog)
  add_custom_target(debian_changelog ALL DEPENDS ${_changelog_gz})
  install(FILES ${_changelog_gz} DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/ckptscope)
endif()
include(${_pkg}/manpages.cmake)

set(CPACK_PACKAGE_NAME ckptscope)
set(CPACK_PACKAGE_VENDOR "Ckptscope developers")
set(CPACK_PACKAGE_CONTACT "Ckptscope developers <dev@ckptscope.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
string(JOIN "\n" CPACK_PACKAGE_DESCRIPTION
  "Ckptscope opens OXCK model checkpoints and JSON gradient checkpoints"
  "and shows the tensor tree, metadata, per-tensor statistics and"
  "histograms, tensor values, the computation graph and the optimizer"
  "state. ckptscope-cli answers the same questions in scripts and CI.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CPACK_PACKAGE_CONTACT}")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/ckptscope/ckptscope")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Dlopened Qt plugins (SVG icons) and libcurl (io/curllib.h) are invisible to
# dpkg-shlibdeps.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libqt6svg6, libcurl4 (>= 7.85)")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "shared-mime-info, desktop-file-utils")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${_pkg}/debian/postinst ${_pkg}/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

include(CPack)
