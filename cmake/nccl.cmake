# Decides whether the dist layer's collectives use NCCL (EMBER_NCCL = AUTO | ON | OFF) and finds it.
#
# NCCL needs the CUDA backend. It is looked for, in order, in NCCL_ROOT (a cache variable or the
# environment), in the nvidia-nccl-cu13 wheel of the Python environment that builds Ember
# (site-packages/nvidia/nccl/{include,lib}, asked of ${Python_EXECUTABLE} by find_nccl_wheel.py,
# which also looks in the base installation of a virtual environment), and in the system
# (/usr/local/cuda*/, /usr). Nothing is downloaded. At run time the module finds libnccl.so.2
# through its RPATH: $ORIGIN/../nvidia/nccl/lib (the wheel beside an installed ember package) and
# the absolute directory it was linked against (see ember_nccl_rpath below and docs/multi_gpu.md).
#
# Sets EMBER_WITH_NCCL, EMBER_NCCL_INCLUDE_DIR, EMBER_NCCL_LIBRARY and EMBER_NCCL_LIBRARY_DIR.
set(EMBER_NCCL "AUTO" CACHE STRING "Use NCCL for collectives across GPUs: AUTO, ON or OFF")
set_property(CACHE EMBER_NCCL PROPERTY STRINGS AUTO ON OFF)
set(EMBER_WITH_NCCL OFF)

if(NOT EMBER_NCCL STREQUAL "OFF")
  if(NOT EMBER_WITH_CUDA)
    if(EMBER_NCCL STREQUAL "ON")
      message(FATAL_ERROR "EMBER_NCCL=ON needs the CUDA backend, which this configuration does "
                          "not build (EMBER_CUDA=${EMBER_CUDA}); set EMBER_CUDA=ON or EMBER_NCCL=AUTO")
    endif()
  else()
    set(_nccl_hints "")
    if(NCCL_ROOT)
      list(APPEND _nccl_hints "${NCCL_ROOT}")
    elseif(DEFINED ENV{NCCL_ROOT})
      list(APPEND _nccl_hints "$ENV{NCCL_ROOT}")
    endif()
    # The wheel (nvidia-nccl-cu13 keeps nvidia/nccl/ even where other CUDA 13 wheels use
    # nvidia/cu13/). scikit-build-core passes Python_EXECUTABLE; a plain CMake build looks for one.
    if(NOT Python_EXECUTABLE)
      find_package(Python 3.9 QUIET COMPONENTS Interpreter)
    endif()
    if(Python_EXECUTABLE)
      execute_process(
        COMMAND "${Python_EXECUTABLE}" "${CMAKE_CURRENT_LIST_DIR}/find_nccl_wheel.py"
        OUTPUT_VARIABLE _nccl_wheel OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      if(_nccl_wheel)
        list(APPEND _nccl_hints "${_nccl_wheel}")
      endif()
    endif()
    file(GLOB _nccl_cuda_dirs LIST_DIRECTORIES true /usr/local/cuda /usr/local/cuda-*)
    list(APPEND _nccl_hints ${_nccl_cuda_dirs} /usr /usr/local)

    find_path(EMBER_NCCL_INCLUDE_DIR nccl.h HINTS ${_nccl_hints} PATH_SUFFIXES include
              NO_DEFAULT_PATH)
    find_library(EMBER_NCCL_LIBRARY NAMES nccl libnccl.so.2 HINTS ${_nccl_hints}
                 PATH_SUFFIXES lib lib64 lib/x86_64-linux-gnu lib/aarch64-linux-gnu NO_DEFAULT_PATH)
    if(EMBER_NCCL_INCLUDE_DIR AND EMBER_NCCL_LIBRARY)
      get_filename_component(EMBER_NCCL_LIBRARY_DIR "${EMBER_NCCL_LIBRARY}" DIRECTORY)
      set(EMBER_WITH_NCCL ON)
      message(STATUS "Ember: NCCL ${EMBER_NCCL_LIBRARY} (headers in ${EMBER_NCCL_INCLUDE_DIR})")
    elseif(EMBER_NCCL STREQUAL "ON")
      message(FATAL_ERROR
        "EMBER_NCCL=ON but NCCL was not found (nccl.h: ${EMBER_NCCL_INCLUDE_DIR}, libnccl: "
        "${EMBER_NCCL_LIBRARY}); searched: ${_nccl_hints}. Install the nvidia-nccl-cu13 wheel into "
        "the Python environment that builds Ember (pip install nvidia-nccl-cu13), install the "
        "system package (libnccl-dev), or set NCCL_ROOT to a folder with include/nccl.h and "
        "lib/libnccl.so; EMBER_NCCL=AUTO builds without it")
    else()
      message(STATUS "Ember: NCCL not found, collectives across GPUs copy peer to peer")
    endif()
  endif()
endif()

# Lets `target` find libnccl.so.2 at run time: beside an installed package (the wheel's
# nvidia/nccl/lib, from site-packages/ember/) and in the folder it was linked against.
function(ember_nccl_rpath target)
  if(EMBER_WITH_NCCL)
    set_property(TARGET ${target} APPEND PROPERTY INSTALL_RPATH
                 "$ORIGIN/../nvidia/nccl/lib" "${EMBER_NCCL_LIBRARY_DIR}")
    set_property(TARGET ${target} APPEND PROPERTY BUILD_RPATH "${EMBER_NCCL_LIBRARY_DIR}")
  endif()
endfunction()
