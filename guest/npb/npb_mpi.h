/* The MPI build's shared pieces (npb.h has the rest): start-up, rank-order
 * reductions and failure.
 *
 * Reductions: MPI_Allreduce may add the ranks' contributions in any order
 * (Open MPI's choice depends on the process count and message size), so a
 * floating-point sum could differ in its last bits from the OpenMP build's.
 * npb_mpi_sum() gathers every rank's partials and adds them in rank order,
 * starting from zero, as npb_sum() adds the threads' partials: with the same
 * decomposition the MPI build at P processes prints the OpenMP build's
 * checksums at P threads, digit for digit.
 */
#ifndef NPB_MPI_H
#define NPB_MPI_H

#ifdef NPB_H
#error "include npb_mpi.h before npb.h (and before a kernel's header)"
#endif
#define NPB_WORKER "process"
#define NPB_WORKERS "processes"
#include <mpi.h>

#include "npb.h"

static int npb_rank, npb_nprocs;
static double *npb_gathered; /* [npb_nprocs * NPB_MPI_MAX_SUM] */
#define NPB_MPI_MAX_SUM 16

/* Stops every process with a message (from the rank that saw the problem). */
static inline void npb_mpi_fail(const char *name, const char *what)
{
    fprintf(stderr, "%s: rank %d: %s\n", name, npb_rank, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1); /* not reached: MPI_Abort does not return */
}

/* MPI_Init, the rank and the process count; the class from argv as npb_class
 * reads it (a bad one: rank 0 says so and every rank exits with 2). */
static inline char npb_mpi_init(int *argc, char ***argv, const char *name, const char *known)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &npb_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &npb_nprocs);
    npb_gathered = malloc((size_t)npb_nprocs * NPB_MPI_MAX_SUM * sizeof(double));
    if (!npb_gathered)
        npb_mpi_fail(name, "out of memory");
    char cls;
    if (!npb_parse_class(*argc, *argv, known, &cls)) {
        if (npb_rank == 0) /* once, not once a process */
            npb_usage(name, known);
        MPI_Finalize();
        exit(2);
    }
    return cls;
}

/* out[i] = the sum over ranks of mine[i] (i < n <= NPB_MPI_MAX_SUM), added
 * in rank order; every rank gets the sums.  out may be mine. */
static inline void npb_mpi_sums(const double *mine, double *out, int n)
{
    if (n > NPB_MPI_MAX_SUM)
        npb_mpi_fail("npb_mpi_sums", "more values than NPB_MPI_MAX_SUM");
    MPI_Allgather(mine, n, MPI_DOUBLE, npb_gathered, n, MPI_DOUBLE, MPI_COMM_WORLD);
    for (int i = 0; i < n; i++) {
        double s = 0.0;
        for (int r = 0; r < npb_nprocs; r++)
            s += npb_gathered[r * n + i];
        out[i] = s;
    }
}

/* The sum over ranks of one value, in rank order. */
static inline double npb_mpi_sum(double mine)
{
    npb_mpi_sums(&mine, &mine, 1);
    return mine;
}

#endif
