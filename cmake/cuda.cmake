# Decides whether the CUDA backend is built (EMBER_CUDA = AUTO | ON | OFF) and sets it up:
# architectures default to 90 (H100/H200), the runtime is linked statically. AUTO builds it when
# nvcc is found and a GPU is visible (nvidia-smi lists one): the four .cu files are two thirds of
# the build's CPU time, wasted on a machine that cannot run them. ON builds it wherever nvcc is
# (CI compiles the GPU code that way).
set(EMBER_WITH_CUDA OFF)
set(_ember_gpu_visible OFF)
if(EMBER_CUDA STREQUAL "AUTO")
  execute_process(COMMAND nvidia-smi -L OUTPUT_VARIABLE _ember_smi RESULT_VARIABLE _ember_smi_rc
                  ERROR_QUIET)
  if(_ember_smi_rc EQUAL 0 AND _ember_smi MATCHES "GPU")
    set(_ember_gpu_visible ON)
  else()
    message(STATUS "Ember: no GPU visible (nvidia-smi), building the CPU backend only; "
                   "EMBER_CUDA=ON builds the CUDA backend anyway")
  endif()
endif()
if(EMBER_CUDA STREQUAL "ON" OR _ember_gpu_visible)
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
      set(CMAKE_CUDA_ARCHITECTURES 90)
    endif()
    # CMake 3.25 does not know nvcc 13's C++20 flag; it is passed on the target instead.
    set(CMAKE_CUDA_RUNTIME_LIBRARY Static)
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(EMBER_WITH_CUDA ON)
    message(STATUS "Ember: building the CUDA backend for architectures ${CMAKE_CUDA_ARCHITECTURES}")
  elseif(EMBER_CUDA STREQUAL "ON")
    message(FATAL_ERROR "EMBER_CUDA=ON but no CUDA compiler (nvcc) was found: put nvcc on PATH "
                        "or set CMAKE_CUDA_COMPILER")
  else()
    message(STATUS "Ember: no CUDA compiler found, building the CPU backend only")
  endif()
endif()
