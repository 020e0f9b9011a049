/* bench_sim.c - speed and memory figures for the simulator.
 *
 * Prints one line per case, `name: key=value ...`, then a summary block
 * with each figure next to its target. It is never a timed test: targets
 * are printed, not asserted, because a loaded CI machine would make such a
 * test flaky (see bench/README.md for the cases and the last figures).
 *
 * Key decision: every case runs in a forked child. ru_maxrss is a
 * per-process high-water mark, so a case run after another one would
 * inherit its peak; the child prints its own line and sends its figures to
 * the parent over a pipe for the summary. --no-fork runs cases in process
 * (for valgrind and perf, where one process is simpler to read).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/resource.h>
#include <sys/wait.h>

#include "bench_util.h"
#include "gpupool/sim.h"
#include "trace/tenants.h"

#ifndef GP_SOURCE_ROOT
#define GP_SOURCE_ROOT "."
#endif

#define PHILLY_DEFAULT GP_SOURCE_ROOT "/data/philly.csv.xz"
#define PHILLY_CLUSTER "philly"
#define PHILLY_FALLBACK "352x8" /* the preset's size, in one shape */

#define PHILLY_TARGET_S 1.0      /* open + parse + simulate */
#define PHILLY_POOL_TARGET_S 3.0 /* the same, pooled: the pool issue's */
#define SYNTH_TARGET_S 60.0      /* generate + simulate, 1M jobs */
#define SYNTH_TARGET_JOBS 1000000.0
#define MEM_TARGET_B_PER_JOB 1024.0
#define JOBS_PER_GPU 10 /* 1M jobs on 100k GPUs */
#define NODE_GPUS 8
#define MAX_JOBS 50000000ull /* job ids are 32-bit; keep well inside */
#define RESTART_COST_US (30 * GP_US_PER_S) /* the CLI's default */
/* pooled cases: the CLI's defaults too (gpupool sim --tenants) */
#define CKPT_COST_US (30 * GP_US_PER_S)
#define HALF_LIFE_US (86400 * GP_US_PER_S)
#define MAX_TENANTS 64

/* ---- the synthetic trace ------------------------------------------------ */

/* GPUs per job, after Philly's per-job table (data/philly.csv.xz: 1 GPU
 * 93.2%, 2: 2.2%, 4: 2.3%, 8: 2.0%, 16: 0.24%, 32: 0.08%, 64 and more:
 * 0.02%), rounded and with a slightly heavier large-job tail so that the
 * big gangs that make placement hard are not too rare to matter. */
static const struct {
    uint32_t gpus;
    double p;
} gpu_mix[] = {
    {1, 0.93},   {2, 0.02},    {4, 0.025},   {8, 0.02},
    {16, 0.003}, {32, 0.0015}, {64, 0.0005},
};
#define NMIX (sizeof(gpu_mix) / sizeof(gpu_mix[0]))

struct synth {
    uint64_t njobs;
    uint32_t nodes;  /* of NODE_GPUS GPUs each */
    double load;     /* offered GPU-time / cluster GPU-time */
    double median_s; /* of the log-normal duration */
    double sigma;    /* of ln(duration) */
    double cap_s;    /* durations are cut here */
    unsigned ntenants;
    uint64_t seed;
};

/* Duration: log-normal, median 20 min, sigma 1.8 - Philly's per-job
 * durations have median 1,144 s and 90th percentile 11,264 s, which is
 * sigma = ln(11264/1144)/1.2816 = 1.78. Mean ~6,000 s. */
static struct synth synth_default(uint64_t njobs, uint64_t seed)
{
    struct synth s = {
        .njobs = njobs,
        .nodes = (uint32_t)((njobs + JOBS_PER_GPU * NODE_GPUS - 1) /
                            (JOBS_PER_GPU * NODE_GPUS)),
        .load = 0.9,
        .median_s = 1200,
        .sigma = 1.8,
        .cap_s = 30 * 86400.0,
        .ntenants = 50,
        .seed = seed,
    };
    return s;
}

static double normal_cdf(double x)
{
    return 0.5 * erfc(-x / sqrt(2.0));
}

/* E[min(D, cap)] for D log-normal(mu, sigma): the mean the cap leaves. */
static double capped_lognormal_mean(double mu, double sigma, double cap)
{
    double lc = log(cap);

    return exp(mu + sigma * sigma / 2) *
               normal_cdf((lc - mu - sigma * sigma) / sigma) +
           cap * (1 - normal_cdf((lc - mu) / sigma));
}

/* A standard normal by Box-Muller (one of the pair; determinism is what
 * matters here, not the last bit of speed). */
static double std_normal(struct gp_rng *rng)
{
    static const double two_pi = 6.283185307179586476925;
    double u1 = 1.0 - gp_rng_unit(rng); /* (0, 1]: log stays finite */
    double u2 = gp_rng_unit(rng);

    return sqrt(-2.0 * log(u1)) * cos(two_pi * u2);
}

/* Fill `w` with s->njobs jobs: Poisson arrivals at the rate that offers
 * s->load of the cluster, given the mean GPUs and mean (capped) duration.
 * *offered gets the load the drawn jobs really offer over the arrival
 * span. */
static int synth_generate(const struct synth *s, struct gp_workload *w,
                          double *offered)
{
    char tenants[64][24]; /* "tenant" + any unsigned + NUL fits */
    double mean_gpus = 0, cum[NMIX], mu = log(s->median_s), rate, t = 0;
    double gpu_s = 0, cluster_gpus = (double)s->nodes * NODE_GPUS;
    struct gp_rng rng;
    int rc;

    if (s->ntenants == 0 || s->ntenants > 64)
        return GP_EINVAL;
    for (unsigned i = 0; i < s->ntenants; i++)
        snprintf(tenants[i], sizeof(tenants[i]), "tenant%02u", i);
    for (size_t i = 0; i < NMIX; i++) {
        mean_gpus += gpu_mix[i].gpus * gpu_mix[i].p;
        cum[i] = (i ? cum[i - 1] : 0) + gpu_mix[i].p;
    }
    cum[NMIX - 1] = 1.0; /* rounding must not leave a gap at the top */
    rate = s->load * cluster_gpus /
           (mean_gpus * capped_lognormal_mean(mu, s->sigma, s->cap_s));

    gp_rng_init(&rng, s->seed);
    snprintf(w->format, sizeof(w->format), "synthetic");
    for (uint64_t i = 0; i < s->njobs; i++) {
        struct gp_job_spec spec;
        double u = gp_rng_unit(&rng), d;
        size_t k = 0;

        while (u >= cum[k] && k + 1 < NMIX)
            k++;
        d = exp(mu + s->sigma * std_normal(&rng));
        if (d > s->cap_s)
            d = s->cap_s;
        if (d < 1)
            d = 1;
        t += -log(1.0 - gp_rng_unit(&rng)) / rate;
        memset(&spec, 0, sizeof(spec));
        spec.tenant = tenants[gp_rng_next(&rng) % s->ntenants];
        spec.submit_us = (int64_t)(t * 1e6);
        spec.duration_us = (int64_t)(d * 1e6);
        spec.gpus = gpu_mix[k].gpus;
        gpu_s += d * spec.gpus;
        if ((rc = gp_workload_add(w, &spec)) != GP_OK)
            return rc;
    }
    w->rows = s->njobs;
    gp_workload_seal(w); /* already in order: this only shifts time */
    *offered = t > 0 ? gpu_s / (cluster_gpus * t) : 0;
    return GP_OK;
}

/* ---- Philly's virtual clusters as tenants -------------------------------- */

/* The 15 VCs with their guarantees on 64x8: the demo's tenants, derived by
 * scripts/make_tenants.py (docs/tenants.md). */
#define PHILLY_TENANTS GP_SOURCE_ROOT "/data/tenants/philly-vcs.json"

static int vc_guarantees(uint64_t gpus, struct gp_tenant_list *vt,
                         struct gp_diag *diag)
{
    uint64_t sum = 0;
    int rc;

    if ((rc = gp_tenants_load(vt, PHILLY_TENANTS, diag)) != GP_OK)
        return rc;
    for (size_t k = 0; k < vt->n; k++)
        sum += vt->t[k].guarantee;
    if (sum != gpus)
        return gp_diag_set(diag, GP_EINVAL, PHILLY_TENANTS,
                           "guarantees add up to %llu GPUs, the cluster has "
                           "%llu",
                           (unsigned long long)sum, (unsigned long long)gpus);
    return GP_OK;
}

/* ---- cases -------------------------------------------------------------- */

enum kind { PHILLY, SYNTH, CALLGRIND };

struct bcase {
    const char *id;    /* stable name for --case */
    const char *group; /* --case GROUP runs every case of the group */
    enum kind kind;
    const char *policy;
    const char *cluster; /* PHILLY: the cluster spec */
    bool by_default;
    /* PHILLY only: the VCs are tenants (vc_guarantees) and every job can
     * checkpoint; grace, protections and checkpoint cost are the CLI's */
    bool pooled;
};

/* On its own cluster (2,816 GPUs) Philly never queues: no job waits, so
 * those cases measure parsing and the arrival/completion path. The same
 * trace on the demo's 64x8 keeps a queue for months (las preempts ~70,000
 * times), which is what exercises ranking, fitting and preemption. The
 * pool cases run it there with the 15 VCs as tenants (vc_guarantees),
 * every job checkpointable, the policy's grace (120 s) and protections:
 * the target for the whole replay under pool is 3 s. */
static const struct bcase cases[] = {
    {"philly-fifo", "philly", PHILLY, "fifo", PHILLY_CLUSTER, true, false},
    {"philly-las", "philly", PHILLY, "las", PHILLY_CLUSTER, true, false},
    {"philly-64x8-fifo", "philly-64x8", PHILLY, "fifo", "64x8", true, false},
    {"philly-64x8-las", "philly-64x8", PHILLY, "las", "64x8", true, false},
    /* multi-tenant: the 15 VCs share 64x8 by guarantee (the pool issue) */
    {"philly-pool", "pool", PHILLY, "pool", "64x8", true, true},
    {"philly-static-quota", "pool", PHILLY, "static-quota", "64x8", true, true},
    {"philly-pool-noreclaim", "pool", PHILLY, "pool-noreclaim", "64x8", true,
     true},
    {"synthetic-fifo", "synthetic", SYNTH, "fifo", NULL, true, false},
    {"synthetic-las", "synthetic", SYNTH, "las", NULL, true, false},
    /* fixed forever: callgrind counts are compared between commits */
    {"callgrind-fixed", "callgrind", CALLGRIND, "las", NULL, false, false},
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

struct opts {
    const char *philly;
    const char *only;
    uint64_t jobs;
    uint64_t seed;
    double load;
    bool no_fork;
};

/* What a case measured, sent from the child to the parent. */
struct result {
    int rc; /* GP_OK, or why the case failed */
    char name[48];
    uint64_t jobs, gpus, events, rounds, completed;
    double prep_s; /* parse (philly) or generate (synthetic) */
    double sim_s;
    double total_s;
    double target_s; /* 0 = none */
    double maxrss_b;
    double mem_target_b_per_job; /* 0 = none */
};

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double maxrss_bytes(void)
{
    struct rusage ru;

    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (double)ru.ru_maxrss * 1024.0; /* Linux: KiB */
}

static void log_stderr(void *priv, enum gp_log_level level, const char *msg)
{
    (void)priv;
    (void)level;
    fprintf(stderr, "bench_sim: %s\n", msg);
}

/* "1m", "100k", "20k", or the number itself. */
static void size_label(uint64_t n, char *buf, size_t len)
{
    if (n % 1000000 == 0)
        snprintf(buf, len, "%llum", (unsigned long long)(n / 1000000));
    else if (n % 1000 == 0)
        snprintf(buf, len, "%lluk", (unsigned long long)(n / 1000));
    else
        snprintf(buf, len, "%llu", (unsigned long long)n);
}

/* The printed name: synthetic cases carry their size. */
static void case_name(const struct bcase *c, const struct opts *o, char *buf,
                      size_t len)
{
    char sz[24];

    if (c->kind != SYNTH) {
        snprintf(buf, len, "%s", c->id);
        return;
    }
    size_label(o->jobs, sz, sizeof(sz));
    snprintf(buf, len, "synthetic-%s-%s", sz, c->policy);
}

static bool case_selected(const struct bcase *c, const struct opts *o)
{
    char name[48], group[48];
    const char *dash;
    size_t glen;

    if (!o->only)
        return c->by_default;
    case_name(c, o, name, sizeof(name));
    dash = strrchr(name, '-');
    /* the group is a prefix of name, so it fits the same size */
    glen = dash ? (size_t)(dash - name) : strlen(name);
    memcpy(group, name, glen);
    group[glen] = '\0';
    return strcmp(o->only, c->id) == 0 || strcmp(o->only, c->group) == 0 ||
           strcmp(o->only, name) == 0 ||
           (c->kind == SYNTH && strcmp(o->only, group) == 0);
}

static int fail(struct result *r, int rc, const struct gp_diag *diag)
{
    char buf[600];

    fprintf(stderr, "bench_sim: %s: %s\n", r->name,
            gp_diag_format(diag, rc, buf, sizeof(buf)));
    r->rc = rc;
    return rc;
}

/* Simulate `w` under the case's policy on a fresh cluster from `spec`.
 * A pooled case fills `vt` (its tenants, from the workload and the
 * cluster's size) and runs with them. */
static int simulate(const struct bcase *c, const struct gp_workload *w,
                    const char *spec, const char *fallback, uint64_t seed,
                    bool timed, struct gp_metrics **out, uint64_t *gpus,
                    struct gp_tenant_list *vt, struct gp_diag *diag)
{
    struct gp_env env = {
        .log = log_stderr, .log_level = GP_LOG_WARN, .seed = seed};
    struct gp_sim_config cfg = {
        .policy = gp_policy_find(c->policy),
        .model = GP_PLACE_PACK,
        .restart_cost_us = RESTART_COST_US,
        .seed = seed,
        .label = c->id,
        .env = &env,
    };
    struct gp_cluster *cluster = NULL;
    struct gp_metrics *m = NULL;
    int rc;

    if (!cfg.policy)
        return gp_diag_set(diag, GP_ENOENT, c->id, "no policy '%s'", c->policy);
    rc = gp_cluster_from_spec(spec, &cluster, diag);
    if (rc != GP_OK && fallback) {
        fprintf(stderr, "bench_sim: cluster '%s' unavailable; using '%s'\n",
                spec, fallback);
        rc = gp_cluster_from_spec(fallback, &cluster, diag);
    }
    if (rc != GP_OK)
        return rc;
    *gpus = gp_cluster_gpus(cluster);
    if (c->pooled) {
        if ((rc = vc_guarantees(*gpus, vt, diag)) != GP_OK) {
            gp_cluster_free(cluster);
            return rc;
        }
        cfg.tenants = vt->t;
        cfg.ntenants = vt->n;
        cfg.grace_us = GP_TIME_NONE; /* the policy's: 120 s for pool */
        cfg.ckpt_cost_us = CKPT_COST_US;
        cfg.half_life_us = HALF_LIFE_US;
        cfg.ckpt = GP_CKPT_ALL;
        for (int k = 0; k < GP_NPRIO; k++) {
            cfg.min_run_us[k] = -1; /* the policy's protections */
            cfg.max_preemptions[k] = UINT32_MAX;
        }
    }
    if ((rc = gp_metrics_new(&m)) != GP_OK) {
        gp_cluster_free(cluster);
        return gp_diag_set(diag, rc, c->id, "out of memory");
    }
    /* no clock for callgrind: the instruction count must not depend on it */
    rc = gp_sim_run(w, cluster, &cfg, m, timed ? now_s : NULL, diag);
    if (rc != GP_OK) {
        gp_metrics_free(m);
        return rc;
    }
    *out = m;
    return GP_OK;
}

static void fill_counts(struct result *r, const struct gp_metrics *m)
{
    const struct gp_summary *s = gp_metrics_summary(m);

    r->jobs = s->jobs;
    r->events = s->events;
    r->rounds = s->rounds;
    r->completed = s->completed;
}

static double ratio(double measured, double target)
{
    return target > 0 ? measured / target : 0;
}

static int run_philly(const struct bcase *c, const struct opts *o,
                      struct result *r)
{
    struct gp_trace_opts topts = {NULL, NULL, false};
    struct gp_trace *t = NULL;
    struct gp_workload w;
    struct gp_metrics *m = NULL;
    struct gp_diag diag = {{0}, {0}};
    struct gp_tenant_list vt;
    char guar[MAX_TENANTS * 24] = "";
    double t0 = now_s(), t1, t2;
    int rc;

    gp_workload_init(&w);
    gp_tenant_list_init(&vt);
    rc = gp_trace_open(&t, o->philly, &topts, &diag);
    if (rc == GP_OK)
        rc = gp_workload_load(&w, t, NULL, &diag);
    gp_trace_close(t);
    if (rc != GP_OK)
        goto out;
    t1 = now_s();
    rc = simulate(c, &w, c->cluster,
                  strcmp(c->cluster, PHILLY_CLUSTER) == 0 ? PHILLY_FALLBACK
                                                          : NULL,
                  o->seed, true, &m, &r->gpus, &vt, &diag);
    if (rc != GP_OK)
        goto out;
    t2 = now_s();
    fill_counts(r, m);
    r->prep_s = t1 - t0;
    r->sim_s = t2 - t1;
    r->total_s = t2 - t0;
    r->target_s = c->pooled ? PHILLY_POOL_TARGET_S : PHILLY_TARGET_S;
    r->maxrss_b = maxrss_bytes();
    if (c->pooled) {
        size_t used = (size_t)snprintf(guar, sizeof(guar), " guarantees=");

        for (size_t k = 0; k < vt.n && used < sizeof(guar); k++)
            used +=
                (size_t)snprintf(guar + used, sizeof(guar) - used, "%s%s:%u",
                                 k ? "," : "", vt.t[k].name, vt.t[k].guarantee);
    }
    printf("%s: jobs=%llu rows=%llu skipped=%llu gpus=%llu parse_s=%.3f "
           "sim_s=%.3f wall_s=%.3f events=%llu events_per_s=%.0f "
           "rounds=%llu completed=%llu preemptions=%llu util=%.3f "
           "avg_jct_s=%.0f peak_rss_mib=%.1f target_s=%.1f ratio=%.2f%s\n",
           r->name, (unsigned long long)r->jobs, (unsigned long long)w.rows,
           (unsigned long long)w.skipped, (unsigned long long)r->gpus,
           r->prep_s, r->sim_s, r->total_s, (unsigned long long)r->events,
           r->sim_s > 0 ? (double)r->events / r->sim_s : 0,
           (unsigned long long)r->rounds, (unsigned long long)r->completed,
           (unsigned long long)gp_metrics_summary(m)->preemptions,
           gp_metrics_summary(m)->gpu_utilization,
           gp_metrics_summary(m)->avg_jct_s, r->maxrss_b / 1048576.0,
           r->target_s, ratio(r->total_s, r->target_s), guar);
out:
    if (rc != GP_OK)
        fail(r, rc, &diag);
    gp_metrics_free(m);
    gp_workload_fini(&w);
    gp_tenant_list_fini(&vt);
    return rc;
}

static int run_synth(const struct bcase *c, const struct opts *o,
                     struct result *r)
{
    bool fixed = c->kind == CALLGRIND;
    /* callgrind-fixed: 20,000 jobs on 2,000 GPUs, seed 1, load 2.0,
     * whatever the options say, so counts compare across commits. At 0.9
     * no job would ever wait; at 2.0 las preempts ~14,000 times, so the
     * count covers ranking, victim search and preemption too. */
    struct synth s =
        synth_default(fixed ? 20000 : o->jobs, fixed ? 1 : o->seed);
    struct gp_workload w;
    struct gp_metrics *m = NULL;
    struct gp_diag diag = {{0}, {0}};
    char spec[32];
    double rss0 = fixed ? 0 : maxrss_bytes();
    double t0 = now_s(), t1, t2, offered = 0;
    int rc;

    s.load = fixed ? 2.0 : o->load;
    gp_workload_init(&w);
    if ((rc = synth_generate(&s, &w, &offered)) != GP_OK) {
        gp_diag_set(&diag, rc, r->name, "generating the trace failed");
        goto out;
    }
    t1 = now_s();
    snprintf(spec, sizeof(spec), "%ux%u", s.nodes, NODE_GPUS);
    rc = simulate(c, &w, spec, NULL, s.seed, !fixed, &m, &r->gpus, NULL, &diag);
    if (rc != GP_OK)
        goto out;
    t2 = now_s();
    fill_counts(r, m);
    if (fixed) {
        /* only deterministic figures: printing times would change the
         * instruction count from run to run */
        printf("%s: jobs=%llu gpus=%llu seed=%llu load=%.2f events=%llu "
               "rounds=%llu completed=%llu preemptions=%llu\n",
               r->name, (unsigned long long)r->jobs,
               (unsigned long long)r->gpus, (unsigned long long)s.seed, s.load,
               (unsigned long long)r->events, (unsigned long long)r->rounds,
               (unsigned long long)r->completed,
               (unsigned long long)gp_metrics_summary(m)->preemptions);
        goto out;
    }
    r->prep_s = t1 - t0;
    r->sim_s = t2 - t1;
    r->total_s = t2 - t0;
    r->target_s = SYNTH_TARGET_S * (double)s.njobs / SYNTH_TARGET_JOBS;
    r->maxrss_b = maxrss_bytes();
    r->mem_target_b_per_job = MEM_TARGET_B_PER_JOB;
    printf(
        "%s: jobs=%llu gpus=%llu seed=%llu load=%.2f offered_load=%.3f "
        "gen_s=%.3f "
        "sim_s=%.3f wall_s=%.3f events=%llu events_per_s=%.0f "
        "rounds=%llu completed=%llu preemptions=%llu util=%.3f "
        "avg_jct_s=%.0f workload_mib=%.1f peak_rss_mib=%.1f start_rss_mib=%.1f "
        "bytes_per_job=%.0f target_s=%.1f%s ratio=%.2f "
        "target_bytes_per_job=%.0f mem_ratio=%.2f\n",
        r->name, (unsigned long long)r->jobs, (unsigned long long)r->gpus,
        (unsigned long long)s.seed, s.load, offered, r->prep_s, r->sim_s,
        r->total_s, (unsigned long long)r->events,
        r->sim_s > 0 ? (double)r->events / r->sim_s : 0,
        (unsigned long long)r->rounds, (unsigned long long)r->completed,
        (unsigned long long)gp_metrics_summary(m)->preemptions,
        gp_metrics_summary(m)->gpu_utilization,
        gp_metrics_summary(m)->avg_jct_s,
        (double)(w.cap * sizeof(*w.jobs)) / 1048576.0, r->maxrss_b / 1048576.0,
        rss0 / 1048576.0, r->maxrss_b / (double)s.njobs, r->target_s,
        s.njobs == (uint64_t)SYNTH_TARGET_JOBS ? "" : "(scaled)",
        ratio(r->total_s, r->target_s), r->mem_target_b_per_job,
        ratio(r->maxrss_b / (double)s.njobs, r->mem_target_b_per_job));
out:
    if (rc != GP_OK)
        fail(r, rc, &diag);
    gp_metrics_free(m);
    gp_workload_fini(&w);
    return rc;
}

static int run_case(const struct bcase *c, const struct opts *o,
                    struct result *r)
{
    memset(r, 0, sizeof(*r));
    case_name(c, o, r->name, sizeof(r->name));
    return c->kind == PHILLY ? run_philly(c, o, r) : run_synth(c, o, r);
}

struct child_case {
    const struct bcase *c;
    const struct opts *o;
};

static void case_in_child(void *arg, void *out)
{
    const struct child_case *a = arg;

    run_case(a->c, a->o, out);
}

/* Run a case in a child (bench_util.h); its figures come back through a
 * pipe. */
static int run_forked(const struct bcase *c, const struct opts *o,
                      struct result *r)
{
    struct child_case a = {c, o};

    if (bench_in_child(case_in_child, &a, r, sizeof(*r)) != 0) {
        memset(r, 0, sizeof(*r));
        case_name(c, o, r->name, sizeof(r->name));
        r->rc = GP_EIO;
        fprintf(stderr, "bench_sim: %s: the child sent no figures\n", r->name);
    }
    return r->rc;
}

/* ---- the summary -------------------------------------------------------- */

static const char *verdict(double measured, double target)
{
    return measured < target ? "met" : "MISSED";
}

static int summarize(const struct result *res, size_t n)
{
    unsigned met = 0, missed = 0, failed = 0;

    printf("\nsummary:\n");
    for (size_t i = 0; i < n; i++) {
        const struct result *r = &res[i];

        if (r->rc != GP_OK) {
            printf("  %-22s FAILED (%s)\n", r->name, gp_err_name(r->rc));
            failed++;
            continue;
        }
        if (r->target_s <= 0) {
            printf("  %-22s %llu events, %llu rounds (no target)\n", r->name,
                   (unsigned long long)r->events,
                   (unsigned long long)r->rounds);
            continue;
        }
        printf("  %-22s wall %8.3f s  target < %5.1f s  ratio %5.2f  %s\n",
               r->name, r->total_s, r->target_s, ratio(r->total_s, r->target_s),
               verdict(r->total_s, r->target_s));
        if (r->total_s < r->target_s)
            met++;
        else
            missed++;
        if (r->mem_target_b_per_job > 0) {
            double per_job = r->maxrss_b / (double)r->jobs;

            printf("  %-22s mem  %8.0f B/job  target < %5.0f B/job  "
                   "ratio %5.2f  %s\n",
                   "", per_job, r->mem_target_b_per_job,
                   ratio(per_job, r->mem_target_b_per_job),
                   verdict(per_job, r->mem_target_b_per_job));
            if (per_job < r->mem_target_b_per_job)
                met++;
            else
                missed++;
        }
    }
    printf("targets: %u met, %u missed; cases failed: %u\n", met, missed,
           failed);
    return failed ? 1 : 0;
}

/* ---- main --------------------------------------------------------------- */

static void usage(FILE *out)
{
    fprintf(out,
            "usage: bench_sim [--case NAME] [--jobs N | --quick] "
            "[--philly FILE] [--seed N]\n"
            "                 [--load X] [--no-fork]\n\n"
            "  --case NAME    run one case or group: philly, philly-fifo, "
            "philly-las,\n"
            "                 philly-64x8, philly-64x8-fifo, "
            "philly-64x8-las,\n"
            "                 pool, philly-pool, philly-static-quota, "
            "philly-pool-noreclaim,\n"
            "                 synthetic (or synthetic-1m), synthetic-fifo, "
            "synthetic-las,\n"
            "                 callgrind-fixed (only when named)\n"
            "  --jobs N       synthetic jobs (default 1000000; GPUs = N/10)\n"
            "  --quick        100,000 synthetic jobs on 10,000 GPUs\n"
            "  --philly FILE  the Philly per-job table (default %s)\n"
            "  --seed N       seed of the synthetic trace (default 1)\n"
            "  --load X       offered load of the synthetic trace (default "
            "0.9; above 1\n"
            "                 the queue grows, which stresses the policies)\n"
            "  --no-fork      run cases in this process (valgrind, perf); "
            "peak memory\n"
            "                 then accumulates over cases\n",
            PHILLY_DEFAULT);
}

static int parse_u64(const char *opt, const char *s, uint64_t lo, uint64_t hi,
                     uint64_t *out)
{
    char *end;
    unsigned long long x;

    errno = 0;
    x = strtoull(s, &end, 10);
    if (end == s || *end || errno || s[0] == '-' || x < lo || x > hi) {
        fprintf(stderr,
                "bench_sim: %s: expected an integer in [%llu, %llu], "
                "got '%s'\n",
                opt, (unsigned long long)lo, (unsigned long long)hi, s);
        return -1;
    }
    *out = x;
    return 0;
}

int main(int argc, char **argv)
{
    enum { O_CASE = 256, O_JOBS, O_QUICK, O_PHILLY, O_SEED, O_LOAD, O_NOFORK };
    static const struct option longopts[] = {
        {"case", required_argument, NULL, O_CASE},
        {"jobs", required_argument, NULL, O_JOBS},
        {"quick", no_argument, NULL, O_QUICK},
        {"philly", required_argument, NULL, O_PHILLY},
        {"seed", required_argument, NULL, O_SEED},
        {"load", required_argument, NULL, O_LOAD},
        {"no-fork", no_argument, NULL, O_NOFORK},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct opts o = {PHILLY_DEFAULT, NULL, 1000000, 1, 0.9, false};
    struct result res[NCASES];
    size_t nres = 0;
    int ch;

    while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (ch) {
        case O_CASE:
            o.only = optarg;
            break;
        case O_JOBS:
            if (parse_u64("--jobs", optarg, 1, MAX_JOBS, &o.jobs) != 0)
                return 2;
            break;
        case O_QUICK:
            o.jobs = 100000;
            break;
        case O_PHILLY:
            o.philly = optarg;
            break;
        case O_SEED:
            if (parse_u64("--seed", optarg, 0, UINT64_MAX, &o.seed) != 0)
                return 2;
            break;
        case O_LOAD: {
            char *end;
            errno = 0;
            o.load = strtod(optarg, &end);
            if (end == optarg || *end || errno || !(o.load > 0) ||
                o.load > 10) {
                fprintf(stderr,
                        "bench_sim: --load: expected a number in "
                        "(0, 10], got '%s'\n",
                        optarg);
                return 2;
            }
            break;
        }
        case O_NOFORK:
            o.no_fork = true;
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
        fprintf(stderr, "bench_sim: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    for (size_t i = 0; i < NCASES; i++) {
        if (!case_selected(&cases[i], &o))
            continue;
        if (o.no_fork)
            run_case(&cases[i], &o, &res[nres]);
        else
            run_forked(&cases[i], &o, &res[nres]);
        nres++;
    }
    if (nres == 0) {
        fprintf(stderr, "bench_sim: no case named '%s'\n", o.only);
        usage(stderr);
        return 2;
    }
    return summarize(res, nres);
}
