/* fmt_gavel.c - Gavel's job traces (Narayanan et al., OSDI'20): the per-VC
 * Philly traces msr/seed=S/<vc>.trace (7 tab-separated fields, no header)
 * and the testbed traces physical_cluster/NAME.trace (10 fields).
 *
 * A Gavel job is an amount of work (total_steps), not a time. Its duration
 * is total_steps / throughput(V100, job_type, scale_factor), the throughput
 * of the job running alone from Gavel's own table, embedded at build time
 * (gavel_throughputs.c). The table measured 1, 2, 4 and 8 GPUs (A3C,
 * CycleGAN and Recommendation 1 GPU only), but about a tenth of the
 * Philly-derived rows ask for other scales (3, 7, 12, 16, ... 64). For those
 * the figure of the same job_type at the largest measured scale s0 <= s (the
 * smallest measured if none is) is scaled by s / s0: ideal data-parallel
 * scaling. That is optimistic (real jobs scale sublinearly, so such jobs run
 * shorter here than they would), and docs/traces.md says so. Only a
 * job_type the table lacks altogether is a malformed row.
 *
 * One file is one VC (tenant = its base name without ".trace"); a tarball
 * of .trace files replays several VCs together, each file its own tenant:
 *     tar czf philly-vcs.tar.gz -C gavel/msr/seed=0 .
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/csv.h"
#include "trace/gavel_throughputs.h"
#include "trace/reader.h"

#define NAME_MAX_LEN 128

struct gavel {
    struct gp_input *in;
    int nfields;  /* 7 or 10 for the current member; 0 = unknown */
    bool started; /* the first member has been taken */
    bool done;
    char tenant[NAME_MAX_LEN];
    char id[NAME_MAX_LEN + 24];
    struct gp_csv_row row;
};

/* Field positions in the two layouts (slo -1: none). */
struct layout {
    int job_type, total_steps, scale_factor, arrival_time, slo;
};
static const struct layout layout7 = {0, 4, 6, 5, -1};
static const struct layout layout10 = {0, 5, 6, 9, 8};

static int cmp_tput(const void *key, const void *elem)
{
    const struct gp__gavel_tput *k = key, *e = elem;
    int c = strcmp(k->job_type, e->job_type);

    if (c)
        return c;
    return (k->scale > e->scale) - (k->scale < e->scale);
}

const struct gp__gavel_tput *gp__gavel_tput_find(const char *job_type,
                                                 size_t len, uint32_t scale)
{
    char buf[NAME_MAX_LEN];
    struct gp__gavel_tput key;

    if (len >= sizeof(buf))
        return NULL;
    memcpy(buf, job_type, len);
    buf[len] = '\0';
    key.job_type = buf;
    key.scale = scale;
    return bsearch(&key, gp__gavel_tputs, gp__gavel_ntputs,
                   sizeof(gp__gavel_tputs[0]), cmp_tput);
}

/* The index of the first entry of job_type (len bytes) in the table, or
 * gp__gavel_ntputs when the type is not there. */
static size_t first_of_type(const char *job_type, size_t len)
{
    char buf[NAME_MAX_LEN];
    size_t lo = 0, hi = gp__gavel_ntputs;

    if (len >= sizeof(buf))
        return gp__gavel_ntputs;
    memcpy(buf, job_type, len);
    buf[len] = '\0';
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (strcmp(gp__gavel_tputs[mid].job_type, buf) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < gp__gavel_ntputs && strcmp(gp__gavel_tputs[lo].job_type, buf))
        lo = gp__gavel_ntputs;
    return lo;
}

/* Is this job type in the table at all (any scale)? */
static bool known_type(const char *job_type, size_t len)
{
    return first_of_type(job_type, len) < gp__gavel_ntputs;
}

double gp__gavel_v100_tput(const char *job_type, size_t len, uint32_t scale,
                           uint32_t *measured_scale)
{
    const struct gp__gavel_tput *best = NULL, *smallest = NULL;
    size_t first = first_of_type(job_type, len);

    if (scale == 0)
        return 0;
    /* The type's entries follow in ascending scale: keep the last one
     * <= scale, and the first, in case none is. */
    for (size_t i = first;
         i < gp__gavel_ntputs && strcmp(gp__gavel_tputs[i].job_type,
                                        gp__gavel_tputs[first].job_type) == 0;
         i++) {
        const struct gp__gavel_tput *t = &gp__gavel_tputs[i];

        if (!(t->v100 > 0))
            continue; /* no V100 figure at this scale */
        if (!smallest)
            smallest = t;
        if (t->scale <= scale)
            best = t;
    }
    if (!best)
        best = smallest;
    if (!best)
        return 0;
    if (measured_scale)
        *measured_scale = best->scale;
    return best->v100 * ((double)scale / (double)best->scale);
}

static bool ends_with(const char *s, size_t len, const char *suffix)
{
    size_t n = strlen(suffix);

    return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

/* "seed=0/0e4a51.trace" -> "0e4a51"; compression suffixes go too. */
static void tenant_of(const char *member, char *out, size_t size)
{
    const char *base = gp_path_base(member);
    size_t len = strlen(base);

    if (ends_with(base, len, ".gz"))
        len -= 3;
    else if (ends_with(base, len, ".xz"))
        len -= 3;
    if (ends_with(base, len, ".trace") && len > 6)
        len -= 6;
    if (len >= size)
        len = size - 1;
    memcpy(out, base, len);
    out[len] = '\0';
}

static bool is_uint(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

static bool is_decimal(const char *s)
{
    char *end;

    if (!*s)
        return false;
    (void)strtod(s, &end);
    return *end == '\0';
}

static int gavel_probe(const char *line, size_t len, const char *member)
{
    char buf[4096];
    struct gp_csv_row row;
    const struct layout *l;
    int score;

    (void)member;
    if (len >= sizeof(buf) || !memchr(line, '\t', len))
        return 0;
    memcpy(buf, line, len);
    buf[len] = '\0';
    if (gp_csv_split(&row, buf, len, '\t', NULL, NULL) != GP_OK)
        return 0;
    if (row.n == 7)
        l = &layout7;
    else if (row.n == 10)
        l = &layout10;
    else
        return 0;
    if (!is_uint(row.f[l->total_steps]) || !is_uint(row.f[l->scale_factor]) ||
        !is_decimal(row.f[l->arrival_time]))
        return 0;
    score = 60;
    if (known_type(row.f[l->job_type], row.len[l->job_type]))
        score = 95;
    return score;
}

/* Step to the next member that is a .trace file (every member of a plain
 * stream). 1 = at one, 0 = none left. */
static int next_trace_member(struct gavel *g, struct gp_diag *diag)
{
    for (;;) {
        const char *name;
        int rc;

        if (g->started) {
            if ((rc = gp_input_next_member(g->in, &name, diag)) <= 0)
                return rc;
        } else {
            g->started = true;
            name = gp_input_member(g->in);
            if (!name)
                return 0;
        }
        if (gp_input_is_tar(g->in) && !ends_with(name, strlen(name), ".trace"))
            continue;
        tenant_of(name, g->tenant, sizeof(g->tenant));
        g->nfields = 0;
        return 1;
    }
}

static int gavel_open(void **priv, struct gp_input *in,
                      const struct gp_trace_opts *opts, struct gp_diag *diag)
{
    struct gavel *g = calloc(1, sizeof(*g));
    int rc;

    (void)opts;
    if (!g)
        return gp_diag_set(diag, GP_ENOMEM, gp_input_name(in), "out of memory");
    g->in = in;
    rc = next_trace_member(g, diag);
    if (rc <= 0) {
        free(g);
        if (rc == 0)
            return gp_diag_set(diag, GP_EPARSE, gp_input_name(in),
                               "no .trace file in the archive");
        return rc;
    }
    *priv = g;
    return GP_OK;
}

static int gavel_row(struct gavel *g, struct gp_job_spec *out,
                     struct gp_diag *diag)
{
    const struct gp_csv_row *row = &g->row;
    const struct layout *l = g->nfields == 7 ? &layout7 : &layout10;
    const char *type = row->f[l->job_type];
    uint64_t steps;
    uint32_t scale;
    int64_t submit_us;
    double tput, dur_s, slo = -1;
    char q[64];
    int rc;

    if ((rc = gp_csv_u32(g->in, "scale_factor", row->f[l->scale_factor], 1,
                         GP_TRACE_MAX_GPUS, &scale, diag)) != GP_OK ||
        (rc = gp_csv_u64(g->in, "total_steps", row->f[l->total_steps], 1,
                         UINT64_C(1) << 53, &steps, diag)) != GP_OK ||
        (rc = gp_csv_seconds(g->in, "arrival_time", row->f[l->arrival_time], 0,
                             GP_TRACE_MAX_SUBMIT_US, &submit_us, diag)) !=
            GP_OK)
        return rc;
    /* the SLO: complete within SLO x its duration (the artifact's
     * SLO x duration + arrival); negative: none */
    if (l->slo >= 0 && (rc = gp_csv_double(g->in, "SLO", row->f[l->slo], -1e300,
                                           1000, &slo, diag)) != GP_OK)
        return rc;
    if (!known_type(type, row->len[l->job_type]))
        return gp_csv_field_error(
            g->in, "job_type", diag, "%s is not in Gavel's throughput table",
            gp_csv_quote(type, row->len[l->job_type], q, sizeof(q)));
    /* a scale the table lacks is scaled from a measured one (top of file) */
    tput = gp__gavel_v100_tput(type, row->len[l->job_type], scale, NULL);
    if (!(tput > 0))
        return gp_csv_field_error(
            g->in, "scale_factor", diag,
            "Gavel's throughput table has no V100 figure for %s on %" PRIu32
            " GPUs",
            gp_csv_quote(type, row->len[l->job_type], q, sizeof(q)), scale);
    dur_s = (double)steps / tput;
    if (!(dur_s * 1e6 < (double)GP_TRACE_MAX_DURATION_US))
        return gp_csv_field_error(g->in, "total_steps", diag,
                                  "%llu steps at %.3g steps/s is longer "
                                  "than 10 years",
                                  (unsigned long long)steps, tput);
    snprintf(g->id, sizeof(g->id), "%s-%llu", g->tenant,
             (unsigned long long)gp_input_lineno(g->in));
    memset(out, 0, sizeof(*out));
    out->id = g->id;
    out->tenant = g->tenant;
    out->name = type;
    out->job_class = type; /* its row in Gavel's throughput table */
    out->gpus = scale;
    out->submit_us = submit_us;
    out->duration_us = (int64_t)llround(dur_s * 1e6);
    if (out->duration_us < 1)
        out->duration_us = 1;
    if (slo > 0)
        out->slo_us = (int64_t)llround(slo * (double)out->duration_us);
    return 1;
}

static int gavel_next(void *priv, struct gp_job_spec *out, struct gp_diag *diag)
{
    struct gavel *g = priv;

    for (;;) {
        char *line;
        size_t len;
        int rc;

        if (g->done)
            return 0;
        if ((rc = gp_input_getline(g->in, &line, &len, diag)) < 0)
            return rc;
        if (rc == 0) {
            if ((rc = next_trace_member(g, diag)) < 0)
                return rc;
            if (rc == 0) {
                g->done = true;
                return 0;
            }
            continue;
        }
        if (len == 0)
            continue;
        if ((rc = gp_csv_split(&g->row, line, len, '\t', g->in, diag)) != GP_OK)
            return rc;
        if (g->nfields == 0) {
            if (g->row.n != 7 && g->row.n != 10)
                return gp_diag_set(diag, GP_EPARSE, gp_input_where(g->in),
                                   "%zu tab-separated fields; a Gavel trace "
                                   "has 7 (msr) or 10 (physical_cluster)",
                                   g->row.n);
            g->nfields = (int)g->row.n;
        } else if (g->row.n != (size_t)g->nfields) {
            return gp_diag_set(diag, GP_EPARSE, gp_input_where(g->in),
                               "%zu tab-separated fields where this file has "
                               "%d",
                               g->row.n, g->nfields);
        }
        return gavel_row(g, out, diag);
    }
}

static void gavel_close(void *priv)
{
    free(priv);
}

const struct gp_trace_reader_ops gp_trace_reader_gavel = {
    .name = "gavel",
    .summary = "Gavel .trace files (7- or 10-field TSV; a .tar.gz of them "
               "replays several VCs); durations from Gavel's V100 "
               "throughputs",
    .preset = NULL,
    .probe = gavel_probe,
    .open = gavel_open,
    .next = gavel_next,
    .close = gavel_close,
};

/* Gavel's table as a speed model: each job type's measured throughput on
 * V100, P100 and K80 at each measured scale, relative to the V100 (on
 * which the reader computes durations), "cannot run" where Gavel's figure
 * is 0, and each pair's throughputs packed onto the same GPUs where Gavel
 * could pack it there (both figures > 0). */
int gp_trace_gavel_speeds(struct gp_speed_table **out, bool spread)
{
    static const char *const types[] = {"V100", "P100", "K80"};
    struct gp_speed_table *t;
    int rc;

    if ((rc = gp_speed_table_new(&t, "V100")) != GP_OK)
        return rc;
    for (size_t i = 0; i < gp__gavel_ntputs; i++) {
        const struct gp__gavel_tput *e = &gp__gavel_tputs[i];
        const double v[] = {e->v100, e->p100, e->k80};
        const double u[] = {e->v100u, e->p100u, e->k80u};

        for (size_t k = 0; k < 3; k++) {
            /* Gavel's 0: measured, and the job cannot run there */
            if ((rc = v[k] > 0
                          ? gp_speed_table_set(t, e->job_type, types[k],
                                               e->scale, v[k])
                          : gp_speed_table_set_none(t, e->job_type, types[k],
                                                    e->scale)) != GP_OK)
                break;
            if (spread && u[k] > 0 && e->scale > 1 &&
                (rc = gp_speed_table_set_spread(t, e->job_type, types[k],
                                                e->scale, u[k])) != GP_OK)
                break;
            rc = GP_OK;
        }
        if (rc != GP_OK)
            goto fail;
    }
    for (size_t i = 0; i < gp__gavel_npairs; i++) {
        const struct gp__gavel_pair *p = &gp__gavel_pairs[i];
        const double *v[] = {p->v100, p->p100, p->k80};

        for (size_t k = 0; k < 3; k++) {
            if (!(v[k][0] > 0 && v[k][1] > 0))
                continue; /* Gavel cannot pack them on this type */
            if ((rc = gp_speed_table_set_pair(t, p->a, p->b, types[k], p->scale,
                                              v[k][0], v[k][1])) != GP_OK)
                goto fail;
        }
    }
    *out = t;
    return GP_OK;
fail:
    gp_speed_table_free(t);
    return rc;
}
