# Sourced by the shim tests that run without a GPU: builds the fake CUDA
# libraries (tests/api_fake_cudart.c: libcudart.so.13 with the real soname and
# symbol version; tests/api_fake_cuda.c: libcuda.so.1) into DIR.
#   build_fake_cuda DIR [cudart-only]
# Uses CC and CUDA_HOME; returns non-zero when a build fails.
build_fake_cuda() {
    local dir=$1 w="-std=gnu11 -Wall -Wextra -Werror -Iinclude -I${CUDA_HOME:-/usr/local/cuda}/include -g"
    mkdir -p "$dir" &&
    ${CC:-cc} $w -O2 -fPIC -shared -fvisibility=hidden -Wl,-soname,libcudart.so.13 \
        -Wl,--version-script=tests/api_fake_cudart.map -o "$dir/libcudart.so.13" tests/api_fake_cudart.c || return 1
    [ "${2:-}" = cudart-only ] && return 0
    ${CC:-cc} $w -O2 -fPIC -shared -Wl,-soname,libcuda.so.1 -o "$dir/libcuda.so.1" tests/api_fake_cuda.c
}
