/* bench_solver.c - the LP of a heterogeneity-aware max-min fairness round
 * (Gavel's, Narayanan et al., OSDI'20, sec. 4.1) at 100, 1,000 and 10,000
 * active jobs on three GPU types, solved by each solver of
 * include/gpupool/solver.h: build time, solve time, simplex iterations and
 * the optimum (both solvers must find the same). A bench prints figures;
 * it never fails on speed (exit 1 only when a solve fails or the solvers
 * disagree).
 *
 * The problem, as Gavel's max_min_fairness policy states it: X[j][k] in
 * [0, 1] is the share of time job j runs on type k; maximize t such that
 * every job's throughput, normalized by what it would get from an equal
 * share of the cluster, weighted, is at least t:
 *   sum_k T[j][k] X[j][k] / (w_j E_j) >= t          for every job j
 *   sum_k X[j][k] <= 1                              for every job j
 *   sum_j s_j X[j][k] <= n_k                        for every type k
 * with T[j][k] the job's throughput on type k, s_j its GPUs (scale
 * factor), n_k the GPUs of type k, w_j its weight (1), and E_j the job's
 * throughput on an equal share: each type's GPUs split evenly over the
 * jobs, a third of the time on each type (this bench's choice; the
 * problem's shape and size, not Gavel's exact normalization, are what it
 * measures). Throughputs are drawn (seeded) with V100 fastest, P100 about
 * 0.6 of it and K80 about 0.25, as in Gavel's table; 36 GPUs of each type
 * per 100 jobs.
 */
#define _DEFAULT_SOURCE /* strsep */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "gpupool/solver.h"

#define PROG "bench_solver"
#define NTYPES 3

static uint64_t rng = 1;

static double uni(void)
{
    uint64_t z = (rng += 0x9E3779B97F4A7C15ull);

    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0;
}

/* The round's LP for `jobs` jobs; NULL on failure (said why). */
static struct gp_lp *max_min_lp(int jobs)
{
    static const double rel[NTYPES] = {1.0, 0.6, 0.25};
    struct gp_lp *lp = gp_lp_new();
    int t, *xcol = malloc((size_t)jobs * NTYPES * sizeof(int));
    double n[NTYPES];
    int *scale = malloc((size_t)jobs * sizeof(int));
    double *tput = malloc((size_t)jobs * NTYPES * sizeof(double));
    struct gp_diag d;

    if (!lp || !xcol || !scale || !tput)
        goto fail;
    rng = (uint64_t)jobs; /* each size its own problem, whatever ran before */
    for (int k = 0; k < NTYPES; k++)
        n[k] = ceil(36.0 * jobs / 100.0);
    gp_lp_set_sense(lp, GP_LP_MAXIMIZE);
    if ((t = gp_lp_add_col(lp, 0, INFINITY, 1, false, &d)) < 0)
        goto bad;
    for (int j = 0; j < jobs; j++) {
        double base = 0.5 + 2.0 * uni(), u = uni();

        scale[j] = u < 0.7 ? 1 : u < 0.85 ? 2 : u < 0.95 ? 4 : 8;
        for (int k = 0; k < NTYPES; k++) {
            tput[j * NTYPES + k] = base * rel[k] * (0.8 + 0.4 * uni());
            if ((xcol[j * NTYPES + k] = gp_lp_add_col(lp, 0, 1, 0, false, &d)) <
                0)
                goto bad;
        }
    }
    for (int j = 0; j < jobs; j++) {
        int cols[NTYPES + 1];
        double vals[NTYPES + 1], equal = 0;

        /* the throughput of an equal share: each type's GPUs split evenly
         * over the jobs, as a fraction of the time the job needs */
        for (int k = 0; k < NTYPES; k++)
            equal += tput[j * NTYPES + k] * fmin(1.0, n[k] / jobs / scale[j]) /
                     NTYPES;
        for (int k = 0; k < NTYPES; k++) {
            cols[k] = xcol[j * NTYPES + k];
            vals[k] = tput[j * NTYPES + k] / equal;
        }
        cols[NTYPES] = t;
        vals[NTYPES] = -1;
        if (gp_lp_add_row(lp, 0, INFINITY, NTYPES + 1, cols, vals, &d) < 0)
            goto bad;
        for (int k = 0; k < NTYPES; k++)
            vals[k] = 1;
        if (gp_lp_add_row(lp, -INFINITY, 1, NTYPES, cols, vals, &d) < 0)
            goto bad;
    }
    for (int k = 0; k < NTYPES; k++) {
        int *cols = malloc((size_t)jobs * sizeof(int));
        double *vals = malloc((size_t)jobs * sizeof(double));
        int rc;

        if (!cols || !vals) {
            free(cols);
            free(vals);
            goto fail;
        }
        for (int j = 0; j < jobs; j++) {
            cols[j] = xcol[j * NTYPES + k];
            vals[j] = scale[j];
        }
        rc = gp_lp_add_row(lp, -INFINITY, n[k], (size_t)jobs, cols, vals, &d);
        free(cols);
        free(vals);
        if (rc < 0)
            goto bad;
    }
    free(xcol);
    free(scale);
    free(tput);
    return lp;
bad:
    fprintf(stderr, PROG ": %s: %s\n", d.where, d.msg);
fail:
    fprintf(stderr, PROG ": cannot build the LP of %d jobs\n", jobs);
    free(xcol);
    free(scale);
    free(tput);
    gp_lp_free(lp);
    return NULL;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: " PROG " [--jobs N[,N...]] [--reps N] [--mps DIR]\n"
                 "  --jobs   sizes of the round (default 100,1000,10000)\n"
                 "  --reps   solves per solver and size; the median is "
                 "printed (default 3)\n"
                 "  --mps    write each size's LP to DIR/max-min-N.mps\n");
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"jobs", required_argument, NULL, 'j'},
        {"reps", required_argument, NULL, 'r'},
        {"mps", required_argument, NULL, 'm'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    char sizes_buf[256] = "100,1000,10000", *sizes = sizes_buf, *tok;
    const char *mps = NULL;
    uint64_t reps = 3;
    int ch, failed = 0;
    size_t nsolvers;
    const struct gp_solver_ops *const *solvers = gp_solver_all(&nsolvers);

    while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (ch) {
        case 'j':
            snprintf(sizes_buf, sizeof(sizes_buf), "%s", optarg);
            break;
        case 'r':
            if (bench_parse_u64(PROG, "--reps", optarg, 1, 1000, &reps))
                return 2;
            break;
        case 'm':
            mps = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    for (size_t s = 0; s < nsolvers; s++)
        printf("%s: %s\n", solvers[s]->name, solvers[s]->what);
    while ((tok = strsep(&sizes, ","))) {
        uint64_t jobs;
        struct gp_lp *lp;
        double t0, build_s, obj[8];

        if (bench_parse_u64(PROG, "--jobs", tok, 1, 1000000, &jobs))
            return 2;
        t0 = bench_now_s();
        if (!(lp = max_min_lp((int)jobs)))
            return 1;
        build_s = bench_now_s() - t0;
        if (mps) {
            char path[4096];
            struct gp_diag d;

            snprintf(path, sizeof(path), "%s/max-min-%" PRIu64 ".mps", mps,
                     jobs);
            if (gp_lp_write_mps(lp, path, &d) != GP_OK)
                fprintf(stderr, PROG ": %s: %s\n", d.where, d.msg);
        }
        for (size_t s = 0; s < nsolvers && s < 8; s++) {
            double *secs = malloc(reps * sizeof(double));
            int64_t iters = 0;

            obj[s] = NAN;
            for (uint64_t r = 0; r < reps; r++) {
                struct gp_lp_result res;
                struct gp_diag d;

                t0 = bench_now_s();
                if (solvers[s]->solve(lp, NULL, &res, &d) != GP_OK) {
                    fprintf(stderr, PROG ": %s: %s\n", d.where, d.msg);
                    return 1;
                }
                secs[r] = bench_now_s() - t0;
                if (res.status != GP_LP_OPTIMAL) {
                    fprintf(stderr, PROG ": %s, %" PRIu64 " jobs: %s\n",
                            solvers[s]->name, jobs,
                            gp_lp_status_name(res.status));
                    failed = 1;
                }
                obj[s] = res.objective;
                iters = res.iterations;
                gp_lp_result_free(&res);
            }
            qsort(secs, reps, sizeof(double), bench_cmp_double);
            printf("max-min-%" PRIu64 ": solver=%s cols=%zu rows=%zu "
                   "nnz=%zu build_ms=%.1f solve_ms=%.1f iterations=%" PRId64
                   " objective=%.9g\n",
                   jobs, solvers[s]->name, gp_lp_ncols(lp), gp_lp_nrows(lp),
                   gp_lp_nnz(lp), build_s * 1e3,
                   bench_quantile(secs, reps, 0.5) * 1e3, iters, obj[s]);
            free(secs);
        }
        for (size_t s = 1; s < nsolvers && s < 8; s++)
            if (fabs(obj[s] - obj[0]) > 1e-6 * fmax(1.0, fabs(obj[0]))) {
                fprintf(
                    stderr, PROG ": %" PRIu64 " jobs: %s finds %.9g, %s %.9g\n",
                    jobs, solvers[0]->name, obj[0], solvers[s]->name, obj[s]);
                failed = 1;
            }
        gp_lp_free(lp);
    }
    return failed;
}
