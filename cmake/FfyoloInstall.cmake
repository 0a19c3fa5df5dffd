# What `cmake --install` puts under the prefix: the binaries (bin/), the libraries and their
# public headers, the CMake package ffyolo (lib/cmake/ffyolo) and ffyolo.pc beside the reader's
# ffr package and ffr.pc, and the shipped configs in share/ffyolo/configs, where installed
# binaries look for them (trainer/model/src/config_path.cc).
include(CMakePackageConfigHelpers)

set(FFYOLO_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ffyolo)
set(FFYOLO_CONFIGS_DIR ${CMAKE_INSTALL_DATADIR}/ffyolo/configs)
# The .pc files find the prefix from their own location, so that `cmake --install --prefix` may move them.
file(RELATIVE_PATH FFYOLO_PC_TO_PREFIX /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" FFYOLO_PC_TO_PREFIX "${FFYOLO_PC_TO_PREFIX}")
# Installed binaries find shared ffyolo libraries beside them, and keep their paths to libraries
# outside the build tree (a LibTorch given by CMAKE_PREFIX_PATH).
set(CMAKE_INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
set(CMAKE_INSTALL_RPATH_USE_LINK_PATH ON)

# ffyolo_install_libraries(<target>... [EXPORT <set>]): the libraries, exported as
# ffyolo::<name without "ffyolo_"> in <set> (default ffyoloTargets, the torch-free ones that
# ffyolo.pc lists too), and the headers of the calling folder's include/.
function(ffyolo_install_libraries)
  cmake_parse_arguments(I "" "EXPORT" "" ${ARGN})
  if(NOT I_EXPORT)
    set(I_EXPORT ffyoloTargets)
    set_property(GLOBAL APPEND PROPERTY FFYOLO_PC_LIBRARIES ${I_UNPARSED_ARGUMENTS})
  endif()
  foreach(target ${I_UNPARSED_ARGUMENTS})
    string(REGEX REPLACE "^ffyolo_" "" name ${target})
    set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  endforeach()
  install(TARGETS ${I_UNPARSED_ARGUMENTS} EXPORT ${I_EXPORT}
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endfunction()

# The package files and the configs; call it once every library is defined.
function(ffyolo_install_package)
  install(EXPORT ffyoloTargets NAMESPACE ffyolo:: DESTINATION ${FFYOLO_CMAKE_DIR})
  if(TARGET ffyolo_trainer)
    install(EXPORT ffyoloTrainerTargets NAMESPACE ffyolo:: DESTINATION ${FFYOLO_CMAKE_DIR})
  endif()
  configure_package_config_file(cmake/ffyoloConfig.cmake.in ${PROJECT_BINARY_DIR}/ffyoloConfig.cmake
    INSTALL_DESTINATION ${FFYOLO_CMAKE_DIR})
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/ffyoloConfigVersion.cmake
    VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/ffyoloConfig.cmake ${PROJECT_BINARY_DIR}/ffyoloConfigVersion.cmake
    cmake/FfyoloOpenCV.cmake
    DESTINATION ${FFYOLO_CMAKE_DIR})

  # Static libraries link in order: each before those it uses, which were defined before it.
  get_property(libraries GLOBAL PROPERTY FFYOLO_PC_LIBRARIES)
  list(REVERSE libraries)
  list(TRANSFORM libraries PREPEND "-l")
  string(JOIN " " FFYOLO_PC_LIBS ${libraries})
  configure_file(cmake/ffyolo.pc.in ${PROJECT_BINARY_DIR}/ffyolo.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/ffyolo.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

  install(DIRECTORY configs/ DESTINATION ${FFYOLO_CONFIGS_DIR})
endfunction()
