# Sourced by the shim tests that run without a GPU: builds the fake CUDA
# libraries (tests/api_fake_cudart.c: libcudart.so.13 with the real soname and
# symbol version; tests/api_fake_cuda.c: libcuda.so.1; with "with-cupti",
# tests/api_fake_cupti.c: libcupti.so.13) into DIR.
#   build_fake_cuda DIR [cudart-only | with-cupti]
# Uses CC and CUDA_HOME (CUPTI_INC_DIR when CUPTI's headers are elsewhere);
# returns non-zero when a build fails.
build_fake_cuda() {
    local dir=$1 cuda=${CUDA_HOME:-/usr/local/cuda}
    local w="-std=gnu11 -Wall -Wextra -Werror -Iinclude -I$cuda/include -g"
    mkdir -p "$dir" &&
    ${CC:-cc} $w -I"${CUPTI_INC_DIR:-$cuda/extras/CUPTI/include}" -O2 -fPIC -shared -fvisibility=hidden \
        -Wl,-soname,libcudart.so.13 \
        -Wl,--version-script=tests/api_fake_cudart.map -o "$dir/libcudart.so.13" tests/api_fake_cudart.c -ldl || return 1
    [ "${2:-}" = cudart-only ] && return 0
    ${CC:-cc} $w -O2 -fPIC -shared -Wl,-soname,libcuda.so.1 -o "$dir/libcuda.so.1" tests/api_fake_cuda.c || return 1
    [ "${2:-}" = with-cupti ] || return 0
    ${CC:-cc} $w -I"${CUPTI_INC_DIR:-$cuda/extras/CUPTI/include}" -O2 -fPIC -shared -fvisibility=hidden \
        -Wl,-soname,libcupti.so.13 -o "$dir/libcupti.so.13" tests/api_fake_cupti.c -lpthread
}
