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

static bool has_load(const struct gp_summary *s)
{
    return s->offered_load_known;
}

static bool has_guarantee_samples(const struct gp_summary *s)
{
    return s->guarantee_samples > 0;
}

bool gp__multi_tenant(const struct gp_summary *s)
{
    return s->ntenants > 1;
}

static bool has_fairshare_samples(const struct gp_summary *s)
{
    return s->fairshare_samples > 0 && gp__multi_tenant(s);
}

static bool has_guarantees(const struct gp_summary *s)
{
    return s->guaranteed_tenants > 0;
}

static bool has_episodes(const struct gp_summary *s)
{
    return s->reclaim_episodes > 0;
}

static bool has_waited_episodes(const struct gp_summary *s)
{
    return s->reclaim_episodes_waited > 0;
}

static bool has_predictions(const struct gp_summary *s)
{
    return s->predicted > 0;
}

static bool has_slo(const struct gp_summary *s)
{
    return s->slo_jobs > 0;
}

static bool has_rejected(const struct gp_summary *s)
{
    return s->rejected > 0;
}

static bool has_arrivals(const struct gp_summary *s)
{
    return s->submit_span_s > 0;
}

/* Waits by width are shown when some job was a gang. */
static bool has_gangs(const struct gp_summary *s)
{
    return s->completed_width[1] + s->completed_width[2] > 0;
}

/* ... and the part of them owed GPUs, with tenants to owe them */
static bool has_owed(const struct gp_summary *s)
{
    return has_gangs(s) && has_fairshare_samples(s);
}

static bool has_saturated(const struct gp_summary *s)
{
    return s->saturated_s > 0;
}

/* Resizes are shown for a run with elastic jobs, or one that resized. */
static bool has_resizes(const struct gp_summary *s)
{
    return s->elastic || s->resizes > 0;
}

static bool has_retunes(const struct gp_summary *s)
{
    return s->retunes > 0;
}

static bool has_migrations(const struct gp_summary *s)
{
    return s->migrations > 0;
}

static bool has_colocated(const struct gp_summary *s)
{
    return s->colocated_gpu_s > 0;
}

static bool has_unfair(const struct gp_summary *s)
{
    return s->explained && s->fairshare_samples > 0;
}

#define ROW_IF(label, kind, field, has)                                        \
    {                                                                          \
        label, kind, offsetof(struct gp_summary, field), false, has            \
    }
#define GROUP_IF(label, kind, field, has)                                      \
    {                                                                          \
        label, kind, offsetof(struct gp_summary, field), true, has             \
    }
#define ROW(label, kind, field) ROW_IF(label, kind, field, NULL)
#define GROUP(label, kind, field) GROUP_IF(label, kind, field, NULL)

const struct gp__row gp__rows[] = {
    GROUP("jobs", GP__ROW_COUNT, jobs),
    ROW("completed", GP__ROW_COUNT, completed),
    ROW("rejected", GP__ROW_COUNT, rejected),
    ROW_IF("  larger than the cluster", GP__ROW_COUNT, rejected_too_large,
           has_rejected),
    ROW_IF("  GPU type not in the cluster", GP__ROW_COUNT, rejected_gpu_type,
           has_rejected),
    ROW_IF("  by the policy", GP__ROW_COUNT, rejected_policy, has_rejected),
    ROW_IF("  other reason", GP__ROW_COUNT, rejected_other, has_rejected),
    ROW_IF("  largest rejected (GPUs)", GP__ROW_COUNT, largest_rejected_gpus,
           has_rejected),
    ROW("unfinished", GP__ROW_COUNT, unfinished),
    ROW_IF("completed with an SLO", GP__ROW_COUNT, slo_jobs, has_slo),
    ROW_IF("  SLO missed", GP__ROW_COUNT, slo_missed, has_slo),
    ROW_IF("offered load", GP__ROW_RATIO, offered_load, has_load),
    GROUP("avg JCT", GP__ROW_TIME, avg_jct_s),
    ROW("p50 JCT", GP__ROW_TIME, p50_jct_s),
    ROW("p95 JCT", GP__ROW_TIME, p95_jct_s),
    ROW("p99 JCT", GP__ROW_TIME, p99_jct_s),
    GROUP("avg wait", GP__ROW_TIME, avg_wait_s),
    ROW("p50 wait", GP__ROW_TIME, p50_wait_s),
    ROW("p95 wait", GP__ROW_TIME, p95_wait_s),
    ROW("p99 wait", GP__ROW_TIME, p99_wait_s),
    ROW_IF("avg wait, 1 GPU", GP__ROW_TIME, avg_wait_width_s[0], has_gangs),
    ROW_IF("avg wait, 2 GPUs to a node", GP__ROW_TIME, avg_wait_width_s[1],
           has_gangs),
    ROW_IF("avg wait, over a node", GP__ROW_TIME, avg_wait_width_s[2],
           has_gangs),
    ROW_IF("  while owed, 1 GPU", GP__ROW_TIME, avg_wait_owed_width_s[0],
           has_owed),
    ROW_IF("  while owed, 2 GPUs to a node", GP__ROW_TIME,
           avg_wait_owed_width_s[1], has_owed),
    ROW_IF("  while owed, over a node", GP__ROW_TIME, avg_wait_owed_width_s[2],
           has_owed),
    GROUP("makespan", GP__ROW_TIME, makespan_s),
    ROW_IF("arrival window", GP__ROW_TIME, submit_span_s, has_arrivals),
    ROW("GPU utilization, makespan (%)", GP__ROW_PCT, gpu_utilization),
    ROW("GPU utilization ceiling, makespan (%)", GP__ROW_PCT,
        gpu_utilization_ceiling),
    ROW_IF("GPU utilization, while jobs waited (%)", GP__ROW_PCT,
           gpu_utilization_saturated, has_saturated),
    ROW_IF("GPU utilization, arrivals (%)", GP__ROW_PCT,
           gpu_utilization_arrivals, has_arrivals),
    ROW("avg queue length, makespan (jobs)", GP__ROW_NUM, avg_queue_len),
    ROW_IF("avg queue length, arrivals (jobs)", GP__ROW_NUM,
           avg_queue_len_arrivals, has_arrivals),
    GROUP_IF("guarantee compliance (%)", GP__ROW_PCT, guarantee_compliance,
             has_guarantee_samples),
    ROW_IF("fair-share compliance (%)", GP__ROW_PCT, fairshare_compliance,
           has_fairshare_samples),
    ROW_IF("guarantee compliance, gang-aware (%)", GP__ROW_PCT,
           guarantee_compliance_gang, has_guarantee_samples),
    ROW_IF("fair-share compliance, gang-aware (%)", GP__ROW_PCT,
           fairshare_compliance_gang, has_fairshare_samples),
    ROW_IF("  short: gang granularity (%)", GP__ROW_PCT, unfair[GP_UNFAIR_GANG],
           has_unfair),
    ROW_IF("  short: reclaim in flight (%)", GP__ROW_PCT,
           unfair[GP_UNFAIR_IN_FLIGHT], has_unfair),
    ROW_IF("  short: idle GPUs would do (%)", GP__ROW_PCT,
           unfair[GP_UNFAIR_IDLE], has_unfair),
    ROW_IF("  short: victims free, none taken (%)", GP__ROW_PCT,
           unfair[GP_UNFAIR_NO_RECLAIM], has_unfair),
    ROW_IF("  short: victims protected (%)", GP__ROW_PCT,
           unfair[GP_UNFAIR_PROTECTED], has_unfair),
    ROW_IF("  short: borrowers' gangs too big (%)", GP__ROW_PCT,
           unfair[GP_UNFAIR_BIG_GANGS], has_unfair),
    ROW_IF("  short: nothing to take (%)", GP__ROW_PCT,
           unfair[GP_UNFAIR_NOTHING], has_unfair),
    ROW_IF("reclaim episodes", GP__ROW_COUNT, reclaim_episodes, has_guarantees),
    ROW_IF("reclaim delay p50", GP__ROW_TIME, reclaim_delay_p50_s,
           has_episodes),
    ROW_IF("reclaim delay p99", GP__ROW_TIME, reclaim_delay_p99_s,
           has_episodes),
    ROW_IF("reclaims that waited", GP__ROW_COUNT, reclaim_episodes_waited,
           has_episodes),
    ROW_IF("  their delay p50", GP__ROW_TIME, reclaim_waited_p50_s,
           has_waited_episodes),
    ROW_IF("  their delay p99", GP__ROW_TIME, reclaim_waited_p99_s,
           has_waited_episodes),
    GROUP("preemptions", GP__ROW_COUNT, preemptions),
    ROW("preemptions per job (mean)", GP__ROW_RATIO, preemptions_per_job_mean),
    ROW("preemptions per job (max)", GP__ROW_COUNT, preemptions_per_job_max),
    ROW("GPU time lost (GPU-h)", GP__ROW_GPUH, lost_gpu_s),
    ROW("lost work (GPU-h)", GP__ROW_GPUH, lost_work_gpu_s),
    ROW("lost to restarts (GPU-h)", GP__ROW_GPUH, restart_gpu_s),
    GROUP_IF("resizes", GP__ROW_COUNT, resizes, has_resizes),
    ROW_IF("  shrinks", GP__ROW_COUNT, shrinks, has_resizes),
    ROW_IF("  grows", GP__ROW_COUNT, grows, has_resizes),
    ROW_IF("  retunes", GP__ROW_COUNT, retunes, has_retunes),
    ROW_IF("migrations", GP__ROW_COUNT, migrations, has_migrations),
    ROW_IF("co-located GPU time (GPU-h)", GP__ROW_GPUH, colocated_gpu_s,
           has_colocated),
    GROUP("lower bound avg JCT", GP__ROW_TIME, lb_avg_jct_s),
    ROW("lower bound makespan", GP__ROW_TIME, lb_makespan_s),
    ROW("avg JCT / lower bound", GP__ROW_RATIO, avg_jct_ratio),
    ROW("makespan / lower bound", GP__ROW_RATIO, makespan_ratio),
    GROUP_IF("prediction error p50 (%)", GP__ROW_PCT, pred_p50_rel_err,
             has_predictions),
    ROW_IF("prediction error p90 (%)", GP__ROW_PCT, pred_p90_rel_err,
           has_predictions),
    ROW_IF("underestimated (%)", GP__ROW_PCT, pred_underestimated,
           has_predictions),
    GROUP("rounds", GP__ROW_COUNT, rounds),
    ROW("events", GP__ROW_COUNT, events),
};
const size_t gp__nrows = sizeof(gp__rows) / sizeof(gp__rows[0]);

/* ---- the rows of the tenant tables -------------------------------------- */

static bool t_guaranteed(const struct gp_summary *s,
                         const struct gp_tenant_summary *t)
{
    (void)s;
    return t->guarantee > 0;
}

static bool t_completed(const struct gp_summary *s,
                        const struct gp_tenant_summary *t)
{
    (void)s;
    return t->completed > 0;
}

static bool t_guarantee_samples(const struct gp_summary *s,
                                const struct gp_tenant_summary *t)
{
    (void)s;
    return t->guarantee_samples > 0;
}

static bool t_fairshare_samples(const struct gp_summary *s,
                                const struct gp_tenant_summary *t)
{
    return t->fairshare_samples > 0 && gp__multi_tenant(s);
}

static bool t_episodes(const struct gp_summary *s,
                       const struct gp_tenant_summary *t)
{
    (void)s;
    return t->reclaim_episodes > 0;
}

#define TROW(label, kind, field, has)                                          \
    {                                                                          \
        label, kind, offsetof(struct gp_tenant_summary, field), has            \
    }

const struct gp__trow gp__trows[] = {
    TROW("guarantee (GPUs)", GP__ROW_COUNT, guarantee, t_guaranteed),
    TROW("completed", GP__ROW_COUNT, completed, NULL),
    TROW("avg JCT", GP__ROW_TIME, avg_jct_s, t_completed),
    TROW("avg wait", GP__ROW_TIME, avg_wait_s, t_completed),
    TROW("p99 wait", GP__ROW_TIME, p99_wait_s, t_completed),
    TROW("share of GPU time (%)", GP__ROW_PCT, share_of_gpu_time, NULL),
    TROW("guarantee compliance (%)", GP__ROW_PCT, guarantee_compliance,
         t_guarantee_samples),
    TROW("fair-share compliance (%)", GP__ROW_PCT, fairshare_compliance,
         t_fairshare_samples),
    TROW("fair-share compliance, gang-aware (%)", GP__ROW_PCT,
         fairshare_compliance_gang, t_fairshare_samples),
    TROW("reclaim episodes", GP__ROW_COUNT, reclaim_episodes, t_guaranteed),
    TROW("reclaim delay p99", GP__ROW_TIME, reclaim_delay_p99_s, t_episodes),
    TROW("preemptions", GP__ROW_COUNT, preemptions, NULL),
};
const size_t gp__ntrows = sizeof(gp__trows) / sizeof(gp__trows[0]);

/* ---- cells -------------------------------------------------------------- */

static double field_double(const void *base, size_t off)
{
    double v;

    memcpy(&v, (const char *)base + off, sizeof(v));
    return v;
}

static uint64_t field_u64(const void *base, size_t off)
{
    uint64_t v;

    memcpy(&v, (const char *)base + off, sizeof(v));
    return v;
}

static void cell(enum gp__row_kind kind, const void *base, size_t off,
                 struct gp__tunit unit, char *buf, size_t len)
{
    switch (kind) {
    case GP__ROW_COUNT:
        snprintf(buf, len, "%" PRIu64, field_u64(base, off));
        break;
    case GP__ROW_TIME:
        if (isnan(field_double(base, off))) /* no bound holds */
            snprintf(buf, len, "-");
        else
            snprintf(buf, len, "%.2f", field_double(base, off) / unit.div_s);
        break;
    case GP__ROW_PCT:
        if (isnan(field_double(base, off))) /* no bound holds */
            snprintf(buf, len, "-");
        else
            snprintf(buf, len, "%.1f", field_double(base, off) * 100);
        break;
    case GP__ROW_NUM:
        snprintf(buf, len, "%.2f", field_double(base, off));
        break;
    case GP__ROW_RATIO:
        if (isnan(field_double(base, off)))
            snprintf(buf, len, "-");
        else
            snprintf(buf, len, "%.3f", field_double(base, off));
        break;
    case GP__ROW_GPUH:
        snprintf(buf, len, "%.2f", field_double(base, off) / 3600);
        break;
    }
}

bool gp__row_shown(const struct gp__row *row, struct gp_metrics *const *runs,
                   size_t n)
{
    if (!row->has)
        return true;
    for (size_t i = 0; i < n; i++)
        if (row->has(gp_metrics_summary(runs[i])))
            return true;
    return false;
}

/* The one time unit of a table, from the largest time it shows: seconds,
 * minutes, or hours (days would turn waits into hundredths). */
static struct gp__tunit table_unit(double max_s)
{
    if (max_s < 120)
        return (struct gp__tunit){"s", 1};
    if (max_s < 2 * 3600)
        return (struct gp__tunit){"min", 60};
    return (struct gp__tunit){"h", 3600};
}

/* A row's label; a row of times names the table's unit, from max_s, the
 * largest time the table shows. */
static void label(const char *text, enum gp__row_kind kind, double max_s,
                  char *buf, size_t len, struct gp__tunit *unit)
{
    if (kind != GP__ROW_TIME) {
        *unit = (struct gp__tunit){"", 1};
        snprintf(buf, len, "%s", text);
        return;
    }
    *unit = table_unit(max_s);
    snprintf(buf, len, "%s (%s)", text, unit->name);
}

void gp__row_label(const struct gp__row *row, struct gp_metrics *const *runs,
                   size_t n, char *buf, size_t len, struct gp__tunit *unit)
{
    double max_s = 0;

    /* every time row of the table counts: one unit for them all */
    for (size_t r = 0; row->kind == GP__ROW_TIME && r < gp__nrows; r++) {
        const struct gp__row *x = &gp__rows[r];

        for (size_t i = 0; x->kind == GP__ROW_TIME && i < n; i++) {
            const struct gp_summary *s = gp_metrics_summary(runs[i]);
            double v = field_double(s, x->off);

            if ((!x->has || x->has(s)) && v > max_s)
                max_s = v;
        }
    }
    label(row->label, row->kind, max_s, buf, len, unit);
}

void gp__row_cell(const struct gp__row *row, const struct gp_summary *s,
                  struct gp__tunit unit, char *buf, size_t len)
{
    if (row->has && !row->has(s))
        snprintf(buf, len, "-");
    else
        cell(row->kind, s, row->off, unit, buf, len);
}

bool gp__trow_shown(const struct gp__trow *row, struct gp_metrics *const *runs,
                    size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct gp_summary *s = gp_metrics_summary(runs[i]);

        for (size_t t = 0; t < s->ntenants; t++)
            if (!row->has || row->has(s, &s->tenants[t]))
                return true;
    }
    return false;
}

void gp__trow_label(const struct gp__trow *row, struct gp_metrics *const *runs,
                    size_t n, char *buf, size_t len, struct gp__tunit *unit)
{
    double max_s = 0;

    /* every time row of the tenant tables counts: one unit for them all */
    for (size_t r = 0; row->kind == GP__ROW_TIME && r < gp__ntrows; r++) {
        const struct gp__trow *x = &gp__trows[r];

        for (size_t i = 0; x->kind == GP__ROW_TIME && i < n; i++) {
            const struct gp_summary *s = gp_metrics_summary(runs[i]);

            for (size_t t = 0; t < s->ntenants; t++) {
                const struct gp_tenant_summary *ts = &s->tenants[t];
                double v = field_double(ts, x->off);

                if ((!x->has || x->has(s, ts)) && v > max_s)
                    max_s = v;
            }
        }
    }
    label(row->label, row->kind, max_s, buf, len, unit);
}

void gp__trow_cell(const struct gp__trow *row, const struct gp_summary *s,
                   const struct gp_tenant_summary *t, struct gp__tunit unit,
                   char *buf, size_t len)
{
    if (!t || (row->has && !row->has(s, t)))
        snprintf(buf, len, "-");
    else
        cell(row->kind, t, row->off, unit, buf, len);
}

void gp__run_name(struct gp_metrics *const *runs, size_t n, size_t i, char *buf,
                  size_t len)
{
    const struct gp_summary *s = gp_metrics_summary(runs[i]);
    bool clash = false, sizes = false;

    for (size_t a = 0; a < n; a++) {
        const struct gp_summary *x = gp_metrics_summary(runs[a]);

        for (size_t b = a + 1; b < n; b++) {
            const struct gp_summary *y = gp_metrics_summary(runs[b]);

            if (strcmp(x->policy, y->policy) != 0)
                continue;
            clash = true;
            sizes |= strcmp(x->placement, y->placement) == 0 &&
                     x->cluster_gpus != y->cluster_gpus;
        }
    }
    if (sizes)
        snprintf(buf, len, "%s/%s@%" PRIu64, s->policy, s->placement,
                 s->cluster_gpus);
    else if (clash)
        snprintf(buf, len, "%s/%s", s->policy, s->placement);
    else
        snprintf(buf, len, "%s", s->policy);
}

/* One run's value of setting k ("" when the run does not say). */
static void setting_of(const struct gp_summary *s, size_t k, char *buf,
                       size_t len)
{
    bool told = s->described;

    buf[0] = '\0';
    switch (k) {
    case 0:
        if (told && *s->trace)
            snprintf(buf, len, "%s (%s)", s->trace, s->trace_format);
        break;
    case 1:
        if (told && *s->cluster_spec)
            snprintf(buf, len, "%s, %" PRIu64 " GPUs", s->cluster_spec,
                     s->cluster_gpus);
        else
            snprintf(buf, len, "%" PRIu64 " GPUs", s->cluster_gpus);
        break;
    case 2:
        if (s->shares)
            snprintf(buf, len, "%s; shares: %s", s->placement, s->shares);
        else
            snprintf(buf, len, "%s", s->placement);
        break;
    case 3:
        if (told)
            snprintf(buf, len, "%s", s->preemption);
        break;
    case 4:
        if (told && s->elastic)
            snprintf(buf, len, "%s", s->elastic);
        break;
    case 5:
        if (told && s->parity)
            snprintf(buf, len, "%s", s->parity);
        break;
    case 6:
        if (told)
            snprintf(buf, len, "%" PRIu64, s->seed);
        break;
    case 7:
        snprintf(buf, len, "%s", s->version ? s->version : "");
        break;
    default:
        if (told && s->command)
            snprintf(buf, len, "%s", s->command);
        break;
    }
}

bool gp__setting(struct gp_metrics *const *runs, size_t n, size_t k,
                 const char **key, char *buf, size_t len)
{
    static const char *const keys[GP__NSETTINGS] = {
        "trace",  "cluster", "placement", "preemption", "elastic",
        "parity", "seed",    "gpupool",   "command",
    };
    char first[2304], v[2304], name[128];
    bool same = true;
    size_t used = 0;

    *key = keys[k];
    buf[0] = '\0';
    if (n == 0)
        return false;
    setting_of(gp_metrics_summary(runs[0]), k, first, sizeof(first));
    for (size_t i = 1; i < n && same; i++) {
        setting_of(gp_metrics_summary(runs[i]), k, v, sizeof(v));
        same = strcmp(v, first) == 0;
    }
    if (same) {
        snprintf(buf, len, "%s", first);
        return first[0] != '\0';
    }
    /* runs with the same value share it: "fifo, sjf: none; pool: ..." */
    for (size_t i = 0; i < n && used < len; i++) {
        bool seen = false;

        setting_of(gp_metrics_summary(runs[i]), k, v, sizeof(v));
        for (size_t j = 0; j < i && !seen; j++) {
            setting_of(gp_metrics_summary(runs[j]), k, first, sizeof(first));
            seen = strcmp(first, v) == 0;
        }
        if (seen)
            continue;
        for (size_t j = i, names = 0; j < n && used < len; j++) {
            setting_of(gp_metrics_summary(runs[j]), k, first, sizeof(first));
            if (strcmp(first, v) != 0)
                continue;
            gp__run_name(runs, n, j, name, sizeof(name));
            used += (size_t)snprintf(buf + used, len - used, "%s%s",
                                     names++ ? ", " : (i ? "; " : ""), name);
        }
        if (used < len)
            used +=
                (size_t)snprintf(buf + used, len - used, ": %s", *v ? v : "-");
    }
    return true;
}

bool gp__rejected_note(struct gp_metrics *const *runs, size_t n, size_t i,
                       char *buf, size_t len)
{
    const struct gp_summary *s = gp_metrics_summary(runs[i]);
    char name[128];

    if (!s->rejected)
        return false;
    /* runs on one cluster reject the same jobs: say it at the first */
    for (size_t k = 0; k < i; k++) {
        const struct gp_summary *p = gp_metrics_summary(runs[k]);

        if (p->rejected == s->rejected && p->cluster_gpus == s->cluster_gpus)
            return false;
    }
    gp__run_name(runs, n, i, name, sizeof(name));
    if (s->rejected_policy == s->rejected)
        snprintf(buf, len,
                 "rejected in %s: %" PRIu64 " of %" PRIu64
                 " jobs turned down by the policy, e.g. %s",
                 name, s->rejected, s->jobs, s->rejected_example);
    else if (s->rejected_policy)
        snprintf(buf, len,
                 "rejected in %s: %" PRIu64 " of %" PRIu64 " jobs, %" PRIu64
                 " of them by the policy, the rest can "
                 "never run on this cluster, e.g. %s",
                 name, s->rejected, s->jobs, s->rejected_policy,
                 s->rejected_example);
    else
        snprintf(buf, len,
                 "rejected in %s: %" PRIu64 " of %" PRIu64
                 " jobs can never run on this cluster, e.g. %s",
                 name, s->rejected, s->jobs, s->rejected_example);
    return true;
}

size_t gp__top_tenants(const struct gp_summary *s, size_t k, size_t *idx)
{
    size_t n = 0;

    /* insertion into a short sorted list: k is small */
    for (size_t t = 0; t < s->ntenants; t++) {
        size_t pos = n;

        while (pos > 0 &&
               s->tenants[idx[pos - 1]].gpu_hours < s->tenants[t].gpu_hours)
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

/* A lower bound, or a figure against one: null where none holds (NaN:
 * jobs could outpace their reference, docs/metrics.md). */
static json_t *jbound(double x)
{
    return isnan(x) ? json_null() : jreal(x);
}

/* A ratio over samples, null when there were none. */
static json_t *jratio(double x, uint64_t samples)
{
    return samples ? jreal(x) : json_null();
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
    if (s->shares)
        put(o, "shares", json_string(s->shares), &ok);
    put(o, "cluster_gpus", juint(s->cluster_gpus), &ok);
    put(o, "trace", json_string(s->trace), &ok);
    put(o, "trace_format", json_string(s->trace_format), &ok);
    put(o, "cluster", json_string(s->cluster_spec), &ok);
    put(o, "preemption", json_string(s->preemption), &ok);
    put(o, "elastic", s->elastic ? json_string(s->elastic) : json_null(), &ok);
    put(o, "parity", s->parity ? json_string(s->parity) : json_null(), &ok);
    put(o, "seed", s->described ? juint(s->seed) : json_null(), &ok);
    put(o, "version", json_string(s->version), &ok);
    put(o, "command", s->command ? json_string(s->command) : json_null(), &ok);
    put(o, "jobs", juint(s->jobs), &ok);
    put(o, "completed", juint(s->completed), &ok);
    put(o, "rejected", juint(s->rejected), &ok);
    put(o, "rejected_too_large", juint(s->rejected_too_large), &ok);
    put(o, "rejected_gpu_type", juint(s->rejected_gpu_type), &ok);
    put(o, "rejected_policy", juint(s->rejected_policy), &ok);
    put(o, "rejected_other", juint(s->rejected_other), &ok);
    put(o, "largest_rejected_gpus", juint(s->largest_rejected_gpus), &ok);
    put(o, "rejected_example", json_string(s->rejected_example), &ok);
    put(o, "unfinished", juint(s->unfinished), &ok);
    put(o, "slo_jobs", juint(s->slo_jobs), &ok);
    put(o, "slo_missed", juint(s->slo_missed), &ok);
    put(o, "offered_load",
        s->offered_load_known ? jreal(s->offered_load) : json_null(), &ok);
    put(o, "avg_jct_s", jreal(s->avg_jct_s), &ok);
    put(o, "p50_jct_s", jreal(s->p50_jct_s), &ok);
    put(o, "p95_jct_s", jreal(s->p95_jct_s), &ok);
    put(o, "p99_jct_s", jreal(s->p99_jct_s), &ok);
    put(o, "avg_wait_s", jreal(s->avg_wait_s), &ok);
    put(o, "p50_wait_s", jreal(s->p50_wait_s), &ok);
    put(o, "p95_wait_s", jreal(s->p95_wait_s), &ok);
    put(o, "p99_wait_s", jreal(s->p99_wait_s), &ok);
    {
        /* by width: one GPU (or a share), 2 GPUs to a node, over a node */
        static const char *const keys[3][3] = {
            {"avg_wait_1gpu_s", "completed_1gpu", "avg_wait_owed_1gpu_s"},
            {"avg_wait_node_s", "completed_node", "avg_wait_owed_node_s"},
            {"avg_wait_multinode_s", "completed_multinode",
             "avg_wait_owed_multinode_s"}};

        for (int w = 0; w < 3; w++) {
            put(o, keys[w][0], jreal(s->avg_wait_width_s[w]), &ok);
            put(o, keys[w][1], juint(s->completed_width[w]), &ok);
            /* null without tenants to owe GPUs (as compliance) */
            put(o, keys[w][2],
                has_fairshare_samples(s) ? jreal(s->avg_wait_owed_width_s[w])
                                         : json_null(),
                &ok);
        }
        put(o, "width_node_gpus", juint(s->width_node_gpus), &ok);
    }
    put(o, "makespan_s", jreal(s->makespan_s), &ok);
    /* gpu_utilization and avg_queue_len (over the makespan) stay for the
     * readers that know them; the _makespan keys are the same figures */
    put(o, "gpu_utilization", jreal(s->gpu_utilization), &ok);
    put(o, "avg_queue_len", jreal(s->avg_queue_len), &ok);
    put(o, "arrival_window_s", jreal(s->submit_span_s), &ok);
    put(o, "gpu_utilization_makespan", jreal(s->gpu_utilization), &ok);
    /* null with no arrival window (one submit time), as offered_load */
    put(o, "gpu_utilization_arrivals",
        has_arrivals(s) ? jreal(s->gpu_utilization_arrivals) : json_null(),
        &ok);
    put(o, "avg_queue_len_makespan", jreal(s->avg_queue_len), &ok);
    put(o, "avg_queue_len_arrivals",
        has_arrivals(s) ? jreal(s->avg_queue_len_arrivals) : json_null(), &ok);
    put(o, "guarantee_compliance",
        jratio(s->guarantee_compliance, s->guarantee_samples), &ok);
    put(o, "fairshare_compliance",
        jratio(s->fairshare_compliance, s->fairshare_samples), &ok);
    put(o, "guarantee_compliance_gang",
        jratio(s->guarantee_compliance_gang, s->guarantee_samples), &ok);
    put(o, "fairshare_compliance_gang",
        jratio(s->fairshare_compliance_gang, s->fairshare_samples), &ok);
    if (s->explained) {
        json_t *u = json_object();

        for (int c = 0; u && c < GP_UNFAIR_NCAUSES; c++)
            put(u, gp_unfair_cause_name((enum gp_unfair_cause)c),
                jratio(s->unfair[c], s->fairshare_samples), &ok);
        put(o, "fairshare_unfair", u, &ok);
    }
    put(o, "reclaim_episodes", juint(s->reclaim_episodes), &ok);
    put(o, "reclaim_delay_p50_s", jreal(s->reclaim_delay_p50_s), &ok);
    put(o, "reclaim_delay_p99_s", jreal(s->reclaim_delay_p99_s), &ok);
    put(o, "reclaim_episodes_waited", juint(s->reclaim_episodes_waited), &ok);
    put(o, "reclaim_waited_p50_s", jreal(s->reclaim_waited_p50_s), &ok);
    put(o, "reclaim_waited_p99_s", jreal(s->reclaim_waited_p99_s), &ok);
    put(o, "preemptions", juint(s->preemptions), &ok);
    put(o, "preemptions_per_job_mean", jreal(s->preemptions_per_job_mean), &ok);
    put(o, "preemptions_per_job_max", juint(s->preemptions_per_job_max), &ok);
    put(o, "lost_gpu_s", jreal(s->lost_gpu_s), &ok);
    put(o, "lost_work_gpu_s", jreal(s->lost_work_gpu_s), &ok);
    put(o, "restart_gpu_s", jreal(s->restart_gpu_s), &ok);
    put(o, "resizes", juint(s->resizes), &ok);
    put(o, "shrinks", juint(s->shrinks), &ok);
    put(o, "grows", juint(s->grows), &ok);
    put(o, "retunes", juint(s->retunes), &ok);
    put(o, "migrations", juint(s->migrations), &ok);
    put(o, "colocated_gpu_s", jreal(s->colocated_gpu_s), &ok);
    put(o, "lb_avg_jct_s", jbound(s->lb_avg_jct_s), &ok);
    put(o, "lb_makespan_s", jbound(s->lb_makespan_s), &ok);
    put(o, "gpu_utilization_ceiling", jbound(s->gpu_utilization_ceiling), &ok);
    put(o, "gpu_utilization_saturated",
        s->saturated_s > 0 ? jreal(s->gpu_utilization_saturated) : json_null(),
        &ok);
    put(o, "saturated_s", jreal(s->saturated_s), &ok);
    put(o, "avg_jct_ratio", jbound(s->avg_jct_ratio), &ok);
    put(o, "makespan_ratio", jbound(s->makespan_ratio), &ok);
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
        put(to, "guarantee", juint(t->guarantee), &ok);
        put(to, "jobs", juint(t->jobs), &ok);
        put(to, "completed", juint(t->completed), &ok);
        put(to, "avg_jct_s", jreal(t->avg_jct_s), &ok);
        put(to, "avg_wait_s", jreal(t->avg_wait_s), &ok);
        put(to, "p99_wait_s", jreal(t->p99_wait_s), &ok);
        put(to, "gpu_hours", jreal(t->gpu_hours), &ok);
        put(to, "share_of_gpu_time", jreal(t->share_of_gpu_time), &ok);
        put(to, "preemptions", juint(t->preemptions), &ok);
        put(to, "guarantee_compliance",
            jratio(t->guarantee_compliance, t->guarantee_samples), &ok);
        put(to, "fairshare_compliance",
            jratio(t->fairshare_compliance, t->fairshare_samples), &ok);
        put(to, "guarantee_compliance_gang",
            jratio(t->guarantee_compliance_gang, t->guarantee_samples), &ok);
        put(to, "fairshare_compliance_gang",
            jratio(t->fairshare_compliance_gang, t->fairshare_samples), &ok);
        put(to, "reclaim_episodes", juint(t->reclaim_episodes), &ok);
        put(to, "reclaim_delay_p50_s", jreal(t->reclaim_delay_p50_s), &ok);
        put(to, "reclaim_delay_p99_s", jreal(t->reclaim_delay_p99_s), &ok);
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

static void put_field(FILE *out, const char *s);

/* ---- the summary CSV ------------------------------------------------------
 */

/* A scalar of a run's JSON as a CSV field: strings as they are, numbers as
 * the JSON prints them (15 significant digits), null as empty. */
static void put_scalar(FILE *out, const json_t *v)
{
    char num[64];

    switch (json_typeof(v)) {
    case JSON_STRING:
        put_field(out, json_string_value(v));
        break;
    case JSON_INTEGER:
        fprintf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        break;
    case JSON_REAL:
        snprintf(num, sizeof(num), "%.15g", json_real_value(v));
        fputs(num, out);
        break;
    case JSON_TRUE:
        fputs("true", out);
        break;
    case JSON_FALSE:
        fputs("false", out);
        break;
    default: /* null; objects (per tenant) are the JSON's alone */
        break;
    }
}

static bool scalar(const json_t *v)
{
    return !json_is_object(v) && !json_is_array(v);
}

/* The columns: every scalar key of the runs' JSON objects in the order the
 * JSON has them, "shares" always (so files written for different traces
 * line up). Appended to `cols` (a JSON array of names). */
static int summary_columns(json_t *const *objs, size_t n, json_t *cols)
{
    json_t *seen = json_object();
    int rc = GP_ENOMEM;

    if (!seen)
        goto out;
    for (size_t i = 0; i < n; i++) {
        const char *key;
        json_t *v;

        json_object_foreach(objs[i], key, v)
        {
            if (!scalar(v) || json_object_get(seen, key))
                continue;
            if (json_object_set_new(seen, key, json_true()) != 0 ||
                json_array_append_new(cols, json_string(key)) != 0)
                goto out;
            if (strcmp(key, "placement") == 0 &&
                !json_object_get(seen, "shares") &&
                (json_object_set_new(seen, "shares", json_true()) != 0 ||
                 json_array_append_new(cols, json_string("shares")) != 0))
                goto out;
        }
    }
    rc = GP_OK;
out:
    json_decref(seen);
    return rc;
}

int gp_output_summary_csv(FILE *out, struct gp_metrics *const *runs, size_t n,
                          bool header, bool with_wall)
{
    json_t **objs = calloc(n ? n : 1, sizeof(*objs)), *cols = json_array();
    size_t ncols, i;
    int rc = GP_ENOMEM;

    if (!objs || !cols)
        goto out;
    for (i = 0; i < n; i++) {
        if (!gp__metrics_finished(runs[i])) {
            rc = GP_ESTATE;
            goto out;
        }
        if (!(objs[i] = run_json(gp_metrics_summary(runs[i]), with_wall)))
            goto out;
    }
    if ((rc = summary_columns(objs, n, cols)) != GP_OK)
        goto out;
    ncols = json_array_size(cols);
    if (header)
        for (size_t c = 0; c < ncols; c++)
            fprintf(out, "%s%s", json_string_value(json_array_get(cols, c)),
                    c + 1 < ncols ? "," : "\n");
    for (i = 0; i < n; i++) {
        for (size_t c = 0; c < ncols; c++) {
            const json_t *v = json_object_get(
                objs[i], json_string_value(json_array_get(cols, c)));

            if (c)
                fputc(',', out);
            if (v)
                put_scalar(out, v);
        }
        fputc('\n', out);
    }
    rc = ferror(out) ? GP_EIO : GP_OK;
out:
    for (i = 0; objs && i < n; i++)
        json_decref(objs[i]);
    free(objs);
    json_decref(cols);
    return rc;
}

/* ---- the text table ----------------------------------------------------- */

#define CELL 48
#define TOP_TENANTS 10

static void table_line(FILE *out, const char *label, int lw,
                       char (*cells)[CELL], size_t n, int cw)
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
    bool gap = false;

    if (n == 0 || !(cells = calloc(n, CELL)))
        return;
    first = gp_metrics_summary(runs[0]);
    /* what was simulated, above the figures */
    for (size_t k = 0; k < GP__NSETTINGS; k++) {
        const char *key;
        char value[4096];

        if (gp__setting(runs, n, k, &key, value, sizeof(value)))
            fprintf(out, "%-11s %s\n", key, value);
    }
    fputc('\n', out);
    for (size_t r = 0; r < gp__nrows; r++) {
        if (!gp__row_shown(&gp__rows[r], runs, n))
            continue;
        gp__row_label(&gp__rows[r], runs, n, label, sizeof(label), &unit);
        if ((int)strlen(label) > lw)
            lw = (int)strlen(label);
    }
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
        const struct gp__row *row = &gp__rows[r];

        gap |= r > 0 && row->group_start;
        if (!gp__row_shown(row, runs, n))
            continue;
        if (gap)
            fputc('\n', out);
        gap = false;
        gp__row_label(row, runs, n, label, sizeof(label), &unit);
        for (size_t i = 0; i < n; i++)
            gp__row_cell(row, gp_metrics_summary(runs[i]), unit, cells[i],
                         CELL);
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
    for (size_t i = 0; i < n; i++) {
        char note[1024];

        if (gp__rejected_note(runs, n, i, note, sizeof(note)))
            fprintf(out, "\n%s\n", note);
    }
    if (ntop) {
        fprintf(out, "\ntenants: the %zu holding the most GPU time in %s\n",
                ntop, first->policy);
        for (size_t r = 0; r < gp__ntrows; r++) {
            const struct gp__trow *row = &gp__trows[r];

            if (!gp__trow_shown(row, runs, n))
                continue;
            gp__trow_label(row, runs, n, label, sizeof(label), &unit);
            fprintf(out, "%s\n", label);
            for (size_t t = 0; t < ntop; t++) {
                const char *name = first->tenants[top[t]].name;

                for (size_t i = 0; i < n; i++) {
                    const struct gp_summary *s = gp_metrics_summary(runs[i]);
                    size_t k = gp__tenant_find(s, name);

                    gp__trow_cell(row, s,
                                  k == (size_t)-1 ? NULL : &s->tenants[k], unit,
                                  cells[i], CELL);
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

    fprintf(out, "%s%" PRIu64 ".%06" PRIu64, us < 0 ? "-" : "", a / 1000000u,
            a % 1000000u);
}

/* GPUs from milli-GPUs: "8" for whole GPUs, "0.25" for a share. */
static void put_gpus(FILE *out, uint32_t milli)
{
    uint32_t frac = milli % GP_MILLI_PER_GPU;

    fprintf(out, "%" PRIu32, milli / GP_MILLI_PER_GPU);
    if (frac) {
        char d[8];
        int n = snprintf(d, sizeof(d), "%03" PRIu32, frac);

        while (n > 0 && d[n - 1] == '0')
            d[--n] = '\0';
        fprintf(out, ".%s", d);
    }
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
          "jct_s,duration_s,preemptions,starts,gpu_s,state,deadline_s,"
          "wait_owed_s\n",
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
        put_field(out,
                  r->tenant < s->ntenants ? s->tenants[r->tenant].name : "");
        fputc(',', out);
        put_field(out, gp__metrics_str(m, r->user));
        fputc(',', out);
        put_field(out, gp__metrics_str(m, r->name));
        fputc(',', out);
        put_gpus(out, r->milli);
        fputc(',', out);
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
        fprintf(out, ",%s,", gp_job_state_name((enum gp_job_state)r->state));
        if (r->deadline_us)
            put_us(out, r->deadline_us);
        fputc(',', out);
        if (started)
            put_us(out, r->wait_owed_us);
        fputc('\n', out);
    }
    return ferror(out) ? GP_EIO : GP_OK;
}

int gp_metrics_write_fairshare_csv(const struct gp_metrics *m, FILE *out)
{
    if (!gp__metrics_finished(m) || !gp__metrics_records_shares(m))
        return GP_ESTATE;
    fputs("tenant,start_s,end_s,state\n", out);
    for (size_t i = 0; i < gp__metrics_nshares(m); i++) {
        const struct gp__share_rec *r = gp__metrics_share(m, i);

        put_field(out, gp__metrics_str(m, r->tenant));
        fputc(',', out);
        put_us(out, r->start_us);
        fputc(',', out);
        put_us(out, r->end_us);
        fprintf(out, ",%s\n", r->owed ? "owed" : "held");
    }
    return ferror(out) ? GP_EIO : GP_OK;
}

int gp_metrics_write_runs_csv(const struct gp_metrics *m, FILE *out)
{
    const struct gp_summary *s = gp_metrics_summary(m);

    if (!gp__metrics_finished(m) || !gp__metrics_records_runs(m))
        return GP_ESTATE;
    fputs("job,tenant,run,start_s,end_s,gpus,gpu_type,placement,end_reason\n",
          out);
    for (size_t i = 0; i < gp__metrics_nruns(m); i++) {
        const struct gp__run_rec *r = gp__metrics_run(m, i);
        const struct gp__job_rec *j = gp__metrics_job(m, r->job);
        const char *ext = gp__metrics_ext_id(m, j);

        if (*ext)
            put_field(out, ext);
        else
            fprintf(out, "%" PRIu32, r->job);
        fputc(',', out);
        put_field(out,
                  j->tenant < s->ntenants ? s->tenants[j->tenant].name : "");
        fprintf(out, ",%" PRIu32 ",", r->run);
        put_us(out, r->start_us);
        fputc(',', out);
        put_us(out, r->end_us);
        fputc(',', out);
        put_gpus(out, r->milli);
        fputc(',', out);
        put_field(out, gp__metrics_str(m, r->type));
        fputc(',', out);
        put_field(out, gp__metrics_str(m, r->where));
        fprintf(out, ",%s\n", gp__run_end_name((enum gp__run_end)r->end));
    }
    return ferror(out) ? GP_EIO : GP_OK;
}
