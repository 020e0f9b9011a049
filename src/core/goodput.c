/* goodput.c - Pollux's goodput model from per-model measurements
 * (goodput.h; the artifact's simulator/applications.py and goodput.py).
 *
 * Key decision: step times are looked up, not fitted. A placement the
 * profiles measured (up to four nodes here) is interpolated linearly in
 * the per-GPU batch size, as the artifact does. Any other placement
 * (five nodes or more, or more than 9 replicas on a node) is interpolated
 * over the grid of (nodes, replicas, batch size) means of every measured
 * placement plus the scalability rows: linearly in the batch size, then in
 * the replicas, then in the nodes, each clamped to the measured range.
 * The artifact interpolates that grid by Delaunay simplices
 * (LinearNDInterpolator); on grid points both agree, between them they
 * differ a little (docs/speed.md, "Goodput").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpupool/goodput.h"

struct curve { /* step time against per-GPU batch size */
    double *bsz, *step, *sync;
    uint32_t n, cap;
};

struct placed {  /* a measured placement */
    uint64_t id; /* its digits, in the smallest rotation */
    struct curve c;
};

struct point {
    uint32_t nodes, replicas;
    double bsz, step, sync;
    uint32_t count; /* rows averaged into it */
};

struct valid { /* a validation run at one global batch size */
    uint32_t bsz;
    double *progress, *sqr, *var;
    uint32_t n, cap;
};

struct model {
    char *name;
    struct placed *pl;
    uint32_t npl, cappl;
    struct point *pts; /* the grid, sorted by (nodes, replicas, bsz) */
    uint32_t npts, cappts;
    struct valid *v; /* sorted by batch size once finished */
    uint32_t nv, capv;
    double *prog; /* progress after e epochs, e = 0..epochs */
    struct gp_goodput_limits lim;
    bool finished;
};

struct gp_goodput {
    struct model *m;
    uint32_t n, cap;
};

static int grow(void **p, uint32_t *cap, uint32_t need, size_t size)
{
    uint32_t c = *cap ? *cap : 8;
    void *q;

    if (need <= *cap)
        return GP_OK;
    while (c < need)
        c *= 2;
    if (!(q = realloc(*p, (size_t)c * size)))
        return GP_ENOMEM;
    *p = q;
    *cap = c;
    return GP_OK;
}

/* Room for one more in three parallel arrays of n (capacity *cap). */
static int grow3(double **a, double **b, double **c, uint32_t *cap, uint32_t n)
{
    double **arr[3] = {a, b, c};
    uint32_t want = *cap ? 2 * *cap : 16;

    if (n < *cap)
        return GP_OK;
    for (int i = 0; i < 3; i++) {
        double *x = realloc(*arr[i], want * sizeof(double));

        if (!x)
            return GP_ENOMEM; /* those grown keep the old elements */
        *arr[i] = x;
    }
    *cap = want;
    return GP_OK;
}

int gp_goodput_new(struct gp_goodput **out)
{
    return (*out = calloc(1, sizeof(**out))) ? GP_OK : GP_ENOMEM;
}

static void curve_free(struct curve *c)
{
    free(c->bsz);
    free(c->step);
    free(c->sync);
}

void gp_goodput_free(struct gp_goodput *g)
{
    if (!g)
        return;
    for (uint32_t i = 0; i < g->n; i++) {
        struct model *m = &g->m[i];

        for (uint32_t k = 0; k < m->npl; k++)
            curve_free(&m->pl[k].c);
        for (uint32_t k = 0; k < m->nv; k++) {
            free(m->v[k].progress);
            free(m->v[k].sqr);
            free(m->v[k].var);
        }
        free(m->pl);
        free(m->pts);
        free(m->v);
        free(m->prog);
        free(m->name);
    }
    free(g->m);
    free(g);
}

int gp_goodput_add_model(struct gp_goodput *g, const char *name,
                         uint32_t *model)
{
    uint32_t k;

    if (!name || !*name)
        return GP_EINVAL;
    if (gp_goodput_find(g, name, &k))
        return GP_EEXIST;
    if (grow((void **)&g->m, &g->cap, g->n + 1, sizeof(*g->m)))
        return GP_ENOMEM;
    memset(&g->m[g->n], 0, sizeof(g->m[g->n]));
    if (!(g->m[g->n].name = strdup(name)))
        return GP_ENOMEM;
    *model = g->n++;
    return GP_OK;
}

/* The digits of a placement read in its smallest rotation (the artifact
 * normalises placements so): 0 if a count is 0 or over 9. */
static uint64_t placement_id(const uint32_t *per_node, uint32_t n)
{
    uint64_t best = 0;

    if (n == 0 || n > 18)
        return 0;
    for (uint32_t r = 0; r < n; r++) {
        uint64_t id = 0;

        for (uint32_t i = 0; i < n; i++) {
            uint32_t d = per_node[(r + i) % n];

            if (d == 0 || d > 9)
                return 0;
            id = id * 10 + d;
        }
        if (r == 0 || id < best)
            best = id;
    }
    return best;
}

static int curve_add(struct curve *c, double bsz, double step, double sync)
{
    uint32_t i;

    if (grow3(&c->bsz, &c->step, &c->sync, &c->cap, c->n))
        return GP_ENOMEM;
    /* keep it sorted by batch size (rows come sorted; insert if not) */
    for (i = c->n; i > 0 && c->bsz[i - 1] > bsz; i--) {
        c->bsz[i] = c->bsz[i - 1];
        c->step[i] = c->step[i - 1];
        c->sync[i] = c->sync[i - 1];
    }
    c->bsz[i] = bsz;
    c->step[i] = step;
    c->sync[i] = sync;
    c->n++;
    return GP_OK;
}

/* Linear interpolation on a sorted curve, clamped to its ends. */
static double curve_at(const struct curve *c, double x, double *sync)
{
    uint32_t i = 1;
    double t;

    if (c->n == 1 || x <= c->bsz[0]) {
        *sync = c->sync[0];
        return c->step[0];
    }
    if (x >= c->bsz[c->n - 1]) {
        *sync = c->sync[c->n - 1];
        return c->step[c->n - 1];
    }
    while (c->bsz[i] < x)
        i++;
    t = (x - c->bsz[i - 1]) / (c->bsz[i] - c->bsz[i - 1]);
    *sync = c->sync[i - 1] + t * (c->sync[i] - c->sync[i - 1]);
    return c->step[i - 1] + t * (c->step[i] - c->step[i - 1]);
}

static bool good_times(double bsz, double step, double sync)
{
    return isfinite(bsz) && bsz >= 1 && isfinite(step) && step > 0 &&
           isfinite(sync) && sync >= 0 && sync <= step;
}

static int point_add(struct model *m, uint32_t nodes, uint32_t replicas,
                     double bsz, double step, double sync)
{
    for (uint32_t i = 0; i < m->npts; i++) {
        struct point *p = &m->pts[i];

        if (p->nodes == nodes && p->replicas == replicas && p->bsz == bsz) {
            /* a mean of the rows at one grid point */
            p->step = (p->step * p->count + step) / (p->count + 1);
            p->sync = (p->sync * p->count + sync) / (p->count + 1);
            p->count++;
            return GP_OK;
        }
    }
    if (grow((void **)&m->pts, &m->cappts, m->npts + 1, sizeof(*m->pts)))
        return GP_ENOMEM;
    m->pts[m->npts++] = (struct point){nodes, replicas, bsz, step, sync, 1};
    return GP_OK;
}

int gp_goodput_add_step(struct gp_goodput *g, uint32_t model,
                        const char *placement, double local_bsz, double step,
                        double sync)
{
    struct model *m;
    uint32_t per[20], n = 0, replicas = 0;
    uint64_t id;
    int rc;

    if (model >= g->n || !placement || !good_times(local_bsz, step, sync))
        return GP_EINVAL;
    m = &g->m[model];
    for (const char *s = placement; *s; s++) {
        if (*s < '1' || *s > '9' || n == 18)
            return GP_EINVAL;
        per[n++] = (uint32_t)(*s - '0');
        replicas += per[n - 1];
    }
    if (!(id = placement_id(per, n)))
        return GP_EINVAL;
    if ((rc = point_add(m, n, replicas, local_bsz, step, sync)) != GP_OK)
        return rc;
    for (uint32_t i = 0; i < m->npl; i++)
        if (m->pl[i].id == id)
            return curve_add(&m->pl[i].c, local_bsz, step, sync);
    if (grow((void **)&m->pl, &m->cappl, m->npl + 1, sizeof(*m->pl)))
        return GP_ENOMEM;
    memset(&m->pl[m->npl], 0, sizeof(m->pl[m->npl]));
    m->pl[m->npl].id = id;
    return curve_add(&m->pl[m->npl++].c, local_bsz, step, sync);
}

int gp_goodput_add_scale(struct gp_goodput *g, uint32_t model, uint32_t nodes,
                         uint32_t replicas, double local_bsz, double step,
                         double sync)
{
    if (model >= g->n || nodes < 1 || replicas < nodes ||
        !good_times(local_bsz, step, sync))
        return GP_EINVAL;
    return point_add(&g->m[model], nodes, replicas, local_bsz, step, sync);
}

int gp_goodput_add_valid(struct gp_goodput *g, uint32_t model,
                         uint32_t batch_size, double progress, double sqr,
                         double var)
{
    struct model *m;
    struct valid *v = NULL;

    if (model >= g->n || batch_size < 1 || !isfinite(progress) ||
        progress <= 0 || !isfinite(sqr) || !isfinite(var) || sqr < 0 || var < 0)
        return GP_EINVAL;
    m = &g->m[model];
    for (uint32_t i = 0; i < m->nv; i++)
        if (m->v[i].bsz == batch_size)
            v = &m->v[i];
    if (!v) {
        if (grow((void **)&m->v, &m->capv, m->nv + 1, sizeof(*m->v)))
            return GP_ENOMEM;
        v = &m->v[m->nv++];
        memset(v, 0, sizeof(*v));
        v->bsz = batch_size;
    }
    if (v->n && progress < v->progress[v->n - 1])
        return GP_EINVAL;
    if (grow3(&v->progress, &v->sqr, &v->var, &v->cap, v->n))
        return GP_ENOMEM;
    v->progress[v->n] = progress;
    v->sqr[v->n] = sqr;
    v->var[v->n] = var;
    v->n++;
    return GP_OK;
}

static int cmp_valid(const void *a, const void *b)
{
    const struct valid *x = a, *y = b;

    return (x->bsz > y->bsz) - (x->bsz < y->bsz);
}

static int cmp_point(const void *a, const void *b)
{
    const struct point *x = a, *y = b;

    if (x->nodes != y->nodes)
        return x->nodes < y->nodes ? -1 : 1;
    if (x->replicas != y->replicas)
        return x->replicas < y->replicas ? -1 : 1;
    return (x->bsz > y->bsz) - (x->bsz < y->bsz);
}

int gp_goodput_finish(struct gp_goodput *g, uint32_t model, uint32_t max_local,
                      char *err, size_t errlen)
{
    struct model *m;
    double lo = INFINITY, hi = 0;

    if (model >= g->n)
        return GP_EINVAL;
    m = &g->m[model];
    if (m->npl == 0 || m->nv == 0) {
        snprintf(err, errlen, "model %s: %s", m->name,
                 m->npl ? "no validation runs" : "no step times");
        return GP_EINVAL;
    }
    qsort(m->v, m->nv, sizeof(*m->v), cmp_valid);
    qsort(m->pts, m->npts, sizeof(*m->pts), cmp_point);
    m->lim.init_bsz = m->v[0].bsz;
    m->lim.max_bsz = m->v[m->nv - 1].bsz;
    m->lim.epochs = UINT32_MAX;
    for (uint32_t i = 0; i < m->nv; i++)
        if (m->v[i].n < m->lim.epochs)
            m->lim.epochs = m->v[i].n;
    for (uint32_t i = 0; i < m->npl; i++) {
        const struct curve *c = &m->pl[i].c;

        lo = fmin(lo, c->bsz[0]);
        hi = fmax(hi, c->bsz[c->n - 1]);
    }
    m->lim.min_local = (uint32_t)lo;
    m->lim.max_local = (uint32_t)hi;
    if (max_local > 0 && max_local < m->lim.max_local)
        m->lim.max_local = max_local;
    if (m->lim.max_bsz < m->lim.min_local) {
        snprintf(err, errlen,
                 "model %s: its largest batch size %u is below the smallest "
                 "per-GPU batch size %u",
                 m->name, m->lim.max_bsz, m->lim.min_local);
        return GP_EINVAL;
    }
    free(m->prog);
    if (!(m->prog = calloc((size_t)m->lim.epochs + 1, sizeof(double))))
        return GP_ENOMEM;
    /* the progress after e epochs: the least any run had then (the
     * artifact's get_progress; it never falls, as no run's does) */
    for (uint32_t e = 1; e <= m->lim.epochs; e++) {
        double p = INFINITY;

        for (uint32_t i = 0; i < m->nv; i++)
            p = fmin(p, m->v[i].progress[e - 1]);
        m->prog[e] = p;
    }
    m->finished = true;
    return GP_OK;
}

bool gp_goodput_find(const struct gp_goodput *g, const char *name,
                     uint32_t *model)
{
    if (!g || !name)
        return false;
    for (uint32_t i = 0; i < g->n; i++)
        if (strcmp(g->m[i].name, name) == 0) {
            *model = i;
            return true;
        }
    return false;
}

size_t gp_goodput_nmodels(const struct gp_goodput *g)
{
    return g ? g->n : 0;
}

const char *gp_goodput_name(const struct gp_goodput *g, uint32_t model)
{
    return model < g->n ? g->m[model].name : NULL;
}

const struct gp_goodput_limits *gp_goodput_limits(const struct gp_goodput *g,
                                                  uint32_t model)
{
    return &g->m[model].lim;
}

/* ---- step times --------------------------------------------------------- */

/* Interpolate in the batch size among the grid points [i, j) (one node
 * and replica count), clamped. */
static double grid_bsz(const struct point *p, uint32_t n, double bsz,
                       double *sync)
{
    uint32_t i = 1;
    double t;

    if (n == 1 || bsz <= p[0].bsz) {
        *sync = p[0].sync;
        return p[0].step;
    }
    if (bsz >= p[n - 1].bsz) {
        *sync = p[n - 1].sync;
        return p[n - 1].step;
    }
    while (p[i].bsz < bsz)
        i++;
    t = (bsz - p[i - 1].bsz) / (p[i].bsz - p[i - 1].bsz);
    *sync = p[i - 1].sync + t * (p[i].sync - p[i - 1].sync);
    return p[i - 1].step + t * (p[i].step - p[i - 1].step);
}

/* Within one node count (points [0, n)): bracket the replicas, clamped. */
static double grid_replicas(const struct point *p, uint32_t n, double replicas,
                            double bsz, double *sync)
{
    uint32_t lo_at = 0, lo_n = 0, hi_at = 0, hi_n = 0;
    double lo_r = -1, hi_r = -1, s0, s1, y0, y1, t;

    for (uint32_t i = 0; i < n;) {
        uint32_t k = i;

        while (k < n && p[k].replicas == p[i].replicas)
            k++;
        if (p[i].replicas <= replicas) {
            lo_at = i, lo_n = k - i, lo_r = p[i].replicas;
        }
        if (p[i].replicas >= replicas && hi_r < 0) {
            hi_at = i, hi_n = k - i, hi_r = p[i].replicas;
        }
        i = k;
    }
    if (lo_r < 0)
        return grid_bsz(p + hi_at, hi_n, bsz, sync);
    if (hi_r < 0 || hi_r == lo_r)
        return grid_bsz(p + lo_at, lo_n, bsz, sync);
    y0 = grid_bsz(p + lo_at, lo_n, bsz, &s0);
    y1 = grid_bsz(p + hi_at, hi_n, bsz, &s1);
    t = (replicas - lo_r) / (hi_r - lo_r);
    *sync = s0 + t * (s1 - s0);
    return y0 + t * (y1 - y0);
}

static double grid_at(const struct model *m, double nodes, double replicas,
                      double bsz, double *sync)
{
    uint32_t lo_at = 0, lo_n = 0, hi_at = 0, hi_n = 0;
    double lo = -1, hi = -1, s0, s1, y0, y1, t;

    for (uint32_t i = 0; i < m->npts;) {
        uint32_t k = i;

        while (k < m->npts && m->pts[k].nodes == m->pts[i].nodes)
            k++;
        if (m->pts[i].nodes <= nodes) {
            lo_at = i, lo_n = k - i, lo = m->pts[i].nodes;
        }
        if (m->pts[i].nodes >= nodes && hi < 0) {
            hi_at = i, hi_n = k - i, hi = m->pts[i].nodes;
        }
        i = k;
    }
    if (lo < 0)
        return grid_replicas(m->pts + hi_at, hi_n, replicas, bsz, sync);
    if (hi < 0 || hi == lo)
        return grid_replicas(m->pts + lo_at, lo_n, replicas, bsz, sync);
    y0 = grid_replicas(m->pts + lo_at, lo_n, replicas, bsz, &s0);
    y1 = grid_replicas(m->pts + hi_at, hi_n, replicas, bsz, &s1);
    t = (nodes - lo) / (hi - lo);
    *sync = s0 + t * (s1 - s0);
    return y0 + t * (y1 - y0);
}

double gp_goodput_step(const struct gp_goodput *g, uint32_t model,
                       const uint32_t *per_node, uint32_t nnodes,
                       double local_bsz, double *sync)
{
    const struct model *m = &g->m[model];
    uint32_t per[GP_GOODPUT_MAX_NODES], n = 0, replicas = 0;
    uint64_t id;
    double s, y;

    for (uint32_t i = 0; i < nnodes && n < GP_GOODPUT_MAX_NODES; i++)
        if (per_node[i]) {
            per[n++] = per_node[i];
            replicas += per_node[i];
        }
    if (!sync)
        sync = &s;
    if (n == 0) {
        *sync = 0;
        return INFINITY;
    }
    if ((id = placement_id(per, n)))
        for (uint32_t i = 0; i < m->npl; i++)
            if (m->pl[i].id == id)
                return curve_at(&m->pl[i].c, local_bsz, sync);
    /* the artifact caps the nodes at 16 here */
    y = grid_at(m, n < 16 ? n : 16, replicas, local_bsz, sync);
    return y;
}

/* ---- statistical efficiency ------------------------------------------ */

void gp_goodput_grad(const struct gp_goodput *g, uint32_t model, double bsz,
                     uint32_t epoch, double *sqr, double *var)
{
    const struct model *m = &g->m[model];
    const struct valid *lo = &m->v[0], *hi = &m->v[m->nv - 1];
    uint32_t e0, e1;
    double t;

    /* the validated batch sizes around it (the artifact asserts it lies
     * within them; clamped here) */
    for (uint32_t i = 0; i < m->nv; i++) {
        if (m->v[i].bsz <= bsz)
            lo = &m->v[i];
        if (m->v[i].bsz >= bsz) {
            hi = &m->v[i];
            break;
        }
    }
    if (bsz < m->v[0].bsz)
        lo = hi = &m->v[0];
    e0 = epoch < lo->n ? epoch : lo->n - 1;
    e1 = epoch < hi->n ? epoch : hi->n - 1;
    if (lo == hi) {
        *sqr = lo->sqr[e0];
        *var = lo->var[e0];
        return;
    }
    t = (bsz - lo->bsz) / (double)(hi->bsz - lo->bsz);
    *sqr = (1 - t) * lo->sqr[e0] + t * hi->sqr[e1];
    *var = (1 - t) * lo->var[e0] + t * hi->var[e1];
}

double gp_goodput_progress(const struct gp_goodput *g, uint32_t model,
                           uint32_t epoch)
{
    const struct model *m = &g->m[model];

    return m->prog[epoch < m->lim.epochs ? epoch : m->lim.epochs];
}

static double gain_of(double sqr, double var, double scale)
{
    double denom = var / scale + sqr;

    return denom > 0 ? (var + sqr) / denom : 1.0;
}

double gp_goodput_rate(const struct gp_goodput *g, uint32_t model,
                       const uint32_t *per_node, uint32_t nnodes,
                       struct gp_goodput_conf conf, uint32_t epoch)
{
    const struct model *m = &g->m[model];
    uint32_t replicas = 0;
    double sqr, var, sync, step, bsz;

    for (uint32_t i = 0; i < nnodes; i++)
        replicas += per_node[i];
    if (!replicas || !conf.atomic)
        return 0;
    bsz = (double)replicas * conf.atomic * (conf.accum + 1);
    step = gp_goodput_step(g, model, per_node, nnodes, conf.atomic, &sync);
    gp_goodput_grad(g, model, bsz, epoch, &sqr, &var);
    return gain_of(sqr, var, bsz / m->lim.init_bsz) /
           (step + conf.accum * (step - sync));
}

static uint32_t ceil_eps(double x)
{
    double c = ceil(x - 1e-8);

    return c < 1 ? 1 : (uint32_t)c;
}

struct gp_goodput_conf gp_goodput_fixed(const struct gp_goodput *g,
                                        uint32_t model, uint32_t replicas,
                                        uint32_t bsz)
{
    const struct model *m = &g->m[model];
    struct gp_goodput_conf c;
    uint32_t local, count, cap;

    if (replicas == 0)
        return (struct gp_goodput_conf){0, 0};
    local = ceil_eps((double)bsz / replicas);
    c.accum = ceil_eps((double)local / m->lim.max_local) - 1;
    if (replicas == 1 && bsz > m->lim.init_bsz && c.accum < 1)
        c.accum = 1;
    c.atomic = ceil_eps((double)local / (c.accum + 1));
    count = replicas * (c.accum + 1);
    cap = m->lim.max_bsz / count;
    if (cap >= 1 && c.atomic > cap)
        c.atomic = cap;
    return c;
}

struct gp_goodput_conf gp_goodput_best(const struct gp_goodput *g,
                                       uint32_t model, const uint32_t *per_node,
                                       uint32_t nnodes, double sqr, double var,
                                       double *goodput)
{
    const struct model *m = &g->m[model];
    const struct gp_goodput_limits *l = &m->lim;
    struct gp_goodput_conf best = {0, 0};
    uint32_t replicas = 0, count, cap;
    double lo, hi, top = 0;

    for (uint32_t i = 0; i < nnodes; i++)
        replicas += per_node[i];
    if (goodput)
        *goodput = 0;
    if (!replicas)
        return best;
    lo = fmax(l->init_bsz, (double)l->min_local * replicas);
    hi = l->max_bsz;
    for (int k = 0; k < 50; k++) {
        /* numpy's geomspace(lo, hi): 50 points, both ends included */
        double bsz = lo * pow(hi / lo, k / 49.0), local = bsz / replicas, y,
               sync, step, total, b;
        struct gp_goodput_conf c;
        double acc = ceil(local / l->max_local - 1e-8) - 1;

        if (acc < 0)
            acc = 0;
        if (replicas == 1 && local > l->init_bsz + 1e-8 && acc < 1)
            acc = 1;
        c.accum = (uint32_t)acc;
        c.atomic = ceil_eps(local / (c.accum + 1));
        if (c.atomic < l->min_local || c.atomic > l->max_local)
            continue;
        b = (double)replicas * c.atomic * (c.accum + 1);
        step = gp_goodput_step(g, model, per_node, nnodes, c.atomic, &sync);
        total = c.accum * (step - sync) + step;
        y = gain_of(sqr, var, b / l->init_bsz) / total;
        if (y > top) {
            top = y;
            best = c;
        }
    }
    if (!best.atomic) /* nothing valid: the smallest batch it can take */
        return gp_goodput_fixed(g, model, replicas, (uint32_t)lo);
    count = replicas * (best.accum + 1);
    cap = l->max_bsz / count;
    if (cap >= 1 && best.atomic > cap)
        best.atomic = cap;
    if (goodput)
        *goodput = top;
    return best;
}
