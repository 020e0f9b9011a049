/* output.c - results as JSON, as a text table, and as a per-job CSV.
 *
 * Determinism is the point: the same runs give byte-identical bytes. JSON
 * keys come in a fixed order (docs/metrics.md); every real is rounded to 6
 * decimals (microseconds, for figures in seconds) and printed with 15
 * significant digits, which writes such a value back as its short decimal
 * ("0.25", "86400.5"). Wall-clock figures (wall_s, events_per_s) appear only
 * when the caller asks for them. The CSV prints times from the integer
 * microseconds, with no floating point at all.
 */
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "gpupool/report.h"
#include "sim/metrics_priv.h"

/* ---- the rows of the summary table -------------------------------------- */

#define ROW(label, kind, field)                                                \
    {label, kind, offsetof(struct gp_summary, field), false}
#define GROUP(label, kind, field)                                              \
    {label, kind, offsetof(struct gp_summary, field), true}

const struct gp__row gp__rows[] = {
    GROUP("jobs", GP__ROW_COUNT, jobs),
    ROW("completed", GP__ROW_COUNT, completed),
    ROW("rejected", GP__ROW_COUNT, rejected),
    ROW("unfinished", GP__ROW_COUNT, unfinished),
    GROUP("avg JCT", GP__ROW_TIME, avg_jct_s),
    ROW("p50 JCT", GP__ROW_TIME, p50_jct_s),
    ROW("p95 JCT", GP__ROW_TIME, p95_jct_s),
    ROW("p99 JCT", GP__ROW_TIME, p99_jct_s),
    GROUP("avg wait", GP__ROW_TIME, avg_wait_s),
    ROW("p50 wait", GP__ROW_TIME, p50_wait_s),
    ROW("p95 wait", GP__ROW_TIME, p95_wait_s),
    ROW("p99 wait", GP__ROW_TIME, p99_wait_s),
    GROUP("makespan", GP__ROW_TIME, makespan_s),
    ROW("GPU utilization (%)", GP__ROW_PCT, gpu_utilization),
    ROW("avg queue length (jobs)", GP__ROW_NUM, avg_queue_len),
    GROUP("preemptions", GP__ROW_COUNT, preemptions),
    ROW("lost to restarts (GPU-h)", GP__ROW_GPUH, lost_gpu_s),
    GROUP("lower bound avg JCT", GP__ROW_TIME, lb_avg_jct_s),
    ROW("lower bound makespan", GP__ROW_TIME, lb_makespan_s),
    ROW("avg JCT / lower bound", GP__ROW_RATIO, avg_jct_ratio),
    ROW("makespan / lower bound", GP__ROW_RATIO, makespan_ratio),
    GROUP("prediction error p50 (%)", GP__ROW_PCT, pred_p50_rel_err),
    ROW("prediction error p90 (%)", GP__ROW_PCT, pred_p90_rel_err),
    ROW("underestimated (%)", GP__ROW_PCT, pred_underestimated),
    GROUP("rounds", GP__ROW_COUNT, rounds),
    ROW("events", GP__ROW_COUNT, events),
};
const size_t gp__nrows = sizeof(gp__rows) / sizeof(gp__rows[0]);

static double row_double(const struct gp__row *row, const struct gp_summary *s)
{
    double v;

    memcpy(&v, (const char *)s + row->off, sizeof(v));
    return v;
}

static uint64_t row_u64(const struct gp__row *row, const struct gp_summary *s)
{
    uint64_t v;

    memcpy(&v, (const char *)s + row->off, sizeof(v));
    return v;
}

struct gp__tunit gp__time_unit(double max_s)
{
    if (max_s < 120)
        return (struct gp__tunit){"s", 1};
    if (max_s < 2 * 3600)
        return (struct gp__tunit){"min", 60};
    if (max_s < 3 * 86400)
        return (struct gp__tunit){"h", 3600};
    return (struct gp__tunit){"d", 86400};
}

void gp__row_label(const struct gp__row *row, struct gp_metrics *const *runs,
                   size_t n, char *buf, size_t len, struct gp__tunit *unit)
{
    double max_s = 0;

    *unit = (struct gp__tunit){"", 1};
    if (row->kind != GP__ROW_TIME) {
        snprintf(buf, len, "%s", row->label);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        double v = row_double(row, gp_metrics_summary(runs[i]));

        if (v > max_s)
            max_s = v;
    }
    *unit = gp__time_unit(max_s);
    snprintf(buf, len, "%s (%s)", row->label, unit->name);
}

void gp__row_cell(const struct gp__row *row, const struct gp_summary *s,
                  struct gp__tunit unit, char *buf, size_t len)
{
    switch (row->kind) {
    case GP__ROW_COUNT:
        snprintf(buf, len, "%" PRIu64, row_u64(row, s));
        break;
    case GP__ROW_TIME:
        snprintf(buf, len, "%.2f", row_double(row, s) / unit.div_s);
        break;
    case GP__ROW_PCT:
        snprintf(buf, len, "%.1f", row_double(row, s) * 100);
        break;
    case GP__ROW_NUM:
        snprintf(buf, len, "%.2f", row_double(row, s));
        break;
    case GP__ROW_RATIO:
        snprintf(buf, len, "%.3f", row_double(row, s));
        break;
    case GP__ROW_GPUH:
        snprintf(buf, len, "%.2f", row_double(row, s) / 3600);
        break;
    }
}

void gp__run_name(struct gp_metrics *const *runs, size_t n, size_t i,
                  char *buf, size_t len)
{
    const struct gp_summary *s = gp_metrics_summary(runs[i]);
    bool clash = false;

    for (size_t a = 0; a < n && !clash; a++)
        for (size_t b = a + 1; b < n && !clash; b++)
            clash = strcmp(gp_metrics_summary(runs[a])->policy,
                           gp_metrics_summary(runs[b])->policy) == 0;
    if (clash)
        snprintf(buf, len, "%s/%s", s->policy, s->placement);
    else
        snprintf(buf, len, "%s", s->policy);
}

size_t gp__top_tenants(const struct gp_summary *s, size_t k, size_t *idx)
{
    size_t n = 0;

    /* insertion into a short sorted list: k is small */
    for (size_t t = 0; t < s->ntenants; t++) {
        size_t pos = n;

        while (pos > 0 && s->tenants[idx[pos - 1]].gpu_hours <
                              s->tenants[t].gpu_hours)
            pos--;
        if (pos >= k)
            continue;
        if (n < k)
            n++;
        memmove(idx + pos + 1, idx + pos, (n - 1 - pos) * sizeof(*idx));
        idx[pos] = t;
    }
    return n;
}

size_t gp__tenant_find(const struct gp_summary *s, const char *name)
{
    size_t lo = 0, hi = s->ntenants;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(s->tenants[mid].name, name);

        if (c == 0)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (size_t)-1;
}

/* ---- JSON --------------------------------------------------------------- */

static json_t *jreal(double x)
{
    if (!isfinite(x))
        x = 0;
    return json_real(round(x * 1e6) / 1e6 + 0.0); /* + 0.0: no "-0.0" */
}

static json_t *juint(uint64_t x)
{
    return json_integer(x > (uint64_t)INT64_MAX ? INT64_MAX : (json_int_t)x);
}

/* Set and count failures: jansson returns NULL on out of memory. */
static void put(json_t *o, const char *key, json_t *v, bool *ok)
{
    if (!v || json_object_set_new(o, key, v) != 0)
        *ok = false;
}

static json_t *run_json(const struct gp_summary *s, bool with_wall)
{
    json_t *o = json_object(), *tenants = json_object();
    bool ok = o && tenants;

    if (!ok)
        goto fail;
    put(o, "policy", json_string(s->policy), &ok);
    put(o, "placement", json_string(s->placement), &ok);
    put(o, "cluster_gpus", juint(s->cluster_gpus), &ok);
    put(o, "jobs", juint(s->jobs), &ok);
    put(o, "completed", juint(s->completed), &ok);
    put(o, "rejected", juint(s->rejected), &ok);
    put(o, "unfinished", juint(s->unfinished), &ok);
    put(o, "avg_jct_s", jreal(s->avg_jct_s), &ok);
    put(o, "p50_jct_s", jreal(s->p50_jct_s), &ok);
    put(o, "p95_jct_s", jreal(s->p95_jct_s), &ok);
    put(o, "p99_jct_s", jreal(s->p99_jct_s), &ok);
    put(o, "avg_wait_s", jreal(s->avg_wait_s), &ok);
    put(o, "p50_wait_s", jreal(s->p50_wait_s), &ok);
    put(o, "p95_wait_s", jreal(s->p95_wait_s), &ok);
    put(o, "p99_wait_s", jreal(s->p99_wait_s), &ok);
    put(o, "makespan_s", jreal(s->makespan_s), &ok);
    put(o, "gpu_utilization", jreal(s->gpu_utilization), &ok);
    put(o, "avg_queue_len", jreal(s->avg_queue_len), &ok);
    put(o, "preemptions", juint(s->preemptions), &ok);
    put(o, "lost_gpu_s", jreal(s->lost_gpu_s), &ok);
    put(o, "lb_avg_jct_s", jreal(s->lb_avg_jct_s), &ok);
    put(o, "lb_makespan_s", jreal(s->lb_makespan_s), &ok);
    put(o, "avg_jct_ratio", jreal(s->avg_jct_ratio), &ok);
    put(o, "makespan_ratio", jreal(s->makespan_ratio), &ok);
    put(o, "pred_p50_rel_err", jreal(s->pred_p50_rel_err), &ok);
    put(o, "pred_p90_rel_err", jreal(s->pred_p90_rel_err), &ok);
    put(o, "pred_underestimated", jreal(s->pred_underestimated), &ok);
    put(o, "rounds", juint(s->rounds), &ok);
    put(o, "events", juint(s->events), &ok);
    if (with_wall) {
        put(o, "wall_s", jreal(s->wall_s), &ok);
        put(o, "events_per_s",
            jreal(s->wall_s > 0 ? (double)s->events / s->wall_s : 0), &ok);
    }
    for (size_t i = 0; i < s->ntenants && ok; i++) {
        const struct gp_tenant_summary *t = &s->tenants[i];
        json_t *to = json_object();

        if (!to) {
            ok = false;
            break;
        }
        put(to, "jobs", juint(t->jobs), &ok);
        put(to, "completed", juint(t->completed), &ok);
        put(to, "avg_jct_s", jreal(t->avg_jct_s), &ok);
        put(to, "avg_wait_s", jreal(t->avg_wait_s), &ok);
        put(to, "p99_wait_s", jreal(t->p99_wait_s), &ok);
        put(to, "gpu_hours", jreal(t->gpu_hours), &ok);
        put(to, "share_of_gpu_time", jreal(t->share_of_gpu_time), &ok);
        put(to, "preemptions", juint(t->preemptions), &ok);
        put(tenants, t->name, to, &ok);
    }
    put(o, "tenants", tenants, &ok);
    tenants = NULL;
    if (ok)
        return o;
fail:
    json_decref(tenants);
    json_decref(o);
    return NULL;
}

int gp_output_json(FILE *out, struct gp_metrics *const *runs, size_t n,
                   bool array, bool with_wall)
{
    json_t *root = NULL;
    int rc = GP_ENOMEM;

    for (size_t i = 0; i < n; i++)
        if (!gp__metrics_finished(runs[i]))
            return GP_ESTATE;
    if (n == 0 && !array)
        return GP_EINVAL;
    if (n > 1 || array) {
        if (!(root = json_array()))
            return GP_ENOMEM;
        for (size_t i = 0; i < n; i++) {
            json_t *o = run_json(gp_metrics_summary(runs[i]), with_wall);

            if (!o || json_array_append_new(root, o) != 0)
                goto fail;
        }
    } else if (!(root = run_json(gp_metrics_summary(runs[0]), with_wall))) {
        return GP_ENOMEM;
    }
    rc = GP_EIO;
    if (json_dumpf(root, out, JSON_INDENT(2) | JSON_REAL_PRECISION(15)) != 0 ||
        fputc('\n', out) == EOF || ferror(out))
        goto fail;
    rc = GP_OK;
fail:
    json_decref(root);
    return rc;
}

/* ---- the text table ----------------------------------------------------- */

#define CELL 48
#define TOP_TENANTS 10

static void table_line(FILE *out, const char *label, int lw, char (*cells)[CELL],
                       size_t n, int cw)
{
    fprintf(out, "%-*s", lw, label);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "  %*s", cw, cells[i]);
    fputc('\n', out);
}

void gp_output_table(FILE *out, struct gp_metrics *const *runs, size_t n,
                     bool with_wall)
{
    char label[96], (*cells)[CELL];
    int lw = 28, cw = 10;
    size_t top[TOP_TENANTS], ntop = 0;
    const struct gp_summary *first;
    struct gp__tunit unit;

    if (n == 0 || !(cells = calloc(n, CELL)))
        return;
    first = gp_metrics_summary(runs[0]);
    for (size_t i = 0; i < n; i++) {
        gp__run_name(runs, n, i, cells[i], CELL);
        if ((int)strlen(cells[i]) > cw)
            cw = (int)strlen(cells[i]);
    }
    ntop = gp__top_tenants(first, TOP_TENANTS, top);
    for (size_t t = 0; t < ntop; t++)
        if ((int)strlen(first->tenants[top[t]].name) + 4 > lw)
            lw = (int)strlen(first->tenants[top[t]].name) + 4;
    if (lw > 60)
        lw = 60;
    table_line(out, "", lw, cells, n, cw);

    for (size_t r = 0; r < gp__nrows; r++) {
        if (r > 0 && gp__rows[r].group_start)
            fputc('\n', out);
        gp__row_label(&gp__rows[r], runs, n, label, sizeof(label), &unit);
        for (size_t i = 0; i < n; i++)
            gp__row_cell(&gp__rows[r], gp_metrics_summary(runs[i]), unit,
                         cells[i], CELL);
        table_line(out, label, lw, cells, n, cw);
    }
    if (with_wall) {
        for (size_t i = 0; i < n; i++)
            snprintf(cells[i], CELL, "%.3f",
                     gp_metrics_summary(runs[i])->wall_s);
        table_line(out, "wall time (s)", lw, cells, n, cw);
        for (size_t i = 0; i < n; i++) {
            const struct gp_summary *s = gp_metrics_summary(runs[i]);

            snprintf(cells[i], CELL, "%.0f",
                     s->wall_s > 0 ? (double)s->events / s->wall_s : 0.0);
        }
        table_line(out, "events/s", lw, cells, n, cw);
    }
    if (ntop) {
        static const char *const what[] = {"avg JCT", "avg wait",
                                           "GPU share (%)"};

        fprintf(out, "\ntenants: the %zu holding the most GPU time in %s\n",
                ntop, first->policy);
        for (size_t w = 0; w < 3; w++) {
            double max_s = 0;

            for (size_t i = 0; i < n && w < 2; i++) {
                const struct gp_summary *s = gp_metrics_summary(runs[i]);

                for (size_t t = 0; t < s->ntenants; t++) {
                    double v = w == 0 ? s->tenants[t].avg_jct_s
                                      : s->tenants[t].avg_wait_s;
                    if (v > max_s)
                        max_s = v;
                }
            }
            unit = gp__time_unit(max_s);
            if (w < 2)
                snprintf(label, sizeof(label), "%s (%s)", what[w], unit.name);
            else
                snprintf(label, sizeof(label), "%s", what[w]);
            fprintf(out, "%s\n", label);
            for (size_t t = 0; t < ntop; t++) {
                const char *name = first->tenants[top[t]].name;

                for (size_t i = 0; i < n; i++) {
                    const struct gp_summary *s = gp_metrics_summary(runs[i]);
                    size_t k = gp__tenant_find(s, name);
                    const struct gp_tenant_summary *ts =
                        k == (size_t)-1 ? NULL : &s->tenants[k];

                    if (!ts)
                        snprintf(cells[i], CELL, "-");
                    else if (w == 0)
                        snprintf(cells[i], CELL, "%.2f",
                                 ts->avg_jct_s / unit.div_s);
                    else if (w == 1)
                        snprintf(cells[i], CELL, "%.2f",
                                 ts->avg_wait_s / unit.div_s);
                    else
                        snprintf(cells[i], CELL, "%.1f",
                                 ts->share_of_gpu_time * 100);
                }
                snprintf(label, sizeof(label), "  %.*s", lw - 2, name);
                table_line(out, label, lw, cells, n, cw);
            }
        }
    }
    free(cells);
}

/* ---- the per-job CSV ---------------------------------------------------- */

/* Microseconds as seconds with 6 decimals, exactly. */
static void put_us(FILE *out, int64_t us)
{
    uint64_t a = us < 0 ? (uint64_t)0 - (uint64_t)us : (uint64_t)us;

    fprintf(out, "%s%" PRIu64 ".%06" PRIu64, us < 0 ? "-" : "",
            a / 1000000u, a % 1000000u);
}

/* RFC 4180: quote a field that holds a comma, a quote or a line break. */
static void put_field(FILE *out, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

int gp_metrics_write_jobs_csv(const struct gp_metrics *m, FILE *out)
{
    const struct gp_summary *s = gp_metrics_summary(m);

    if (!gp__metrics_finished(m))
        return GP_ESTATE;
    fputs("id,tenant,user,name,gpus,submit_s,first_start_s,end_s,wait_s,"
          "jct_s,duration_s,preemptions,starts,gpu_s,state\n",
          out);
    for (size_t i = 0; i < gp__metrics_njobs(m); i++) {
        const struct gp__job_rec *r = gp__metrics_job(m, i);
        const char *ext = gp__metrics_ext_id(m, r);
        bool started = r->first_start_us != GP_TIME_NONE;
        bool ended = r->end_us != GP_TIME_NONE;

        if (*ext)
            put_field(out, ext);
        else
            fprintf(out, "%zu", i);
        fputc(',', out);
        put_field(out, r->tenant < s->ntenants ? s->tenants[r->tenant].name
                                               : "");
        fputc(',', out);
        put_field(out, gp__metrics_str(m, r->user));
        fputc(',', out);
        put_field(out, gp__metrics_str(m, r->name));
        fprintf(out, ",%" PRIu32 ",", r->gpus);
        put_us(out, r->submit_us);
        fputc(',', out);
        if (started)
            put_us(out, r->first_start_us);
        fputc(',', out);
        if (ended)
            put_us(out, r->end_us);
        fputc(',', out);
        if (started)
            put_us(out, r->first_start_us - r->submit_us);
        fputc(',', out);
        if (ended)
            put_us(out, r->end_us - r->submit_us);
        fputc(',', out);
        put_us(out, r->duration_us);
        fprintf(out, ",%" PRIu32 ",%" PRIu32 ",", r->preemptions, r->starts);
        put_us(out, r->gpu_us);
        fprintf(out, ",%s\n",
                gp_job_state_name((enum gp_job_state)r->state));
    }
    return ferror(out) ? GP_EIO : GP_OK;
}
