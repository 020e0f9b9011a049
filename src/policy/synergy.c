/* synergy.c - Synergy (Mohan et al., "Looking Beyond GPUs for DNN
 * Scheduling on Multi-Tenant Clusters", OSDI'22): CPUs and memory given to
 * each job by its sensitivity to them, not in proportion to its GPUs.
 * Implemented: the per-model resource profiles of sec. 3 (a table, below
 * and data/synergy-profiles.csv), the GPU-proportional baseline, and the
 * two allocation mechanisms of sec. 4: Synergy-GREEDY (a job's best-case
 * demand or nothing) and Synergy-TUNE (sec. 4.3: the best-case demand on
 * the servers that hold it, else the GPU-proportional share, else the
 * share taken back from jobs on a server that got more than proportional).
 *
 * Jobs are taken in the order of an underlying policy (fifo, srtf or las:
 * the orders the paper evaluates) and placed one by one; none is preempted.
 * The grant rides on the placement (gp_placement.granted) and so does its
 * worth: `pace`, the profile's throughput at the grant over its throughput
 * at the proportional share, which the core multiplies into the job's rate
 * (docs/speed.md). A job's work is measured at the proportional share, so
 * the baseline runs every job at pace 1.
 *
 * Key decision: a job that TUNE tunes down keeps running on the same GPUs;
 * gpupool carries the change out as a resize in place to the same GPU
 * count with a smaller grant (gp_plan_resize), which pays the resize cost
 * (by default the restart cost) as Synergy's lease renewal relaunches a
 * job whose allocation changed. Knobs and deviations:
 * docs/policies/synergy.md.
 */
#include "policy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the profiles ------------------------------------------------------ */

/* Synergy's server: 8 GPUs, 24 CPUs, 500 GB; its proportional share of
 * CPUs per GPU, at which every figure below is measured. */
#define REF_CPUS_PER_GPU 3.0

/* One model's sensitivity (the artifact's per-model scores,
 * data/synergy-profiles.csv says where each comes from): at
 * best_cpus_per_gpu CPUs per GPU and more it runs best_speedup times as
 * fast as at 3; below, see cpu_speed(). */
struct profile {
    const char *model;
    const char *task; /* image, language, speech */
    double best_cpus_per_gpu;
    double best_speedup;
    uint64_t best_mem_mib_per_gpu;
};

/* 62.5 GB per GPU, in MiB (rounded): every model's memory in the table */
#define MEM_625 64000

static const struct profile profiles[] = {
    {"alexnet", "image", 12, 2.94, MEM_625},
    {"res18", "image", 9, 2.40, MEM_625},
    {"res50", "image", 4, 1.15, MEM_625},
    {"mobilenet", "image", 6, 1.55, MEM_625},
    {"shufflenet", "image", 12, 2.89, MEM_625},
    {"gnmt", "language", 1, 1.0, MEM_625},
    {"transformer", "language", 1, 1.0, MEM_625},
    {"lstm", "language", 1, 1.0, MEM_625},
    {"m5", "speech", 3, 1.0, MEM_625},
    {"deepspeech", "speech", 3, 1.0, MEM_625},
};
#define NPROFILES (sizeof(profiles) / sizeof(profiles[0]))
static const char *const tasks[] = {"image", "language", "speech"};
#define NTASKS 3

/* Throughput at c CPUs per GPU, relative to 3: the input pipeline is
 * CPU-bound below the best-case count, so the speed falls linearly to it
 * from 3 CPUs (or from the best case when that is below 3); between 3 and
 * the best case it rises linearly to best_speedup; past it, flat. */
static double cpu_speed(const struct profile *m, double c)
{
    double best = m->best_cpus_per_gpu;

    if (c >= best)
        return m->best_speedup;
    if (best <= REF_CPUS_PER_GPU) /* best_speedup is 1 for these */
        return c / best;
    if (c < REF_CPUS_PER_GPU)
        return c / REF_CPUS_PER_GPU;
    return 1.0 + (m->best_speedup - 1.0) * (c - REF_CPUS_PER_GPU) /
                     (best - REF_CPUS_PER_GPU);
}

static const struct profile *profile_named(const char *name)
{
    for (size_t i = 0; i < NPROFILES; i++)
        if (strcmp(profiles[i].model, name) == 0)
            return &profiles[i];
    return NULL;
}

/* ---- the policy -------------------------------------------------------- */

enum mode { MODE_PROPORTIONAL, MODE_GREEDY, MODE_TUNE };
enum order { ORDER_FIFO, ORDER_SRTF, ORDER_LAS };

struct synergy {
    const struct gp_env *env;
    enum mode mode;
    enum order order;
    uint32_t split[NTASKS]; /* percent of jobs per task, models assigned */
    uint64_t seed;
    /* per round: the share every GPU is owed, and the index of jobs
     * that hold more than it, per node (built on first need) */
    uint32_t prop_cpus;
    uint64_t prop_mem;
    struct gp_arena arena;
    bool indexed;
    uint32_t nnodes;
    uint32_t *head; /* per node: first entry, NONE if none */
    struct entry *entries;
    uint32_t nentries;
};

/* A job holding more than the proportional share on a node. */
struct entry {
    const struct gp_job *job;
    uint32_t next;
};
#define NONE UINT32_MAX

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* The job's model: its class, else its name, when either names a model
 * of the table; else one assigned from its submission number: a task by
 * the split, then a model of that task, evenly (the artifact assigns at
 * random with the same split, sec. 6). */
static const struct profile *model_of(const struct synergy *s,
                                      const struct gp_view *v,
                                      const struct gp_job *j)
{
    const struct profile *m;
    uint64_t h = mix64(j->seq ^ mix64(s->seed));
    uint32_t pick = (uint32_t)(h % 100), t = 0, n = 0, k;

    if (j->job_class && (m = profile_named(gp_view_str(v, j->job_class))))
        return m;
    if (j->name && (m = profile_named(gp_view_str(v, j->name))))
        return m;
    while (t + 1 < NTASKS && pick >= s->split[t]) {
        pick -= s->split[t];
        t++;
    }
    for (size_t i = 0; i < NPROFILES; i++)
        n += strcmp(profiles[i].task, tasks[t]) == 0;
    k = (uint32_t)((h >> 32) % n);
    for (size_t i = 0; i < NPROFILES; i++)
        if (strcmp(profiles[i].task, tasks[t]) == 0 && k-- == 0)
            return &profiles[i];
    return &profiles[0]; /* not reached: every task has a model */
}

/* The pace of a grant: throughput at it over throughput at the share. */
static double pace_of(const struct synergy *s, const struct profile *m,
                      uint32_t cpus_per_gpu)
{
    return cpu_speed(m, cpus_per_gpu) / cpu_speed(m, s->prop_cpus);
}

static uint32_t best_cpus(const struct profile *m)
{
    return (uint32_t)ceil(m->best_cpus_per_gpu);
}

static int parse_split(struct synergy *s, const char *val, struct gp_diag *diag)
{
    unsigned long v[NTASKS];
    const char *p = val;
    char *end;

    for (int i = 0; i < NTASKS; i++) {
        if (*p < '0' || *p > '9')
            goto bad;
        v[i] = strtoul(p, &end, 10);
        if (v[i] > 100 || *end != (i + 1 < NTASKS ? ',' : '\0'))
            goto bad;
        p = end + 1;
    }
    if (v[0] + v[1] + v[2] != 100)
        goto bad;
    for (int i = 0; i < NTASKS; i++)
        s->split[i] = (uint32_t)v[i];
    return GP_OK;
bad:
    return gp_diag_set(diag, GP_EINVAL, "synergy.split",
                       "expected three percentages image,language,speech "
                       "summing to 100, got \"%s\"",
                       val);
}

static int parse_opt(struct synergy *s, const char *key, const char *val,
                     struct gp_diag *diag)
{
    char *end;

    if (strcmp(key, "mode") == 0) {
        if (strcmp(val, "proportional") == 0)
            s->mode = MODE_PROPORTIONAL;
        else if (strcmp(val, "greedy") == 0)
            s->mode = MODE_GREEDY;
        else if (strcmp(val, "tune") == 0)
            s->mode = MODE_TUNE;
        else
            return gp_diag_set(diag, GP_EINVAL, "synergy.mode",
                               "expected proportional, greedy or tune, "
                               "got \"%s\"",
                               val);
    } else if (strcmp(key, "order") == 0) {
        if (strcmp(val, "fifo") == 0)
            s->order = ORDER_FIFO;
        else if (strcmp(val, "srtf") == 0)
            s->order = ORDER_SRTF;
        else if (strcmp(val, "las") == 0)
            s->order = ORDER_LAS;
        else
            return gp_diag_set(diag, GP_EINVAL, "synergy.order",
                               "expected fifo, srtf or las, got \"%s\"", val);
    } else if (strcmp(key, "split") == 0) {
        return parse_split(s, val, diag);
    } else if (strcmp(key, "seed") == 0) {
        if (*val < '0' || *val > '9')
            return gp_diag_set(diag, GP_EINVAL, "synergy.seed",
                               "expected a non-negative integer, got \"%s\"",
                               val);
        s->seed = strtoull(val, &end, 10);
        if (*end)
            return gp_diag_set(diag, GP_EINVAL, "synergy.seed",
                               "expected a non-negative integer, got \"%s\"",
                               val);
    } else {
        return gp_diag_set(diag, GP_EINVAL, key,
                           "unknown option for synergy (known: mode, order, "
                           "split, seed)");
    }
    return GP_OK;
}

static int synergy_init(void **priv, const struct gp_policy_args *args,
                        struct gp_diag *diag)
{
    struct synergy *s = gp_env_calloc(args->env, 1, sizeof(*s));
    int rc = GP_OK;

    if (!s)
        return GP_ENOMEM;
    s->mode = MODE_TUNE;
    s->order = ORDER_FIFO;
    s->split[0] = 34; /* the artifact's ModelZoo default */
    s->split[1] = 33;
    s->split[2] = 33;
    for (size_t i = 0; i < args->nopts && rc == GP_OK; i++)
        rc = parse_opt(s, args->opts[i].key, args->opts[i].value, diag);
    if (rc != GP_OK) {
        gp_env_free(args->env, s);
        return rc;
    }
    s->env = args->env;
    gp_arena_init_env(&s->arena, (size_t)1 << 30, args->env);
    *priv = s;
    return GP_OK;
}

static void synergy_fini(void *priv)
{
    struct synergy *s = priv;

    if (!s)
        return;
    gp_arena_fini(&s->arena);
    gp_env_free(s->env, s);
}

/* The underlying order; it holds while a job waits (it is computed when
 * the job joins the queue), so srtf and las order the queue only and
 * never preempt. */
static void synergy_rank(void *priv, const struct gp_job *job, int64_t now_us,
                         int64_t rank[2])
{
    const struct synergy *s = priv;

    rank[1] = job->submit_us;
    switch (s->order) {
    case ORDER_SRTF:
        rank[0] = job->duration_us > 0 ? gp_job_remaining_at(job, now_us)
                                       : job->predicted_us;
        break;
    case ORDER_LAS:
        rank[0] = gp_job_attained_at(job, now_us);
        break;
    default:
        rank[0] = job->submit_us;
        break;
    }
}

/* ---- TUNE: taking back what others got beyond the share (sec. 4.3) ---- */

/* CPUs and memory per GPU a running job holds beyond the share. */
static uint32_t excess_cpus(const struct synergy *s, const struct gp_job *j)
{
    return j->where.granted && j->where.grant_cpus_per_gpu > s->prop_cpus
               ? j->where.grant_cpus_per_gpu - s->prop_cpus
               : 0;
}
static uint64_t excess_mem(const struct synergy *s, const struct gp_job *j)
{
    return j->where.granted && j->where.grant_mem_mib_per_gpu > s->prop_mem
               ? j->where.grant_mem_mib_per_gpu - s->prop_mem
               : 0;
}

/* Index, per node, the running jobs that hold more than the share: once a
 * round, when TUNE first needs it (one walk over the running jobs). */
static int build_index(struct synergy *s, const struct gp_view *v)
{
    const struct gp_cluster *c = gp_view_cluster(v);
    struct gp_running_iter it;
    const struct gp_job *j;
    size_t cap = gp_view_nrunning(v) + 1, n = 0;
    int rc;

    s->nnodes = gp_cluster_nnodes(c);
    s->head = gp_arena_alloc(&s->arena, s->nnodes * sizeof(*s->head));
    s->entries = NULL;
    if (!s->head)
        return GP_ENOMEM;
    for (uint32_t i = 0; i < s->nnodes; i++)
        s->head[i] = NONE;
    if ((rc = gp_running_iter_init(&it, v)) != GP_OK)
        return rc;
    while ((j = gp_running_iter_next(&it))) {
        if (!excess_cpus(s, j) && !excess_mem(s, j))
            continue;
        for (uint32_t k = 0; k < j->where.nslots; k++) {
            uint32_t node = j->where.slots[k].node;

            if (!s->entries) {
                /* slots may outnumber jobs: size for the worst case */
                cap *= GP_MAX_NODE_GPUS;
                s->entries =
                    gp_arena_alloc(&s->arena, cap * sizeof(*s->entries));
                if (!s->entries)
                    return GP_ENOMEM;
            }
            if (node >= s->nnodes || n >= cap)
                continue;
            s->entries[n].job = j;
            s->entries[n].next = s->head[node];
            s->head[node] = (uint32_t)n++;
        }
    }
    s->nentries = (uint32_t)n;
    s->indexed = true;
    return GP_OK;
}

/* Tune `victim` down towards the share until `need_c` CPUs and `need_m`
 * MiB more are free on its nodes (never below the share), by a resize in
 * place on its own devices. Lowers the needs by what it frees. GP_EPLAN when
 * the plan refuses the move. */
static int tune_down(const struct synergy *s, const struct gp_view *v,
                     struct gp_plan *plan, const struct gp_job *victim,
                     uint32_t gpus_on_node, uint64_t *need_c, uint64_t *need_m)
{
    struct gp_placement to = victim->where;
    uint32_t cut_c = 0;
    uint64_t cut_m = 0;
    const struct profile *m = model_of(s, v, victim);

    if (*need_c) {
        uint64_t per = (*need_c + gpus_on_node - 1) / gpus_on_node;
        cut_c =
            (uint32_t)(per < excess_cpus(s, victim) ? per
                                                    : excess_cpus(s, victim));
    }
    if (*need_m) {
        uint64_t per = (*need_m + gpus_on_node - 1) / gpus_on_node;
        cut_m = per < excess_mem(s, victim) ? per : excess_mem(s, victim);
    }
    if (!cut_c && !cut_m)
        return GP_ENOFIT;
    to.grant_cpus_per_gpu -= cut_c;
    to.grant_mem_mib_per_gpu -= cut_m;
    to.pace = pace_of(s, m, to.grant_cpus_per_gpu);
    if (to.nslots == 1)
        to.slots = &to.inline_slot;
    if (gp_plan_resize(plan, victim, &to) != GP_OK)
        return GP_EPLAN;
    *need_c -= *need_c < (uint64_t)cut_c * gpus_on_node
                   ? *need_c
                   : (uint64_t)cut_c * gpus_on_node;
    *need_m -= *need_m < cut_m * gpus_on_node ? *need_m : cut_m * gpus_on_node;
    return GP_OK;
}

/* Make room for `job` (one node's worth of GPUs) at cpus/mem per GPU on a
 * node whose free GPUs hold it, by tuning down the jobs there that hold
 * more than the share; start it there. GP_ENOFIT: no such node; the plan
 * is as it was. */
static int tune_start(struct synergy *s, const struct gp_view *v,
                      struct gp_plan *plan, const struct gp_job *job,
                      uint32_t cpus, uint64_t mem, double pace)
{
    const struct gp_cluster *c;
    uint32_t g = job->demand.gpus;
    int rc;

    if (!s->indexed && (rc = build_index(s, v)) != GP_OK)
        return rc;
    for (uint32_t node = 0; node < s->nnodes; node++) {
        size_t mark;
        uint64_t need_c, need_m, free_c, free_m, avail_c = 0, avail_m = 0;
        struct gp_placement where;

        if (s->head[node] == NONE)
            continue;
        c = gp_view_cluster(v);
        if (gp_cluster_node_state(c, node) != GP_NODE_UP ||
            gp_cluster_node_free(c, node) < g ||
            (job->demand.type != GP_TYPE_ANY &&
             gp_cluster_node_type(c, node) != job->demand.type))
            continue;
        free_c = gp_cluster_node_cpus_free(c, node);
        free_m = gp_cluster_node_mem_free(c, node);
        need_c = (uint64_t)cpus * g > free_c ? (uint64_t)cpus * g - free_c : 0;
        need_m = mem * g > free_m ? mem * g - free_m : 0;
        for (uint32_t e = s->head[node]; e != NONE; e = s->entries[e].next) {
            const struct gp_job *x = s->entries[e].job;
            uint32_t on = 0;

            if (gp_plan_has(plan, x))
                continue;
            for (uint32_t k = 0; k < x->where.nslots; k++)
                if (x->where.slots[k].node == node)
                    on = x->where.slots[k].gpus;
            avail_c += (uint64_t)excess_cpus(s, x) * on;
            avail_m += excess_mem(s, x) * on;
        }
        if (avail_c < need_c || avail_m < need_m)
            continue;
        mark = gp_plan_mark(plan);
        for (uint32_t e = s->head[node]; e != NONE && (need_c || need_m);
             e = s->entries[e].next) {
            const struct gp_job *x = s->entries[e].job;
            uint32_t on = 0;

            if (gp_plan_has(plan, x))
                continue;
            for (uint32_t k = 0; k < x->where.nslots; k++)
                if (x->where.slots[k].node == node)
                    on = x->where.slots[k].gpus;
            rc = tune_down(s, v, plan, x, on, &need_c, &need_m);
            if (rc == GP_EPLAN)
                break;
        }
        if (!need_c && !need_m &&
            gp_view_fit_granted(v, job, node, cpus, mem, pace, &where) ==
                GP_OK &&
            gp_plan_start(plan, job, &where) == GP_OK)
            return GP_OK;
        gp_plan_rollback(plan, mark);
    }
    return GP_ENOFIT;
}

/* ---- the round --------------------------------------------------------- */

static int try_grant(const struct gp_view *v, struct gp_plan *plan,
                     const struct gp_job *job, uint32_t cpus, uint64_t mem,
                     double pace)
{
    struct gp_placement where;
    int rc = gp_view_fit_granted(v, job, GP_NODE_ANY, cpus, mem, pace, &where);

    if (rc != GP_OK)
        return rc;
    return gp_plan_start(plan, job, &where);
}

/* Place one job by the mode: GP_OK (started), GP_ENOFIT, or an error. */
static int place(struct synergy *s, const struct gp_view *v,
                 struct gp_plan *plan, const struct gp_job *job)
{
    const struct profile *m = model_of(s, v, job);
    uint32_t best_c = best_cpus(m), low_c;
    uint64_t best_m = m->best_mem_mib_per_gpu, low_m;
    int rc;

    if (s->mode == MODE_PROPORTIONAL)
        return try_grant(v, plan, job, s->prop_cpus, s->prop_mem, 1.0);
    /* untracked memory: ask none, as the cluster checks none */
    if (!s->prop_mem)
        best_m = 0;
    rc = try_grant(v, plan, job, best_c, best_m, pace_of(s, m, best_c));
    if (rc != GP_ENOFIT || s->mode == MODE_GREEDY)
        return rc;
    /* the share, or the best case where that is less: a job never gets
     * more than it can use */
    low_c = best_c < s->prop_cpus ? best_c : s->prop_cpus;
    low_m = best_m < s->prop_mem ? best_m : s->prop_mem;
    if (low_c != best_c || low_m != best_m) {
        rc = try_grant(v, plan, job, low_c, low_m, pace_of(s, m, low_c));
        if (rc != GP_ENOFIT)
            return rc;
    }
    if (gp_view_model(v) == GP_PLACE_COUNT ||
        job->demand.gpus >
            gp_cluster_max_up_node_gpus(gp_view_cluster(v), job->demand.type))
        return GP_ENOFIT; /* TUNE takes back on one server only */
    return tune_start(s, v, plan, job, low_c, low_m, pace_of(s, m, low_c));
}

static int synergy_schedule(void *priv, const struct gp_view *view,
                            struct gp_plan *plan)
{
    struct synergy *s = priv;
    const struct gp_cluster *c = gp_view_cluster(view);
    uint64_t gpus = gp_cluster_up_gpus(c);
    bool tracked;
    struct gp_pending_iter it;
    const struct gp_job *job;
    struct gp_placement bare;
    int rc;

    gp_arena_reset(&s->arena);
    s->indexed = false;
    s->prop_cpus = gpus ? (uint32_t)(gp_cluster_up_cpus(c) / gpus) : 0;
    s->prop_mem = gpus ? gp_cluster_up_mem_mib(c) / gpus : 0;
    /* without CPUs per node (or nodes: `count`) there is nothing to size */
    tracked = s->prop_cpus > 0 && gp_view_model(view) != GP_PLACE_COUNT;
    if ((rc = gp_pending_iter_init(&it, view)) != GP_OK)
        return rc;
    while ((job = gp_pending_iter_next(&it))) {
        if (gp_view_free_milli(view) == 0)
            break;
        if (!tracked || !job->demand.gpus) {
            rc = gp__start_if_fits(view, plan, job);
            if (rc == GP_ENOFIT)
                gp_pending_iter_skip_shape(&it);
        } else if ((rc = gp_view_fit_granted(view, job, GP_NODE_ANY, 0, 0, 0,
                                             &bare)) == GP_ENOFIT) {
            /* its GPUs alone do not fit: nor do any of its shape's */
            gp_pending_iter_skip_shape(&it);
        } else if (rc == GP_OK) {
            rc = place(s, view, plan, job);
            /* under the share alone a shape that does not fit fits no
             * later job; otherwise the next job's model may need less */
            if (rc == GP_ENOFIT && s->mode == MODE_PROPORTIONAL)
                gp_pending_iter_skip_shape(&it);
        }
        if (rc != GP_OK && rc != GP_ENOFIT)
            return rc;
    }
    return GP_OK;
}

const struct gp_policy_ops gp_policy_synergy = {
    .name = "synergy",
    .summary = "CPUs and memory by each model's sensitivity (OSDI'22): "
               "tune, greedy or proportional; never preempts",
    .init = synergy_init,
    .fini = synergy_fini,
    .rank = synergy_rank,
    .schedule = synergy_schedule,
};
