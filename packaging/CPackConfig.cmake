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
# Dlopened Qt plugins (SVG icons) are invisible to dpkg-shlibdeps.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libqt6svg6")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "shared-mime-info, desktop-file-utils")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${_pkg}/debian/postinst ${_pkg}/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

include(CPack)
