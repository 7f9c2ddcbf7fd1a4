/* Core binding for the compute threads (OpenMP, which oneDNN shares).
 *
 *   int cores[256]; int n = rn_allowed_cores(cores, 256);   // or rn_loader_compute_cores
 *   if (rn_bind_omp_threads(cores, n, threads, &err)) ...;   // thread i -> cores[i % n]
 */
#ifndef RN_CORE_AFFINITY_H
#define RN_CORE_AFFINITY_H

#include "core/status.h"

/* The cores this process may run on, ascending, into cores[0..max); returns the count. */
int rn_allowed_cores(int *cores, int max);
/* Starts an OpenMP team of `threads` (0: the current default) and pins its
 * thread i (the calling thread is 0) to cores[i % n]. */
int rn_bind_omp_threads(const int *cores, int n, int threads, rn_err *err);
/* The core the calling thread is pinned to, or -1 if it may run on several. */
int rn_bound_core(void);

#endif
