/* qssf.c - quasi-shortest-service-first (Helios, Hu et al., "Characterization
 * and Prediction of Deep Learning Workloads in Large-Scale GPU Datacenters",
 * SC'21, sec. 5.1): jobs run in order of their predicted GPU time
 * (predicted run time x GPUs), the prediction coming from the history of
 * similar jobs (see predict.h). It never preempts. Unlike sjf it knows no
 * true durations: it is what a real cluster can do.
 *
 * Two modes (docs/policies/qssf.md):
 *  - mode=gpupool (default): every job that fits starts, in that order;
 *    one that does not fit is passed over (backfill).
 *  - mode=artifact: the published simulator's QSSF decision for decision
 *    (github S-Lab-System-Group/HeliosArtifact, "framework/QSSF Service/",
 *    policies/qssf.py). Every second it
 *     1. appends the arrivals to its queue in trace order;
 *     2. sorts the queue by GPU count (stable); if some job waited from an
 *        earlier second, it then sorts it by priority = estimated
 *        duration x GPUs (stable), so ties keep GPU count then the queue's
 *        old order - but a queue of this second's arrivals alone stays in
 *        GPU-count order for this second;
 *     3. starts jobs from the head while they fit and stops at the first
 *        that does not (no backfill).
 *    gpupool keeps the queue's order as each job's position from the last
 *    round and runs one round per second at most; the simulator's looks
 *    between events start nothing (see artifact_schedule). The rest of the
 * simulator's world (whole seconds, its consolidate placement, no preemption)
 * is `gpupool sim --parity helios`.
 */
#include <stdlib.h>
#include <string.h>

#include "core/heap.h" /* gp__grow */
#include "policy/policy.h"

/* A pending job as the artifact's queue last left it, by the core's slot. */
struct qrec {
    uint32_t gen1; /* the slot's generation + 1; 0: never seen */
    uint32_t pos;  /* its place in the queue after the last round */
};

struct qssf {
    const struct gp_env *env;
    bool artifact;
    struct qrec *rec; /* by slot */
    uint32_t nrec;
    int64_t last_s; /* the second of the last round; -1: none */
};

/* One entry of a round's sort. */
struct qent {
    const struct gp_job *job;
    int64_t prio; /* estimated duration (us) x GPUs */
    uint32_t gpus;
    uint64_t pos; /* old queue place; arrivals after, in trace order */
    int64_t submit_us;
    uint64_t seq;
};

static int64_t gpu_time(const struct gp_job *job)
{
    double t = (double)job->predicted_us *
               gp_milli_gpus(gp_demand_milli(&job->demand));

    return t > 9e18 ? INT64_MAX : (int64_t)t;
}

static void qssf_rank(void *priv, const struct gp_job *job, int64_t now_us,
                      int64_t rank[2])
{
    (void)priv;
    (void)now_us;
    rank[0] = gpu_time(job);
    rank[1] = job->submit_us;
}

static int qssf_init(void **priv, const struct gp_policy_args *args,
                     struct gp_diag *diag)
{
    struct qssf *q = gp_env_calloc(args->env, 1, sizeof(*q));

    if (!q)
        return GP_ENOMEM;
    q->env = args->env;
    q->last_s = -1;
    for (size_t i = 0; i < args->nopts; i++) {
        const char *key = args->opts[i].key, *val = args->opts[i].value;
        int rc;

        if (strcmp(key, "mode") != 0)
            rc = gp_diag_set(diag, GP_EINVAL, key,
                             "unknown option for qssf (known: mode)");
        else if (strcmp(val, "gpupool") == 0 || strcmp(val, "artifact") == 0)
            rc = (q->artifact = val[0] == 'a', GP_OK);
        else
            rc = gp_diag_set(diag, GP_EINVAL, "qssf.mode",
                             "expected gpupool or artifact, got \"%s\"", val);
        if (rc != GP_OK) {
            gp_env_free(args->env, q);
            return rc;
        }
    }
    *priv = q;
    return GP_OK;
}

static void qssf_fini(void *priv)
{
    struct qssf *q = priv;

    if (!q)
        return;
    gp_env_free(q->env, q->rec);
    gp_env_free(q->env, q);
}

/* Arrivals last, in trace order; the queue's old order before them. */
static int by_gpus(const void *x, const void *y)
{
    const struct qent *a = x, *b = y;

    if (a->gpus != b->gpus)
        return a->gpus < b->gpus ? -1 : 1;
    if (a->pos != b->pos)
        return a->pos < b->pos ? -1 : 1;
    if (a->submit_us != b->submit_us)
        return a->submit_us < b->submit_us ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Two stable sorts, by GPUs then by priority, in one. */
static int by_prio(const void *x, const void *y)
{
    const struct qent *a = x, *b = y;

    if (a->prio != b->prio)
        return a->prio < b->prio ? -1 : 1;
    return by_gpus(x, y);
}

/* The round's queue: every pending job, with its old place or, for an
 * arrival, none (UINT64_MAX, then trace order). *nfresh counts arrivals. */
static int collect(struct qssf *q, const struct gp_view *v, struct qent *e,
                   size_t *n, size_t *nfresh)
{
    struct gp_pending_iter it;
    const struct gp_job *job;
    int rc;

    *n = *nfresh = 0;
    if ((rc = gp_pending_iter_init(&it, v)) != GP_OK)
        return rc;
    while ((job = gp_pending_iter_next(&it))) {
        bool known = job->id < q->nrec && q->rec[job->id].gen1 == job->gen + 1;

        e[*n] = (struct qent){
            .job = job,
            .prio = gpu_time(job),
            .gpus = job->demand.gpus,
            .pos = known ? q->rec[job->id].pos : UINT64_MAX,
            .submit_us = job->submit_us,
            .seq = job->seq,
        };
        *nfresh += !known;
        (*n)++;
    }
    return GP_OK;
}

/* Note each waiting job's place for the next round. */
static int remember(struct qssf *q, const struct qent *e, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        const struct gp_job *job = e[k].job;
        uint32_t old = q->nrec;
        int rc = gp__grow(q->env, (void **)&q->rec, &q->nrec, sizeof(*q->rec),
                          job->id + 1);

        if (rc != GP_OK)
            return rc;
        memset(q->rec + old, 0, (q->nrec - old) * sizeof(*q->rec));
        q->rec[job->id] = (struct qrec){job->gen + 1, (uint32_t)k};
    }
    return GP_OK;
}

/* The free GPUs of a node the artifact may place on (UP), 0 otherwise. */
static uint32_t node_free(const struct gp_cluster *c, uint32_t i)
{
    return gp_cluster_node_state(c, i) == GP_NODE_UP
               ? gp_cluster_node_free(c, i)
               : 0;
}

/* A node and its free GPUs, for the placer's sort. */
struct nfree {
    uint32_t free, node;
};

/* Most free first; ties by index (Python's stable sort). */
static int by_free_desc(const void *x, const void *y)
{
    const struct nfree *a = x, *b = y;

    if (a->free != b->free)
        return a->free > b->free ? -1 : 1;
    return a->node < b->node ? -1 : a->node > b->node;
}

/* The switches a placement spans. */
static uint32_t count_switches(const struct gp_cluster *c,
                               const struct gp_slot *slots, uint32_t n)
{
    uint32_t count = 0;

    for (uint32_t i = 0; i < n; i++) {
        uint32_t sw = gp_cluster_node_switch(c, slots[i].node), j = 0;

        while (j < i && gp_cluster_node_switch(c, slots[j].node) != sw)
            j++;
        count += j == i;
    }
    return count;
}

/* The artifact's consolidate placer (policies/placer/consolidate.py): a
 * gang of at most a node's GPUs goes to the node with the fewest free
 * GPUs that holds it, the lowest index on a tie - which node matters, as
 * the jobs on two equally free nodes end at different times. A larger
 * gang takes whole free nodes, most free first, and a remainder (not a
 * multiple of a node) the next node in that order, if it holds it. */
static int artifact_fit(const struct gp_view *v, const struct gp_job *job,
                        struct gp_placement *out)
{
    const struct gp_cluster *c = gp_view_cluster(v);
    uint32_t need = job->demand.gpus, n = gp_cluster_nnodes(c), best = n;
    uint32_t node_gpus, left, k, nslots = 0;
    struct gp_demand part = job->demand;
    struct gp_slot *slots;
    struct nfree *order;
    uint64_t free = 0;

    for (uint32_t i = 0; i < n; i++)
        free += node_free(c, i);
    if (free < need || need == 0 || job->demand.gpu_milli)
        return GP_ENOFIT;
    node_gpus = gp_cluster_max_up_node_gpus(c, job->demand.type);
    if (need <= node_gpus) {
        for (uint32_t i = 0; i < n; i++)
            if (node_free(c, i) >= need &&
                (best == n || node_free(c, i) < node_free(c, best)))
                best = i;
        return best == n ? GP_ENOFIT : gp_view_fit_on(v, job, best, out);
    }
    order = gp_arena_alloc(gp_view_scratch(v), n * sizeof(*order));
    slots = gp_arena_alloc(gp_view_scratch(v), n * sizeof(*slots));
    if (!order || !slots)
        return GP_ENOMEM;
    for (uint32_t i = 0; i < n; i++)
        order[i] = (struct nfree){node_free(c, i), i};
    qsort(order, n, sizeof(*order), by_free_desc);
    for (k = 0, left = need; k < n && left > 0; k++) {
        uint32_t f = order[k].free;
        uint32_t take = f == node_gpus && left >= node_gpus ? node_gpus
                        : left < node_gpus && f >= left     ? left
                                                            : 0;
        struct gp_placement one;
        int rc;

        if (take == 0)
            return GP_ENOFIT;
        part.gpus = take;
        rc = gp_cluster_fit_on(c, order[k].node, &part, &one);
        if (rc != GP_OK)
            return rc;
        slots[nslots++] = one.inline_slot;
        left -= take;
    }
    if (left > 0)
        return GP_ENOFIT;
    memset(out, 0, sizeof(*out));
    out->type = gp_cluster_node_type(c, slots[0].node);
    out->gpus = need;
    out->nslots = nslots;
    out->nswitches = count_switches(c, slots, nslots);
    out->slots = slots;
    return GP_OK;
}

/* One second of the artifact's QSSF (policies/qssf.py, steps 2-4). */
static int artifact_schedule(struct qssf *q, const struct gp_view *v,
                             struct gp_plan *p)
{
    int64_t now_us = gp_view_now(v), now_s = now_us / GP_US_PER_S;
    size_t npend = gp_view_npending(v), n, nfresh, k;
    struct qent *e;
    bool by_count_only;
    int rc;

    e = gp_arena_alloc(gp_view_scratch(v), (npend ? npend : 1) * sizeof(*e));
    if (!e)
        return GP_ENOMEM;
    if ((rc = collect(q, v, e, &n, &nfresh)) != GP_OK)
        return rc;
    if (now_s == q->last_s && nfresh == 0)
        return GP_OK; /* the simulator looks once a second */
    q->last_s = now_s;
    /* its queue sorted by priority only when some job waited before */
    by_count_only = n == nfresh;
    qsort(e, n, sizeof(*e), by_count_only ? by_gpus : by_prio);
    for (k = 0; k < n; k++) {
        struct gp_placement where;

        rc = artifact_fit(v, e[k].job, &where);
        if (rc == GP_OK)
            rc = gp_plan_start(p, e[k].job, &where);
        if (rc == GP_ENOFIT)
            break; /* strict order: the head blocks the rest */
        if (rc != GP_OK)
            return rc;
    }
    /* No round is needed the next second, when the simulator sorts a
     * queue left in GPU-count order by priority: what stopped this walk
     * was its smallest job, and nothing larger fits until an event. */
    return remember(q, e + k, n - k);
}

static int qssf_schedule(void *priv, const struct gp_view *view,
                         struct gp_plan *plan)
{
    struct qssf *q = priv;

    if (q && q->artifact)
        return artifact_schedule(q, view, plan);
    return gp__greedy(view, plan, NULL);
}

const struct gp_policy_ops gp_policy_qssf = {
    .name = "qssf",
    .summary = "predicted GPU time first, from similar past jobs (Helios)",
    .init = qssf_init,
    .fini = qssf_fini,
    .rank = qssf_rank,
    .schedule = qssf_schedule,
};
