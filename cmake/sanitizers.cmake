# EMBER_SANITIZE=ON: AddressSanitizer + UndefinedBehaviorSanitizer on the CPU code (the library,
# the GoogleTest suite and the Python module). `make sanitize` builds and runs them; see
# docs/security.md ("Sanitizers"). CPU only: nvcc device code cannot be built with ASan, and the
# GPU side has its own checker (bench/gpu_sanitize.sh, NVIDIA compute-sanitizer).
option(EMBER_SANITIZE "Build the CPU code with AddressSanitizer and UBSan" OFF)

# -fno-sanitize-recover=undefined: the first undefined behaviour aborts the test that hit it, so
# that no report can scroll past unnoticed. float-cast-overflow is not part of gcc's "undefined":
# it catches a double converted to an integer it does not fit (the CKKS encoder's rounding).
set(EMBER_SANITIZE_FLAGS
    -fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer
    -fno-sanitize-recover=undefined,float-cast-overflow)

if(EMBER_SANITIZE AND EMBER_WITH_CUDA)
  message(FATAL_ERROR "EMBER_SANITIZE=ON needs EMBER_CUDA=OFF (the sanitizers cover the CPU code; "
                      "use bench/gpu_sanitize.sh for the GPU)")
endif()

# Adds the sanitizer flags to a target's compilation and link (a no-op unless EMBER_SANITIZE).
function(ember_sanitize target)
  if(EMBER_SANITIZE)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${EMBER_SANITIZE_FLAGS}>)
    target_link_options(${target} PRIVATE ${EMBER_SANITIZE_FLAGS})
  endif()
endfunction()
