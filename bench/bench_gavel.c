/* bench_gavel.c - one round of the `gavel` policy (max-min fairness over
 * Gavel's measured throughputs, objective max_min_fairness_perf) at 100,
 * 1,000 and 10,000 active jobs, and the same problem written out for
 * Gavel's own cvxpy solve (bench/gavel_cvxpy.py), so that the two can be
 * compared at equal objective value (docs/solver.md).
 *
 * For each size N (its own seed, N, whatever ran before):
 *
 *   1. N jobs as Gavel's trace generator draws them (scheduler/utils.py):
 *      a job type uniformly among the table's types, a scale factor of 1,
 *      2, 4 or 8 with probabilities 0.7, 0.1, 0.15, 0.05 (Philly's), drawn
 *      again while the table has no row for the type at that scale. (Its
 *      0 for ResNet-50 with batch size 128 on 2, 4 or 8 K80s is "cannot
 *      run there" in both: docs/speed.md.)
 *   2. A cluster of V100, P100 and K80 nodes of 4 GPUs, ceil(36 N / 100)
 *      GPUs of each type rounded up to whole nodes (Gavel's 36:36:36
 *      cluster per 100 jobs).
 *   3. A core with policy gavel and Gavel's throughputs (the speed model of
 *      `--speed gavel`); the N jobs arrive at time 0; the first round is
 *      timed (CLOCK_MONOTONIC): it solves the allocation LP and starts what
 *      the allocation gives. The policy's debug log line of each solve
 *      gives the LP's size, the solver's time and iterations, and its
 *      optimum: the smallest normalized throughput z of the jobs,
 *      min_j sum_k T_jk s_j X_jk / P_j with P_j the job's throughput on the
 *      proportional split (Gavel's objective for priority weights 1).
 *   4. With --problem DIR, DIR/gavel-N.json lists the jobs (type, scale
 *      factor), the cluster spec and gpupool's optimum, for
 *      bench/gavel_cvxpy.py to hand the same problem to Gavel's
 *      MaxMinFairnessPolicyWithPerf.
 *
 * Median of --reps (3) fresh cores per size. A bench prints figures; it
 * exits 1 only when something fails (a solve, a submit), never on speed.
 */
#define _DEFAULT_SOURCE /* strsep */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "gpupool/core.h"
#include "gpupool/policies.h"
#include "gpupool/solver.h"
#include "gpupool/trace.h"
#include "trace/gavel_throughputs.h"

#define PROG "bench_gavel"
#define NODE_GPUS 4
#define MAX_SIZES 8
#define MAX_TYPES_DRAWN 64

static const char *const gpu_types[] = {"V100", "P100", "K80"};
static const char *objective = "max_min_fairness_perf"; /* --objective */

/* What the policy's debug lines said about the solves of one round. */
struct solves {
    int n;
    double seconds; /* the solver's time, summed */
    double alloc_s; /* the policy's whole allocation: classes, LP, solve */
    long long iterations;
    size_t cols, rows; /* of the last */
    double objective;  /* of the last optimal one */
    int optimal;       /* LPs solved to optimality (a bisection's probes
                          may be infeasible) */
};

static void on_log(void *priv, enum gp_log_level level, const char *msg)
{
    struct solves *s = priv;
    const char *p;
    size_t cols, rows;
    double sec, obj;
    long long it;
    char st[32];

    if (level != GP_LOG_DEBUG)
        return;
    if ((p = strstr(msg, ": allocation of ")) &&
        (p = strstr(p, " computed in ")) && sscanf(p + 13, "%lf", &sec) == 1)
        s->alloc_s += sec;
    if (!(p = strstr(msg, ": LP of ")))
        return;
    p = strchr(p + 8, ':');
    if (p && sscanf(p,
                    ": %zu columns, %zu rows, solver %*s %31[^ ] in %lf s, "
                    "%lld iterations, objective %lf",
                    &cols, &rows, st, &sec, &it, &obj) == 6) {
        s->n++;
        s->seconds += sec;
        s->iterations += it;
        s->cols = cols;
        s->rows = rows;
        if (strcmp(st, "optimal") == 0) {
            s->objective = obj;
            s->optimal++;
        }
    }
}

struct job {
    const char *type;
    uint32_t sf;
};

/* Step 1: the jobs of size n. */
static struct job *draw_jobs(size_t n)
{
    const char *types[MAX_TYPES_DRAWN];
    size_t nt = 0;
    struct job *jobs = calloc(n, sizeof(*jobs));
    struct gp_rng rng;

    if (!jobs)
        return NULL;
    for (size_t i = 0; i < gp__gavel_ntputs && nt < MAX_TYPES_DRAWN; i++)
        if (nt == 0 || strcmp(types[nt - 1], gp__gavel_tputs[i].job_type))
            types[nt++] = gp__gavel_tputs[i].job_type;
    gp_rng_init(&rng, n);
    for (size_t j = 0; j < n; j++) {
        const char *t = types[gp_rng_next(&rng) % nt];
        uint32_t sf;

        do {
            double r = gp_rng_unit(&rng);

            sf = r < 0.7 ? 1 : r < 0.8 ? 2 : r < 0.95 ? 4 : 8;
        } while (!gp__gavel_tput_find(t, strlen(t), sf));
        jobs[j].type = t;
        jobs[j].sf = sf;
    }
    return jobs;
}

static uint32_t per_type_nodes(size_t n)
{
    uint32_t gpus = (uint32_t)((36 * n + 99) / 100);

    return (gpus + NODE_GPUS - 1) / NODE_GPUS;
}

/* Start what the round started, as a world would (stops: none come from
 * a first round, and a later one's are left in their grace). */
static int carry_out(struct gp_core *core, int64_t now)
{
    const struct gp_action *a;
    size_t n;
    int rc;

    while ((n = gp_core_take_actions(core, &a)) > 0)
        for (size_t i = 0; i < n; i++)
            if (a[i].kind == GP_ACT_START &&
                (rc = gp_core_job_started(core, a[i].job, now)) != GP_OK)
                return rc;
    return GP_OK;
}

static int submit(struct gp_core *core, const struct job *jb, int64_t now,
                  struct gp_diag *diag)
{
    struct gp_job_spec spec = {0};

    spec.job_class = jb->type;
    spec.gpus = jb->sf;
    spec.submit_us = now;
    spec.duration_us = (int64_t)1e6 * 86400 * 30;
    spec.checkpointable = true;
    return gp_core_submit(core, &spec, now, NULL, diag);
}

/* One timed round at `now`; its solves into sv. */
static int timed_round(struct gp_core *core, int64_t now, double *s,
                       struct solves *sv, struct gp_diag *diag)
{
    double t0;
    int rc;

    memset(sv, 0, sizeof(*sv));
    gp_core_advance(core, now);
    t0 = bench_now_s();
    rc = gp_core_round(core, now);
    *s = bench_now_s() - t0;
    if (rc < 0)
        return gp_diag_set(diag, rc, "gavel", "the round failed");
    if (sv->n == 0)
        return gp_diag_set(diag, GP_EINVAL, "gavel", "the round solved no LP");
    return carry_out(core, now);
}

/* Steps 2 and 3: one fresh core; the first round timed, then (the steady
 * state) the round at the next boundary, 360 s on, after one more job
 * arrived: the LP is solved again with the jobs' entries kept. */
static int two_rounds(const struct job *jobs, size_t n, const char *solver,
                      const struct gp_speed_table *speed, double s[2],
                      struct solves sv[2], struct gp_diag *diag)
{
    struct gp_env env = {.log = on_log, .log_level = GP_LOG_DEBUG, .seed = 1};
    const struct gp_kv opts[] = {{"objective", objective}, {"solver", solver}};
    struct gp_core_config cfg = {
        .policy = gp_policy_lookup("gavel"),
        .policy_opts = opts,
        .npolicy_opts = solver ? 2 : 1,
        .model = GP_PLACE_PACK,
        .env = &env,
        .speed = speed,
    };
    const int64_t next = 360 * (int64_t)1000000;
    struct gp_cluster *c = NULL;
    struct gp_core *core = NULL;
    int rc = GP_OK;

    for (int k = 0; k < GP_NPRIO; k++) {
        cfg.min_run_us[k] = -1;
        cfg.max_preemptions[k] = UINT32_MAX;
    }
    if (!cfg.policy)
        return gp_diag_set(diag, GP_ENOENT, "gavel", "no policy 'gavel'");
    if ((rc = gp_cluster_new(&c)) != GP_OK)
        return gp_diag_set(diag, rc, "cluster", "out of memory");
    for (size_t k = 0; k < 3; k++)
        if ((rc = gp_cluster_add_uniform(c, per_type_nodes(n), NODE_GPUS,
                                         gpu_types[k], 0, diag)) != GP_OK) {
            gp_cluster_free(c);
            return rc;
        }
    if ((rc = gp_core_new(&core, c, &cfg, diag)) != GP_OK) {
        gp_cluster_free(c);
        return rc;
    }
    for (size_t j = 0; j < n && rc == GP_OK; j++)
        rc = submit(core, &jobs[j], 0, diag);
    env.log_priv = &sv[0];
    if (rc == GP_OK)
        rc = timed_round(core, 0, &s[0], &sv[0], diag);
    /* the first job's kind again: a new job, not a new kind */
    if (rc == GP_OK)
        rc = submit(core, &jobs[0], next, diag);
    env.log_priv = &sv[1];
    if (rc == GP_OK)
        rc = timed_round(core, next, &s[1], &sv[1], diag);
    gp_core_free(core);
    return rc;
}

/* Step 4. */
static int write_problem(const char *dir, const struct job *jobs, size_t n,
                         double optimum, struct gp_diag *diag)
{
    char path[4096];
    FILE *f;
    uint32_t w = per_type_nodes(n) * NODE_GPUS;

    snprintf(path, sizeof(path), "%s/gavel-%zu.json", dir, n);
    if (!(f = fopen(path, "w")))
        return gp_diag_set(diag, GP_EIO, path, "%s", strerror(errno));
    fprintf(f,
            "{\"cluster_spec\": {\"v100\": %u, \"p100\": %u, \"k80\": %u},\n"
            " \"gpupool_objective\": %.10g,\n \"jobs\": [",
            w, w, w, optimum);
    for (size_t j = 0; j < n; j++)
        fprintf(f, "%s\n  [\"%s\", %u]", j ? "," : "", jobs[j].type,
                jobs[j].sf);
    fprintf(f, "]}\n");
    if (fclose(f) != 0)
        return gp_diag_set(diag, GP_EIO, path, "%s", strerror(errno));
    return GP_OK;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: " PROG " [--jobs N[,N...]] [--reps R] [--problem DIR] "
               "[--solver S] [--objective O]\n"
               "  --jobs     sizes (default 100,1000,10000)\n"
               "  --reps     fresh cores per size, median taken (default 3)\n"
               "  --problem  write DIR/gavel-N.json for bench/gavel_cvxpy.py\n"
               "  --solver   the policy's solver: coin (default) or glpk\n"
               "  --objective  gavel's objective (default "
               "max_min_fairness_perf)\n");
}

int main(int argc, char **argv)
{
    static const struct option lo[] = {{"jobs", required_argument, 0, 'j'},
                                       {"reps", required_argument, 0, 'r'},
                                       {"problem", required_argument, 0, 'p'},
                                       {"solver", required_argument, 0, 's'},
                                       {"objective", required_argument, 0, 'o'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    size_t sizes[MAX_SIZES] = {100, 1000, 10000}, nsizes = 3;
    uint64_t reps = 3;
    const char *dir = NULL, *solver = NULL;
    struct gp_speed_table *speed = NULL;
    struct gp_diag diag = {{0}, {0}};
    int c, rc = 0;

    while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (c) {
        case 'j': {
            char *s = optarg, *tok;

            nsizes = 0;
            while ((tok = strsep(&s, ",")) != NULL) {
                uint64_t v;

                if (nsizes == MAX_SIZES) {
                    fprintf(stderr, PROG ": --jobs: at most %d sizes\n",
                            MAX_SIZES);
                    return 2;
                }
                if (bench_parse_u64(PROG, "--jobs", tok, 1, 1000000, &v))
                    return 2;
                sizes[nsizes++] = (size_t)v;
            }
            break;
        }
        case 'r':
            if (bench_parse_u64(PROG, "--reps", optarg, 1, 100, &reps))
                return 2;
            break;
        case 'p':
            dir = optarg;
            break;
        case 's':
            if (!gp_solver_find(optarg)) {
                fprintf(stderr, PROG ": --solver: unknown solver '%s'\n",
                        optarg);
                return 2;
            }
            solver = optarg;
            break;
        case 'o':
            objective = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    if (dir && strcmp(objective, "max_min_fairness_perf") != 0) {
        fprintf(stderr, PROG ": --problem: gavel_cvxpy.py solves "
                             "max_min_fairness_perf only\n");
        return 2;
    }
    if (gp_trace_gavel_speeds(&speed, false) != GP_OK) {
        fprintf(stderr, PROG ": Gavel's throughputs: out of memory\n");
        return 1;
    }
    printf("gavel, objective %s, solver %s, median of %llu (ms)\n"
           "first round, N jobs waiting                                      "
           "| next round, one more\n",
           objective, solver ? solver : "coin", (unsigned long long)reps);
    printf("%6s %5s %5s %9s %9s %9s %6s %13s | %9s %9s %9s\n", "jobs", "cols",
           "rows", "alloc", "LP", "round", "iters", "optimum z", "alloc", "LP",
           "round");
    for (size_t i = 0; i < nsizes && rc == 0; i++) {
        size_t n = sizes[i];
        struct job *jobs = draw_jobs(n);
        double *t = calloc(6 * reps, sizeof(*t));
        struct solves sv[2];

        if (!jobs || !t) {
            fprintf(stderr, PROG ": out of memory\n");
            rc = 1;
        }
        for (uint64_t r = 0; r < reps && rc == 0; r++) {
            double s[2];

            if (two_rounds(jobs, n, solver, speed, s, sv, &diag) != GP_OK) {
                fprintf(stderr, PROG ": %zu jobs: %s: %s\n", n, diag.where,
                        diag.msg);
                rc = 1;
                break;
            }
            for (int q = 0; q < 2; q++) {
                t[(3 * q + 0) * reps + r] = sv[q].alloc_s;
                t[(3 * q + 1) * reps + r] = sv[q].seconds;
                t[(3 * q + 2) * reps + r] = s[q];
            }
        }
        for (int q = 0; q < 2 && rc == 0; q++)
            if (sv[q].optimal == 0) {
                fprintf(stderr,
                        PROG ": %zu jobs: round %d: no LP ended "
                             "optimal\n",
                        n, q + 1);
                rc = 1;
            }
        if (rc == 0) {
            double m[6];

            for (int q = 0; q < 6; q++)
                m[q] = 1e3 * bench_quantile(t + q * reps, (size_t)reps, 0.5);
            printf("%6zu %5zu %5zu %9.3f %9.3f %9.3f %6lld %13.10g | %9.3f "
                   "%9.3f %9.3f\n",
                   n, sv[0].cols, sv[0].rows, m[0], m[1], m[2],
                   sv[0].iterations, sv[0].objective, m[3], m[4], m[5]);
        }
        if (rc == 0 && dir &&
            write_problem(dir, jobs, n, sv[0].objective, &diag) != GP_OK) {
            fprintf(stderr, PROG ": %s: %s\n", diag.where, diag.msg);
            rc = 1;
        }
        free(jobs);
        free(t);
    }
    gp_speed_table_free(speed);
    return rc;
}
