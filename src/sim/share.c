/* share.c - the openb placement replay (gpupool share): its two CSV
 * readers and the event loop that places pods as they are created.
 *
 * Key decision: no queue and no retry. The FGD artifact replays openb by
 * creating pods one after another and counting those the scheduler cannot
 * place; doing the same keeps the figures comparable with the paper's and
 * makes "could not be placed" a property of the placer alone, not of a
 * queueing policy layered on top.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpupool/cluster.h"
#include "gpupool/share.h"

/* ---- CSV readers -------------------------------------------------------- */

#define MAX_COLS 32

/* One open CSV file: the current line split in place into fields. */
struct csv {
    FILE *f;
    const char *path;
    unsigned long line;
    char buf[GP_SHARE_MAX_LINE + 2];
    char *field[MAX_COLS];
    int nfields;
};

static int where(struct gp_diag *diag, int err, const struct csv *c,
                 const char *field, const char *fmt, const char *val)
{
    char at[160];

    snprintf(at, sizeof(at), "%s:%lu", c->path, c->line);
    if (field)
        return gp_diag_set(diag, err, at, "%s: %s '%.64s'", field, fmt, val);
    return gp_diag_set(diag, err, at, "%s", fmt);
}

/* Read and split the next line. 1 = a line, 0 = end of file, < 0 error.
 * Fields are not quoted in openb; a quote is refused by the number
 * parsers below rather than half-understood here. */
static int csv_next(struct csv *c, struct gp_diag *diag)
{
    if (!fgets(c->buf, sizeof(c->buf), c->f))
        return ferror(c->f) ? where(diag, GP_EIO, c, NULL, "read error", "")
                            : 0;
    c->line++;
    size_t n = strlen(c->buf);
    if (n && c->buf[n - 1] == '\n')
        c->buf[--n] = '\0';
    else if (!feof(c->f))
        return where(diag, GP_ERANGE, c, NULL,
                     "line longer than GP_SHARE_MAX_LINE (4096 bytes)", "");
    if (n && c->buf[n - 1] == '\r')
        c->buf[--n] = '\0';
    c->nfields = 0;
    for (char *p = c->buf;;) {
        if (c->nfields == MAX_COLS)
            return where(diag, GP_EPARSE, c, NULL, "more than 32 columns", "");
        c->field[c->nfields++] = p;
        p = strchr(p, ',');
        if (!p)
            break;
        *p++ = '\0';
    }
    return 1;
}

/* Map the header's names to columns: col[i] = column of names[i]. */
static int csv_header(struct csv *c, const char *const *names, int n, int *col,
                      struct gp_diag *diag)
{
    int rc = csv_next(c, diag);

    if (rc <= 0)
        return rc < 0 ? rc : where(diag, GP_EPARSE, c, NULL, "empty file", "");
    for (int i = 0; i < n; i++) {
        col[i] = -1;
        for (int j = 0; j < c->nfields; j++)
            if (!strcmp(c->field[j], names[i]))
                col[i] = j;
        if (col[i] < 0)
            return where(diag, GP_EPARSE, c, "header", "missing column",
                         names[i]);
    }
    return GP_OK;
}

static const char *csv_get(const struct csv *c, int col)
{
    return col < c->nfields ? c->field[col] : "";
}

static int parse_u64(const struct csv *c, const char *name, int col,
                     uint64_t max, uint64_t *out, struct gp_diag *diag)
{
    const char *s = csv_get(c, col);
    char *end;

    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *end || s[0] == '-' || s[0] == '+' || s[0] == ' ' || errno)
        return where(diag, GP_EPARSE, c, name, "not a whole number", s);
    if (v > max)
        return where(diag, GP_EPARSE, c, name, "out of range", s);
    *out = v;
    return GP_OK;
}

static int parse_u32(const struct csv *c, const char *name, int col,
                     uint32_t max, uint32_t *out, struct gp_diag *diag)
{
    uint64_t v = 0;
    int rc = parse_u64(c, name, col, max, &v, diag);

    if (rc == GP_OK)
        *out = (uint32_t)v;
    return rc;
}

/* A time in seconds: finite, >= 0; empty allowed when `empty` is given. */
static int parse_time(const struct csv *c, const char *name, int col,
                      double *empty, double *out, struct gp_diag *diag)
{
    const char *s = csv_get(c, col);
    char *end;

    if (!*s && empty) {
        *out = *empty;
        return GP_OK;
    }
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(v) || v < 0 || v > 1e15)
        return where(diag, GP_EPARSE, c, name, "not a time in seconds", s);
    *out = v;
    return GP_OK;
}

static int csv_open(struct csv *c, const char *path, struct gp_diag *diag)
{
    memset(c, 0, sizeof(*c) - sizeof(c->buf));
    c->path = path;
    c->f = fopen(path, "r");
    if (!c->f)
        return gp_diag_set(diag, GP_EIO, path, "cannot open: %s",
                           strerror(errno));
    return GP_OK;
}

/* Grow an array of `size`-byte items to hold n + 1 (cap: max items). */
static int grow(void **arr, size_t *cap, size_t n, size_t size, size_t max)
{
    if (n < *cap)
        return GP_OK;
    if (n >= max)
        return GP_ERANGE;
    size_t ncap = *cap ? *cap * 2 : 256;
    if (ncap > max)
        ncap = max;
    void *p = realloc(*arr, ncap * size);
    if (!p)
        return GP_ENOMEM;
    *arr = p;
    *cap = ncap;
    return GP_OK;
}

static void free_nodes(struct gp_share_node *v, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++) {
        free(v[i].name);
        free(v[i].model);
    }
}

static void free_pods(struct gp_share_pod *v, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        free(v[i].name);
}

/* A file's columns and what to do with one row of it. */
struct reader {
    const char *const *names;
    int ncols;
    size_t max_rows;
    /* Parse the row and append it to t (room for one is made). */
    int (*row)(const struct csv *c, const int *col, struct gp_share_trace *t,
               struct gp_diag *diag);
    /* Room for one more row: grow the array (cap, its capacity). */
    int (*room)(struct gp_share_trace *t, size_t *cap, size_t max);
    size_t *(*count)(struct gp_share_trace *t);
    void (*undo)(struct gp_share_trace *t, size_t from); /* drop from.. */
};

/* Open, map the header, read every row; on error t is as before. */
static int read_csv(struct gp_share_trace *t, const char *path,
                    const struct reader *rd, struct gp_diag *diag)
{
    int col[MAX_COLS];
    struct csv *c = malloc(sizeof(*c));
    size_t n0 = *rd->count(t), cap = n0;
    int rc;

    if (!c)
        return GP_ENOMEM;
    if ((rc = csv_open(c, path, diag)) != GP_OK) {
        free(c);
        return rc;
    }
    if ((rc = csv_header(c, rd->names, rd->ncols, col, diag)) != GP_OK)
        goto fail;
    while ((rc = csv_next(c, diag)) == 1) {
        if (c->nfields == 1 && !c->field[0][0])
            continue; /* a blank line */
        rc = rd->room(t, &cap, rd->max_rows);
        if (rc == GP_ERANGE)
            rc = where(diag, rc, c, NULL,
                       "more rows than GP_SHARE_MAX_NODES / _PODS", "");
        if (rc != GP_OK || (rc = rd->row(c, col, t, diag)) != GP_OK)
            goto fail;
    }
    if (rc < 0)
        goto fail;
    fclose(c->f);
    free(c);
    return GP_OK;
fail:
    rd->undo(t, n0);
    fclose(c->f);
    free(c);
    return rc;
}

static int node_row(const struct csv *c, const int *col,
                    struct gp_share_trace *t, struct gp_diag *diag)
{
    struct gp_share_node nd = {0};
    int rc;

    if (!*csv_get(c, col[0]))
        return where(diag, GP_EPARSE, c, "sn", "empty node name", "");
    if ((rc = parse_u32(c, "cpu_milli", col[1], UINT32_MAX, &nd.cpu_milli,
                        diag)) != GP_OK ||
        (rc = parse_u64(c, "memory_mib", col[2], UINT64_MAX / 4, &nd.mem_mib,
                        diag)) != GP_OK ||
        (rc = parse_u32(c, "gpu", col[3], GP_MAX_NODE_GPUS, &nd.gpus, diag)) !=
            GP_OK)
        return rc;
    nd.name = strdup(csv_get(c, col[0]));
    nd.model = strdup(csv_get(c, col[4]));
    if (!nd.name || !nd.model) {
        free(nd.name);
        free(nd.model);
        return GP_ENOMEM;
    }
    t->nodes[t->nnodes++] = nd;
    return GP_OK;
}

static int node_room(struct gp_share_trace *t, size_t *cap, size_t max)
{
    return grow((void **)&t->nodes, cap, t->nnodes, sizeof(*t->nodes), max);
}

static size_t *node_count(struct gp_share_trace *t)
{
    return &t->nnodes;
}

static void node_undo(struct gp_share_trace *t, size_t from)
{
    free_nodes(t->nodes, from, t->nnodes);
    t->nnodes = from;
}

int gp_share_read_nodes(struct gp_share_trace *t, const char *path,
                        struct gp_diag *diag)
{
    static const char *const names[] = {"sn", "cpu_milli", "memory_mib", "gpu",
                                        "model"};
    static const struct reader rd = {.names = names,
                                     .ncols = 5,
                                     .max_rows = GP_SHARE_MAX_NODES,
                                     .row = node_row,
                                     .room = node_room,
                                     .count = node_count,
                                     .undo = node_undo};

    return read_csv(t, path, &rd, diag);
}

/* The rules openb's task list keeps (its README): fractions only on a
 * single GPU, multi-GPU pods whole, CPU-only pods no share. */
static int check_pod(const struct csv *c, const struct gp_share_pod *p,
                     struct gp_diag *diag)
{
    char v[32];

    snprintf(v, sizeof(v), "%u", p->gpu_milli);
    if (p->num_gpu == 0 && p->gpu_milli != 0)
        return where(diag, GP_EPARSE, c, "gpu_milli",
                     "must be 0 when num_gpu is 0, not", v);
    if (p->num_gpu == 1 && p->gpu_milli == 0)
        return where(diag, GP_EPARSE, c, "gpu_milli",
                     "must be 1..1000 when num_gpu is 1, not", v);
    if (p->num_gpu > 1 && p->gpu_milli != GP_MILLI_PER_GPU)
        return where(diag, GP_EPARSE, c, "gpu_milli",
                     "must be 1000 when num_gpu > 1, not", v);
    if (p->deletion_s >= 0 && p->deletion_s < p->creation_s) {
        snprintf(v, sizeof(v), "%.0f", p->deletion_s);
        return where(diag, GP_EPARSE, c, "deletion_time",
                     "is before creation_time", v);
    }
    return GP_OK;
}

static int pod_row(const struct csv *c, const int *col,
                   struct gp_share_trace *t, struct gp_diag *diag)
{
    struct gp_share_pod p = {0};
    double none = -1;
    int rc;

    if ((rc = parse_u32(c, "cpu_milli", col[1], UINT32_MAX, &p.cpu_milli,
                        diag)) != GP_OK ||
        (rc = parse_u64(c, "memory_mib", col[2], UINT64_MAX / 4, &p.mem_mib,
                        diag)) != GP_OK ||
        (rc = parse_u32(c, "num_gpu", col[3], GP_MAX_NODE_GPUS, &p.num_gpu,
                        diag)) != GP_OK ||
        (rc = parse_u32(c, "gpu_milli", col[4], GP_MILLI_PER_GPU, &p.gpu_milli,
                        diag)) != GP_OK ||
        (rc = parse_time(c, "creation_time", col[5], NULL, &p.creation_s,
                         diag)) != GP_OK ||
        (rc = parse_time(c, "deletion_time", col[6], &none, &p.deletion_s,
                         diag)) != GP_OK ||
        (rc = check_pod(c, &p, diag)) != GP_OK)
        return rc;
    if (!(p.name = strdup(csv_get(c, col[0]))))
        return GP_ENOMEM;
    t->pods[t->npods++] = p;
    return GP_OK;
}

static int pod_room(struct gp_share_trace *t, size_t *cap, size_t max)
{
    return grow((void **)&t->pods, cap, t->npods, sizeof(*t->pods), max);
}

static size_t *pod_count(struct gp_share_trace *t)
{
    return &t->npods;
}

static void pod_undo(struct gp_share_trace *t, size_t from)
{
    free_pods(t->pods, from, t->npods);
    t->npods = from;
}

int gp_share_read_pods(struct gp_share_trace *t, const char *path,
                       struct gp_diag *diag)
{
    static const char *const names[] = {
        "name",      "cpu_milli",     "memory_mib",   "num_gpu",
        "gpu_milli", "creation_time", "deletion_time"};
    static const struct reader rd = {.names = names,
                                     .ncols = 7,
                                     .max_rows = GP_SHARE_MAX_PODS,
                                     .row = pod_row,
                                     .room = pod_room,
                                     .count = pod_count,
                                     .undo = pod_undo};

    return read_csv(t, path, &rd, diag);
}

void gp_share_trace_fini(struct gp_share_trace *t)
{
    free_nodes(t->nodes, 0, t->nnodes);
    free_pods(t->pods, 0, t->npods);
    free(t->nodes);
    free(t->pods);
    memset(t, 0, sizeof(*t));
}

/* ---- modes -------------------------------------------------------------- */

static const char *const mode_names[GP_SHARE_NMODES] = {"round-up", "best-fit",
                                                        "fgd"};

const char *gp_share_mode_name(enum gp_share_mode m)
{
    return (unsigned)m < GP_SHARE_NMODES ? mode_names[m] : "?";
}

int gp_share_mode_parse(const char *name, enum gp_share_mode *out)
{
    for (int i = 0; i < GP_SHARE_NMODES; i++)
        if (!strcmp(name, mode_names[i])) {
            *out = (enum gp_share_mode)i;
            return GP_OK;
        }
    return GP_EINVAL;
}

/* ---- the replay --------------------------------------------------------- */

/* What a pod asks of the cluster. CPUs are counted in milli-CPUs on both
 * sides (node cpus = cpu_milli), so nothing is rounded. A multi-GPU pod's
 * CPUs and memory are split evenly over its GPUs, rounded up (openb's
 * divide exactly). Under round-up a share asks for one whole GPU. */
static struct gp_demand pod_demand(const struct gp_share_pod *p, bool round_up)
{
    struct gp_demand d = {.type = GP_TYPE_ANY};

    if (p->num_gpu == 1 && p->gpu_milli < GP_MILLI_PER_GPU && !round_up) {
        d.gpu_milli = p->gpu_milli;
        d.cpus = p->cpu_milli;
        d.mem_mib = p->mem_mib;
    } else if (p->num_gpu) {
        d.gpus = p->num_gpu;
        d.cpus_per_gpu = (p->cpu_milli + p->num_gpu - 1) / p->num_gpu;
        d.mem_mib_per_gpu = (p->mem_mib + p->num_gpu - 1) / p->num_gpu;
    } else {
        d.cpus = p->cpu_milli;
        d.mem_mib = p->mem_mib;
    }
    return d;
}

static int shape_cmp(const void *a, const void *b)
{
    const struct gp_shape *x = a, *y = b;

    if (x->gpus != y->gpus)
        return x->gpus < y->gpus ? -1 : 1;
    if (x->gpu_milli != y->gpu_milli)
        return x->gpu_milli < y->gpu_milli ? -1 : 1;
    if (x->cpus != y->cpus)
        return x->cpus < y->cpus ? -1 : 1;
    return x->mem_mib < y->mem_mib ? -1 : x->mem_mib > y->mem_mib;
}

/* The trace's task shapes weighted by how many pods have each:
 * the workload FGD steers by and every mode's fragmentation is measured
 * against, so that the three modes are judged by the same yardstick. */
static int set_shapes(struct gp_cluster *c, const struct gp_share_trace *t,
                      struct gp_diag *diag)
{
    struct gp_shape *s = calloc(t->npods ? t->npods : 1, sizeof(*s));
    int rc;

    if (!s)
        return GP_ENOMEM;
    for (size_t i = 0; i < t->npods; i++) {
        const struct gp_share_pod *p = &t->pods[i];
        bool frac = p->num_gpu == 1 && p->gpu_milli < GP_MILLI_PER_GPU;

        s[i].gpus = frac ? 0 : p->num_gpu;
        s[i].gpu_milli = frac ? p->gpu_milli : 0;
        s[i].cpus = p->cpu_milli;
        s[i].mem_mib = p->mem_mib;
        s[i].weight = 1;
    }
    /* merged here: set_workload takes at most GP_MAX_SHAPES entries */
    qsort(s, t->npods, sizeof(*s), shape_cmp);
    size_t n = 0;
    for (size_t i = 0; i < t->npods; i++) {
        if (n && !shape_cmp(&s[n - 1], &s[i]))
            s[n - 1].weight++;
        else
            s[n++] = s[i];
    }
    if (n > GP_MAX_SHAPES) {
        free(s);
        return gp_diag_set(diag, GP_ERANGE, "pods",
                           "%zu distinct pod shapes, more than %d", n,
                           GP_MAX_SHAPES);
    }
    rc = gp_cluster_set_workload(c, s, (uint32_t)n, diag);
    free(s);
    return rc;
}

static int build(struct gp_cluster **out, const struct gp_share_trace *t,
                 struct gp_share_result *r, struct gp_diag *diag)
{
    struct gp_cluster *c;
    int rc = gp_cluster_new(&c);

    if (rc != GP_OK)
        return rc;
    for (size_t i = 0; i < t->nnodes; i++) {
        const struct gp_share_node *n = &t->nodes[i];
        /* A node needs at least one GPU in gpupool's cluster: CPU-only
         * nodes are left out and counted (docs/sharing.md). */
        struct gp_node_spec spec = {.name = n->name,
                                    .type = n->model[0] ? n->model : "gpu",
                                    .gpus = n->gpus,
                                    .cpus = n->cpu_milli,
                                    .mem_mib = n->mem_mib};

        if (!n->gpus) {
            r->nodes_skipped++;
            continue;
        }
        if ((rc = gp_cluster_add_node(c, &spec, diag)) != GP_OK)
            goto fail;
        r->nodes++;
    }
    if (!r->nodes) {
        rc = gp_diag_set(diag, GP_EINVAL, "nodes", "no node with a GPU");
        goto fail;
    }
    if ((rc = gp_cluster_seal(c)) != GP_OK ||
        (rc = set_shapes(c, t, diag)) != GP_OK)
        goto fail;
    *out = c;
    return GP_OK;
fail:
    gp_cluster_free(c);
    return rc;
}

/* A pod that holds resources until `end_s`: a min-heap on end_s. */
struct held {
    double end_s;
    size_t pod;
    struct gp_placement where;
};

struct heap {
    struct held *v;
    size_t n, cap;
};

static void heap_swap(struct heap *h, size_t a, size_t b)
{
    struct held x = h->v[a];

    h->v[a] = h->v[b];
    h->v[b] = x;
    /* an inline slot moves with its placement */
    if (h->v[a].where.nslots == 1)
        h->v[a].where.slots = &h->v[a].where.inline_slot;
    if (h->v[b].where.nslots == 1)
        h->v[b].where.slots = &h->v[b].where.inline_slot;
}

/* Earlier end first; equal ends by pod order, so runs are reproducible. */
static bool before(const struct held *a, const struct held *b)
{
    return a->end_s < b->end_s || (a->end_s == b->end_s && a->pod < b->pod);
}

static int heap_push(struct heap *h, const struct held *x)
{
    int rc = grow((void **)&h->v, &h->cap, h->n, sizeof(*h->v), SIZE_MAX / 64);

    if (rc != GP_OK)
        return rc;
    for (size_t i = 0; i < h->n; i++) /* realloc moved the inline slots */
        if (h->v[i].where.nslots == 1)
            h->v[i].where.slots = &h->v[i].where.inline_slot;
    size_t i = h->n++;
    h->v[i] = *x;
    if (h->v[i].where.nslots == 1)
        h->v[i].where.slots = &h->v[i].where.inline_slot;
    while (i && before(&h->v[i], &h->v[(i - 1) / 2])) {
        heap_swap(h, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
    return GP_OK;
}

static void heap_pop(struct heap *h)
{
    size_t i = 0;

    heap_swap(h, 0, --h->n);
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < h->n && before(&h->v[l], &h->v[m]))
            m = l;
        if (l + 1 < h->n && before(&h->v[l + 1], &h->v[m]))
            m = l + 1;
        if (m == i)
            break;
        heap_swap(h, i, m);
        i = m;
    }
}

static int by_creation(const void *a, const void *b)
{
    const struct gp_share_pod *const *x = a, *const *y = b;

    if ((*x)->creation_s != (*y)->creation_s)
        return (*x)->creation_s < (*y)->creation_s ? -1 : 1;
    return *x < *y ? -1 : *x > *y; /* stable: file order */
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct replay {
    struct gp_cluster *c;
    struct heap held;
    struct gp_share_result *r;
    uint64_t asked_milli; /* what running pods asked, before any rounding */
};

/* Milli-GPUs a pod really asks for (round-up allocates more). */
static uint64_t pod_milli(const struct gp_share_pod *p)
{
    return (uint64_t)p->num_gpu * p->gpu_milli;
}

static int sample(struct replay *x, double t_s)
{
    struct gp_share_sample *s = &x->r->series[x->r->nseries++];
    int rc = gp_cluster_fragmentation(x->c, NULL, 0, &s->frag_milli);

    s->t_s = t_s;
    s->alloc_rate = gp_cluster_alloc_rate(x->c);
    s->asked_rate = (double)x->asked_milli / (double)x->r->total_milli;
    s->idle_milli =
        (double)(gp_cluster_up_milli(x->c) - gp_cluster_alloc_milli(x->c));
    s->running = (uint32_t)x->held.n;
    return rc;
}

/* Give back every pod that ended at or before t_s. */
static void release(struct replay *x, const struct gp_share_trace *t,
                    double t_s, bool round_up)
{
    while (x->held.n && x->held.v[0].end_s <= t_s) {
        struct held *h = &x->held.v[0];
        struct gp_demand d = pod_demand(&t->pods[h->pod], round_up);

        gp_cluster_give(x->c, &h->where, &d);
        x->asked_milli -= pod_milli(&t->pods[h->pod]);
        gp_placement_fini(&h->where);
        heap_pop(&x->held);
    }
}

/* Place one pod; GP_ENOFIT when it does not fit on one node now. */
static int place(struct replay *x, const struct gp_share_trace *t, size_t i,
                 enum gp_share_mode mode, bool keep, struct gp_arena *scratch)
{
    const struct gp_share_pod *p = &t->pods[i];
    struct gp_demand d = pod_demand(p, mode == GP_SHARE_ROUNDUP);
    enum gp_share_placer placer =
        mode == GP_SHARE_FRAG ? GP_SHARE_FGD : GP_SHARE_BESTFIT;
    struct held h = {.end_s =
                         keep || p->deletion_s < 0 ? INFINITY : p->deletion_s,
                     .pod = i};
    struct gp_placement where;
    int rc;

    gp_arena_reset(scratch);
    rc = gp_cluster_fit_with(x->c, GP_PLACE_PACK, placer, &d, scratch, &where);
    if (rc != GP_OK)
        return rc;
    if (where.nslots > 1)
        return GP_ENOFIT; /* a pod runs on one node; pack found none */
    if ((rc = gp_placement_copy(&h.where, &where)) != GP_OK)
        return rc;
    if ((rc = gp_cluster_take(x->c, &h.where, &d)) != GP_OK ||
        (rc = heap_push(&x->held, &h)) != GP_OK) {
        if (rc != GP_EPLAN)
            gp_cluster_give(x->c, &h.where, &d);
        gp_placement_fini(&h.where);
        return rc;
    }
    x->asked_milli += pod_milli(p);
    return GP_OK;
}

static void summarise(struct gp_share_result *r)
{
    double pct_sum = 0;

    for (size_t k = 0; k < r->nseries; k++) {
        const struct gp_share_sample *s = &r->series[k];
        double pct =
            s->idle_milli > 0 ? 100 * s->frag_milli / s->idle_milli : 0;

        r->alloc_avg += s->alloc_rate / (double)r->nseries;
        r->asked_avg += s->asked_rate / (double)r->nseries;
        r->asked_end = s->asked_rate;
        r->frag_avg_milli += s->frag_milli / (double)r->nseries;
        pct_sum += pct;
        if (s->alloc_rate > r->alloc_peak)
            r->alloc_peak = s->alloc_rate;
        r->alloc_end = s->alloc_rate;
        r->frag_end_milli = s->frag_milli;
        r->frag_end_pct = pct;
    }
    r->frag_avg_pct = r->nseries ? pct_sum / (double)r->nseries : 0;
}

int gp_share_run(const struct gp_share_trace *t,
                 const struct gp_share_opts *opts, struct gp_share_result *out,
                 struct gp_diag *diag)
{
    double t0 = now_s();
    uint32_t nsteps = opts->samples ? opts->samples : 100;
    bool round_up = opts->mode == GP_SHARE_ROUNDUP;
    struct gp_share_result r = {.mode = opts->mode, .pods = t->npods};
    struct replay x = {.r = &r};
    const struct gp_share_pod **order = NULL;
    struct gp_arena scratch;
    bool failed_once = false;
    int rc;

    if ((unsigned)opts->mode >= GP_SHARE_NMODES || nsteps > 1000000)
        return gp_diag_set(diag, GP_EINVAL, "opts", "bad mode or samples");
    gp_arena_init(&scratch, 0);
    r.series = calloc(nsteps + 1, sizeof(*r.series));
    order = malloc((t->npods ? t->npods : 1) * sizeof(*order));
    if (!r.series || !order) {
        rc = GP_ENOMEM;
        goto fail;
    }
    if ((rc = build(&x.c, t, &r, diag)) != GP_OK)
        goto fail;
    r.total_milli = gp_cluster_up_milli(x.c);
    for (size_t i = 0; i < t->npods; i++)
        order[i] = &t->pods[i];
    qsort(order, t->npods, sizeof(*order), by_creation);

    /* Samples at first + k * span / nsteps, k = 0..nsteps, over the span
     * of creations; each sees every event at or before its time. */
    double first = t->npods ? order[0]->creation_s : 0;
    double span = t->npods ? order[t->npods - 1]->creation_s - first : 0;
    uint32_t k = 0;
    for (size_t i = 0; i <= t->npods; i++) {
        double at = i < t->npods ? order[i]->creation_s : INFINITY;

        for (; k <= nsteps; k++) {
            double ts = first + span * k / nsteps;
            if (ts >= at)
                break;
            release(&x, t, ts, round_up);
            if ((rc = sample(&x, ts)) != GP_OK)
                goto fail;
        }
        if (i == t->npods)
            break;
        release(&x, t, at, round_up);
        size_t pi = (size_t)(order[i] - t->pods);
        const struct gp_share_pod *p = order[i];
        double before_rate = gp_cluster_alloc_rate(x.c);
        rc = place(&x, t, pi, opts->mode, opts->no_deletions, &scratch);
        if (rc == GP_OK) {
            r.placed++;
            continue;
        }
        if (rc != GP_ENOFIT) {
            gp_diag_set(diag, rc, p->name, "placing the pod: %s",
                        gp_err_str(rc));
            goto fail;
        }
        r.failed++;
        if (!p->num_gpu)
            r.failed_cpu++;
        else if (p->num_gpu == 1 && p->gpu_milli < GP_MILLI_PER_GPU)
            r.failed_frac++;
        else
            r.failed_whole++;
        if (!failed_once) {
            failed_once = true;
            r.alloc_first_fail = before_rate;
            r.pods_before_fail = i;
        }
    }
    summarise(&r);
    if (!failed_once) {
        r.alloc_first_fail = r.alloc_end;
        r.pods_before_fail = t->npods;
    }
    rc = GP_OK;
fail:
    while (x.held.n) {
        gp_placement_fini(&x.held.v[0].where);
        heap_pop(&x.held);
    }
    free(x.held.v);
    gp_cluster_free(x.c);
    gp_arena_fini(&scratch);
    free(order);
    if (rc != GP_OK) {
        free(r.series);
        return rc;
    }
    r.wall_s = now_s() - t0;
    *out = r;
    return GP_OK;
}

void gp_share_result_fini(struct gp_share_result *r)
{
    free(r->series);
    r->series = NULL;
    r->nseries = 0;
}
