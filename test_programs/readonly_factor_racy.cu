// Racy twin of readonly_factor.cu: the kernel on the first stream also writes
// *factor while the kernels on the other three streams read it, with nothing
// ordering them: a data race on `factor`.
#define WRITE_FACTOR 1
#define PROGRAM_NAME "readonly_factor_racy"
#include "readonly_factor.cu"
