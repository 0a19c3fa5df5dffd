# OpenCV, core and imgproc only in the data path (imgcodecs pulls GDAL and more).
# Found by its CMake config when the full libopencv-dev is present, else by
# find_path/find_library over the split packages or an unpacked prefix.
# Defines ffyolo::opencv_core, ffyolo::opencv_imgproc and, when available,
# ffyolo::opencv_imgcodecs (FFYOLO_HAVE_IMGCODECS), unless FFYOLO_WITH_IMGCODECS is OFF
# (the wheel: JPEG and PNG only, without the hundred libraries Debian's imgcodecs loads).
find_package(OpenCV QUIET COMPONENTS core imgproc OPTIONAL_COMPONENTS imgcodecs)
set(FFYOLO_HAVE_IMGCODECS OFF)
set(ffyolo_opencv_modules core imgproc)
if(FFYOLO_WITH_IMGCODECS)
  list(APPEND ffyolo_opencv_modules imgcodecs)
endif()
if(OpenCV_FOUND)
  foreach(m core imgproc)
    add_library(ffyolo::opencv_${m} INTERFACE IMPORTED)
    target_link_libraries(ffyolo::opencv_${m} INTERFACE opencv_${m})
  endforeach()
  if(FFYOLO_WITH_IMGCODECS AND TARGET opencv_imgcodecs)
    add_library(ffyolo::opencv_imgcodecs INTERFACE IMPORTED)
    target_link_libraries(ffyolo::opencv_imgcodecs INTERFACE opencv_imgcodecs)
    set(FFYOLO_HAVE_IMGCODECS ON)
  endif()
else()
  find_path(FFYOLO_OPENCV_INCLUDE_DIR opencv2/core.hpp PATH_SUFFIXES opencv4 REQUIRED)
  foreach(m ${ffyolo_opencv_modules})
    find_library(FFYOLO_OPENCV_${m}_LIB NAMES opencv_${m} libopencv_${m}.so.406)
    if(FFYOLO_OPENCV_${m}_LIB)
      add_library(ffyolo::opencv_${m} SHARED IMPORTED)
      set_target_properties(ffyolo::opencv_${m} PROPERTIES
        IMPORTED_LOCATION ${FFYOLO_OPENCV_${m}_LIB}
        INTERFACE_INCLUDE_DIRECTORIES ${FFYOLO_OPENCV_INCLUDE_DIR})
    elseif(NOT m STREQUAL "imgcodecs")
      message(FATAL_ERROR "OpenCV ${m} not found (install libopencv-dev or libopencv-${m}-dev)")
    endif()
  endforeach()
  if(TARGET ffyolo::opencv_imgcodecs)
    set(FFYOLO_HAVE_IMGCODECS ON)
  endif()
endif()
message(STATUS "ffyolo: OpenCV imgcodecs ${FFYOLO_HAVE_IMGCODECS}")
