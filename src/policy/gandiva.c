/* gandiva.c - Gandiva (Xiao et al., "Gandiva: Introspective Cluster
 * Scheduling for Deep Learning", OSDI'18): jobs start at once, on GPUs of
 * their own where there are any and by sharing a running job's GPUs where
 * there are none; shared GPUs are time-sliced, or packed when the pair
 * runs faster together than in turns; jobs move to GPUs that come free;
 * elastic jobs grow into idle GPUs and shrink back when others need them.
 *
 * Mechanisms, as the paper describes them (sec. 3) and as gpupool models
 * them in its simulator:
 * - Suspend-resume and time-slicing. Gandiva oversubscribes GPUs: a job
 *   that finds none free shares the GPUs of a running job of the same size
 *   (the paper's "affinity": servers hold jobs of one GPU count, which
 *   makes sharing and packing whole-job), and the jobs on those GPUs take
 *   turns, suspended and resumed at iteration boundaries. gpupool
 *   co-locates the job on the same devices (gp_view_fit_colocate) and
 *   runs each of the k jobs at the average pace of turns: (1 - o) / k,
 *   o = switch / quantum, the part of each quantum the switch costs. At
 *   most `share` jobs share a set of devices (2 by default).
 * - Packing. Two jobs on one set of devices may run at once instead of in
 *   turns. Gandiva tries it and keeps it when their combined throughput,
 *   each normalised to its throughput alone, beats time-slicing. gpupool
 *   reads the pair's throughputs from the speed table (Gavel's co-location
 *   measurements, speed.h) and packs when pace_a + pace_b > 1 - o, the
 *   sum time-slicing gives; jobs without a measured pair are time-sliced.
 * - Migration. When GPUs come free, a job sharing GPUs moves to them
 *   (the paper's migration to de-oversubscribe; checkpoint, restore). Jobs
 *   waiting to start come first: they share nothing yet. With locality=1
 *   a gang running alone over several nodes moves onto fewer when GPUs
 *   allow (the paper's migration for locality; off by default:
 *   docs/policies/gandiva.md says why). With defrag=1 (the default), a
 *   gang that fits a node but takes turns on other jobs' devices, or runs
 *   slowed over several nodes, while no node has its GPUs free, gets a
 *   node of its own: the small jobs of the node where the fewest GPUs
 *   must move go to the fullest other nodes that hold them (defrag.c,
 *   shared with pool), and the gang follows once they stopped (the
 *   paper's migration to defragment). One at a time, and only while no
 *   job waits; never a protected job, or one the move would cost work.
 * - Grow-shrink. With nothing waiting, an elastic job running alone grows
 *   into idle GPUs (up to its max_gpus); when a job finds no GPUs, grown
 *   jobs shrink back to their size before anything is shared.
 *
 * Order: jobs start in arrival order (Gandiva has no queue discipline of
 * its own); a job that fits a node goes first to a node whose jobs are of
 * its size, else to the core's placement. A shared set of devices is
 * re-paced in the round its membership changes, and at every round while
 * a member's pace differs from the set's (a job still starting is paced
 * once it runs).
 *
 * Co-location needs devices: under the `count` model jobs never share,
 * and gandiva is then FIFO with migration off and grow-shrink on.
 *
 * Cost per round: O(R log R) to group the R running jobs by device set,
 * O(P x (N_a + S)) for P waiting jobs, N_a nodes of their affinity and S
 * device sets; one waiting job that neither fits nor shares skips the
 * rest of its shape.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policy/defrag.h"
#include "policy/policy.h"

struct gandiva {
    const struct gp_env *env;
    uint32_t share;  /* jobs on one set of devices, at most */
    double overhead; /* o = switch / quantum */
    int64_t quantum_us, switch_us;
    bool pack, migrate, grow, spread, locality, defrag;
    /* a defragmentation under way (one at a time): gang df_job moves onto
     * node df_node once the jobs moved off it stopped, by df_until */
    bool df_busy;
    uint64_t df_job;
    uint32_t df_node;
    int64_t df_until;
    /* this round: the devices of each node a start, move or resize
     * touched (their jobs are not paced yet: nothing else joins them) */
    uint64_t *fresh;
    uint32_t nnodes;
};

/* A running gang, keyed by its first piece (node and devices): jobs
 * co-located on the same devices share a key. */
struct member {
    const struct gp_job *job;
    uint64_t key_hi, key_lo;
};

/* The jobs of one key. */
struct dset {
    struct member *m;            /* into the sorted members */
    uint32_t n;                  /* running or starting jobs with the key */
    const struct gp_job *joiner; /* started on the same devices this round */
};

static int opt_bool(const char *key, const char *val, bool *out,
                    struct gp_diag *diag)
{
    if (strcmp(val, "1") == 0 || strcmp(val, "on") == 0 ||
        strcmp(val, "true") == 0)
        *out = true;
    else if (strcmp(val, "0") == 0 || strcmp(val, "off") == 0 ||
             strcmp(val, "false") == 0)
        *out = false;
    else
        return gp_diag_set(diag, GP_EINVAL, key,
                           "expected 1 or 0 (on/off), got \"%s\"", val);
    return GP_OK;
}

static int gandiva_init(void **priv, const struct gp_policy_args *args,
                        struct gp_diag *diag)
{
    struct gandiva *g = gp_env_calloc(args->env, 1, sizeof(*g));
    int rc = GP_OK;

    if (!g)
        return GP_ENOMEM;
    g->env = args->env;
    g->share = 8;
    g->quantum_us = 60 * GP_US_PER_S;
    g->switch_us = GP_US_PER_S;
    g->pack = g->migrate = g->grow = g->spread = g->defrag = true;
    for (size_t i = 0; i < args->nopts && rc == GP_OK; i++) {
        const char *key = args->opts[i].key, *val = args->opts[i].value;

        if (strcmp(key, "share") == 0) {
            char *end;
            unsigned long n = strtoul(val, &end, 10);

            if (end == val || *end || n < 1 || n > 64)
                rc = gp_diag_set(diag, GP_EINVAL, "gandiva.share",
                                 "expected jobs per device from 1 to 64, "
                                 "got \"%s\"",
                                 val);
            else
                g->share = (uint32_t)n;
        } else if (strcmp(key, "quantum") == 0) {
            if (!gp__opt_seconds(val, 1e-3, &g->quantum_us))
                rc = gp_diag_set(diag, GP_EINVAL, "gandiva.quantum",
                                 "expected seconds from 0.001 to one year, "
                                 "got \"%s\"",
                                 val);
        } else if (strcmp(key, "switch") == 0) {
            if (strcmp(val, "0") == 0)
                g->switch_us = 0;
            else if (!gp__opt_seconds(val, 1e-6, &g->switch_us))
                rc = gp_diag_set(diag, GP_EINVAL, "gandiva.switch",
                                 "expected seconds from 0 to one year, got "
                                 "\"%s\"",
                                 val);
        } else if (strcmp(key, "pack") == 0) {
            rc = opt_bool("gandiva.pack", val, &g->pack, diag);
        } else if (strcmp(key, "migrate") == 0) {
            rc = opt_bool("gandiva.migrate", val, &g->migrate, diag);
        } else if (strcmp(key, "grow") == 0) {
            rc = opt_bool("gandiva.grow", val, &g->grow, diag);
        } else if (strcmp(key, "spread") == 0) {
            rc = opt_bool("gandiva.spread", val, &g->spread, diag);
        } else if (strcmp(key, "locality") == 0) {
            rc = opt_bool("gandiva.locality", val, &g->locality, diag);
        } else if (strcmp(key, "defrag") == 0) {
            rc = opt_bool("gandiva.defrag", val, &g->defrag, diag);
        } else {
            rc = gp_diag_set(diag, GP_EINVAL, key,
                             "unknown option for gandiva (known: share, "
                             "quantum, switch, pack, migrate, grow, spread, "
                             "locality, defrag)");
        }
    }
    if (rc == GP_OK && g->switch_us >= g->quantum_us)
        rc = gp_diag_set(diag, GP_EINVAL, "gandiva.switch",
                         "the switch (%g s) must be shorter than the "
                         "quantum (%g s)",
                         (double)g->switch_us / 1e6,
                         (double)g->quantum_us / 1e6);
    if (rc != GP_OK) {
        gp_env_free(args->env, g);
        return rc;
    }
    g->overhead = (double)g->switch_us / (double)g->quantum_us;
    *priv = g;
    return GP_OK;
}

static void gandiva_fini(void *priv)
{
    struct gandiva *g = priv;

    if (g)
        gp_env_free(g->env, g);
}

static int member_cmp(const void *pa, const void *pb)
{
    const struct member *a = pa, *b = pb;

    if (a->key_hi != b->key_hi)
        return a->key_hi < b->key_hi ? -1 : 1;
    if (a->key_lo != b->key_lo)
        return a->key_lo < b->key_lo ? -1 : 1;
    /* the earliest started first */
    if (a->job->run_start_us != b->job->run_start_us)
        return a->job->run_start_us < b->job->run_start_us ? -1 : 1;
    return a->job->id < b->job->id ? -1 : a->job->id > b->job->id;
}

/* Group the running gangs on nodes by key. */
static int group(const struct gp_view *v, struct dset **sout, size_t *ns)
{
    size_t nr = gp_view_nrunning(v), n = 0, k = 0;
    struct member *m;
    struct dset *s;

    m = gp_arena_alloc(gp_view_scratch(v), (nr + 1) * sizeof(*m));
    s = gp_arena_alloc(gp_view_scratch(v), (nr + 1) * sizeof(*s));
    if (!m || !s)
        return GP_ENOMEM;
    for (size_t i = 0; i < nr; i++) {
        const struct gp_job *j = gp_view_running_at(v, i);

        if (!j->where.gpus || !j->where.nslots)
            continue;
        m[n].job = j;
        m[n].key_hi = j->where.slots[0].node;
        m[n].key_lo = j->where.slots[0].mask;
        n++;
    }
    qsort(m, n, sizeof(*m), member_cmp);
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || m[i - 1].key_hi != m[i].key_hi ||
            m[i - 1].key_lo != m[i].key_lo) {
            s[k].m = &m[i];
            s[k].n = 0;
            s[k].joiner = NULL;
            k++;
        }
        s[k - 1].n++;
    }
    *sout = s;
    *ns = k;
    return GP_OK;
}

/* The most jobs holding any one of the placement's devices (the paper's
 * "height"), from the cluster after the plan so far. */
static uint32_t height_of(const struct gp_view *v, const struct gp_placement *p)
{
    const struct gp_cluster *cl = gp_view_cluster(v);
    uint32_t h = 0;

    for (uint32_t i = 0; i < p->nslots; i++)
        for (uint64_t m = p->slots[i].mask; m; m &= m - 1) {
            uint32_t k = gp_cluster_dev_holders(cl, p->slots[i].node,
                                                (uint32_t)__builtin_ctzll(m));

            if (k > h)
                h = k;
        }
    return h;
}

/* A job's pace on its placement (0 means 1). */
static double pace_of(const struct gp_job *j)
{
    return j->where.pace > 0 ? j->where.pace : 1.0;
}

/* The pace of time-slicing at height h. */
static double turn(const struct gandiva *g, uint32_t h)
{
    return h <= 1 ? 1.0 : (1.0 - g->overhead) / (double)h;
}

/* Packed: the paces of a and b alone together on the same devices, when
 * measured and better than taking turns. */
static bool packed(const struct gandiva *g, const struct gp_view *v,
                   const struct gp_job *a, const struct gp_job *b,
                   const struct gp_placement *where, double *pa, double *pb)
{
    return g->pack &&
           gp_view_pair_paces(v, a, b, where->type, where->gpus, pa, pb) ==
               GP_OK &&
           *pa > 0 && *pb > 0 && *pa + *pb > 2 * turn(g, 2);
}

/* The jobs of set s now: its members and the one that joined it. */
static uint32_t jobs_of(const struct dset *s, const struct gp_job **js)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < s->n && n < 64; i++)
        js[n++] = s->m[i].job;
    if (s->joiner && n < 65)
        js[n++] = s->joiner;
    return n;
}

/* The pace job js[i] of set s should run at: packed with the one other
 * job on exactly its devices when that pays, else its turn at its
 * height. A joiner holds its host's devices (its own placement is the
 * plan's until the round is carried out). */
static double target(const struct gandiva *g, const struct gp_view *v,
                     const struct dset *s, const struct gp_job *const *js,
                     uint32_t n, uint32_t i)
{
    const struct gp_placement *host = &s->m[0].job->where;
    const struct gp_placement *w = js[i] == s->joiner ? host : &js[i]->where;
    uint32_t h = height_of(v, w);
    double pa, pb;
    bool pair =
        n == 2 &&
        (s->joiner ? s->n == 1
                   : gp_placement_same_devices(&js[0]->where, &js[1]->where));

    if (h == 2 && pair && packed(g, v, js[0], js[1], host, &pa, &pb))
        return i == 0 ? pa : pb;
    return turn(g, h);
}

/* Bring the running jobs of set s to their paces; *stale when one that
 * should change cannot yet (still starting, or in the plan). The joiner
 * started at its pace. */
static int repace(const struct gandiva *g, const struct gp_view *v,
                  struct gp_plan *p, const struct dset *s, bool *stale)
{
    const struct gp_job *js[65];
    uint32_t n = jobs_of(s, js);

    for (uint32_t i = 0; i < n; i++) {
        const struct gp_job *j = js[i];
        double want;
        struct gp_placement where;
        int rc;

        if (j == s->joiner)
            continue;
        want = target(g, v, s, js, n, i);
        if (fabs(pace_of(j) - want) < 1e-9)
            continue;
        if (j->state != GP_JOB_RUNNING || gp_plan_has(p, j)) {
            *stale = true;
            continue;
        }
        where = j->where;
        if (where.nslots == 1)
            where.slots = &where.inline_slot;
        where.pace = want == 1.0 ? 0 : want;
        if ((rc = gp_plan_resize(p, j, &where)) != GP_OK && rc != GP_EPLAN)
            return rc;
    }
    return GP_OK;
}

static void mark(struct gandiva *g, const struct gp_placement *w)
{
    for (uint32_t i = 0; i < w->nslots; i++)
        if (w->slots[i].node < g->nnodes)
            g->fresh[w->slots[i].node] |= w->slots[i].mask;
}

static bool fresh_hit(const struct gandiva *g, const struct gp_placement *w)
{
    for (uint32_t i = 0; i < w->nslots; i++)
        if (w->slots[i].node < g->nnodes &&
            (g->fresh[w->slots[i].node] & w->slots[i].mask))
            return true;
    return false;
}

/* Start `job` at `where`, marking its devices. */
static int start_at(struct gandiva *g, struct gp_plan *p,
                    const struct gp_job *job, const struct gp_placement *where)
{
    int rc = gp_plan_start(p, job, where);

    if (rc == GP_OK)
        mark(g, where);
    return rc;
}

/* Start `job` on free GPUs: first on a node whose jobs are of its size
 * (the paper's affinity), else where the core places it. GP_ENOFIT if
 * nowhere. */
static int start_free(struct gandiva *g, const struct gp_view *v,
                      struct gp_plan *p, const struct gp_job *job,
                      const struct dset *s, size_t ns)
{
    struct gp_placement where;
    int rc;

    if (job->demand.gpus && gp_view_model(v) != GP_PLACE_COUNT) {
        uint32_t last = UINT32_MAX;

        for (size_t i = 0; i < ns; i++) {
            const struct gp_job *r = s[i].m[0].job;
            uint32_t node = r->where.slots[0].node;

            if (r->where.gpus != job->demand.gpus || r->where.nslots != 1 ||
                node == last)
                continue;
            last = node;
            if (gp_view_fit_on(v, job, node, &where) == GP_OK)
                return start_at(g, p, job, &where);
        }
    }
    if ((rc = gp_view_fit(v, job, 0, &where)) != GP_OK)
        return rc;
    return start_at(g, p, job, &where);
}

/* Shrink grown elastic jobs back to their size until `job` fits. */
static int shrink_for(struct gandiva *g, const struct gp_view *v,
                      struct gp_plan *p, const struct gp_job *job,
                      struct dset *s, size_t ns, bool *started)
{
    *started = false;
    for (size_t i = 0; i < ns && !*started; i++) {
        const struct gp_job *r = s[i].m[0].job;
        struct gp_placement where;
        int rc;

        if (s[i].n != 1 || r->state != GP_JOB_RUNNING || gp_plan_has(p, r) ||
            r->where.gpus <= r->demand.gpus || height_of(v, &r->where) != 1)
            continue;
        if (gp_view_fit_shrink(v, r, r->demand.gpus, &where) != GP_OK)
            continue;
        if ((rc = gp_plan_resize(p, r, &where)) != GP_OK) {
            if (rc != GP_EPLAN)
                return rc;
            continue;
        }
        mark(g, &r->where);
        rc = start_free(g, v, p, job, s, ns);
        if (rc == GP_OK)
            *started = true;
        else if (rc != GP_ENOFIT && rc != GP_EPLAN)
            return rc;
    }
    return GP_OK;
}

/* Share a running job's devices: those of a job of its size (the
 * paper's affinity), the least shared first and, among jobs running
 * alone, the one it packs with best; with spread, else any devices held
 * by the same number of jobs, fewer than `share` (a gang then takes turns
 * with every job on them). At its pace from the start. */
static int share(struct gandiva *g, const struct gp_view *v, struct gp_plan *p,
                 const struct gp_job *job, struct dset *s, size_t ns,
                 bool *started)
{
    struct dset *best = NULL;
    uint32_t best_h = 0;
    double best_sum = 0, pa, pb, pace;
    struct gp_placement where;
    int rc;

    *started = false;
    for (size_t i = 0; i < ns && g->share >= 2; i++) {
        const struct gp_job *r = s[i].m[0].job;
        uint32_t h;
        double sum = 0;

        /* fresh_hit: a job joined, left or moved there this round */
        if (r->where.gpus != job->demand.gpus || fresh_hit(g, &r->where) ||
            (job->demand.type != GP_TYPE_ANY &&
             r->where.type != job->demand.type))
            continue;
        h = height_of(v, &r->where);
        if (h >= g->share || h != s[i].n)
            continue; /* full, or its devices are not its set's alone */
        if (h == 1 && packed(g, v, r, job, &r->where, &pa, &pb))
            sum = pa + pb;
        if (!best || h < best_h || (h == best_h && sum > best_sum)) {
            best = &s[i];
            best_h = h;
            best_sum = sum;
        }
    }
    if (best) {
        const struct gp_job *r = best->m[best->n - 1].job;

        pace = best_h == 1 && packed(g, v, r, job, &r->where, &pa, &pb)
                   ? pb
                   : turn(g, best_h + 1);
        rc = gp_view_fit_colocate(v, job, r, pace == 1.0 ? 0 : pace, &where);
        if (rc == GP_OK && (rc = start_at(g, p, job, &where)) == GP_OK) {
            best->joiner = job;
            *started = true;
            return GP_OK;
        }
        if (rc != GP_ENOFIT && rc != GP_EPLAN && rc != GP_EINVAL)
            return rc;
    }
    if (!g->spread)
        return GP_OK;
    rc = gp_view_fit_shared(v, job, g->share, 0, &where);
    if (rc == GP_ENOFIT || rc == GP_EINVAL)
        return GP_OK;
    if (rc != GP_OK)
        return rc;
    if (fresh_hit(g, &where))
        return GP_OK; /* jobs started there now: it joins them next round */
    /* its height once it is there */
    pace = turn(g, height_of(v, &where) + 1);
    where.pace = pace == 1.0 ? 0 : pace;
    if ((rc = start_at(g, p, job, &where)) == GP_EPLAN)
        return GP_OK;
    if (rc == GP_OK)
        *started = true;
    return rc;
}

/* Migrate j to `where` and mark the devices it leaves and takes as
 * touched this round; *moved says whether the plan took the move (it may
 * refuse: then nothing moves). */
static int migrate_marked(struct gandiva *g, struct gp_plan *p,
                          const struct gp_job *j,
                          const struct gp_placement *where, bool *moved)
{
    int rc = gp_plan_migrate(p, j, where);

    *moved = false;
    if (rc != GP_OK)
        return rc == GP_EPLAN ? GP_OK : rc;
    mark(g, &j->where);
    mark(g, where);
    *moved = true;
    return GP_OK;
}

/* Move running job j onto free GPUs of at most `nodes` nodes, marking
 * both places; *moved says whether it did (no such place, or the plan
 * refuses: not). */
static int move_onto(struct gandiva *g, const struct gp_view *v,
                     struct gp_plan *p, const struct gp_job *j, uint32_t nodes,
                     bool *moved)
{
    struct gp_placement where;

    *moved = false;
    if (gp_view_fit(v, j, j->where.gpus, &where) != GP_OK ||
        where.nslots > nodes)
        return GP_OK;
    return migrate_marked(g, p, j, &where, moved);
}

/* Move jobs off shared devices onto free ones: the most shared first,
 * the latest started of a set first. */
static int migrate_off(struct gandiva *g, const struct gp_view *v,
                       struct gp_plan *p, struct dset *s, size_t ns,
                       uint32_t most)
{
    for (uint32_t h = most; h >= 2 && gp_view_free_gpus(v) > 0; h--) {
        for (size_t i = 0; i < ns && gp_view_free_gpus(v) > 0; i++) {
            for (uint32_t k = s[i].n; k-- > 0;) {
                const struct gp_job *j = s[i].m[k].job;
                bool moved;
                int rc;

                if (j->state != GP_JOB_RUNNING || gp_plan_has(p, j) ||
                    j->where.gpus > gp_view_free_gpus(v) ||
                    height_of(v, &j->where) != h)
                    continue;
                /* never onto more nodes than it runs on now */
                if ((rc = move_onto(g, v, p, j, j->where.nslots, &moved)) !=
                    GP_OK)
                    return rc;
                if (moved)
                    break; /* one a set a round: its paces follow */
            }
        }
    }
    return GP_OK;
}

/* Move a gang running alone over several nodes onto fewer, where free
 * GPUs allow (the paper's migration to improve locality): a gang spread
 * over nodes runs slower (docs/speed.md, "Spread gangs"). */
static int consolidate(struct gandiva *g, const struct gp_view *v,
                       struct gp_plan *p, const struct dset *s, size_t ns)
{
    for (size_t i = 0; i < ns && gp_view_free_gpus(v) > 0; i++) {
        const struct gp_job *j = s[i].m[0].job;
        bool moved;
        int rc;

        if (s[i].n != 1 || s[i].joiner || j->state != GP_JOB_RUNNING ||
            gp_plan_has(p, j) || j->where.nslots < 2 ||
            j->where.gpus > gp_view_free_gpus(v) ||
            height_of(v, &j->where) != 1 || fresh_hit(g, &j->where))
            continue;
        if ((rc = move_onto(g, v, p, j, j->where.nslots - 1, &moved)) != GP_OK)
            return rc;
    }
    return GP_OK;
}

/* ---- defragmentation (the paper's migration to defragment) ----------- */

/* Does spreading over nodes slow running job j: its rate where it runs,
 * at its pace, below its rate on one node of its type at its size (the
 * speed table's spread figure or --spread-speed, docs/speed.md)? */
static bool spread_slows(const struct gp_view *v, const struct gp_job *j)
{
    double one = gp_view_rate_at(v, j, j->where.type, j->where.gpus);

    return j->where.nslots >= 2 && j->speed < one * pace_of(j) * (1.0 - 1e-9);
}

/* Does running gang j want a node of its own: taking turns on devices
 * other jobs hold, or spread over nodes that slow it, while it fits one
 * node of its type? */
static bool df_wants(const struct gandiva *g, const struct gp_view *v,
                     const struct gp_plan *p, const struct gp_job *j)
{
    return j->state == GP_JOB_RUNNING && !gp_plan_has(p, j) &&
           j->where.gpus >= 2 &&
           j->where.gpus <=
               gp_cluster_max_up_node_gpus(gp_view_cluster(v), j->where.type) &&
           !fresh_hit(g, &j->where) &&
           (height_of(v, &j->where) > 1 || spread_slows(v, j));
}

/* May j move now: not protected (minimum run time, preemption cap), and
 * losing no work by the move? */
static bool df_may_move(const struct gp_view *v, const struct gp_job *j)
{
    return gp_view_may_preempt(v, j) && gp_view_loss_if_preempted(v, j) == 0;
}

/* A job defragmentation may move off the gang's node: not the gang, alone
 * on its devices (moving a job that shares them frees nothing), not
 * touched this round, and losing no work by the move. */
struct df_ctx {
    const struct gandiva *g;
    const struct gp_job *gang;
};

static bool df_movable(void *ctx, const struct gp_view *v,
                       const struct gp_job *r)
{
    const struct df_ctx *c = ctx;

    return r != c->gang && height_of(v, &r->where) == 1 &&
           !fresh_hit(c->g, &r->where) && gp_view_loss_if_preempted(v, r) == 0;
}

/* Move gang j onto node `node` if its GPUs are free there now; *moved
 * says whether it did. */
static int df_move(struct gandiva *g, const struct gp_view *v,
                   struct gp_plan *p, const struct gp_job *j, uint32_t node,
                   bool *moved)
{
    struct gp_placement where;

    *moved = false;
    if (gp_view_fit_on(v, j, node, &where) != GP_OK)
        return GP_OK;
    return migrate_marked(g, p, j, &where, moved);
}

/* The defragmentation under way: its gang moves onto the freed node once
 * the jobs moved off it stopped (this round is at their stop, or later);
 * it ends when the gang has moved, no longer wants a node, or the time
 * for the movers to stop has passed. Before arrivals, so none of them
 * takes the freed GPUs. */
static int df_finish(struct gandiva *g, const struct gp_view *v,
                     struct gp_plan *p)
{
    const struct gp_job *j = NULL;
    bool moved;
    int rc;

    if (!g->df_busy)
        return GP_OK;
    for (size_t i = 0; i < gp_view_nrunning(v) && !j; i++)
        if (gp_job_handle(gp_view_running_at(v, i)) == g->df_job)
            j = gp_view_running_at(v, i);
    if (!j || gp_view_now(v) >= g->df_until || !df_wants(g, v, p, j) ||
        !df_may_move(v, j)) {
        g->df_busy = false;
        return GP_OK;
    }
    if ((rc = df_move(g, v, p, j, g->df_node, &moved)) != GP_OK)
        return rc;
    if (moved)
        g->df_busy = false;
    return moved ? GP_OK : gp_plan_wake_at(p, g->df_until);
}

/* A gang that wants a node, and what orders them: time-slicing ones
 * first (they run at half pace or less), then the larger. */
struct df_cand {
    const struct gp_job *job;
    uint32_t shared, at;
};

static int df_cand_cmp(const void *pa, const void *pb)
{
    const struct df_cand *a = pa, *b = pb;

    if (a->shared != b->shared)
        return a->shared > b->shared ? -1 : 1;
    if (a->job->where.gpus != b->job->where.gpus)
        return a->job->where.gpus > b->job->where.gpus ? -1 : 1;
    return a->at < b->at ? -1 : a->at > b->at;
}

/* Is some UP node of `type` free enough for `gpus` already (nothing to
 * defragment: moving onto it is migration's or locality's)? */
static bool some_node_free(const struct gp_cluster *cl, uint8_t type,
                           uint32_t gpus)
{
    for (uint32_t n = 0; n < gp_cluster_nnodes(cl); n++)
        if (gp_cluster_node_state(cl, n) == GP_NODE_UP &&
            gp_cluster_node_type(cl, n) == type &&
            gp_cluster_node_free(cl, n) >= gpus)
            return true;
    return false;
}

/* Start a defragmentation (the paper's migration to defragment): for the
 * first gang that wants a node and can have one, free the node where the
 * fewest GPUs must move by moving its single-node jobs, the largest first,
 * to the fullest other nodes that hold them (gp__defrag_node); the gang
 * follows once they stopped - at once under the free model, else in a
 * later round (df_finish). A shape (size, type) that found no node is not
 * tried again this round; one a protection kept from moving asks for a
 * round when the protection ends. */
static int defrag(struct gandiva *g, const struct gp_view *v, struct gp_plan *p,
                  const struct dset *s, size_t ns)
{
    const struct gp_cluster *cl = gp_view_cluster(v);
    struct df_cand *c;
    size_t nc = 0;
    struct {
        uint32_t gpus;
        uint8_t type;
    } failed[16];
    size_t nfailed = 0;
    int64_t wake = GP_TIME_MAX;

    if (g->df_busy)
        return GP_OK;
    if (!(c = gp_arena_alloc(gp_view_scratch(v), (ns + 1) * sizeof(*c))))
        return GP_ENOMEM;
    for (size_t i = 0; i < ns; i++) {
        /* of a set taking turns, the latest to join moves */
        const struct gp_job *j = s[i].m[s[i].n - 1].job;
        int64_t at;

        if (s[i].joiner || !df_wants(g, v, p, j))
            continue;
        if (!df_may_move(v, j)) {
            at = gp_view_preemptible_at(v, j);
            if (at > gp_view_now(v) && at < wake &&
                gp_view_loss_if_preempted(v, j) == 0)
                wake = at;
            continue;
        }
        c[nc].job = j;
        c[nc].shared = height_of(v, &j->where) > 1;
        c[nc].at = (uint32_t)nc;
        nc++;
    }
    qsort(c, nc, sizeof(*c), df_cand_cmp);
    for (size_t i = 0; i < nc; i++) {
        const struct gp_job *j = c[i].job;
        struct df_ctx ctx = {g, j};
        struct gp__defrag_ask ask = {.gpus = j->where.gpus,
                                     .type = j->where.type,
                                     .thorough = true,
                                     .movable = df_movable,
                                     .ctx = &ctx};
        uint32_t node;
        bool moved, tried = false;
        int rc;

        for (size_t k = 0; k < nfailed && !tried; k++)
            tried = failed[k].gpus == ask.gpus && failed[k].type == ask.type;
        if (tried || some_node_free(cl, ask.type, ask.gpus))
            continue;
        if ((rc = gp__defrag_node(v, p, &ask, &node, &moved, &wake)) != GP_OK)
            return rc;
        if (!moved) {
            if (nfailed < sizeof(failed) / sizeof(failed[0])) {
                failed[nfailed].gpus = ask.gpus;
                failed[nfailed].type = ask.type;
                nfailed++;
            }
            continue;
        }
        g->df_busy = true;
        g->df_job = gp_job_handle(j);
        g->df_node = node;
        g->df_until = gp_view_now(v) + gp_view_switch_cost_us(v) + GP_US_PER_S;
        return df_finish(g, v, p); /* under the free model, now */
    }
    /* a protection kept a gang or a mover: try again when it ends */
    return wake < GP_TIME_MAX ? gp_plan_wake_at(p, wake) : GP_OK;
}

static int gandiva_schedule(void *priv, const struct gp_view *v,
                            struct gp_plan *p)
{
    struct gandiva *g = priv;
    struct gp_pending_iter it;
    const struct gp_job *job;
    struct dset *s;
    size_t ns;
    bool waiting = false, stale = false, started_any = false;
    bool colocate = gp_view_model(v) != GP_PLACE_COUNT;
    int rc;

    if ((rc = group(v, &s, &ns)) != GP_OK)
        return rc;
    g->nnodes = (uint32_t)gp_cluster_nnodes(gp_view_cluster(v));
    g->fresh =
        gp_arena_alloc(gp_view_scratch(v), (g->nnodes + 1) * sizeof(*g->fresh));
    if (!g->fresh)
        return GP_ENOMEM;
    memset(g->fresh, 0, (g->nnodes + 1) * sizeof(*g->fresh));
    /* a gang whose node was freed for it takes it before anyone else */
    if (colocate && (rc = df_finish(g, v, p)) != GP_OK)
        return rc;
    /* arrivals first: on free GPUs, on GPUs grown jobs give back, on
     * shared GPUs */
    if ((rc = gp_pending_iter_init(&it, v)) != GP_OK)
        return rc;
    while ((job = gp_pending_iter_next(&it))) {
        bool started = false;

        if (gp_plan_has(p, job))
            continue;
        rc = start_free(g, v, p, job, s, ns);
        if (rc == GP_OK) {
            started_any = true;
            continue;
        }
        if (rc != GP_ENOFIT && rc != GP_EPLAN)
            return rc;
        if (g->grow &&
            (rc = shrink_for(g, v, p, job, s, ns, &started)) != GP_OK)
            return rc;
        if (!started && colocate && job->demand.gpus &&
            (rc = share(g, v, p, job, s, ns, &started)) != GP_OK)
            return rc;
        if (!started) {
            waiting = true;
            gp_pending_iter_skip_shape(&it);
        }
        started_any = started_any || started;
    }
    /* then GPUs still free: off shared devices, then to grow */
    if (colocate && g->migrate &&
        (rc = migrate_off(g, v, p, s, ns, g->share)) != GP_OK)
        return rc;
    if (colocate && g->migrate && g->locality &&
        (rc = consolidate(g, v, p, s, ns)) != GP_OK)
        return rc;
    /* free GPUs go to a job that waits before they are gathered */
    if (colocate && g->migrate && g->defrag && !waiting &&
        (rc = defrag(g, v, p, s, ns)) != GP_OK)
        return rc;
    if (g->grow && !waiting) {
        for (size_t i = 0; i < ns && gp_view_free_gpus(v) > 0; i++) {
            const struct gp_job *r = s[i].m[0].job;

            if (s[i].n != 1 || r->state != GP_JOB_RUNNING ||
                gp_plan_has(p, r) || r->max_gpus <= r->where.gpus ||
                (colocate && height_of(v, &r->where) != 1))
                continue;
            if ((rc = gp__grow_towards(v, p, r, r->max_gpus)) != GP_OK)
                return rc;
        }
    }
    /* every job at the pace its devices give it */
    for (size_t i = 0; i < ns && colocate; i++)
        if ((rc = repace(g, v, p, &s[i], &stale)) != GP_OK)
            return rc;
    /* a job still starting is paced once it runs; a job started now may
     * host one that waits */
    if (stale || (waiting && started_any))
        return gp_plan_wake_at(p, gp_view_now(v) + GP_US_PER_S);
    return GP_OK;
}

const struct gp_policy_ops gp_policy_gandiva = {
    .name = "gandiva",
    .summary = "Gandiva: every job starts at once - on free GPUs, else "
               "time-slicing or packed on a running job's; moved to GPUs "
               "that free, elastic jobs grown into idle ones",
    .preemptive = true,
    .rounds_when_idle = true, /* re-pace, move and grow with none waiting */
    .colocates = true,
    .init = gandiva_init,
    .fini = gandiva_fini,
    .rank = gp__rank_arrival, /* Arrival order. */
    .schedule = gandiva_schedule,
};
