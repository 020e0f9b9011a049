/* ledger.c - tenants and the fair-share ledger.
 *
 * Key decisions:
 *  - Per-tenant counters (held, pending, decayed usage, incoming,
 *    outgoing, owed; per GPU type too) are kept up to date on every move,
 *    in milli-GPUs, so shares of devices count as what they are; the
 *    water-fill works in GPUs (exactly 1/1000 of them);
 *    entitlements are recomputed only when something changed and someone
 *    asks.
 *  - Entitlements water-fill level by level down the tenant tree. A parent
 *    is declared before its children, so it has a lower index: one pass in
 *    index order shares each parent's part among its children, with no
 *    recursion, in time linear in the tenants (and n log n for the sorts).
 *    The tree is at most GP_TENANT_MAX_DEPTH deep.
 *  - Memory for the computation is taken before anything is touched: a
 *    failed allocation leaves the last entitlements in place (and the
 *    ledger stale, to be tried again).
 */
#include <math.h>

#include "core/core_priv.h"

/* Bring a tenant's decayed usage up to now: with held GPUs h constant since
 * the last update, U(t) = U0 e^(-k dt) + h (1 - e^(-k dt)) / k. */
static void tenant_touch(const struct gp_core *c, struct tenant *t)
{
    int64_t dt = c->now_us - t->usage_t_us;
    double e;

    if (dt <= 0)
        return;
    e = exp(-c->decay_per_us * (double)dt);
    t->info.usage_gpu_s =
        t->info.usage_gpu_s * e +
        gp_milli_gpus(t->info.held_milli) * (1.0 - e) / c->decay_per_us / 1e6;
    t->usage_t_us = c->now_us;
}

static void add(uint64_t *x, int64_t d)
{
    *x = (uint64_t)((int64_t)*x + d);
}

/* What a placement counts in its tenant's holdings: its milli-GPUs, or,
 * for a job co-located below full pace, that part of them - the share of
 * time it gets on devices it takes turns on, or what it runs at beside
 * another (a pair that packs well counts more than the device between
 * them: it does more than one job's work there). */
static int64_t counted_milli(const struct gp_placement *w)
{
    uint64_t m = gp_placement_milli(w);

    if (w->colocated && w->pace > 0 && w->pace < 1)
        return (int64_t)llround((double)m * w->pace);
    return (int64_t)m;
}

void gp__book_held(struct gp_core *c, const struct gp_job *j,
                   const struct gp_placement *where, int sign,
                   int nrunning_delta)
{
    struct tenant *t = &c->tenants[j->tenant];
    int64_t m = sign * counted_milli(where);

    tenant_touch(c, t);
    /* devices: one shared by co-located jobs counts once */
    add(&c->busy_milli, gp_cluster_book(c->cluster, where, sign));
    add(&t->info.held_milli, m);
    add(&t->info.shared_milli,
        sign * ((int64_t)gp_placement_milli(where) - counted_milli(where)));
    add(&t->types[where->type].held_milli, m);
    add(&t->info.held_cpus,
        sign * (int64_t)gp_placement_cpus(where, &j->demand, where->gpus));
    add(&t->info.held_mem_mib,
        sign * (int64_t)gp_placement_mem_mib(where, &j->demand, where->gpus));
    t->info.nrunning = (uint32_t)((int32_t)t->info.nrunning + nrunning_delta);
    /* a run that begins or ends on fewer GPUs than its job asked for */
    if (nrunning_delta)
        gp__book_shrunk(c, j, where, sign);
    c->lc->stale = true;
}

void gp__book_shrunk(struct gp_core *c, const struct gp_job *j,
                     const struct gp_placement *where, int sign)
{
    struct tenant *t = &c->tenants[j->tenant];

    if (where->gpus < j->demand.gpus) {
        tenant_touch(c, t);
        add(&t->info.shrunk_milli,
            sign * (int64_t)(j->demand.gpus - where->gpus) * GP_MILLI_PER_GPU);
        add(&c->shrunk_milli,
            sign * (int64_t)(j->demand.gpus - where->gpus) * GP_MILLI_PER_GPU);
        c->lc->stale = true;
    } else if (where->gpus > j->demand.gpus) {
        add(&c->grown_milli,
            sign * (int64_t)(where->gpus - j->demand.gpus) * GP_MILLI_PER_GPU);
    }
}

/* The tenant named `name`, created on first use. Tenants are found by the
 * id of their name in tenant_names through by_name (a name may be interned
 * and its tenant not created, when memory ran out in between). */
static int tenant_new(struct gp_core *c, const char *name, uint32_t *out)
{
    uint32_t id, idx;
    struct tenant *t;
    struct gp_tenant_type *types;
    int rc;

    if ((rc = gp_strtab_intern(&c->tenant_names, name, (size_t)-1, &id)))
        return rc;
    if ((rc = gp__grow(c->env, (void **)&c->tenant_by_name, &c->cap_by_name,
                       sizeof(uint32_t), id + 1)))
        return rc;
    while (c->nby_name <= id)
        c->tenant_by_name[c->nby_name++] = NONE;
    if (c->tenant_by_name[id] != NONE) {
        *out = c->tenant_by_name[id];
        return GP_OK;
    }
    if ((rc = gp__grow(c->env, (void **)&c->tenants, &c->captenants,
                       sizeof(*c->tenants), c->ntenants + 1)))
        return rc;
    if (!(types = gp_env_calloc(c->env, GP_MAX_GPU_TYPES, sizeof(*types))))
        return GP_ENOMEM;
    idx = c->ntenants++;
    t = &c->tenants[idx];
    memset(t, 0, sizeof(*t));
    t->types = types;
    t->info.by_type = t->types;
    t->info.name = gp_strtab_get(&c->tenant_names, id);
    t->info.parent = GP_TENANT_NONE;
    t->info.weight = 1.0;
    t->usage_t_us = c->now_us;
    for (int k = 0; k < GP_NPRIO; k++)
        t->run_head[k] = NONE;
    t->gang_head = t->gang_tail = NONE;
    c->tenant_by_name[id] = idx;
    *out = idx;
    c->lc->stale = true;
    return GP_OK;
}

int gp__tenant_of(struct gp_core *c, const char *name, uint32_t *out)
{
    return tenant_new(c, name && *name ? name : "default", out);
}

int gp_core_find_tenant(const struct gp_core *c, const char *name,
                        uint32_t *tenant)
{
    uint32_t id = gp_strtab_find(&c->tenant_names, name, (size_t)-1);

    if (!id || id >= c->nby_name || c->tenant_by_name[id] == NONE)
        return GP_ENOENT;
    *tenant = c->tenant_by_name[id];
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
        if (c->tenants[parent].depth + 1 >= GP_TENANT_MAX_DEPTH)
            return gp_diag_set(diag, GP_EINVAL, where,
                               "nested deeper than %d levels",
                               GP_TENANT_MAX_DEPTH);
    }
    if ((rc = tenant_new(c, spec->name, &idx)) != GP_OK)
        return gp_diag_set(diag, rc, where, "out of memory");
    t = &c->tenants[idx];
    t->declared = true;
    t->info.parent = parent;
    t->depth = parent == GP_TENANT_NONE ? 0 : c->tenants[parent].depth + 1;
    t->info.weight = spec->weight > 0 ? spec->weight : 1.0;
    t->info.guarantee = guarantee;
    t->info.typed = spec->nby_type > 0;
    for (uint32_t k = 0; k < gp_cluster_ntypes(c->cluster); k++)
        t->types[k].guarantee = typed[k];
    t->info.cap = spec->cap;
    t->info.lend_limit = spec->lend_limit;
    if (parent != GP_TENANT_NONE)
        c->tenants[parent].has_children = true;
    c->lc->stale = true;
    return GP_OK;
}

int gp_core_update_tenant(struct gp_core *c, const struct gp_tenant_spec *spec,
                          struct gp_diag *diag)
{
    const char *where = spec->name ? spec->name : "tenant";
    uint32_t idx, guarantee;
    struct tenant *t;

    if (!spec->name || gp_core_find_tenant(c, spec->name, &idx) != GP_OK ||
        !c->tenants[idx].declared)
        return gp_diag_set(diag, GP_ENOENT, where, "no tenant declared as '%s'",
                           spec->name ? spec->name : "");
    t = &c->tenants[idx];
    if (spec->weight < 0 || !isfinite(spec->weight) || spec->weight > 1e9)
        return gp_diag_set(diag, GP_EINVAL, where, "weight must be > 0");
    if (spec->parent && *spec->parent &&
        (t->info.parent == GP_TENANT_NONE ||
         strcmp(c->tenants[t->info.parent].info.name, spec->parent) != 0))
        return gp_diag_set(diag, GP_EINVAL, where,
                           "parent: a tenant's place in the tree cannot "
                           "change");
    if (spec->nby_type)
        return gp_diag_set(diag, GP_EINVAL, where,
                           "guarantee_by_type cannot change at run time");
    guarantee = spec->guarantee;
    if (t->info.typed) {
        if (guarantee && guarantee != t->info.guarantee)
            return gp_diag_set(diag, GP_EINVAL, where,
                               "guarantee: it is split by GPU type (%u in "
                               "all); its parts cannot change at run time",
                               t->info.guarantee);
        guarantee = t->info.guarantee;
    }
    if (spec->cap && spec->cap < guarantee)
        return gp_diag_set(diag, GP_EINVAL, where,
                           "cap %u is below the guarantee %u", spec->cap,
                           guarantee);
    if (spec->lend_limit > guarantee)
        return gp_diag_set(diag, GP_EINVAL, where,
                           "lend_limit %u is above the guarantee %u",
                           spec->lend_limit, guarantee);
    tenant_touch(c, t); /* usage so far was earned under the old promise */
    t->info.weight = spec->weight > 0 ? spec->weight : 1.0;
    t->info.guarantee = guarantee;
    t->info.cap = spec->cap;
    t->info.lend_limit = spec->lend_limit;
    c->lc->stale = true;
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

/* Share `capacity` among the children of `parent` (NONE = the top level),
 * listed in `kids` in index order, and the parent's own jobs. */
static void share_level(const struct gp_core *c, uint32_t parent,
                        const uint32_t *kids, uint32_t nkids, double capacity,
                        struct wf *m)
{
    size_t n = 0;
    double child_g = 0;

    for (uint32_t i = 0; i < nkids; i++) {
        uint32_t k = kids[i];
        struct tenant *t = &c->tenants[k];
        double cap = t->info.cap ? (double)t->info.cap : 1e18;

        m[n].tenant = k;
        m[n].limit = fmin(gp_milli_gpus(t->sub_demand), cap);
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
        m[n].limit = gp_milli_gpus(p->info.demand_milli);
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
}

void gp__ledger_update(const struct gp_core *c)
{
    uint32_t nt = c->ntenants, *start, *kids, *fill;
    struct wf *m;

    if (!c->lc->stale)
        return;
    /* children by parent, in index order: kids[start[p]..start[p+1]),
     * the top level at p = nt */
    start = gp_env_calloc(c->env, (size_t)nt + 2, sizeof(*start));
    fill = gp_env_calloc(c->env, (size_t)nt + 1, sizeof(*fill));
    kids = gp_env_calloc(c->env, (size_t)nt + 1, sizeof(*kids));
    m = gp_env_alloc(c->env, ((size_t)nt + 1) * sizeof(*m));
    if (!start || !fill || !kids || !m)
        goto out; /* the last entitlements stand; try again next time */
    for (uint32_t k = 0; k < nt; k++) {
        struct tenant *t = &c->tenants[k];
        uint32_t p = t->info.parent == GP_TENANT_NONE ? nt : t->info.parent;

        tenant_touch(c, t);
        t->info.demand_milli = t->info.held_milli + t->info.pending_milli +
                               t->info.shrunk_milli + t->info.shared_milli;
        t->info.entitled = 0;
        t->sub_demand = t->info.demand_milli;
        start[p + 1]++;
    }
    for (uint32_t p = 0; p <= nt; p++)
        start[p + 1] += start[p];
    for (uint32_t k = 0; k < nt; k++) {
        uint32_t p = c->tenants[k].info.parent == GP_TENANT_NONE
                         ? nt
                         : c->tenants[k].info.parent;
        kids[start[p] + fill[p]++] = k;
    }
    /* a parent has a lower index than its children: sum demand upwards */
    for (uint32_t k = nt; k-- > 0;)
        if (c->tenants[k].info.parent != GP_TENANT_NONE)
            c->tenants[c->tenants[k].info.parent].sub_demand +=
                c->tenants[k].sub_demand;
    share_level(c, NONE, kids + start[nt], start[nt + 1] - start[nt],
                (double)gp_cluster_up_gpus(c->cluster), m);
    /* and shares downwards, each parent's once its own is known */
    for (uint32_t k = 0; k < nt; k++)
        if (c->tenants[k].has_children)
            share_level(c, k, kids + start[k], start[k + 1] - start[k],
                        c->tenants[k].sub_entitled, m);
    c->lc->stale = false;
out:
    gp_env_free(c->env, start);
    gp_env_free(c->env, fill);
    gp_env_free(c->env, kids);
    gp_env_free(c->env, m);
}

/* What was reclaimed is kept for one round after the last victim stopped;
 * then it is anyone's. */
void gp__ledger_round_end(struct gp_core *c)
{
    uint32_t nt = gp_cluster_ntypes(c->cluster);

    for (uint32_t t = 0; c->nowing > 0 && t < c->ntenants; t++) {
        struct tenant *tn = &c->tenants[t];

        if (!tn->owes || tn->info.incoming_milli != 0)
            continue;
        tn->info.owed_milli = 0;
        for (uint32_t k = 0; k < nt; k++)
            tn->types[k].owed_milli = 0;
        tn->owes = false;
        c->nowing--;
    }
}

void gp__tenants_free(struct gp_core *c)
{
    for (uint32_t t = 0; t < c->ntenants; t++) {
        gp_env_free(c->env, c->tenants[t].shapes);
        gp_env_free(c->env, c->tenants[t].types);
    }
    gp_env_free(c->env, c->tenants);
    gp_env_free(c->env, c->tenant_by_name);
}

const struct gp_tenant_info *gp_core_tenant_info(const struct gp_core *c,
                                                 uint32_t tenant)
{
    if (tenant >= c->ntenants)
        return NULL;
    gp__ledger_update(c); /* usage is as of the last change in the ledger */
    return &c->tenants[tenant].info;
}
