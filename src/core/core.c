/* core.c - jobs, queues, timers and the scheduling round.
 *
 * Key decisions:
 *  - Jobs live in fixed-size chunks, so a job's address never changes and a
 *    million jobs cost no reallocation copies.
 *  - Pending jobs sit in one min-heap per shape (GPUs, type, CPUs and memory
 *    per GPU) ordered by the policy's rank, copied into the heap entries so
 *    the queues are sifted and walked without reading the scattered job
 *    records; running jobs in one max-heap, so
 *    the best victim is on top. Iterators walk these heaps in order without
 *    popping them, through a small auxiliary heap of frontier positions.
 *  - A plan reserves GPUs as the policy adds actions (gp_cluster_take), so
 *    every later gp_view_fit sees the plan so far; a rejected plan is undone
 *    action by action in reverse.
 *  - The fair-share ledger keeps per-tenant counters up to date on every
 *    move (held, pending GPUs, decayed usage) and recomputes entitlements
 *    only when something changed and someone asks.
 *  - Graceful preemption: a signalled job keeps its GPUs (state PREEMPTING)
 *    until the backend says it stopped or the grace period ends.
 *  - gp_view_fit_if_freed gives the stopping jobs' GPUs back to the cluster
 *    once and keeps them given while the policy only asks "would it fit";
 *    anything that reads or changes the cluster otherwise takes them again
 *    first (see give_stopping). A round that reclaims for many tenants
 *    pays for the stopping jobs once, not once a question.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpupool/core.h"

#define CHUNK_BITS 12
#define CHUNK (1u << CHUNK_BITS)
#define NONE UINT32_MAX

enum { OP_START = 1, OP_PREEMPT = 2 };

/* A pending job in its shape's heap, with its rank (which does not change
 * while the job waits). */
struct qentry {
    int64_t rank[2];
    uint32_t id;
};

struct shape {
    struct gp_demand d;
    uint32_t tenant; /* NONE unless the policy queues by tenant */
    struct qentry *heap;
    uint32_t n, cap;
    uint32_t hnext; /* hash chain */
};

enum { TIMER_RANK, TIMER_KILL, TIMER_WAKE };

struct timer {
    int64_t at_us;
    uint32_t job;
    uint32_t gen;
    uint8_t kind;
};

struct tenant {
    struct gp_tenant_info info;
    uint32_t *shapes; /* its shapes, when queues are by tenant */
    uint32_t nshapes, capshapes;
    int64_t usage_t_us; /* usage_gpu_s is as of this time */
    bool declared;
    bool has_children;
    uint32_t run_head; /* its running jobs, linked through t_prev/t_next */
    struct gp_tenant_type *types; /* per GPU type (info.by_type) */
    uint64_t sub_demand;          /* demand of its whole subtree */
    double sub_entitled;
};

struct action {
    uint8_t op;
    uint32_t job;
    uint32_t beneficiary; /* tenant a preemption reclaims for, or NONE */
    struct gp_placement where;
};

struct pit_entry {
    uint32_t shape;
    uint32_t idx;
    struct qentry q; /* a copy of shapes[shape].heap[idx] */
};

struct gp_view {
    struct gp_core *core;
};

struct gp_plan {
    struct gp_core *core;
};

struct gp_core {
    struct gp_cluster *cluster;
    struct gp_core_config cfg;
    const struct gp_env *env;
    void *ppriv;

    struct gp_strtab strs;
    struct gp_strtab tenant_names;
    struct tenant *tenants;
    uint32_t ntenants, captenants;
    bool ledger_stale;
    double decay_per_us; /* ln 2 / half-life */
    struct gp_predictor *predictor;
    uint64_t preempting_gpus;
    uint32_t *preempting; /* ids of signalled jobs; job->heap_pos indexes */
    uint32_t npreempting, cappreempting;
    /* the preempting jobs' GPUs are given back to the cluster for now
     * (give_stopping): so many GPUs in all and of each type */
    bool stopping_given;
    uint64_t given_gpus;
    uint64_t given_type_gpus[GP_MAX_GPU_TYPES];

    struct gp_job **chunks;
    size_t nchunks, njobs;

    struct shape *shapes;
    uint32_t nshapes, capshapes;
    uint32_t *shape_hash;
    uint32_t shape_hash_n; /* power of two */

    uint32_t *running; /* max-heap of job ids */
    uint32_t nrunning, caprunning;

    struct timer *timers; /* min-heap */
    uint32_t ntimers, captimers;
    int64_t next_periodic_us;

    size_t npending;
    uint64_t busy;
    uint64_t running_epoch; /* bumped whenever a job starts or stops */
    bool dirty;
    uint64_t nrounds;
    uint32_t round_id;
    int64_t now_us;

    struct gp_arena scratch;
    struct action *actions;
    size_t nactions, capactions;
    struct gp_view view;
    struct gp_plan plan;

    /* iterator state, reused round after round */
    struct pit_entry *pit;
    uint32_t npit, cappit;
    uint8_t *pit_skip;
    uint8_t *pit_skip_tenant;
    uint32_t pit_cur_shape;
    uint32_t *rit;
    uint32_t nrit, caprit;
};

static inline struct gp_job *J(const struct gp_core *c, uint32_t id)
{
    return &c->chunks[id >> CHUNK_BITS][id & (CHUNK - 1)];
}

static int grow(void **p, uint32_t *cap, size_t elem, uint32_t need)
{
    uint32_t n;
    void *q;

    if (need <= *cap)
        return GP_OK;
    n = *cap ? *cap : 16;
    while (n < need) {
        if (n > UINT32_MAX / 2)
            return GP_ENOMEM;
        n *= 2;
    }
    if (!(q = realloc(*p, (size_t)n * elem)))
        return GP_ENOMEM;
    *p = q;
    *cap = n;
    return GP_OK;
}

/* ---- rank order --------------------------------------------------------- */

static inline int rank_cmp(const struct gp_job *a, const struct gp_job *b)
{
    if (a->rank[0] != b->rank[0])
        return a->rank[0] < b->rank[0] ? -1 : 1;
    if (a->rank[1] != b->rank[1])
        return a->rank[1] < b->rank[1] ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* dir = 1: min-heap; dir = -1: max-heap (the running jobs: their ranks may
 * change as they run, so the heap compares the jobs themselves). */
static inline bool above(const struct gp_core *c, uint32_t a, uint32_t b,
                         int dir)
{
    return rank_cmp(J(c, a), J(c, b)) * dir < 0;
}

static void heap_up(struct gp_core *c, uint32_t *h, uint32_t i, int dir)
{
    uint32_t x = h[i];

    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (!above(c, x, h[p], dir))
            break;
        h[i] = h[p];
        J(c, h[i])->heap_pos = i;
        i = p;
    }
    h[i] = x;
    J(c, x)->heap_pos = i;
}

static void heap_down(struct gp_core *c, uint32_t *h, uint32_t n, uint32_t i,
                      int dir)
{
    uint32_t x = h[i];

    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = l;
        if (l >= n)
            break;
        if (r < n && above(c, h[r], h[l], dir))
            m = r;
        if (!above(c, h[m], x, dir))
            break;
        h[i] = h[m];
        J(c, h[i])->heap_pos = i;
        i = m;
    }
    h[i] = x;
    J(c, x)->heap_pos = i;
}

static void heap_remove(struct gp_core *c, uint32_t *h, uint32_t *n, uint32_t i,
                        int dir)
{
    uint32_t last = --*n;

    if (i == last)
        return;
    h[i] = h[last];
    J(c, h[i])->heap_pos = i;
    heap_down(c, h, *n, i, dir);
    heap_up(c, h, J(c, h[i])->heap_pos, dir);
}

/* The pending heaps: a min-heap in rank_cmp's order on the ranks copied
 * into the entries, so sifting reads no job record but to note positions. */
static inline bool q_before(const struct qentry *a, const struct qentry *b)
{
    if (a->rank[0] != b->rank[0])
        return a->rank[0] < b->rank[0];
    if (a->rank[1] != b->rank[1])
        return a->rank[1] < b->rank[1];
    return a->id < b->id;
}

static void q_up(struct gp_core *c, struct qentry *h, uint32_t i)
{
    struct qentry x = h[i];

    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (!q_before(&x, &h[p]))
            break;
        h[i] = h[p];
        J(c, h[i].id)->heap_pos = i;
        i = p;
    }
    h[i] = x;
    J(c, x.id)->heap_pos = i;
}

/* Returns where the entry at i ends up. */
static uint32_t q_down(struct gp_core *c, struct qentry *h, uint32_t n,
                       uint32_t i)
{
    struct qentry x = h[i];

    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = l;
        if (l >= n)
            break;
        if (r < n && q_before(&h[r], &h[l]))
            m = r;
        if (!q_before(&h[m], &x))
            break;
        h[i] = h[m];
        J(c, h[i].id)->heap_pos = i;
        i = m;
    }
    h[i] = x;
    J(c, x.id)->heap_pos = i;
    return i;
}

static void q_remove(struct gp_core *c, struct qentry *h, uint32_t *n,
                     uint32_t i)
{
    uint32_t last = --*n;

    if (i == last)
        return;
    h[i] = h[last];
    q_up(c, h, q_down(c, h, *n, i));
}

/* ---- shapes ------------------------------------------------------------- */

static uint32_t shape_hashval(const struct gp_demand *d, uint32_t tenant)
{
    uint64_t h =
        (d->gpus + ((uint64_t)tenant << 32)) * UINT64_C(0x9e3779b97f4a7c15);

    h ^= (h >> 29) + d->type * UINT64_C(0xbf58476d1ce4e5b9);
    h ^= (h >> 31) + d->cpus_per_gpu * UINT64_C(0x94d049bb133111eb);
    h ^= (h >> 27) + d->mem_mib_per_gpu * UINT64_C(0x9e3779b97f4a7c15);
    return (uint32_t)(h ^ (h >> 32));
}

static bool demand_eq(const struct gp_demand *a, const struct gp_demand *b)
{
    return a->gpus == b->gpus && a->type == b->type &&
           a->cpus_per_gpu == b->cpus_per_gpu &&
           a->mem_mib_per_gpu == b->mem_mib_per_gpu;
}

static int rehash_shapes(struct gp_core *c)
{
    uint32_t n = c->shape_hash_n ? c->shape_hash_n * 2 : 64;
    uint32_t *h = malloc(n * sizeof(*h));

    if (!h)
        return GP_ENOMEM;
    for (uint32_t i = 0; i < n; i++)
        h[i] = NONE;
    for (uint32_t s = 0; s < c->nshapes; s++) {
        uint32_t b =
            shape_hashval(&c->shapes[s].d, c->shapes[s].tenant) & (n - 1);
        c->shapes[s].hnext = h[b];
        h[b] = s;
    }
    free(c->shape_hash);
    c->shape_hash = h;
    c->shape_hash_n = n;
    return GP_OK;
}

static int shape_of(struct gp_core *c, const struct gp_demand *d,
                    uint32_t tenant, uint32_t *out)
{
    uint32_t b, s;
    int rc;

    if (!c->cfg.policy->queues_by_tenant)
        tenant = NONE;
    if (c->shape_hash_n) {
        b = shape_hashval(d, tenant) & (c->shape_hash_n - 1);
        for (s = c->shape_hash[b]; s != NONE; s = c->shapes[s].hnext) {
            if (c->shapes[s].tenant == tenant &&
                demand_eq(&c->shapes[s].d, d)) {
                *out = s;
                return GP_OK;
            }
        }
    }
    if ((c->nshapes + 1) * 2 > c->shape_hash_n &&
        (rc = rehash_shapes(c)) != GP_OK)
        return rc;
    if ((rc = grow((void **)&c->shapes, &c->capshapes, sizeof(*c->shapes),
                   c->nshapes + 1)) != GP_OK)
        return rc;
    s = c->nshapes++;
    memset(&c->shapes[s], 0, sizeof(c->shapes[s]));
    c->shapes[s].d = *d;
    c->shapes[s].tenant = tenant;
    b = shape_hashval(d, tenant) & (c->shape_hash_n - 1);
    c->shapes[s].hnext = c->shape_hash[b];
    c->shape_hash[b] = s;
    /* the iterator's skip flags grow with the shapes */
    {
        uint8_t *p = realloc(c->pit_skip, c->capshapes);
        if (!p)
            return GP_ENOMEM;
        c->pit_skip = p;
    }
    if (tenant != NONE) {
        struct tenant *t = &c->tenants[tenant];
        if ((rc = grow((void **)&t->shapes, &t->capshapes, sizeof(uint32_t),
                       t->nshapes + 1)))
            return rc;
        t->shapes[t->nshapes++] = s;
    }
    *out = s;
    return GP_OK;
}

/* ---- queue moves -------------------------------------------------------- */

static void set_rank(struct gp_core *c, struct gp_job *j)
{
    c->cfg.policy->rank(c->ppriv, j, c->now_us, j->rank);
}

static int pending_push(struct gp_core *c, struct gp_job *j)
{
    struct shape *s = &c->shapes[j->qclass];
    int rc;

    if ((rc = grow((void **)&s->heap, &s->cap, sizeof(*s->heap), s->n + 1)))
        return rc;
    set_rank(c, j);
    s->heap[s->n] = (struct qentry){{j->rank[0], j->rank[1]}, j->id};
    q_up(c, s->heap, s->n++);
    c->npending++;
    c->tenants[j->tenant].info.npending++;
    c->tenants[j->tenant].info.pending_gpus += j->demand.gpus;
    c->ledger_stale = true;
    return GP_OK;
}

static void pending_remove(struct gp_core *c, struct gp_job *j)
{
    struct shape *s = &c->shapes[j->qclass];

    q_remove(c, s->heap, &s->n, j->heap_pos);
    c->npending--;
    c->tenants[j->tenant].info.npending--;
    c->tenants[j->tenant].info.pending_gpus -= j->demand.gpus;
    c->ledger_stale = true;
}

static int running_push(struct gp_core *c, struct gp_job *j)
{
    struct tenant *t = &c->tenants[j->tenant];
    int rc;

    if ((rc = grow((void **)&c->running, &c->caprunning, sizeof(uint32_t),
                   c->nrunning + 1)))
        return rc;
    j->t_prev = NONE;
    j->t_next = t->run_head;
    if (t->run_head != NONE)
        J(c, t->run_head)->t_prev = j->id;
    t->run_head = j->id;
    set_rank(c, j);
    c->running_epoch++;
    c->running[c->nrunning] = j->id;
    heap_up(c, c->running, c->nrunning++, -1);
    return GP_OK;
}

static void running_remove(struct gp_core *c, struct gp_job *j)
{
    struct tenant *t = &c->tenants[j->tenant];

    if (j->t_prev != NONE)
        J(c, j->t_prev)->t_next = j->t_next;
    else
        t->run_head = j->t_next;
    if (j->t_next != NONE)
        J(c, j->t_next)->t_prev = j->t_prev;
    heap_remove(c, c->running, &c->nrunning, j->heap_pos, -1);
    c->running_epoch++;
}

/* ---- timers ------------------------------------------------------------- */

static bool timer_before(const struct timer *a, const struct timer *b)
{
    if (a->at_us != b->at_us)
        return a->at_us < b->at_us;
    return a->job < b->job;
}

static int timer_push(struct gp_core *c, int64_t at, uint32_t job, uint32_t gen,
                      uint8_t kind)
{
    uint32_t i;
    int rc;

    if ((rc = grow((void **)&c->timers, &c->captimers, sizeof(*c->timers),
                   c->ntimers + 1)))
        return rc;
    i = c->ntimers++;
    c->timers[i] = (struct timer){at, job, gen, kind};
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        struct timer t;
        if (!timer_before(&c->timers[i], &c->timers[p]))
            break;
        t = c->timers[i];
        c->timers[i] = c->timers[p];
        c->timers[p] = t;
        i = p;
    }
    return GP_OK;
}

static struct timer timer_pop(struct gp_core *c)
{
    struct timer top = c->timers[0];
    uint32_t i = 0, n = --c->ntimers;

    c->timers[0] = c->timers[n];
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        struct timer t;
        if (l < n && timer_before(&c->timers[l], &c->timers[m]))
            m = l;
        if (r < n && timer_before(&c->timers[r], &c->timers[m]))
            m = r;
        if (m == i)
            break;
        t = c->timers[i];
        c->timers[i] = c->timers[m];
        c->timers[m] = t;
        i = m;
    }
    return top;
}

static int arm_rank_timer(struct gp_core *c, struct gp_job *j)
{
    int64_t at;

    if (!c->cfg.policy->rank_expires)
        return GP_OK;
    at = c->cfg.policy->rank_expires(c->ppriv, j, c->now_us);
    if (at == GP_TIME_NONE)
        return GP_OK;
    if (at <= c->now_us)
        at = c->now_us + 1;
    return timer_push(c, at, j->id, j->starts, TIMER_RANK);
}

/* ---- tenants and the ledger --------------------------------------------- */

/* Bring a tenant's decayed usage up to now: with held GPUs h constant since
 * the last update, U(t) = U0 e^(-k dt) + h (1 - e^(-k dt)) / k. */
static void tenant_touch(struct gp_core *c, struct tenant *t)
{
    int64_t dt = c->now_us - t->usage_t_us;
    double e;

    if (dt <= 0)
        return;
    e = exp(-c->decay_per_us * (double)dt);
    t->info.usage_gpu_s = t->info.usage_gpu_s * e + (double)t->info.held *
                                                        (1.0 - e) /
                                                        c->decay_per_us / 1e6;
    t->usage_t_us = c->now_us;
}

static void tenant_held(struct gp_core *c, uint32_t tenant, uint8_t type,
                        int64_t delta, int nrunning_delta)
{
    struct tenant *t = &c->tenants[tenant];

    tenant_touch(c, t);
    t->info.held = (uint64_t)((int64_t)t->info.held + delta);
    t->types[type].held = (uint64_t)((int64_t)t->types[type].held + delta);
    t->info.nrunning = (uint32_t)((int32_t)t->info.nrunning + nrunning_delta);
    c->ledger_stale = true;
}

static int tenant_new(struct gp_core *c, const char *name, uint32_t *out)
{
    uint32_t id;
    struct tenant *t;
    int rc;

    if ((rc = gp_strtab_intern(&c->tenant_names, name, (size_t)-1, &id)))
        return rc;
    if (id - 1 < c->ntenants) {
        *out = id - 1;
        return GP_OK;
    }
    if ((rc = grow((void **)&c->tenants, &c->captenants, sizeof(*c->tenants),
                   c->ntenants + 1)))
        return rc;
    {
        uint8_t *p = realloc(c->pit_skip_tenant, c->captenants);
        if (!p)
            return GP_ENOMEM;
        c->pit_skip_tenant = p;
    }
    t = &c->tenants[c->ntenants];
    memset(t, 0, sizeof(*t));
    t->types = calloc(gp_cluster_ntypes(c->cluster), sizeof(*t->types));
    if (!t->types)
        return GP_ENOMEM;
    t->info.by_type = t->types;
    t->info.name = gp_strtab_get(&c->tenant_names, id);
    t->info.parent = GP_TENANT_NONE;
    t->info.weight = 1.0;
    t->usage_t_us = c->now_us;
    t->run_head = NONE;
    *out = c->ntenants++;
    c->ledger_stale = true;
    return GP_OK;
}

static int tenant_of(struct gp_core *c, const char *name, uint32_t *out)
{
    return tenant_new(c, name && *name ? name : "default", out);
}

int gp_core_find_tenant(const struct gp_core *c, const char *name,
                        uint32_t *tenant)
{
    uint32_t id = gp_strtab_find(&c->tenant_names, name, (size_t)-1);

    if (!id || id - 1 >= c->ntenants)
        return GP_ENOENT;
    *tenant = id - 1;
    return GP_OK;
}

/* Resolve a per-type guarantee to type indexes: typed[type] (zeroed
 * first), and the guarantee it makes (*total). */
static int check_by_type(const struct gp_core *c,
                         const struct gp_tenant_spec *spec,
                         uint32_t typed[GP_MAX_GPU_TYPES], uint32_t *total,
                         struct gp_diag *diag)
{
    uint64_t sum = 0;
    uint32_t seen = 0;

    memset(typed, 0, GP_MAX_GPU_TYPES * sizeof(*typed));
    *total = spec->guarantee;
    if (spec->nby_type == 0)
        return GP_OK;
    for (size_t i = 0; i < spec->nby_type; i++) {
        const struct gp_type_guarantee *g = &spec->by_type[i];
        uint8_t type;

        if (!g->type ||
            gp_cluster_find_type(c->cluster, g->type, &type) != GP_OK)
            return gp_diag_set(diag, GP_ENOENT, spec->name,
                               "guarantee_by_type: the cluster has no GPU "
                               "type '%s'",
                               g->type ? g->type : "(null)");
        if (seen & (1u << type))
            return gp_diag_set(diag, GP_EINVAL, spec->name,
                               "guarantee_by_type: type '%s' given twice",
                               g->type);
        if (g->gpus > gp_cluster_type_gpus(c->cluster, type))
            return gp_diag_set(
                diag, GP_EINVAL, spec->name,
                "guarantee_by_type.%s: %u GPUs, but the "
                "cluster has %llu of that type",
                g->type, g->gpus,
                (unsigned long long)gp_cluster_type_gpus(c->cluster, type));
        seen |= 1u << type;
        typed[type] = g->gpus;
        sum += g->gpus;
    }
    if (spec->guarantee && spec->guarantee != sum)
        return gp_diag_set(diag, GP_EINVAL, spec->name,
                           "guarantee %u differs from the sum of "
                           "guarantee_by_type (%llu)",
                           spec->guarantee, (unsigned long long)sum);
    *total = (uint32_t)sum;
    return GP_OK;
}

int gp_core_add_tenant(struct gp_core *c, const struct gp_tenant_spec *spec,
                       struct gp_diag *diag)
{
    const char *where = spec->name ? spec->name : "tenant";
    uint32_t idx, parent = GP_TENANT_NONE, guarantee;
    uint32_t typed[GP_MAX_GPU_TYPES];
    struct tenant *t;
    int rc;

    if (!spec->name || !*spec->name)
        return gp_diag_set(diag, GP_EINVAL, "tenant", "a tenant needs a name");
    if (spec->weight < 0 || !isfinite(spec->weight) || spec->weight > 1e9)
        return gp_diag_set(diag, GP_EINVAL, where, "weight must be > 0");
    if ((rc = check_by_type(c, spec, typed, &guarantee, diag)) != GP_OK)
        return rc;
    if (spec->cap && spec->cap < guarantee)
        return gp_diag_set(diag, GP_EINVAL, where,
                           "cap %u is below the guarantee %u", spec->cap,
                           guarantee);
    if (spec->lend_limit > guarantee)
        return gp_diag_set(diag, GP_EINVAL, where,
                           "lend_limit %u is above the guarantee %u",
                           spec->lend_limit, guarantee);
    if (gp_core_find_tenant(c, spec->name, &idx) == GP_OK &&
        c->tenants[idx].declared)
        return gp_diag_set(diag, GP_EEXIST, where, "tenant declared twice");
    if (spec->parent && *spec->parent) {
        if (gp_core_find_tenant(c, spec->parent, &parent) != GP_OK ||
            !c->tenants[parent].declared)
            return gp_diag_set(diag, GP_ENOENT, where,
                               "parent '%s' is not declared before it",
                               spec->parent);
        if (c->tenants[parent].info.typed || spec->nby_type)
            return gp_diag_set(diag, GP_EINVAL, where,
                               "guarantee_by_type is only for tenants "
                               "without parent or children");
    }
    if ((rc = tenant_new(c, spec->name, &idx)) != GP_OK)
        return gp_diag_set(diag, rc, where, "out of memory");
    t = &c->tenants[idx];
    t->declared = true;
    t->info.parent = parent;
    t->info.weight = spec->weight > 0 ? spec->weight : 1.0;
    t->info.guarantee = guarantee;
    t->info.typed = spec->nby_type > 0;
    for (uint32_t k = 0; k < gp_cluster_ntypes(c->cluster); k++)
        t->types[k].guarantee = typed[k];
    t->info.cap = spec->cap;
    t->info.lend_limit = spec->lend_limit;
    if (parent != GP_TENANT_NONE)
        c->tenants[parent].has_children = true;
    c->ledger_stale = true;
    return GP_OK;
}

struct wf {
    uint32_t tenant; /* NONE for a parent's own jobs */
    double base, limit, weight, share;
};

static int wf_cmp(const void *a, const void *b)
{
    const struct wf *x = a, *y = b;
    double rx = (x->limit - x->base) / x->weight;
    double ry = (y->limit - y->base) / y->weight;

    if (rx != ry)
        return rx < ry ? -1 : 1;
    return x->tenant < y->tenant ? -1 : x->tenant > y->tenant;
}

/* Water-fill `capacity` over members: each gets its base (guarantee up to
 * demand), then what remains rises like water, by weight, in every member
 * whose limit (demand, cap) is not yet reached. */
static void water_fill(struct wf *m, size_t n, double capacity)
{
    double sum_base = 0, left, wsum = 0;
    size_t i;

    for (i = 0; i < n; i++)
        sum_base += m[i].base;
    if (sum_base > capacity && sum_base > 0) {
        /* guarantees oversubscribed: scale them down alike */
        for (i = 0; i < n; i++)
            m[i].share = m[i].base * capacity / sum_base;
        return;
    }
    for (i = 0; i < n; i++)
        m[i].share = m[i].base;
    left = capacity - sum_base;
    qsort(m, n, sizeof(*m), wf_cmp);
    for (i = 0; i < n; i++)
        if (m[i].limit > m[i].base)
            wsum += m[i].weight;
    for (i = 0; i < n && left > 1e-9; i++) {
        double room = m[i].limit - m[i].base, level;

        if (room <= 0)
            continue;
        level = left / wsum; /* water per unit of weight */
        if (room / m[i].weight <= level) {
            m[i].share += room;
            left -= room;
        } else {
            m[i].share += m[i].weight * level;
            left -= m[i].weight * level;
        }
        wsum -= m[i].weight;
    }
}

/* Share `capacity` among the children of `parent` (NONE = the top level)
 * and the parent's own jobs, then recurse. */
static int share_level(struct gp_core *c, uint32_t parent, double capacity)
{
    struct wf *m;
    size_t n = 0;
    double child_g = 0;

    if (!(m = malloc((c->ntenants + 1) * sizeof(*m))))
        return GP_ENOMEM;
    for (uint32_t k = 0; k < c->ntenants; k++) {
        struct tenant *t = &c->tenants[k];
        double cap;

        if (t->info.parent != parent)
            continue;
        cap = t->info.cap ? (double)t->info.cap : 1e18;
        m[n].tenant = k;
        m[n].limit = fmin((double)t->sub_demand, cap);
        m[n].base = fmin((double)t->info.guarantee, m[n].limit);
        /* the part of its guarantee it never lends stays its own, idle
         * or not */
        if ((double)t->info.lend_limit > m[n].base) {
            m[n].base = (double)t->info.lend_limit;
            m[n].limit = fmax(m[n].limit, m[n].base);
        }
        m[n].weight = t->info.weight;
        child_g += t->info.guarantee;
        n++;
    }
    if (parent != NONE) {
        /* the parent's own jobs share what its children are not
         * guaranteed */
        struct tenant *p = &c->tenants[parent];
        m[n].tenant = NONE;
        m[n].limit = (double)p->info.demand;
        m[n].base =
            fmin(fmax(0.0, (double)p->info.guarantee - child_g), m[n].limit);
        m[n].weight = p->info.weight;
        n++;
    }
    water_fill(m, n, capacity);
    for (size_t i = 0; i < n; i++) {
        if (m[i].tenant == NONE) {
            c->tenants[parent].info.entitled = m[i].share;
            continue;
        }
        c->tenants[m[i].tenant].sub_entitled = m[i].share;
        c->tenants[m[i].tenant].info.entitled = m[i].share;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t k = m[i].tenant;

        if (k != NONE && c->tenants[k].has_children &&
            share_level(c, k, m[i].share) != GP_OK) {
            free(m);
            return GP_ENOMEM;
        }
    }
    free(m);
    return GP_OK;
}

static void ledger_update(struct gp_core *c)
{
    if (!c->ledger_stale)
        return;
    for (uint32_t k = 0; k < c->ntenants; k++) {
        struct tenant *t = &c->tenants[k];
        tenant_touch(c, t);
        t->info.demand = t->info.held + t->info.pending_gpus;
        t->info.entitled = 0;
        t->sub_demand = t->info.demand;
    }
    /* a parent is declared before its children, so it has a lower index */
    for (uint32_t k = c->ntenants; k-- > 0;)
        if (c->tenants[k].info.parent != GP_TENANT_NONE)
            c->tenants[c->tenants[k].info.parent].sub_demand +=
                c->tenants[k].sub_demand;
    if (share_level(c, NONE, (double)gp_cluster_gpus(c->cluster)) == GP_OK)
        c->ledger_stale = false;
}

const struct gp_tenant_info *gp_core_tenant_info(const struct gp_core *cc,
                                                 uint32_t tenant)
{
    /* logically const: entitlements are a cache of the ledger */
    struct gp_core *c = (struct gp_core *)(uintptr_t)cc;

    if (tenant >= c->ntenants)
        return NULL;
    ledger_update(c); /* usage is as of the last change in the ledger */
    return &c->tenants[tenant].info;
}

/* ---- life cycle --------------------------------------------------------- */

int gp_core_new(struct gp_core **out, struct gp_cluster *cluster,
                const struct gp_core_config *cfg, struct gp_diag *diag)
{
    struct gp_core *c;
    struct gp_policy_args args;
    int rc;

    if (!cluster || !cfg || !cfg->policy || !cfg->policy->schedule ||
        !cfg->policy->rank)
        return gp_diag_set(diag, GP_EINVAL, "core",
                           "a cluster and a complete policy are required");
    if (cfg->restart_cost_us < 0 || cfg->round_period_us < 0 ||
        cfg->grace_us < GP_TIME_NONE || cfg->ckpt_cost_us < 0)
        return gp_diag_set(diag, GP_EINVAL, "core",
                           "restart cost, round period and checkpoint cost must be >= 0");
    if ((rc = gp_cluster_seal(cluster)) != GP_OK)
        return gp_diag_set(diag, rc, "cluster", "the cluster has no nodes");
    if (!(c = calloc(1, sizeof(*c))))
        return gp_diag_set(diag, GP_ENOMEM, "core", "out of memory");
    c->cluster = cluster;
    c->cfg = *cfg;
    if (c->cfg.grace_us == GP_TIME_NONE)
        c->cfg.grace_us = cfg->policy->default_grace_us;
    for (int k = 0; k < GP_NPRIO; k++) {
        if (c->cfg.min_run_us[k] < 0)
            c->cfg.min_run_us[k] = cfg->policy->default_min_run_us[k];
        if (c->cfg.max_preemptions[k] == UINT32_MAX)
            c->cfg.max_preemptions[k] = cfg->policy->default_max_preemptions[k];
    }
    c->env = cfg->env;
    c->view.core = c;
    c->plan.core = c;
    c->next_periodic_us = GP_TIME_NONE;
    gp_strtab_init(&c->strs);
    gp_strtab_init(&c->tenant_names);
    gp_arena_init(&c->scratch, 0);
    c->decay_per_us = log(2.0) / (double)(cfg->usage_half_life_us > 0
                                              ? cfg->usage_half_life_us
                                              : 24 * 3600 * GP_US_PER_S);
    if (gp_predictor_new(&c->predictor, cfg->predictor) != GP_OK) {
        c->cfg.policy = NULL;
        c->cluster = NULL;
        gp_core_free(c);
        return gp_diag_set(diag, GP_ENOMEM, "core", "out of memory");
    }
    args =
        (struct gp_policy_args){cfg->policy_opts, cfg->npolicy_opts, cfg->env};
    if (cfg->policy->init) {
        rc = cfg->policy->init(&c->ppriv, &args, diag);
        if (rc != GP_OK) {
            c->cfg.policy = NULL; /* nothing to fini */
            c->cluster = NULL;    /* the caller keeps it on failure */
            gp_core_free(c);
            return rc;
        }
    } else if (cfg->npolicy_opts > 0) {
        rc = gp_diag_set(diag, GP_EINVAL, cfg->policy_opts[0].key,
                         "policy '%s' takes no options", cfg->policy->name);
        c->cfg.policy = NULL;
        c->cluster = NULL;
        gp_core_free(c);
        return rc;
    }
    *out = c;
    return GP_OK;
}

void gp_core_free(struct gp_core *c)
{
    if (!c)
        return;
    if (c->cfg.policy && c->cfg.policy->fini)
        c->cfg.policy->fini(c->ppriv);
    for (size_t i = 0; i < c->njobs; i++)
        gp_placement_fini(&J(c, (uint32_t)i)->where);
    for (size_t i = 0; i < c->nchunks; i++)
        free(c->chunks[i]);
    free(c->chunks);
    for (uint32_t s = 0; s < c->nshapes; s++)
        free(c->shapes[s].heap);
    free(c->shapes);
    free(c->shape_hash);
    free(c->running);
    free(c->timers);
    free(c->actions);
    free(c->pit);
    free(c->pit_skip);
    free(c->rit);
    for (uint32_t t = 0; t < c->ntenants; t++) {
        free(c->tenants[t].shapes);
        free(c->tenants[t].types);
    }
    free(c->tenants);
    free(c->pit_skip_tenant);
    free(c->preempting);
    gp_predictor_free(c->predictor);
    gp_arena_fini(&c->scratch);
    gp_strtab_fini(&c->strs);
    gp_strtab_fini(&c->tenant_names);
    gp_cluster_free(c->cluster);
    free(c);
}

static int new_job(struct gp_core *c, struct gp_job **out)
{
    size_t chunk = c->njobs >> CHUNK_BITS;

    if (c->njobs >= UINT32_MAX - 1)
        return GP_ERANGE;
    if (chunk == c->nchunks) {
        struct gp_job **p = realloc(c->chunks, (chunk + 1) * sizeof(*p));
        if (!p)
            return GP_ENOMEM;
        c->chunks = p;
        if (!(c->chunks[chunk] = calloc(CHUNK, sizeof(struct gp_job))))
            return GP_ENOMEM;
        c->nchunks++;
    }
    *out = J(c, (uint32_t)c->njobs);
    memset(*out, 0, sizeof(**out));
    (*out)->id = (uint32_t)c->njobs++;
    return GP_OK;
}

static uint32_t ceil_div(uint64_t a, uint32_t b)
{
    uint64_t q = (a + b - 1) / b;
    return q > UINT32_MAX ? UINT32_MAX : (uint32_t)q;
}

int gp_core_submit(struct gp_core *c, const struct gp_job_spec *spec,
                   int64_t now_us, uint32_t *job_id, struct gp_diag *diag)
{
    const char *where = spec->id && *spec->id ? spec->id : "job";
    struct gp_diag why = {{0}, {0}};
    struct gp_job *j;
    uint8_t type = GP_TYPE_ANY;
    bool unknown_type = false;
    int rc;

    if (spec->gpus < 1)
        return gp_diag_set(diag, GP_EINVAL, where, "gpus must be >= 1");
    if (spec->duration_us < 0 || spec->time_limit_us < 0)
        return gp_diag_set(diag, GP_EINVAL, where,
                           "duration and time limit must be >= 0");
    if ((spec->min_gpus && spec->min_gpus > spec->gpus) ||
        (spec->max_gpus && spec->max_gpus < spec->gpus))
        return gp_diag_set(diag, GP_EINVAL, where,
                           "min_gpus <= gpus <= max_gpus must hold");
    if (spec->gpu_type && *spec->gpu_type &&
        gp_cluster_find_type(c->cluster, spec->gpu_type, &type) != GP_OK)
        unknown_type = true;
    c->now_us = now_us;
    if ((rc = new_job(c, &j)) != GP_OK)
        return gp_diag_set(diag, rc, where, "cannot store another job");
    if (spec->id && *spec->id) {
        if ((rc = gp_strtab_intern(&c->strs, spec->id, (size_t)-1, &j->ext_id)))
            goto nomem;
    }
    if ((spec->user && *spec->user &&
         (rc = gp_strtab_intern(&c->strs, spec->user, (size_t)-1, &j->user))) ||
        (spec->name && *spec->name &&
         (rc = gp_strtab_intern(&c->strs, spec->name, (size_t)-1, &j->name))) ||
        (rc = tenant_of(c, spec->tenant, &j->tenant)))
        goto nomem;
    j->demand.gpus = spec->gpus;
    j->demand.type = type;
    j->demand.cpus_per_gpu = spec->cpus ? ceil_div(spec->cpus, spec->gpus) : 0;
    j->demand.mem_mib_per_gpu =
        spec->mem_mib ? (spec->mem_mib + spec->gpus - 1) / spec->gpus : 0;
    j->min_gpus = spec->min_gpus ? spec->min_gpus : spec->gpus;
    j->max_gpus = spec->max_gpus ? spec->max_gpus : spec->gpus;
    j->priority = spec->priority;
    j->checkpointable = spec->checkpointable;
    j->submit_us = spec->submit_us;
    j->duration_us = spec->duration_us;
    j->time_limit_us = spec->time_limit_us;
    j->first_start_us = GP_TIME_NONE;
    j->run_start_us = GP_TIME_NONE;
    j->end_us = GP_TIME_NONE;
    j->speed = 1.0;
    j->signal_us = GP_TIME_NONE;
    j->reclaim_for = GP_TENANT_NONE;
    {
        enum gp_predict_source src;
        j->predicted_us = gp_predictor_predict(c->predictor, j, &src);
        j->pred_source = (uint8_t)src;
    }
    if (job_id)
        *job_id = j->id;

    if (unknown_type || gp_cluster_can_ever_fit(c->cluster, c->cfg.model,
                                                &j->demand, &why) != GP_OK) {
        char msg[400];

        if (unknown_type)
            snprintf(msg, sizeof(msg), "the cluster has no GPU type '%s'",
                     spec->gpu_type);
        else
            snprintf(msg, sizeof(msg), "%s", why.msg);
        j->state = GP_JOB_REJECTED;
        j->end_us = now_us;
        if (c->cfg.observer && c->cfg.observer->submitted)
            c->cfg.observer->submitted(c->cfg.observer_priv, c, j, now_us);
        if (c->cfg.observer && c->cfg.observer->rejected)
            c->cfg.observer->rejected(c->cfg.observer_priv, c, j, msg, now_us);
        gp_logf(c->env, GP_LOG_DEBUG, "job %s rejected: %s", where, msg);
        return GP_OK;
    }
    if ((rc = shape_of(c, &j->demand, j->tenant, &j->qclass)) ||
        (rc = pending_push(c, j)))
        goto nomem;
    j->state = GP_JOB_PENDING;
    c->dirty = true;
    if (c->cfg.observer && c->cfg.observer->submitted)
        c->cfg.observer->submitted(c->cfg.observer_priv, c, j, now_us);
    return GP_OK;
nomem:
    /* keep the record consistent: a job we could not queue is rejected */
    j->state = GP_JOB_REJECTED;
    j->end_us = now_us;
    return gp_diag_set(diag, rc, where, "out of memory");
}

/* Close the books on the current run of a job that leaves its GPUs.
 * `give` is false when a plan already gave the GPUs back (a preemption). */
static void close_run(struct gp_core *c, struct gp_job *j, int64_t now_us,
                      bool give)
{
    int64_t elapsed = now_us - j->run_start_us;
    int64_t useful = elapsed - j->overhead_us;

    if (elapsed < 0)
        elapsed = 0;
    if (useful < 0)
        useful = 0;
    j->gpu_us += elapsed * (int64_t)j->where.gpus;
    j->work_done_us += (int64_t)((double)useful * j->speed + 0.5);
    if (j->duration_us > 0 && j->work_done_us > j->duration_us)
        j->work_done_us = j->duration_us;
    j->attained_gpu_us += useful * (int64_t)j->where.gpus;
    c->busy -= j->where.gpus;
    tenant_held(c, j->tenant, j->where.type, -(int64_t)j->where.gpus, -1);
    if (give)
        gp_cluster_give(c->cluster, &j->where, &j->demand);
    gp_placement_fini(&j->where);
}

static int enter_preempting(struct gp_core *c, struct gp_job *j,
                            uint32_t beneficiary)
{
    int rc;

    if ((rc = grow((void **)&c->preempting, &c->cappreempting, sizeof(uint32_t),
                   c->npreempting + 1)))
        return rc;
    j->heap_pos = c->npreempting;
    c->preempting[c->npreempting++] = j->id;
    j->state = GP_JOB_PREEMPTING;
    j->signal_us = c->now_us;
    j->reclaim_for = beneficiary;
    c->preempting_gpus += j->where.gpus;
    c->tenants[j->tenant].info.outgoing += j->where.gpus;
    c->tenants[j->tenant].types[j->where.type].outgoing += j->where.gpus;
    if (beneficiary != GP_TENANT_NONE) {
        c->tenants[beneficiary].info.incoming += j->where.gpus;
        c->tenants[beneficiary].types[j->where.type].incoming += j->where.gpus;
    }
    c->ledger_stale = true;
    return GP_OK;
}

static void leave_preempting(struct gp_core *c, struct gp_job *j)
{
    uint32_t last = c->preempting[--c->npreempting];

    if (last != j->id) {
        c->preempting[j->heap_pos] = last;
        J(c, last)->heap_pos = j->heap_pos;
    }
    c->preempting_gpus -= j->where.gpus;
    c->tenants[j->tenant].info.outgoing -= j->where.gpus;
    c->tenants[j->tenant].types[j->where.type].outgoing -= j->where.gpus;
    if (j->reclaim_for != GP_TENANT_NONE) {
        struct tenant *b = &c->tenants[j->reclaim_for];
        b->info.incoming -= j->where.gpus;
        b->info.owed += j->where.gpus;
        b->types[j->where.type].incoming -= j->where.gpus;
        b->types[j->where.type].owed += j->where.gpus;
    }
    j->reclaim_for = GP_TENANT_NONE;
    c->running_epoch++;
    c->ledger_stale = true;
}

/* A running or signalled job leaves its GPUs and waits again, keeping
 * `saved` of its work. `give`: the GPUs are still taken in the cluster. */
static int requeue(struct gp_core *c, struct gp_job *j, int64_t saved,
                   bool give, int64_t now_us)
{
    int rc;

    close_run(c, j, now_us, give);
    if (saved < 0)
        saved = 0;
    if (saved < j->work_done_us) {
        j->lost_work_us += j->work_done_us - saved;
        j->work_done_us = saved;
    }
    j->preemptions++;
    j->state = GP_JOB_PENDING;
    if ((rc = pending_push(c, j)) != GP_OK)
        return rc;
    c->dirty = true;
    if (c->cfg.observer && c->cfg.observer->preempted)
        c->cfg.observer->preempted(c->cfg.observer_priv, c, j, now_us);
    return GP_OK;
}

int gp_core_job_stopped(struct gp_core *c, uint32_t id, int64_t saved_work_us,
                        int64_t now_us)
{
    struct gp_job *j;

    if (id >= c->njobs)
        return GP_ENOENT;
    j = J(c, id);
    if (j->state != GP_JOB_PREEMPTING)
        return GP_ESTATE;
    c->now_us = now_us;
    leave_preempting(c, j);
    return requeue(c, j, saved_work_us, true, now_us);
}

int gp_core_job_ended(struct gp_core *c, uint32_t id, enum gp_job_state how,
                      int64_t now_us)
{
    struct gp_job *j;

    if (id >= c->njobs)
        return GP_ENOENT;
    j = J(c, id);
    if (!gp_job_is_running(j))
        return GP_ESTATE;
    if (how != GP_JOB_COMPLETED && how != GP_JOB_FAILED &&
        how != GP_JOB_CANCELLED)
        return GP_EINVAL;
    c->now_us = now_us;
    if (j->state == GP_JOB_RUNNING)
        running_remove(c, j);
    else
        leave_preempting(c, j);
    close_run(c, j, now_us, true);
    if (how == GP_JOB_COMPLETED && j->duration_us > 0)
        j->work_done_us = j->duration_us;
    if (how == GP_JOB_COMPLETED && j->work_done_us > 0)
        (void)gp_predictor_learn(c->predictor, j, j->work_done_us);
    j->state = how;
    j->end_us = now_us;
    c->dirty = true;
    if (c->cfg.observer && c->cfg.observer->ended)
        c->cfg.observer->ended(c->cfg.observer_priv, c, j, now_us);
    return GP_OK;
}

int gp_core_cancel(struct gp_core *c, uint32_t id, int64_t now_us)
{
    struct gp_job *j;
    int rc;

    if (id >= c->njobs)
        return GP_ENOENT;
    j = J(c, id);
    c->now_us = now_us;
    if (gp_job_is_running(j)) {
        if (c->cfg.backend && c->cfg.backend->preempt &&
            (rc = c->cfg.backend->preempt(c->cfg.backend_priv, j, now_us)))
            return rc;
        return gp_core_job_ended(c, id, GP_JOB_CANCELLED, now_us);
    }
    if (j->state != GP_JOB_PENDING)
        return GP_ESTATE;
    pending_remove(c, j);
    j->state = GP_JOB_CANCELLED;
    j->end_us = now_us;
    c->dirty = true;
    if (c->cfg.observer && c->cfg.observer->ended)
        c->cfg.observer->ended(c->cfg.observer_priv, c, j, now_us);
    return GP_OK;
}

static bool may_preempt(const struct gp_core *c, const struct gp_job *j);

/* ---- the stopping jobs' GPUs, given for a while ------------------------- */

/* gp_view_fit_if_freed asks whether a job would fit if the stopping jobs'
 * GPUs (and some victims') were free. Giving and taking back every stopping
 * job on each question made a round with many reclaims quadratic, so they
 * are given on the first question and stay given through the next ones.
 * Whatever needs the true state first calls take_stopping: gp_view_fit,
 * gp_view_cluster, every change to the cluster through the plan, and the
 * round itself once the policy returns. The free counts of the view
 * subtract what is given, so they need no taking.
 *
 * The indexes end up exactly as with a give and a take around every
 * question, the order of nodes in their buckets included (it decides which
 * of equal nodes a placement gets): the other nodes only move with the
 * victims, as before, and the final take, in reverse, moves every stopping
 * job's node and switch group to the front of its bucket in the order the
 * last of those takes did. So placements stay what they were. */
static void give_stopping(struct gp_core *c)
{
    if (c->stopping_given || c->npreempting == 0)
        return;
    for (uint32_t k = 0; k < c->npreempting; k++) {
        struct gp_job *p = J(c, c->preempting[k]);

        gp_cluster_give(c->cluster, &p->where, &p->demand);
        c->given_gpus += p->where.gpus;
        c->given_type_gpus[p->where.type] += p->where.gpus;
    }
    c->stopping_given = true;
}

static void take_stopping(struct gp_core *c)
{
    if (!c->stopping_given)
        return;
    for (uint32_t k = c->npreempting; k-- > 0;) {
        struct gp_job *p = J(c, c->preempting[k]);

        (void)gp_cluster_take(c->cluster, &p->where, &p->demand);
    }
    c->given_gpus = 0;
    memset(c->given_type_gpus, 0, sizeof(c->given_type_gpus));
    c->stopping_given = false;
}

/* ---- the view ----------------------------------------------------------- */

int64_t gp_view_now(const struct gp_view *v)
{
    return v->core->now_us;
}

const struct gp_cluster *gp_view_cluster(const struct gp_view *v)
{
    take_stopping(v->core);
    return v->core->cluster;
}

enum gp_place_model gp_view_model(const struct gp_view *v)
{
    return v->core->cfg.model;
}

size_t gp_view_npending(const struct gp_view *v)
{
    return v->core->npending;
}
size_t gp_view_nrunning(const struct gp_view *v)
{
    return v->core->nrunning;
}

uint64_t gp_view_free_gpus(const struct gp_view *v)
{
    return gp_cluster_free_gpus(v->core->cluster) - v->core->given_gpus;
}

uint64_t gp_view_type_free_gpus(const struct gp_view *v, uint8_t type)
{
    const struct gp_core *c = v->core;

    if (type >= gp_cluster_ntypes(c->cluster))
        return 0;
    return gp_cluster_type_free(c->cluster, type) - c->given_type_gpus[type];
}

struct gp_arena *gp_view_scratch(const struct gp_view *v)
{
    return &v->core->scratch;
}

int gp_view_fit(const struct gp_view *v, const struct gp_job *job,
                uint32_t gpus, struct gp_placement *where)
{
    struct gp_demand d = job->demand;

    if (gpus)
        d.gpus = gpus;
    take_stopping(v->core);
    return gp_cluster_fit(v->core->cluster, v->core->cfg.model, &d,
                          &v->core->scratch, where);
}

bool gp_view_graceful(const struct gp_view *v)
{
    return v->core->cfg.grace_us > 0;
}

int gp_view_fit_if_freed(const struct gp_view *v, const struct gp_job *job,
                         const struct gp_job *const *victims, size_t n,
                         struct gp_placement *where)
{
    struct gp_core *c = v->core;
    bool graceful = c->cfg.grace_us > 0;
    size_t given;
    int rc;

    /* what is on its way out stays given until the true state is needed */
    give_stopping(c);
    for (given = 0; given < n; given++) {
        const struct gp_job *x = victims[given];
        if (x->state != GP_JOB_RUNNING ||
            (!graceful && gp_plan_has(&c->plan, x)))
            continue; /* already free in the plan */
        gp_cluster_give(c->cluster, &x->where, &x->demand);
    }
    rc = gp_cluster_fit(c->cluster, c->cfg.model, &job->demand, &c->scratch,
                        where);
    /* and take the victims' again, in reverse */
    while (given-- > 0) {
        const struct gp_job *x = victims[given];
        if (x->state != GP_JOB_RUNNING ||
            (!graceful && gp_plan_has(&c->plan, x)))
            continue;
        (void)gp_cluster_take(c->cluster, &x->where, &x->demand);
    }
    return rc;
}

const struct gp_job *gp_view_running_at(const struct gp_view *v, size_t i)
{
    return i < v->core->nrunning ? J(v->core, v->core->running[i]) : NULL;
}

size_t gp_view_ntenants(const struct gp_view *v)
{
    return v->core->ntenants;
}

const struct gp_job *gp_view_tenant_running(const struct gp_view *v,
                                            uint32_t tenant)
{
    const struct gp_core *c = v->core;

    if (tenant >= c->ntenants || c->tenants[tenant].run_head == NONE)
        return NULL;
    return J(c, c->tenants[tenant].run_head);
}

const struct gp_job *gp_view_tenant_running_next(const struct gp_view *v,
                                                 const struct gp_job *job)
{
    return job->t_next == NONE ? NULL : J(v->core, job->t_next);
}

const struct gp_tenant_info *gp_view_tenant(const struct gp_view *v,
                                            uint32_t tenant)
{
    return gp_core_tenant_info(v->core, tenant);
}

bool gp_view_may_preempt(const struct gp_view *v, const struct gp_job *job)
{
    return may_preempt(v->core, job);
}

int64_t gp_view_preemptible_at(const struct gp_view *v,
                               const struct gp_job *job)
{
    const struct gp_core *c = v->core;
    enum gp_prio_class k = gp_job_class(job);
    int64_t at = job->run_start_us +
                 (c->cfg.min_run_us[k] > 0 ? c->cfg.min_run_us[k] : 1);

    if (job->state != GP_JOB_RUNNING ||
        (c->cfg.max_preemptions[k] &&
         job->preemptions >= c->cfg.max_preemptions[k]))
        return INT64_MAX;
    return at > c->now_us ? at : c->now_us;
}

bool gp_view_cap_reached(const struct gp_view *v, const struct gp_job *job)
{
    enum gp_prio_class k = gp_job_class(job);

    return v->core->cfg.max_preemptions[k] &&
           job->preemptions >= v->core->cfg.max_preemptions[k];
}

int64_t gp_view_loss_if_preempted(const struct gp_view *v,
                                  const struct gp_job *job)
{
    const struct gp_core *c = v->core;

    if (c->cfg.grace_us == 0)
        return 0;
    if (!job->checkpointable)
        return gp_job_work_at(job, c->now_us);
    /* a checkpoint that cannot finish within the grace is cut off: the
     * job keeps only what it had when this run began */
    if (c->cfg.ckpt_cost_us > c->cfg.grace_us)
        return gp_job_work_at(job, c->now_us) - job->work_done_us;
    return 0;
}

uint64_t gp_view_running_epoch(const struct gp_view *v)
{
    return v->core->running_epoch;
}

int gp_plan_wake_at(struct gp_plan *p, int64_t at_us)
{
    struct gp_core *c = p->core;

    if (at_us <= c->now_us)
        return GP_EINVAL;
    return timer_push(c, at_us, NONE, 0, TIMER_WAKE);
}

uint64_t gp_view_preempting_gpus(const struct gp_view *v)
{
    return v->core->preempting_gpus;
}

/* Pending iterator: a min-heap of frontier positions (shape, heap index),
 * each with a copy of its heap entry (the pending heaps do not change while
 * a round plans). */

static bool pit_before(const struct pit_entry *a, const struct pit_entry *b)
{
    return q_before(&a->q, &b->q);
}

static int pit_push(struct gp_core *c, uint32_t shape, uint32_t idx)
{
    uint32_t i;
    int rc;

    if (idx >= c->shapes[shape].n)
        return GP_OK;
    if ((rc = grow((void **)&c->pit, &c->cappit, sizeof(*c->pit), c->npit + 1)))
        return rc;
    i = c->npit++;
    c->pit[i] = (struct pit_entry){shape, idx, c->shapes[shape].heap[idx]};
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        struct pit_entry t;
        if (!pit_before(&c->pit[i], &c->pit[p]))
            break;
        t = c->pit[i];
        c->pit[i] = c->pit[p];
        c->pit[p] = t;
        i = p;
    }
    return GP_OK;
}

static struct pit_entry pit_pop(struct gp_core *c)
{
    struct pit_entry top = c->pit[0];
    uint32_t i = 0, n = --c->npit;

    c->pit[0] = c->pit[n];
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        struct pit_entry t;
        if (l < n && pit_before(&c->pit[l], &c->pit[m]))
            m = l;
        if (r < n && pit_before(&c->pit[r], &c->pit[m]))
            m = r;
        if (m == i)
            break;
        t = c->pit[i];
        c->pit[i] = c->pit[m];
        c->pit[m] = t;
        i = m;
    }
    return top;
}

int gp_pending_iter_init(struct gp_pending_iter *it, const struct gp_view *v)
{
    struct gp_core *c = v->core;
    int rc;

    it->view = v;
    it->state = c;
    it->cur = NULL;
    c->npit = 0;
    c->pit_cur_shape = NONE;
    if (c->nshapes)
        memset(c->pit_skip, 0, c->nshapes);
    if (c->ntenants)
        memset(c->pit_skip_tenant, 0, c->ntenants);
    for (uint32_t s = 0; s < c->nshapes; s++)
        if ((rc = pit_push(c, s, 0)) != GP_OK)
            return rc;
    return GP_OK;
}

int gp_pending_iter_init_tenant(struct gp_pending_iter *it,
                                const struct gp_view *v, uint32_t tenant)
{
    struct gp_core *c = v->core;
    struct tenant *t;
    int rc;

    if (!c->cfg.policy->queues_by_tenant || tenant >= c->ntenants)
        return GP_EINVAL;
    it->view = v;
    it->state = c;
    it->cur = NULL;
    c->npit = 0;
    c->pit_cur_shape = NONE;
    t = &c->tenants[tenant];
    c->pit_skip_tenant[tenant] = 0;
    for (uint32_t k = 0; k < t->nshapes; k++) {
        c->pit_skip[t->shapes[k]] = 0;
        if ((rc = pit_push(c, t->shapes[k], 0)) != GP_OK)
            return rc;
    }
    return GP_OK;
}

void gp_pending_iter_skip_tenant(struct gp_pending_iter *it)
{
    struct gp_core *c = it->state;

    if (c->pit_cur_shape != NONE && c->shapes[c->pit_cur_shape].tenant != NONE)
        c->pit_skip_tenant[c->shapes[c->pit_cur_shape].tenant] = 1;
}

const struct gp_job *gp_pending_iter_next(struct gp_pending_iter *it)
{
    struct gp_core *c = it->state;

    while (c->npit > 0) {
        struct pit_entry e = pit_pop(c);
        uint32_t t = c->shapes[e.shape].tenant;

        if (c->pit_skip[e.shape] || (t != NONE && c->pit_skip_tenant[t]))
            continue;
        /* a failed push only shortens the walk; the round stays valid */
        (void)pit_push(c, e.shape, 2 * e.idx + 1);
        (void)pit_push(c, e.shape, 2 * e.idx + 2);
        c->pit_cur_shape = e.shape;
        it->cur = J(c, e.q.id);
        return it->cur;
    }
    it->cur = NULL;
    return NULL;
}

void gp_pending_iter_skip_shape(struct gp_pending_iter *it)
{
    struct gp_core *c = it->state;

    if (c->pit_cur_shape != NONE)
        c->pit_skip[c->pit_cur_shape] = 1;
}

/* Running iterator: a max-heap of positions in the running heap. */

static void rit_push(struct gp_core *c, uint32_t idx)
{
    uint32_t i;

    if (idx >= c->nrunning ||
        grow((void **)&c->rit, &c->caprit, sizeof(*c->rit), c->nrit + 1))
        return;
    i = c->nrit++;
    c->rit[i] = idx;
    while (i > 0) {
        uint32_t p = (i - 1) / 2, t;
        if (!above(c, c->running[c->rit[i]], c->running[c->rit[p]], -1))
            break;
        t = c->rit[i];
        c->rit[i] = c->rit[p];
        c->rit[p] = t;
        i = p;
    }
}

int gp_running_iter_init(struct gp_running_iter *it, const struct gp_view *v)
{
    struct gp_core *c = v->core;

    it->view = v;
    it->state = c;
    c->nrit = 0;
    rit_push(c, 0);
    return GP_OK;
}

const struct gp_job *gp_running_iter_next(struct gp_running_iter *it)
{
    struct gp_core *c = it->state;
    uint32_t top, i = 0, n;

    if (c->nrit == 0)
        return NULL;
    top = c->rit[0];
    n = --c->nrit;
    c->rit[0] = c->rit[n];
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i, t;
        if (l < n && above(c, c->running[c->rit[l]], c->running[c->rit[m]], -1))
            m = l;
        if (r < n && above(c, c->running[c->rit[r]], c->running[c->rit[m]], -1))
            m = r;
        if (m == i)
            break;
        t = c->rit[i];
        c->rit[i] = c->rit[m];
        c->rit[m] = t;
        i = m;
    }
    rit_push(c, 2 * top + 1);
    rit_push(c, 2 * top + 2);
    return J(c, c->running[top]);
}

/* ---- the plan ----------------------------------------------------------- */

static int add_action(struct gp_core *c, uint8_t op, struct gp_job *j,
                      const struct gp_placement *where)
{
    struct action *a;
    uint32_t cap = (uint32_t)c->capactions;
    int rc;

    if ((rc = grow((void **)&c->actions, &cap, sizeof(*c->actions),
                   (uint32_t)c->nactions + 1)))
        return rc;
    c->capactions = cap;
    a = &c->actions[c->nactions++];
    a->op = op;
    a->job = j->id;
    a->beneficiary = GP_TENANT_NONE;
    a->where = *where;
    if (where->nslots == 1)
        a->where.slots = &a->where.inline_slot;
    j->plan_mark = c->round_id;
    j->plan_op = op;
    return GP_OK;
}

bool gp_plan_has(const struct gp_plan *p, const struct gp_job *job)
{
    return job->plan_mark == p->core->round_id && job->plan_op != 0;
}

int gp_plan_start(struct gp_plan *p, const struct gp_job *job,
                  const struct gp_placement *where)
{
    struct gp_core *c = p->core;
    struct gp_job *j;
    struct gp_demand d;
    struct gp_placement copy;
    int rc;

    if (!job || job->id >= c->njobs || J(c, job->id) != job)
        return GP_EPLAN;
    j = J(c, job->id);
    if (j->state != GP_JOB_PENDING || gp_plan_has(p, j))
        return GP_EPLAN;
    if (where->gpus < j->min_gpus || where->gpus > j->max_gpus ||
        (j->demand.type != GP_TYPE_ANY && where->type != j->demand.type))
        return GP_EPLAN;
    if ((c->cfg.model == GP_PLACE_COUNT) != (where->nslots == 0))
        return GP_EPLAN;
    /* the slots may live in the caller's memory: keep our own copy */
    copy = *where;
    if (where->nslots > 1) {
        copy.slots =
            gp_arena_alloc(&c->scratch, where->nslots * sizeof(*copy.slots));
        if (!copy.slots)
            return GP_ENOMEM;
        memcpy(copy.slots, where->slots, where->nslots * sizeof(*copy.slots));
    } else if (where->nslots == 1) {
        copy.inline_slot = where->slots[0];
        copy.slots = &copy.inline_slot;
    }
    d = j->demand;
    d.gpus = where->gpus;
    take_stopping(c);
    if ((rc = gp_cluster_take(c->cluster, &copy, &d)) != GP_OK)
        return rc;
    if ((rc = add_action(c, OP_START, j, &copy)) != GP_OK) {
        gp_cluster_give(c->cluster, &copy, &d);
        return rc;
    }
    return GP_OK;
}

static bool may_preempt(const struct gp_core *c, const struct gp_job *j)
{
    enum gp_prio_class k = gp_job_class(j);

    if (j->state != GP_JOB_RUNNING)
        return false;
    /* a job that has not run at all is never taken back in the instant it
     * started: every preemption is separated from its start by time */
    if (c->now_us <= j->run_start_us)
        return false;
    if (c->now_us - j->run_start_us < c->cfg.min_run_us[k])
        return false;
    return c->cfg.max_preemptions[k] == 0 ||
           j->preemptions < c->cfg.max_preemptions[k];
}

int gp_plan_preempt_for(struct gp_plan *p, const struct gp_job *job,
                        uint32_t tenant)
{
    struct gp_core *c = p->core;
    struct gp_job *j;
    int rc;

    if (!job || job->id >= c->njobs || J(c, job->id) != job)
        return GP_EPLAN;
    j = J(c, job->id);
    if (!may_preempt(c, j) || gp_plan_has(p, j))
        return GP_EPLAN;
    if (tenant != GP_TENANT_NONE && tenant >= c->ntenants)
        return GP_EPLAN;
    if ((rc = add_action(c, OP_PREEMPT, j, &j->where)) != GP_OK)
        return rc;
    c->actions[c->nactions - 1].beneficiary = tenant;
    /* graceful: the GPUs stay held until the job stops */
    if (c->cfg.grace_us == 0) {
        take_stopping(c);
        gp_cluster_give(c->cluster, &j->where, &j->demand);
    }
    return GP_OK;
}

int gp_plan_preempt(struct gp_plan *p, const struct gp_job *job)
{
    return gp_plan_preempt_for(p, job, GP_TENANT_NONE);
}

size_t gp_plan_mark(const struct gp_plan *p)
{
    return p->core->nactions;
}
size_t gp_plan_nactions(const struct gp_plan *p)
{
    return p->core->nactions;
}

void gp_plan_rollback(struct gp_plan *p, size_t mark)
{
    struct gp_core *c = p->core;

    while (c->nactions > mark) {
        struct action *a = &c->actions[--c->nactions];
        struct gp_job *j = J(c, a->job);
        struct gp_demand d = j->demand;

        d.gpus = a->where.gpus;
        if (a->where.nslots == 1)
            a->where.slots = &a->where.inline_slot;
        if (a->op == OP_START) {
            take_stopping(c);
            gp_cluster_give(c->cluster, &a->where, &d);
        } else if (c->cfg.grace_us == 0) {
            /* cannot fail: every later action was undone first */
            int rc;

            take_stopping(c);
            rc = gp_cluster_take(c->cluster, &a->where, &d);
            (void)rc;
        }
        j->plan_op = 0;
        j->plan_mark = 0;
    }
}

/* ---- applying a plan ---------------------------------------------------- */

static int apply_preempt(struct gp_core *c, struct gp_job *j,
                         uint32_t beneficiary, int64_t now)
{
    int rc;

    running_remove(c, j);
    if (c->cfg.grace_us > 0) {
        /* signal; the job keeps its GPUs until it stops or the grace ends */
        if ((rc = enter_preempting(c, j, beneficiary)) != GP_OK ||
            (rc = timer_push(c, now + c->cfg.grace_us, j->id, j->starts,
                             TIMER_KILL)) != GP_OK)
            return rc;
        if (c->cfg.backend && c->cfg.backend->preempt &&
            (rc = c->cfg.backend->preempt(c->cfg.backend_priv, j, now)))
            return rc;
        return GP_OK;
    }
    /* at once, and nothing is lost: the job checkpoints as it stops */
    if (c->cfg.backend && c->cfg.backend->preempt &&
        (rc = c->cfg.backend->preempt(c->cfg.backend_priv, j, now)))
        return rc;
    return requeue(c, j, INT64_MAX, false, now);
}

static int apply_start(struct gp_core *c, struct gp_job *j,
                       const struct gp_placement *where, int64_t now)
{
    int rc;

    pending_remove(c, j);
    if ((rc = gp_placement_copy(&j->where, where)) != GP_OK)
        return rc;
    j->state = GP_JOB_RUNNING;
    j->run_start_us = now;
    j->overhead_us = j->starts > 0 ? c->cfg.restart_cost_us : 0;
    j->speed = gp_cluster_type_speed(c->cluster, where->type);
    if (j->first_start_us == GP_TIME_NONE)
        j->first_start_us = now;
    j->starts++;
    c->busy += where->gpus;
    tenant_held(c, j->tenant, where->type, (int64_t)where->gpus, 1);
    {
        struct gp_tenant_info *ti = &c->tenants[j->tenant].info;
        struct gp_tenant_type *tt = &c->tenants[j->tenant].types[where->type];
        ti->owed = ti->owed > where->gpus ? ti->owed - where->gpus : 0;
        tt->owed = tt->owed > where->gpus ? tt->owed - where->gpus : 0;
    }
    if ((rc = running_push(c, j)) != GP_OK || (rc = arm_rank_timer(c, j)))
        return rc;
    if (c->cfg.backend && c->cfg.backend->start &&
        (rc = c->cfg.backend->start(c->cfg.backend_priv, j, now)))
        return rc;
    if (c->cfg.observer && c->cfg.observer->started)
        c->cfg.observer->started(c->cfg.observer_priv, c, j, now);
    return GP_OK;
}

/* A last look at the whole plan before anything takes effect. */
static int validate(struct gp_core *c, struct gp_diag *diag)
{
    /* the action array may have moved since the inline slots were pointed */
    for (size_t i = 0; i < c->nactions; i++)
        if (c->actions[i].where.nslots == 1)
            c->actions[i].where.slots = &c->actions[i].where.inline_slot;
    for (size_t i = 0; i < c->nactions; i++) {
        const struct action *a = &c->actions[i];
        const struct gp_job *j = J(c, a->job);
        uint32_t sum = 0;

        if (j->plan_mark != c->round_id)
            return gp_diag_set(diag, GP_EPLAN, "plan",
                               "action %zu names a job twice", i);
        if (a->op == OP_START) {
            if (j->state != GP_JOB_PENDING)
                return gp_diag_set(diag, GP_EPLAN, "plan",
                                   "starts job %u which is not pending", j->id);
            for (uint32_t s = 0; s < a->where.nslots; s++)
                sum += a->where.slots[s].gpus;
            if (a->where.nslots && sum != a->where.gpus)
                return gp_diag_set(diag, GP_EPLAN, "plan",
                                   "breaks the gang of job %u", j->id);
        } else if (j->state != GP_JOB_RUNNING) {
            return gp_diag_set(diag, GP_EPLAN, "plan",
                               "preempts job %u which is not running", j->id);
        }
    }
    return GP_OK;
}

static void fire_timers(struct gp_core *c, int64_t now_us)
{
    while (c->ntimers > 0 && c->timers[0].at_us <= now_us) {
        struct timer t = timer_pop(c);
        struct gp_job *j;

        if (t.kind == TIMER_WAKE) {
            c->dirty = true; /* a policy asked to decide again now */
            continue;
        }
        j = J(c, t.job);
        if (t.kind == TIMER_KILL) {
            if (j->state == GP_JOB_PREEMPTING && j->starts == t.gen) {
                /* the grace is over: stop it; a checkpoint-capable job
                 * keeps what it had when this run began */
                leave_preempting(c, j);
                (void)requeue(c, j, j->checkpointable ? j->work_done_us : 0,
                              true, now_us);
            }
            continue;
        }
        if (j->state != GP_JOB_RUNNING || j->starts != t.gen)
            continue; /* stale: the job left or restarted since */
        set_rank(c, j);
        heap_down(c, c->running, c->nrunning, j->heap_pos, -1);
        heap_up(c, c->running, j->heap_pos, -1);
        (void)arm_rank_timer(c, j);
        c->dirty = true;
    }
}

int64_t gp_core_next_wakeup(const struct gp_core *c)
{
    int64_t t = GP_TIME_NONE;

    if (c->ntimers > 0)
        t = c->timers[0].at_us;
    if (c->cfg.round_period_us > 0 && (c->npending > 0 || c->nrunning > 0) &&
        c->next_periodic_us != GP_TIME_NONE &&
        (t == GP_TIME_NONE || c->next_periodic_us < t))
        t = c->next_periodic_us;
    return t;
}

int gp_core_round(struct gp_core *c, int64_t now_us)
{
    struct gp_diag diag = {{0}, {0}};
    size_t n;
    int rc;

    c->now_us = now_us;
    fire_timers(c, now_us);
    if (c->cfg.round_period_us > 0) {
        if (c->next_periodic_us == GP_TIME_NONE ||
            now_us >= c->next_periodic_us) {
            if (c->next_periodic_us != GP_TIME_NONE)
                c->dirty = true;
            c->next_periodic_us =
                (now_us / c->cfg.round_period_us + 1) * c->cfg.round_period_us;
        }
    }
    if (!c->dirty)
        return 0;
    c->dirty = false;
    if (c->npending == 0)
        return 0; /* nothing could start, so nothing is worth preempting */
    c->nrounds++;
    if (++c->round_id == 0)
        c->round_id = 1;
    gp_arena_reset(&c->scratch);
    c->nactions = 0;
    rc = c->cfg.policy->schedule(c->ppriv, &c->view, &c->plan);
    take_stopping(c); /* the books must show the true state from here on */
    if (rc == GP_OK)
        rc = validate(c, &diag);
    if (rc != GP_OK) {
        gp_plan_rollback(&c->plan, 0);
        gp_logf(c->env, GP_LOG_ERROR, "policy %s: plan rejected: %s%s%s",
                c->cfg.policy->name, gp_err_str(rc), diag.msg[0] ? ": " : "",
                diag.msg);
        return rc;
    }
    /* preemptions first, so the books show the GPUs free before reuse */
    for (size_t i = 0; i < c->nactions; i++) {
        struct action *a = &c->actions[i];
        if (a->op == OP_PREEMPT &&
            (rc = apply_preempt(c, J(c, a->job), a->beneficiary, now_us)) !=
                GP_OK)
            return rc;
    }
    for (size_t i = 0; i < c->nactions; i++) {
        struct action *a = &c->actions[i];
        if (a->op == OP_START &&
            (rc = apply_start(c, J(c, a->job), &a->where, now_us)) != GP_OK)
            return rc;
        J(c, a->job)->plan_op = 0;
    }
    for (size_t i = 0; i < c->nactions; i++)
        J(c, c->actions[i].job)->plan_op = 0;
    n = c->nactions;
    c->nactions = 0;
    /* what was reclaimed is kept for one round after the last victim
     * stopped; then it is anyone's */
    for (uint32_t t = 0; t < c->ntenants; t++) {
        struct tenant *tn = &c->tenants[t];

        if (tn->info.incoming == 0) {
            tn->info.owed = 0;
            for (uint32_t k = 0; k < gp_cluster_ntypes(c->cluster); k++)
                tn->types[k].owed = 0;
        }
    }
    if (n > 0 && c->cfg.observer && c->cfg.observer->round)
        c->cfg.observer->round(c->cfg.observer_priv, c, now_us);
    return (int)(n > INT32_MAX ? INT32_MAX : n);
}

/* ---- queries ------------------------------------------------------------ */

const struct gp_cluster *gp_core_cluster(const struct gp_core *c)
{
    return c->cluster;
}

const struct gp_job *gp_core_job(const struct gp_core *c, uint32_t id)
{
    return id < c->njobs ? J(c, id) : NULL;
}

size_t gp_core_njobs(const struct gp_core *c)
{
    return c->njobs;
}
size_t gp_core_npending(const struct gp_core *c)
{
    return c->npending;
}
size_t gp_core_nrunning(const struct gp_core *c)
{
    return c->nrunning;
}
uint64_t gp_core_busy_gpus(const struct gp_core *c)
{
    return c->busy;
}

size_t gp_core_ntenants(const struct gp_core *c)
{
    return c->ntenants;
}

const char *gp_core_tenant_name(const struct gp_core *c, uint32_t tenant)
{
    return tenant < c->ntenants ? c->tenants[tenant].info.name : "";
}

uint64_t gp_core_tenant_busy_gpus(const struct gp_core *c, uint32_t tenant)
{
    return tenant < c->ntenants ? c->tenants[tenant].info.held : 0;
}

const char *gp_core_str(const struct gp_core *c, uint32_t strid)
{
    return gp_strtab_get(&c->strs, strid);
}

const struct gp_policy_ops *gp_core_policy(const struct gp_core *c)
{
    return c->cfg.policy;
}

enum gp_place_model gp_core_model(const struct gp_core *c)
{
    return c->cfg.model;
}

int64_t gp_core_restart_cost_us(const struct gp_core *c)
{
    return c->cfg.restart_cost_us;
}

int64_t gp_core_grace_us(const struct gp_core *c)
{
    return c->cfg.grace_us;
}

int64_t gp_core_predicted_remaining(const struct gp_core *c,
                                    const struct gp_job *j, int64_t now_us)
{
    int64_t done = gp_job_work_at(j, now_us);
    int64_t left = j->predicted_us - done;

    (void)c;
    /* past its prediction, run times are heavy-tailed: a job that ran t
     * is expected to run about t more (so estimates grow with it) */
    if (left < done / 2)
        left = done / 2 > left ? done / 2 : left;
    return left > GP_US_PER_S ? left : GP_US_PER_S;
}

int64_t gp_view_predicted_remaining(const struct gp_view *v,
                                    const struct gp_job *job)
{
    return gp_core_predicted_remaining(v->core, job, v->core->now_us);
}

uint64_t gp_core_nrounds(const struct gp_core *c)
{
    return c->nrounds;
}
