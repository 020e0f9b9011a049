/* queue.c - the core's queues: pending jobs by shape, running jobs by rank,
 * and the iterators that walk them in order.
 *
 * Key decisions:
 *  - Pending jobs sit in one min-heap per shape (GPUs, type, CPUs and
 *    memory per GPU; and tenant, when the policy queues by tenant) ordered
 *    by the policy's rank, copied into the heap entries so the queues are
 *    sifted and walked without reading the scattered job records. When a
 *    shape does not fit, no job of that shape does, so a round skips whole
 *    shapes.
 *  - Running jobs sit in one max-heap, so the best victim is on top.
 *  - Iterators walk these heaps in order without popping them, through a
 *    small auxiliary heap of frontier positions.
 */
#include "core/core_priv.h"

/* ---- rank order --------------------------------------------------------- */

static inline int rank_cmp(const struct gp_job *a, const struct gp_job *b)
{
    if (a->rank[0] != b->rank[0])
        return a->rank[0] < b->rank[0] ? -1 : 1;
    if (a->rank[1] != b->rank[1])
        return a->rank[1] < b->rank[1] ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The running heap: the highest rank on top. Ranks of running jobs may
 * change as they run, so it compares the jobs themselves. */
static inline bool run_before(const uint32_t *a, const uint32_t *b, void *ctx)
{
    const struct gp_core *c = ctx;

    return rank_cmp(J(c, *a), J(c, *b)) > 0;
}

static inline void job_moved(uint32_t *e, uint32_t pos, void *ctx)
{
    J(ctx, *e)->heap_pos = pos;
}

GP_HEAP_DEFINE(runq, uint32_t, run_before, job_moved)

/* The pending heaps: a min-heap in rank_cmp's order on the ranks copied
 * into the entries, so sifting reads no job record but to note positions. */
static inline bool q_before(const struct qentry *a, const struct qentry *b,
                            void *ctx)
{
    (void)ctx;
    if (a->rank[0] != b->rank[0])
        return a->rank[0] < b->rank[0];
    if (a->rank[1] != b->rank[1])
        return a->rank[1] < b->rank[1];
    return a->seq < b->seq;
}

static inline void q_moved(struct qentry *e, uint32_t pos, void *ctx)
{
    J(ctx, e->id)->heap_pos = pos;
}

GP_HEAP_DEFINE(pendq, struct qentry, q_before, q_moved)

/* ---- shapes ------------------------------------------------------------- */

static uint32_t shape_hashval(const struct gp_demand *d, uint32_t tenant)
{
    uint64_t h =
        (d->gpus + ((uint64_t)tenant << 32)) * UINT64_C(0x9e3779b97f4a7c15);

    h ^= (h >> 29) + d->type * UINT64_C(0xbf58476d1ce4e5b9);
    h ^= (h >> 31) + d->cpus_per_gpu * UINT64_C(0x94d049bb133111eb);
    h ^= (h >> 27) + d->mem_mib_per_gpu * UINT64_C(0x9e3779b97f4a7c15);
    if (d->not_types) /* rare: leave every other shape's hash as it was */
        h ^= (h >> 29) + d->not_types * UINT64_C(0xbf58476d1ce4e5b9);
    return (uint32_t)(h ^ (h >> 32));
}

static bool demand_eq(const struct gp_demand *a, const struct gp_demand *b)
{
    return a->gpus == b->gpus && a->type == b->type &&
           a->cpus_per_gpu == b->cpus_per_gpu &&
           a->mem_mib_per_gpu == b->mem_mib_per_gpu &&
           a->not_types == b->not_types;
}

static int rehash_shapes(struct gp_core *c)
{
    uint32_t n = c->shape_hash_n ? c->shape_hash_n * 2 : 64;
    uint32_t *h = gp_env_alloc(c->env, n * sizeof(*h));

    if (!h)
        return GP_ENOMEM;
    for (uint32_t i = 0; i < n; i++)
        h[i] = NONE;
    for (uint32_t s = 0; s < c->nshapes; s++) {
        uint32_t b;

        if (!c->shapes[s].live)
            continue;
        b = shape_hashval(&c->shapes[s].d, c->shapes[s].tenant) & (n - 1);
        c->shapes[s].hnext = h[b];
        h[b] = s;
    }
    gp_env_free(c->env, c->shape_hash);
    c->shape_hash = h;
    c->shape_hash_n = n;
    return GP_OK;
}

/* The shape of a demand (and tenant, when queues are by tenant), made
 * live on first use: a retired shape's slot and heap are taken first. */
static int shape_of(struct gp_core *c, const struct gp_demand *d,
                    uint32_t tenant, uint32_t *out)
{
    struct shape *sh;
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
    /* room everywhere first, so that a failure changes nothing */
    if ((c->nshapes + 1) * 2 > c->shape_hash_n &&
        (rc = rehash_shapes(c)) != GP_OK)
        return rc;
    if ((rc = gp__grow(c->env, (void **)&c->shapes, &c->capshapes,
                       sizeof(*c->shapes), c->nshapes + 1)) ||
        (rc = gp__grow(c->env, (void **)&c->active, &c->capactive,
                       sizeof(uint32_t), c->nactive + 1)) ||
        (rc = gp__grow(c->env, (void **)&c->free_shapes, &c->capfree_shapes,
                       sizeof(uint32_t), c->nshapes + 1)))
        return rc;
    if (tenant != NONE) {
        struct tenant *t = &c->tenants[tenant];
        if ((rc = gp__grow(c->env, (void **)&t->shapes, &t->capshapes,
                           sizeof(uint32_t), t->nshapes + 1)))
            return rc;
    }
    if (c->nfree_shapes > 0) {
        struct qentry *heap;
        uint32_t cap;

        s = c->free_shapes[--c->nfree_shapes];
        heap = c->shapes[s].heap;
        cap = c->shapes[s].cap;
        memset(&c->shapes[s], 0, sizeof(c->shapes[s]));
        c->shapes[s].heap = heap; /* kept for the next shape */
        c->shapes[s].cap = cap;
    } else {
        s = c->nshapes++;
        memset(&c->shapes[s], 0, sizeof(c->shapes[s]));
    }
    sh = &c->shapes[s];
    sh->d = *d;
    sh->tenant = tenant;
    sh->live = true;
    if (gp__cluster_degraded(c)) {
        /* some nodes are not UP: the shape may not fit those that are */
        struct gp_diag why = {{0}, {0}};

        if (gp_cluster_can_ever_fit(c->cluster, c->cfg.model, d, &why) !=
                GP_OK &&
            gp_strtab_intern(&c->strs, why.msg, (size_t)-1, &sh->stuck))
            sh->stuck = 0; /* no memory for the reason: it is walked */
    }
    b = shape_hashval(d, tenant) & (c->shape_hash_n - 1);
    sh->hnext = c->shape_hash[b];
    c->shape_hash[b] = s;
    sh->apos = c->nactive;
    c->active[c->nactive++] = s;
    if (tenant != NONE) {
        struct tenant *t = &c->tenants[tenant];
        sh->tpos = t->nshapes;
        t->shapes[t->nshapes++] = s;
    }
    *out = s;
    return GP_OK;
}

/* An empty shape leaves the hash, the walks and its tenant's list, so a
 * walk over pending jobs visits the shapes that have some, not every
 * shape ever seen. */
static void shape_retire(struct gp_core *c, uint32_t s)
{
    struct shape *sh = &c->shapes[s];
    uint32_t b = shape_hashval(&sh->d, sh->tenant) & (c->shape_hash_n - 1);
    uint32_t *link = &c->shape_hash[b], last;

    while (*link != s)
        link = &c->shapes[*link].hnext;
    *link = sh->hnext;
    last = c->active[--c->nactive];
    c->active[sh->apos] = last;
    c->shapes[last].apos = sh->apos;
    if (sh->tenant != NONE) {
        struct tenant *t = &c->tenants[sh->tenant];

        last = t->shapes[--t->nshapes];
        t->shapes[sh->tpos] = last;
        c->shapes[last].tpos = sh->tpos;
    }
    sh->live = false;
    c->free_shapes[c->nfree_shapes++] = s;
}

/* ---- queue moves -------------------------------------------------------- */

/* When a job joined the queue (gp_job.queued_us: its submission, or the
 * end of the run it lost) in whole seconds, rounded down (also before 0),
 * as its shape's sum counts it. It does not change while the job waits. */
static int64_t queued_s(const struct gp_job *j)
{
    int64_t s = j->queued_us / GP_US_PER_S;

    return s * GP_US_PER_S > j->queued_us ? s - 1 : s;
}

void gp__set_rank(struct gp_core *c, struct gp_job *j)
{
    c->cfg.policy->rank(c->ppriv, j, c->now_us, j->rank);
}

int gp__pending_reserve(struct gp_core *c, const struct gp_job *j)
{
    return gp__pending_reserve_n(c, j, 1);
}

int gp__pending_reserve_n(struct gp_core *c, const struct gp_job *j, uint32_t n)
{
    uint32_t s;
    int rc;

    if ((rc = shape_of(c, &j->demand, j->tenant, &s)) != GP_OK)
        return rc;
    /* an empty live shape waits harmlessly for its job; the walks push
     * nothing of it */
    return gp__grow(c->env, (void **)&c->shapes[s].heap, &c->shapes[s].cap,
                    sizeof(struct qentry), c->shapes[s].n + n);
}

/* A gang that never started joins its tenant's list in submission order
 * (from the tail: jobs come in that order, but a trace or a restore may
 * bring an older one later). */
static bool gang_before(const struct gp_job *a, const struct gp_job *b)
{
    return a->submit_us < b->submit_us ||
           (a->submit_us == b->submit_us && a->seq < b->seq);
}

static void gang_link(struct gp_core *c, struct gp_job *j)
{
    struct tenant *t = &c->tenants[j->tenant];
    uint32_t after = t->gang_tail;

    while (after != NONE && gang_before(j, J(c, after)))
        after = J(c, after)->gang_prev;
    j->gang_prev = after;
    j->gang_next = after == NONE ? t->gang_head : J(c, after)->gang_next;
    if (after == NONE)
        t->gang_head = j->id;
    else
        J(c, after)->gang_next = j->id;
    if (j->gang_next == NONE)
        t->gang_tail = j->id;
    else
        J(c, j->gang_next)->gang_prev = j->id;
    j->gang_listed = true;
}

static void gang_unlink(struct gp_core *c, struct gp_job *j)
{
    struct tenant *t = &c->tenants[j->tenant];

    if (j->gang_prev != NONE)
        J(c, j->gang_prev)->gang_next = j->gang_next;
    else
        t->gang_head = j->gang_next;
    if (j->gang_next != NONE)
        J(c, j->gang_next)->gang_prev = j->gang_prev;
    else
        t->gang_tail = j->gang_prev;
    j->gang_listed = false;
}

int gp__pending_push(struct gp_core *c, struct gp_job *j)
{
    struct shape *s;
    int rc;

    if ((rc = shape_of(c, &j->demand, j->tenant, &j->qclass)) != GP_OK)
        return rc;
    s = &c->shapes[j->qclass];
    gp__set_rank(c, j);
    if ((rc = pendq_push(
             c->env, &s->heap, &s->n, &s->cap,
             (struct qentry){{j->rank[0], j->rank[1]}, j->seq, j->id}, c)))
        return rc;
    s->queued_s += queued_s(j);
    if (j->starts == 0 && j->demand.gpus >= 2)
        gang_link(c, j);
    c->npending++;
    c->tenants[j->tenant].info.npending++;
    c->tenants[j->tenant].info.pending_milli += gp_demand_milli(&j->demand);
    c->tenants[j->tenant].info.pending_cpus +=
        gp_demand_cpus(&j->demand, j->demand.gpus);
    c->tenants[j->tenant].info.pending_mem_mib +=
        gp_demand_mem_mib(&j->demand, j->demand.gpus);
    c->lc->stale = true;
    return GP_OK;
}

void gp__pending_remove(struct gp_core *c, struct gp_job *j)
{
    struct shape *s = &c->shapes[j->qclass];

    pendq_remove(s->heap, &s->n, j->heap_pos, c);
    s->queued_s -= queued_s(j);
    if (j->gang_listed)
        gang_unlink(c, j);
    if (s->n == 0)
        shape_retire(c, j->qclass);
    c->npending--;
    c->tenants[j->tenant].info.npending--;
    c->tenants[j->tenant].info.pending_milli -= gp_demand_milli(&j->demand);
    c->tenants[j->tenant].info.pending_cpus -=
        gp_demand_cpus(&j->demand, j->demand.gpus);
    c->tenants[j->tenant].info.pending_mem_mib -=
        gp_demand_mem_mib(&j->demand, j->demand.gpus);
    c->lc->stale = true;
}

int gp__running_push(struct gp_core *c, struct gp_job *j)
{
    struct tenant *t = &c->tenants[j->tenant];
    int rc;

    gp__set_rank(c, j);
    if ((rc = runq_push(c->env, &c->running, &c->nrunning, &c->caprunning,
                        j->id, c)))
        return rc;
    uint32_t *head = &t->run_head[gp_job_class(j)];

    j->t_prev = NONE;
    j->t_next = *head;
    if (*head != NONE)
        J(c, *head)->t_prev = j->id;
    *head = j->id;
    c->running_epoch++;
    return GP_OK;
}

void gp__running_remove(struct gp_core *c, struct gp_job *j)
{
    struct tenant *t = &c->tenants[j->tenant];

    if (j->t_prev != NONE)
        J(c, j->t_prev)->t_next = j->t_next;
    else
        t->run_head[gp_job_class(j)] = j->t_next;
    if (j->t_next != NONE)
        J(c, j->t_next)->t_prev = j->t_prev;
    runq_remove(c->running, &c->nrunning, j->heap_pos, c);
    c->running_epoch++;
}

void gp__running_rerank(struct gp_core *c, struct gp_job *j)
{
    gp__set_rank(c, j);
    runq_fix(c->running, c->nrunning, j->heap_pos, c);
}

/* Rank every pending and running job again (the policy's options
 * changed) and rebuild each heap in place: an element at a time, the heap
 * growing by one leaf that sifts up, so positions stay noted. Allocates
 * nothing. */
void gp__rerank_all(struct gp_core *c)
{
    for (uint32_t a = 0; a < c->nactive; a++) {
        struct shape *s = &c->shapes[c->active[a]];

        for (uint32_t i = 0; i < s->n; i++) {
            struct gp_job *j = J(c, s->heap[i].id);

            gp__set_rank(c, j);
            s->heap[i].rank[0] = j->rank[0];
            s->heap[i].rank[1] = j->rank[1];
        }
        for (uint32_t i = 0; i < s->n; i++) {
            J(c, s->heap[i].id)->heap_pos = i;
            pendq_fix(s->heap, i + 1, i, c);
        }
    }
    for (uint32_t i = 0; i < c->nrunning; i++)
        gp__set_rank(c, J(c, c->running[i]));
    for (uint32_t i = 0; i < c->nrunning; i++) {
        J(c, c->running[i])->heap_pos = i;
        runq_fix(c->running, i + 1, i, c);
    }
    c->lc->stale = true;
}

void gp__queues_free(struct gp_core *c)
{
    for (uint32_t s = 0; s < c->nshapes; s++)
        gp_env_free(c->env, c->shapes[s].heap);
    gp_env_free(c->env, c->shapes);
    gp_env_free(c->env, c->shape_hash);
    gp_env_free(c->env, c->active);
    gp_env_free(c->env, c->free_shapes);
    gp_env_free(c->env, c->running);
}

/* Pending iterator: a min-heap of frontier positions (shape, heap index),
 * each with a copy of its heap entry (the pending heaps do not change while
 * a round plans). Every iterator has its own frontier and skip flags, in
 * the round's scratch arena, so a policy may walk one tenant's queue while
 * it walks another (or the same one): no walk disturbs another. */

struct pit_state {
    struct gp_core *c;
    struct gp_arena *a;
    struct pit_entry *h;
    uint32_t n, cap;
    uint8_t *skip;        /* per root shape (its slot), the walk's own */
    uint8_t *skip_tenant; /* per tenant, a walk of all tenants; else NULL */
    bool done;            /* a one-tenant walk whose tenant was skipped */
    uint32_t cur_slot;    /* the job last returned: its root's slot */
    uint32_t cur_shape;   /* and its shape (NONE before the first) */
};

static inline bool pit_before(const struct pit_entry *a,
                              const struct pit_entry *b, void *ctx)
{
    return q_before(&a->q, &b->q, ctx);
}

GP_HEAP_DEFINE(pit, struct pit_entry, pit_before, GP_HEAP_UNMOVED)

/* Double a walk's frontier in the round's arena. The arena frees nothing
 * before the round ends: doubling keeps what is left behind below what is
 * in use. */
static int arena_grow(struct gp_arena *a, void **p, uint32_t *cap, size_t elem)
{
    uint32_t n = *cap ? 2 * *cap : 16;
    void *q;

    if (n < *cap || !(q = gp_arena_alloc(a, (size_t)n * elem)))
        return GP_ENOMEM;
    if (*cap)
        memcpy(q, *p, (size_t)*cap * elem);
    *p = q;
    *cap = n;
    return GP_OK;
}

static int pit_push_at(struct pit_state *st, uint32_t slot, uint32_t shape,
                       uint32_t idx)
{
    struct gp_core *c = st->c;
    int rc;

    if (idx >= c->shapes[shape].n || c->shapes[shape].stuck)
        return GP_OK;
    if (st->n == st->cap && (rc = arena_grow(st->a, (void **)&st->h, &st->cap,
                                             sizeof(*st->h))) != GP_OK)
        return rc;
    st->h[st->n] =
        (struct pit_entry){shape, idx, slot, c->shapes[shape].heap[idx]};
    pit_up(st->h, st->n++, c);
    return GP_OK;
}

/* A walk's state with `nroots` root shapes (and, for a walk of every
 * tenant, a skip flag per tenant). */
static int pit_state_new(struct gp_pending_iter *it, const struct gp_view *v,
                         uint32_t nroots, bool by_tenant,
                         struct pit_state **out)
{
    struct gp_core *c = v->core;
    struct gp_arena *a = gp_view_scratch(v);
    struct pit_state *st = gp_arena_alloc(a, sizeof(*st));

    if (!st)
        return GP_ENOMEM;
    *st =
        (struct pit_state){.c = c, .a = a, .cur_slot = NONE, .cur_shape = NONE};
    st->skip = gp_arena_alloc(a, nroots + 1);
    if (!st->skip)
        return GP_ENOMEM;
    memset(st->skip, 0, nroots + 1);
    if (by_tenant) {
        st->skip_tenant = gp_arena_alloc(a, c->ntenants + 1);
        if (!st->skip_tenant)
            return GP_ENOMEM;
        memset(st->skip_tenant, 0, c->ntenants + 1);
    }
    it->view = v;
    it->state = st;
    it->cur = NULL;
    *out = st;
    return GP_OK;
}

int gp_pending_iter_init(struct gp_pending_iter *it, const struct gp_view *v)
{
    struct gp_core *c = v->core;
    struct pit_state *st;
    int rc;

    if ((rc = pit_state_new(it, v, c->nactive, true, &st)) != GP_OK)
        return rc;
    for (uint32_t k = 0; k < c->nactive; k++)
        if ((rc = pit_push_at(st, k, c->active[k], 0)) != GP_OK)
            return rc;
    return GP_OK;
}

int gp_pending_iter_init_tenant(struct gp_pending_iter *it,
                                const struct gp_view *v, uint32_t tenant)
{
    struct gp_core *c = v->core;
    struct pit_state *st;
    struct tenant *t;
    int rc;

    if (!c->cfg.policy->queues_by_tenant || tenant >= c->ntenants)
        return GP_EINVAL;
    t = &c->tenants[tenant];
    if ((rc = pit_state_new(it, v, t->nshapes, false, &st)) != GP_OK)
        return rc;
    for (uint32_t k = 0; k < t->nshapes; k++)
        if ((rc = pit_push_at(st, k, t->shapes[k], 0)) != GP_OK)
            return rc;
    return GP_OK;
}

void gp_pending_iter_skip_tenant(struct gp_pending_iter *it)
{
    struct pit_state *st = it->state;
    struct gp_core *c = st->c;
    uint32_t t;

    if (st->cur_shape == NONE)
        return;
    t = c->shapes[st->cur_shape].tenant;
    if (!st->skip_tenant)
        st->done = true; /* a walk of this tenant alone */
    else if (t != NONE)
        st->skip_tenant[t] = 1;
}

const struct gp_job *gp_pending_iter_next(struct gp_pending_iter *it)
{
    struct pit_state *st = it->state;
    struct gp_core *c = st->c;
    int rc;

    while (st->n > 0 && !st->done) {
        struct pit_entry e = pit_pop(st->h, &st->n, c);
        uint32_t t = c->shapes[e.shape].tenant;

        if (st->skip[e.slot] ||
            (st->skip_tenant && t != NONE && st->skip_tenant[t]))
            continue;
        /* a failed push would shorten the walk: the round fails with it
         * (gp_core_round), no job is silently passed over */
        if ((rc = pit_push_at(st, e.slot, e.shape, 2 * e.idx + 1)) != GP_OK ||
            (rc = pit_push_at(st, e.slot, e.shape, 2 * e.idx + 2)) != GP_OK) {
            c->walk_err = rc;
            break;
        }
        st->cur_slot = e.slot;
        st->cur_shape = e.shape;
        it->cur = J(c, e.q.id);
        return it->cur;
    }
    it->cur = NULL;
    return NULL;
}

void gp_pending_iter_skip_shape(struct gp_pending_iter *it)
{
    struct pit_state *st = it->state;

    if (st->cur_slot != NONE)
        st->skip[st->cur_slot] = 1;
}

int gp_view_tenant_pending_wait(const struct gp_view *v, uint32_t tenant,
                                uint32_t gpus, uint64_t *njobs, int64_t *wait_s)
{
    const struct gp_core *c = v->core;
    int64_t now = c->now_us / GP_US_PER_S, sum = 0;
    uint64_t n = 0;

    *njobs = 0;
    *wait_s = 0;
    if (!c->cfg.policy->queues_by_tenant || tenant >= c->ntenants)
        return GP_EINVAL;
    if (now * GP_US_PER_S > c->now_us)
        now--; /* rounded down, as the times queued are */
    for (uint32_t k = 0; k < c->tenants[tenant].nshapes; k++) {
        const struct shape *sh = &c->shapes[c->tenants[tenant].shapes[k]];

        if (sh->d.gpus == gpus) {
            n += sh->n;
            sum += (int64_t)sh->n * now - sh->queued_s;
        }
    }
    *njobs = n;
    *wait_s = sum;
    return GP_OK;
}

/* Running iterator: a max-heap of positions in the running heap. */
static inline bool rit_before(const uint32_t *a, const uint32_t *b, void *ctx)
{
    const struct gp_core *c = ctx;

    return run_before(&c->running[*a], &c->running[*b], ctx);
}

GP_HEAP_DEFINE(rit, uint32_t, rit_before, GP_HEAP_UNMOVED)

/* Each walk of the running jobs has its own frontier in the round's
 * scratch arena, as the pending walks do. */
struct rit_state {
    struct gp_core *c;
    struct gp_arena *a;
    uint32_t *h;
    uint32_t n, cap;
};

static void rit_push_at(struct rit_state *st, uint32_t idx)
{
    struct gp_core *c = st->c;

    if (idx >= c->nrunning)
        return;
    /* a failed push would shorten the walk of victims: the round fails */
    if (st->n == st->cap &&
        arena_grow(st->a, (void **)&st->h, &st->cap, sizeof(*st->h)) != GP_OK) {
        c->walk_err = GP_ENOMEM;
        return;
    }
    st->h[st->n] = idx;
    rit_up(st->h, st->n++, c);
}

int gp_running_iter_init(struct gp_running_iter *it, const struct gp_view *v)
{
    struct gp_arena *a = gp_view_scratch(v);
    struct rit_state *st = gp_arena_alloc(a, sizeof(*st));

    if (!st)
        return GP_ENOMEM;
    *st = (struct rit_state){.c = v->core, .a = a};
    it->view = v;
    it->state = st;
    rit_push_at(st, 0);
    return GP_OK;
}

const struct gp_job *gp_running_iter_next(struct gp_running_iter *it)
{
    struct rit_state *st = it->state;
    struct gp_core *c = st->c;
    uint32_t top;

    if (st->n == 0)
        return NULL;
    top = rit_pop(st->h, &st->n, c);
    rit_push_at(st, 2 * top + 1);
    rit_push_at(st, 2 * top + 2);
    return J(c, c->running[top]);
}
