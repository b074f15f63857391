/*
 * A library that takes a program's lock (tests/test_hostsync.sh): built once
 * under a CUDA library's name (libcublasLt...: its locks are the library's
 * implementation, never recorded) and once under an application library's
 * name (recorded like the program's own locks).  Which it is comes from the
 * object that holds the caller's return address (preload/hostsync.c,
 * hs_classify).
 */
#include <pthread.h>

int hs_lib_set(pthread_mutex_t *mu, int *flag)
{
    int rc = pthread_mutex_lock(mu);
    if (rc)
        return rc;
    *flag = 1;
    return pthread_mutex_unlock(mu);
}

int hs_lib_get(pthread_mutex_t *mu, const int *flag)
{
    if (pthread_mutex_lock(mu))
        return -1;
    int f = *flag;
    pthread_mutex_unlock(mu);
    return f;
}
