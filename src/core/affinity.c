#include "core/affinity.h"

#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>

int rn_allowed_cores(int *cores, int max)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set)) return 0;
    int n = 0;
    for (int c = 0; c < CPU_SETSIZE && n < max; c++)
        if (CPU_ISSET(c, &set)) cores[n++] = c;
    return n;
}

int rn_bind_omp_threads(const int *cores, int n, int threads, rn_err *err)
{
    if (n < 1) return rn_err_set(err, "bind cores: no core to bind to");
    for (int i = 0; i < n; i++)
        if (cores[i] < 0 || cores[i] >= CPU_SETSIZE) return rn_err_set(err, "bind cores: core %d out of range", cores[i]);
    int bad = 0, first_rc = 0;
    if (threads > 0) omp_set_num_threads(threads);
#pragma omp parallel reduction(| : bad)
    {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cores[omp_get_thread_num() % n], &set);
        int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
        if (rc) {
            bad |= 1;
#pragma omp critical
            first_rc = rc;
        }
    }
    return bad ? rn_err_set(err, "bind cores: cannot pin a compute thread: %s", strerror(first_rc)) : 0;
}

int rn_bound_core(void)
{
    cpu_set_t set;
    if (pthread_getaffinity_np(pthread_self(), sizeof set, &set) || CPU_COUNT(&set) != 1) return -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set)) return c;
    return -1;
}
