/* bench_stream.c - a long stream of jobs through one core: speed, and
 * memory that must stay flat when the world retires every ended job.
 *
 * The target: 10 million jobs with about 10,000 alive at a time,
 * and the core's memory bounded by the jobs alive, not by the jobs seen
 * (RSS at 10M over RSS at 1M < 1.1). The world here is the smallest one
 * that drives the core as a daemon would:
 *
 *   - a uniform cluster of 8-GPU nodes, placement pack;
 *   - jobs of 1 to 8 GPUs (uniform) arriving as a Poisson stream, with
 *     exponential durations (mean 1 h), generated as they arrive (no trace
 *     held in memory), each with an external id "j<seq>" as clients give;
 *   - starts confirmed at once (gp_core_job_started), each job ended at
 *     its completion time from a small heap of completions
 *     (gp_core_job_ended), then retired (gp_core_retire);
 *   - a round after every event (gp_core_round), and the core's own
 *     wake-ups (las changes ranks) honoured.
 *
 * Sizing (Little's law): the cluster holds `--alive` jobs on average at
 * `--load` (0.9): GPUs = alive x E[GPUs] / load = 10,000 x 4.5 / 0.9 =
 * 50,000 (6,250 nodes), arrival rate = alive / mean duration. Nearly all
 * the jobs alive are running; the queue stays short.
 *
 * Key decision: each case runs in a forked child (bench_util.h), so the
 * peak RSS of the case without retirement does not hide the other's.
 */
#include <getopt.h>
#include <math.h>
#include <stdbool.h>

#include "bench_util.h"
#include "gpupool/core.h"

#define PROG "bench_stream"
#define NODE_GPUS 8
#define MAX_JOB_GPUS 8
#define MEAN_GPUS ((1.0 + MAX_JOB_GPUS) / 2)
#define MEAN_DURATION_S 3600.0
#define NSAMPLES 10     /* RSS readings, every tenth of the jobs */
#define FLAT_TARGET 1.1 /* RSS at the last sample / at the first */
#define MAX_JOBS 1000000000ull

struct opts {
    uint64_t jobs, alive, contrast_jobs, seed, nodes;
    double load;
    const char *policy;
};

/* A completion the world expects: the job's handle and which run. */
struct ev {
    int64_t at_us;
    uint64_t job;
    uint32_t run;
};

/* The figures of one case, sent from the child to the parent. */
struct result {
    int rc;
    bool retire;
    uint64_t jobs, nodes, completed, events, rounds, peak_alive;
    double wall_s, maxrss_b, rss_start_b;
    double rss_b[NSAMPLES];
    uint64_t at[NSAMPLES], slots[NSAMPLES], alive[NSAMPLES];
    double avg_jct_s;
    uint64_t last_slots;
};

struct world {
    struct gp_core *core;
    struct ev *heap;
    size_t n, cap;
    uint64_t events, completed, peak_alive;
    double jct_sum_s;
    bool retire;
};

/* ---- the completion heap: earliest first, ties by handle ----------------- */

static bool ev_before(const struct ev *a, const struct ev *b)
{
    return a->at_us != b->at_us ? a->at_us < b->at_us : a->job < b->job;
}

static int heap_push(struct world *w, struct ev e)
{
    size_t i;

    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 4096;
        struct ev *p = realloc(w->heap, cap * sizeof(*p));

        if (!p)
            return GP_ENOMEM;
        w->heap = p;
        w->cap = cap;
    }
    for (i = w->n++; i > 0 && ev_before(&e, &w->heap[(i - 1) / 2]);
         i = (i - 1) / 2)
        w->heap[i] = w->heap[(i - 1) / 2];
    w->heap[i] = e;
    return GP_OK;
}

static struct ev heap_pop(struct world *w)
{
    struct ev top = w->heap[0], last = w->heap[--w->n];
    size_t i = 0;

    for (;;) {
        size_t c = 2 * i + 1;

        if (c >= w->n)
            break;
        if (c + 1 < w->n && ev_before(&w->heap[c + 1], &w->heap[c]))
            c++;
        if (!ev_before(&w->heap[c], &last))
            break;
        w->heap[i] = w->heap[c];
        i = c;
    }
    if (w->n > 0)
        w->heap[i] = last;
    return top;
}

/* ---- the world ----------------------------------------------------------- */

/* A job just confirmed started ends when its remaining work is done at the
 * speed of its placement (restart cost is 0 here). */
static int expect_end(struct world *w, const struct gp_job *job, int64_t now)
{
    int64_t left = gp_job_remaining_at(job, now);
    struct ev e = {now, gp_job_handle(job), job->starts};

    e.at_us += job->speed == 1.0 ? left : (int64_t)ceil(left / job->speed);
    return heap_push(w, e);
}

/* Carry out the core's actions at once: starts are confirmed, kills
 * confirmed stopped (with grace 0 the core already took the job back). */
static int carry_out(struct world *w, int64_t now)
{
    const struct gp_action *a;
    size_t n;
    int rc;

    while ((n = gp_core_take_actions(w->core, &a)) > 0) {
        for (size_t i = 0; i < n; i++) {
            const struct gp_job *job = gp_core_job(w->core, a[i].job);

            if (!job)
                return GP_ENOENT;
            switch (a[i].kind) {
            case GP_ACT_START:
                if ((rc = gp_core_job_started(w->core, a[i].job, now)) ||
                    (rc = expect_end(w, job, now)))
                    return rc;
                break;
            case GP_ACT_SIGNAL:
                break; /* it stops when the core kills it */
            case GP_ACT_RESIZE:
                if ((rc = expect_end(w, job, now)))
                    return rc;
                break;
            case GP_ACT_KILL:
                if (!a[i].done &&
                    (rc = gp_core_job_stopped(
                         w->core, a[i].job,
                         job->checkpointable ? gp_job_work_at(job, now) : 0,
                         now)))
                    return rc;
                break;
            }
        }
    }
    return GP_OK;
}

/* End every job whose completion is due by now; stale entries (a run that
 * was preempted since) are dropped. */
static int complete_due(struct world *w, int64_t now)
{
    int rc;

    while (w->n > 0 && w->heap[0].at_us <= now) {
        struct ev e = heap_pop(w);
        const struct gp_job *job = gp_core_job(w->core, e.job);

        if (!job || job->state != GP_JOB_RUNNING || job->starts != e.run)
            continue;
        w->jct_sum_s += gp_us_to_s(now - job->submit_us);
        if ((rc = gp_core_job_ended(w->core, e.job, GP_JOB_COMPLETED, now)))
            return rc;
        if (w->retire && (rc = gp_core_retire(w->core, e.job)))
            return rc;
        w->completed++;
        w->events++;
    }
    return GP_OK;
}

static double exp_draw(struct gp_rng *rng, double mean)
{
    return -mean * log(1.0 - gp_rng_unit(rng)); /* 1 - u in (0, 1] */
}

static int submit(struct world *w, struct gp_rng *rng, uint64_t seq,
                  int64_t now, struct gp_diag *diag)
{
    struct gp_job_spec spec;
    char id[24];
    double d = exp_draw(rng, MEAN_DURATION_S);

    snprintf(id, sizeof(id), "j%llu", (unsigned long long)seq);
    memset(&spec, 0, sizeof(spec));
    spec.id = id;
    spec.submit_us = now;
    spec.gpus = 1 + (uint32_t)(gp_rng_next(rng) % MAX_JOB_GPUS);
    spec.duration_us = d < 1 ? GP_US_PER_S : (int64_t)(d * 1e6);
    spec.checkpointable = true;
    w->events++;
    return gp_core_submit(w->core, &spec, now, NULL, diag);
}

static int new_core(struct world *w, const struct opts *o, uint64_t nodes,
                    struct gp_diag *diag)
{
    static const struct gp_env env = {.log_level = GP_LOG_ERROR, .seed = 1};
    struct gp_core_config cfg = {
        .policy = gp_policy_find(o->policy),
        .model = GP_PLACE_PACK,
        .env = &env,
        .grace_us = 0, /* preemption (las) is instant and loses nothing */
    };
    struct gp_cluster *c = NULL;
    int rc;

    for (int k = 0; k < GP_NPRIO; k++) {
        cfg.min_run_us[k] = -1; /* the policy's defaults */
        cfg.max_preemptions[k] = UINT32_MAX;
    }
    if (!cfg.policy)
        return gp_diag_set(diag, GP_ENOENT, o->policy, "no such policy");
    if ((rc = gp_cluster_new(&c)) != GP_OK)
        return gp_diag_set(diag, rc, "cluster", "out of memory");
    if ((rc = gp_cluster_add_uniform(c, (uint32_t)nodes, NODE_GPUS, "gpu", 32,
                                     diag)) != GP_OK ||
        (rc = gp_core_new(&w->core, c, &cfg, diag)) != GP_OK) {
        gp_cluster_free(c);
        return rc;
    }
    return GP_OK;
}

static void print_sample(const struct result *r, int k)
{
    printf("  at %llu jobs: rss_mib=%.1f slots=%llu alive=%llu "
           "slots_per_alive=%.2f\n",
           (unsigned long long)r->at[k], r->rss_b[k] / 1048576.0,
           (unsigned long long)r->slots[k], (unsigned long long)r->alive[k],
           r->alive[k] ? (double)r->slots[k] / (double)r->alive[k] : 0);
}

/* One case: `jobs` jobs through a fresh core, retiring or not. */
static int run_stream(const struct opts *o, bool retire, uint64_t jobs,
                      struct result *r)
{
    struct world w = {0};
    struct gp_rng rng;
    struct gp_diag diag = {{0}, {0}};
    /* jobs per second that keep `alive` jobs in the system on average */
    double rate = (double)o->alive / MEAN_DURATION_S;
    int64_t now = 0, next_arrival = 0;
    uint64_t seq = 0, step = jobs / NSAMPLES ? jobs / NSAMPLES : 1;
    int k = 0, rc;
    double t0;

    memset(r, 0, sizeof(*r));
    r->retire = w.retire = retire;
    r->jobs = jobs;
    r->nodes = o->nodes;
    r->rss_start_b = bench_rss_bytes();
    if ((rc = new_core(&w, o, o->nodes, &diag)) != GP_OK)
        goto out;
    gp_rng_init(&rng, o->seed);
    t0 = bench_now_s();
    for (;;) {
        int64_t t = GP_TIME_NONE, wake = gp_core_next_wakeup(w.core);

        if (seq < jobs)
            t = next_arrival;
        if (w.n > 0 && (t == GP_TIME_NONE || w.heap[0].at_us < t))
            t = w.heap[0].at_us;
        if (wake != GP_TIME_NONE && wake > now &&
            (t == GP_TIME_NONE || wake < t))
            t = wake;
        if (t == GP_TIME_NONE)
            break;
        now = t > now ? t : now;
        gp_core_advance(w.core, now);
        if ((rc = carry_out(&w, now)) || (rc = complete_due(&w, now)))
            goto out;
        if (seq < jobs && next_arrival <= now) {
            if ((rc = submit(&w, &rng, seq, now, &diag)) != GP_OK)
                goto out;
            seq++;
            next_arrival =
                now + (int64_t)(exp_draw(&rng, 1.0 / rate) * 1e6) + 1;
        }
        if ((rc = gp_core_round(w.core, now)) < 0 ||
            (rc = carry_out(&w, now)) != GP_OK)
            goto out;
        if (gp_core_nalive(w.core) > w.peak_alive)
            w.peak_alive = gp_core_nalive(w.core);
        if (k < NSAMPLES && seq == step * (uint64_t)(k + 1)) {
            r->at[k] = seq;
            r->rss_b[k] = bench_rss_bytes();
            r->slots[k] = gp_core_njobs(w.core);
            r->alive[k] = gp_core_nalive(w.core);
            print_sample(r, k);
            fflush(stdout);
            k++;
        }
    }
    r->wall_s = bench_now_s() - t0;
    r->maxrss_b = bench_maxrss_bytes();
    r->completed = w.completed;
    r->events = w.events;
    r->rounds = gp_core_nrounds(w.core);
    r->peak_alive = w.peak_alive;
    r->last_slots = gp_core_njobs(w.core);
    r->avg_jct_s = w.completed ? w.jct_sum_s / (double)w.completed : 0;
    if (w.completed != jobs)
        rc = gp_diag_set(&diag, GP_EINVAL, PROG, "%llu of %llu jobs completed",
                         (unsigned long long)w.completed,
                         (unsigned long long)jobs);
    else
        rc = GP_OK;
out:
    if (rc != GP_OK) {
        char buf[600];

        fprintf(stderr, PROG ": %s\n",
                gp_diag_format(&diag, rc, buf, sizeof(buf)));
    }
    gp_core_free(w.core);
    free(w.heap);
    return r->rc = rc;
}

struct job_arg {
    const struct opts *o;
    bool retire;
    uint64_t jobs;
};

static void case_in_child(void *arg, void *out)
{
    const struct job_arg *a = arg;
    struct result *r = out;

    printf("%s: policy=%s jobs=%llu alive_target=%llu nodes=%llu gpus=%llu "
           "load=%.2f seed=%llu\n",
           a->retire ? "retire" : "no-retire", a->o->policy,
           (unsigned long long)a->jobs, (unsigned long long)a->o->alive,
           (unsigned long long)a->o->nodes,
           (unsigned long long)a->o->nodes * NODE_GPUS, a->o->load,
           (unsigned long long)a->o->seed);
    run_stream(a->o, a->retire, a->jobs, r);
}

static double ratio_of(const struct result *r)
{
    return r->rss_b[0] > 0 ? r->rss_b[NSAMPLES - 1] / r->rss_b[0] : 0;
}

static void print_result(const struct result *r)
{
    if (r->rc != GP_OK)
        return;
    printf("  done: wall_s=%.2f jobs_per_s=%.0f events_per_s=%.0f rounds=%llu "
           "completed=%llu avg_jct_s=%.0f\n",
           r->wall_s, (double)r->jobs / r->wall_s,
           (double)r->events / r->wall_s, (unsigned long long)r->rounds,
           (unsigned long long)r->completed, r->avg_jct_s);
    printf("  memory: peak_rss_mib=%.1f start_rss_mib=%.1f "
           "rss_first_sample_mib=%.1f rss_last_sample_mib=%.1f "
           "ratio_last_first=%.3f\n",
           r->maxrss_b / 1048576.0, r->rss_start_b / 1048576.0,
           r->rss_b[0] / 1048576.0, r->rss_b[NSAMPLES - 1] / 1048576.0,
           ratio_of(r));
    printf("  slots: end=%llu peak_alive=%llu\n",
           (unsigned long long)r->last_slots,
           (unsigned long long)r->peak_alive);
}

static int run_all(const struct opts *o)
{
    struct result res[2];
    struct job_arg args[2] = {{o, true, o->jobs}, {o, false, o->contrast_jobs}};
    int ncase = o->contrast_jobs ? 2 : 1, failed = 0;

    for (int i = 0; i < ncase; i++) {
        memset(&res[i], 0, sizeof(res[i]));
        if (bench_in_child(case_in_child, &args[i], &res[i], sizeof(res[i])))
            res[i].rc = GP_EIO;
        print_result(&res[i]);
        failed += res[i].rc != GP_OK;
    }
    printf("\nsummary (target: RSS at the last sample / at the first < %.1f "
           "with retirement):\n",
           FLAT_TARGET);
    for (int i = 0; i < ncase; i++) {
        const struct result *r = &res[i];
        double q = ratio_of(r);

        if (r->rc != GP_OK) {
            printf("  %-9s FAILED\n", i ? "no-retire" : "retire");
            continue;
        }
        printf("  %-9s %llu jobs  %9.0f jobs/s  peak %7.1f MiB  "
               "rss %llu/%llu = %.3f%s  slots %llu for peak alive %llu\n",
               r->retire ? "retire" : "no-retire", (unsigned long long)r->jobs,
               (double)r->jobs / r->wall_s, r->maxrss_b / 1048576.0,
               (unsigned long long)r->at[NSAMPLES - 1],
               (unsigned long long)r->at[0], q,
               r->retire ? (q < FLAT_TARGET ? "  met" : "  MISSED") : "",
               (unsigned long long)r->last_slots,
               (unsigned long long)r->peak_alive);
    }
    return failed ? 1 : 0;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: " PROG " [--jobs N] [--alive N] [--contrast-jobs N] "
            "[--policy NAME]\n"
            "                    [--nodes N] [--load X] [--seed N]\n\n"
            "  --jobs N           jobs in the stream, retiring every ended "
            "job (default\n"
            "                     10000000)\n"
            "  --alive N          jobs alive on average (default 10000)\n"
            "  --contrast-jobs N  then the same stream without retirement, "
            "N jobs (default\n"
            "                     2000000; 0 = skip)\n"
            "  --policy NAME      the core's policy (default fifo; las "
            "preempts)\n"
            "  --nodes N          8-GPU nodes (default: alive x 4.5 / load "
            "/ 8)\n"
            "  --load X           offered load that sizes the cluster "
            "(default 0.9)\n"
            "  --seed N           seed of the stream (default 1)\n");
}

int main(int argc, char **argv)
{
    enum {
        O_JOBS = 256,
        O_ALIVE,
        O_CONTRAST,
        O_POLICY,
        O_NODES,
        O_LOAD,
        O_SEED
    };
    static const struct option longopts[] = {
        {"jobs", required_argument, NULL, O_JOBS},
        {"alive", required_argument, NULL, O_ALIVE},
        {"contrast-jobs", required_argument, NULL, O_CONTRAST},
        {"policy", required_argument, NULL, O_POLICY},
        {"nodes", required_argument, NULL, O_NODES},
        {"load", required_argument, NULL, O_LOAD},
        {"seed", required_argument, NULL, O_SEED},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct opts o = {10000000, 10000, 2000000, 1, 0, 0.9, "fifo"};
    char *end;
    int ch;

    while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        uint64_t *dst = ch == O_JOBS       ? &o.jobs
                        : ch == O_ALIVE    ? &o.alive
                        : ch == O_CONTRAST ? &o.contrast_jobs
                        : ch == O_NODES    ? &o.nodes
                        : ch == O_SEED     ? &o.seed
                                           : NULL;
        uint64_t lo = ch == O_CONTRAST || ch == O_SEED ? 0 : 1;
        uint64_t hi = ch == O_SEED    ? UINT64_MAX
                      : ch == O_NODES ? 1000000
                                      : MAX_JOBS;

        switch (ch) {
        case O_JOBS:
        case O_ALIVE:
        case O_CONTRAST:
        case O_NODES:
        case O_SEED:
            if (bench_parse_u64(PROG, longopts[ch - O_JOBS].name, optarg, lo,
                                hi, dst))
                return 2;
            break;
        case O_POLICY:
            o.policy = optarg;
            break;
        case O_LOAD:
            o.load = strtod(optarg, &end);
            if (end == optarg || *end || !(o.load > 0 && o.load <= 10)) {
                fprintf(stderr,
                        PROG ": --load: expected a number in (0, 10], "
                             "got '%s'\n",
                        optarg);
                return 2;
            }
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
        return 2;
    }
    if (!gp_policy_find(o.policy)) {
        fprintf(stderr, PROG ": --policy: no policy '%s'\n", o.policy);
        return 2;
    }
    if (!o.nodes)
        o.nodes =
            (uint64_t)ceil((double)o.alive * MEAN_GPUS / o.load / NODE_GPUS);
    return run_all(&o);
}
