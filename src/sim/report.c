/* report.c - a self-contained HTML report: one file, inline CSS, inline SVG
 * charts drawn here, no scripts, no external URLs, so it opens anywhere and
 * can be mailed or archived as is.
 *
 * Charts are plain SVG written line by line: axes with "nice" ticks (1, 2,
 * 5 x 10^k), a time axis in minutes, hours or days by the span, a log axis
 * for JCTs with ticks at 1s, 10s, 1m, 10m, 1h, ..., another for queue
 * lengths at 1, 10, 100, ... Colours come from two fixed palettes, one for
 * runs and one for tenants, so a tenant's band is never read as a policy:
 * a run keeps its colour in every chart, a tenant keeps its colour in
 * every run's chart. Coordinates are printed with one decimal, so
 * the same runs give the same bytes.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "gpupool/report.h"
#include "sim/metrics_priv.h"

/* Tableau 10: distinct, readable on white, friendly to colour blindness. */
static const char *const palette[] = {
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
    "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
};
#define NPALETTE (sizeof(palette) / sizeof(palette[0]))
/* Tenants: ColorBrewer Set3's lighter tones, apart from the runs' above. */
static const char *const tenant_palette[] = {
    "#8dd3c7", "#ffffb3", "#bebada", "#fb8072",
    "#80b1d3", "#fdb462", "#b3de69", "#fccde5",
};
#define NTENANT_PALETTE (sizeof(tenant_palette) / sizeof(tenant_palette[0]))
#define OTHER_COLOUR "#bab0ac"
#define TOP_TENANTS 8
#define TABLE_TENANTS 10
#define CDF_POINTS 500

static const char *colour(size_t i)
{
    return palette[i % NPALETTE];
}

static const char *tenant_colour(size_t i)
{
    return tenant_palette[i % NTENANT_PALETTE];
}

/* ---- HTML text ---------------------------------------------------------- */

void gp__html_esc(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs("&#39;", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}

const char gp__css[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',Helvetica,Arial,"
    "sans-serif;color:#222;margin:2em auto;max-width:960px;padding:0 1em;"
    "line-height:1.4}\n"
    "h1{font-size:1.6em;margin-bottom:.2em}\n"
    "h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd;"
    "padding-bottom:.2em}\n"
    "h3{font-size:1em;margin:1.2em 0 .3em}\n"
    "table{border-collapse:collapse;font-size:.9em}\n"
    "th,td{padding:.25em .8em;border-bottom:1px solid #eee}\n"
    "table.info th{text-align:left;color:#666;font-weight:normal}\n"
    "table.info td{font-family:ui-monospace,Menlo,Consolas,monospace;"
    "word-break:break-all}\n"
    "table.sum th{text-align:right}\n"
    "table.sum td{text-align:right;font-variant-numeric:tabular-nums}\n"
    "table.sum td.l,table.sum th.l{text-align:left}\n"
    "table.sum tr.g td{font-weight:bold;text-align:left;padding-top:.8em;"
    "border-bottom:1px solid #ccc}\n"
    "table.sum td.t{padding-left:1.8em}\n"
    "table.sum tr.s td{border-top:2px solid #ddd}\n"
    "table.sum tbody tr:hover{background:#f6f8fa}\n"
    ".legend{display:flex;flex-wrap:wrap;gap:.3em 1.2em;font-size:.85em;"
    "margin:.3em 0 .6em}\n"
    ".legend span{display:inline-block;width:1.6em;height:.7em;"
    "margin-right:.4em;vertical-align:middle;border-radius:2px}\n"
    "svg{max-width:100%;height:auto;display:block}\n"
    "svg text{font-family:system-ui,-apple-system,Helvetica,Arial,"
    "sans-serif;font-size:12px;fill:#444}\n"
    ".note{color:#666;font-size:.85em}\n"
    "footer{margin-top:3em;color:#999;font-size:.8em}\n";

/* ---- charts ------------------------------------------------------------- */

#define CW 900.0 /* chart size in SVG units */
#define CH 300.0
#define ML 64.0
#define MR 16.0
#define MT 12.0
#define MB 44.0

struct axis {
    double lo, hi;
    bool log;
};

struct chart {
    FILE *f;
    struct axis x, y;
};

static double ax_unit(const struct axis *a, double v)
{
    if (a->log) {
        double l = log10(a->lo), h = log10(a->hi);

        if (v < a->lo)
            v = a->lo;
        return h > l ? (log10(v) - l) / (h - l) : 0;
    }
    return a->hi > a->lo ? (v - a->lo) / (a->hi - a->lo) : 0;
}

static double px(const struct chart *c, double x)
{
    return ML + ax_unit(&c->x, x) * (CW - ML - MR);
}

static double py(const struct chart *c, double y)
{
    return CH - MB - ax_unit(&c->y, y) * (CH - MT - MB);
}

/* The 1, 2 or 5 x 10^k nearest to raw. */
static double nice_step(double raw)
{
    double mag, f;

    if (!(raw > 0))
        return 1;
    mag = pow(10, floor(log10(raw)));
    f = raw / mag;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

/* A y range from 0 up to a nice value above max. */
static struct axis y_axis(double max)
{
    double step = nice_step((max > 0 ? max : 1) / 5);

    return (struct axis){0, ceil((max > 0 ? max : 1) / step - 1e-9) * step,
                         false};
}

struct tick {
    double v;
    char label[24];
};

static size_t lin_ticks(const struct axis *a, struct tick *t, size_t max)
{
    double step = nice_step((a->hi - a->lo) / 6);
    size_t n = 0;

    for (double v = ceil(a->lo / step - 1e-9) * step;
         v <= a->hi + step * 1e-9 && n < max; v += step) {
        t[n].v = fabs(v) < step * 1e-9 ? 0 : v;
        snprintf(t[n].label, sizeof(t[n].label), "%.10g", t[n].v);
        n++;
    }
    return n;
}

static size_t log_ticks(const struct axis *a, struct tick *t, size_t max)
{
    static const struct {
        double s;
        const char *label;
    } marks[] = {
        {0.001, "1ms"}, {0.01, "10ms"},  {0.1, "0.1s"},     {1, "1s"},
        {10, "10s"},    {60, "1m"},      {600, "10m"},      {3600, "1h"},
        {86400, "1d"},  {864000, "10d"}, {8640000, "100d"},
    };
    size_t n = 0;

    for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]) && n < max; i++) {
        if (marks[i].s < a->lo * (1 - 1e-9) || marks[i].s > a->hi * (1 + 1e-9))
            continue;
        t[n].v = marks[i].s;
        snprintf(t[n].label, sizeof(t[n].label), "%s", marks[i].label);
        n++;
    }
    return n;
}

/* A log axis of counts: 1, 10, 100, 1k, ... */
static size_t count_ticks(const struct axis *a, struct tick *t, size_t max)
{
    size_t n = 0;

    for (double v = 1; v <= a->hi * (1 + 1e-9) && n < max; v *= 10) {
        if (v < a->lo * (1 - 1e-9))
            continue;
        t[n].v = v;
        if (v >= 1e6)
            snprintf(t[n].label, sizeof(t[n].label), "%.0fM", v / 1e6);
        else if (v >= 1e3)
            snprintf(t[n].label, sizeof(t[n].label), "%.0fk", v / 1e3);
        else
            snprintf(t[n].label, sizeof(t[n].label), "%.0f", v);
        n++;
    }
    return n;
}

/* From 1 to the power of ten at or above max: a log axis of counts. */
static struct axis count_axis(double max)
{
    double hi = 10;

    while (hi < max)
        hi *= 10;
    return (struct axis){1, hi, true};
}

/* An axis over the data alone, lo to hi with nice ends (within [floor,
 * ceil]): for sweeps, whose points sit far from 0. */
static struct axis data_axis(double lo, double hi, double floor_v,
                             double ceil_v)
{
    double span = hi - lo > 0 ? hi - lo : (hi > 0 ? hi : 1);
    double step = nice_step(span / 5);
    struct axis a = {floor(lo / step + 1e-9) * step,
                     ceil(hi / step - 1e-9) * step, false};

    if (a.hi <= a.lo)
        a.hi = a.lo + step;
    if (a.lo < floor_v)
        a.lo = floor_v;
    if (a.hi > ceil_v)
        a.hi = ceil_v;
    return a;
}

static void chart_open(struct chart *c, const char *label)
{
    fprintf(c->f,
            "<svg viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" "
            "role=\"img\" aria-label=\"",
            CW, CH, CW, CH);
    gp__html_esc(c->f, label);
    fputs("\">\n", c->f); /* inline SVG in HTML5 needs no xmlns */
    fprintf(c->f,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
            "fill=\"#fcfcfc\" stroke=\"#ccc\"/>\n",
            ML, MT, CW - ML - MR, CH - MT - MB);
}

/* Grid lines, ticks and titles. */
static void chart_axes(struct chart *c, const char *xtitle, const char *ytitle)
{
    struct tick t[16];
    size_t n;

    n = c->x.log ? log_ticks(&c->x, t, 16) : lin_ticks(&c->x, t, 16);
    for (size_t i = 0; i < n; i++) {
        double x = px(c, t[i].v);

        fprintf(c->f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                "stroke=\"#e4e4e4\"/>\n",
                x, MT, x, CH - MB);
        fprintf(c->f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x,
                CH - MB + 16);
        gp__html_esc(c->f, t[i].label);
        fputs("</text>\n", c->f);
    }
    n = c->y.log ? count_ticks(&c->y, t, 16) : lin_ticks(&c->y, t, 16);
    for (size_t i = 0; i < n; i++) {
        double y = py(c, t[i].v);

        fprintf(c->f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                "stroke=\"#e4e4e4\"/>\n",
                ML, y, CW - MR, y);
        fprintf(c->f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">",
                ML - 6, y + 4);
        gp__html_esc(c->f, t[i].label);
        fputs("</text>\n", c->f);
    }
    fprintf(c->f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
            ML + (CW - ML - MR) / 2, CH - 8);
    gp__html_esc(c->f, xtitle);
    fputs("</text>\n", c->f);
    fprintf(c->f,
            "<text transform=\"translate(14 %.1f) rotate(-90)\" "
            "text-anchor=\"middle\">",
            MT + (CH - MT - MB) / 2);
    gp__html_esc(c->f, ytitle);
    fputs("</text>\n", c->f);
}

static void chart_close(struct chart *c)
{
    fputs("</svg>\n", c->f);
}

static void legend_item(FILE *f, const char *col, const char *label)
{
    fprintf(f, "<div><span style=\"background:%s\"></span>", col);
    gp__html_esc(f, label);
    fputs("</div>", f);
}

static void run_legend(FILE *f, struct gp_metrics *const *runs, size_t n)
{
    char name[128];

    fputs("<div class=\"legend\">", f);
    for (size_t i = 0; i < n; i++) {
        gp__run_name(runs, n, i, name, sizeof(name));
        legend_item(f, colour(i), name);
    }
    fputs("</div>\n", f);
}

/* The time axis: minutes, hours or days by the longest span. */
struct tscale {
    const char *title;
    double div_s;
};

static struct tscale time_scale(double span_s)
{
    if (span_s <= 3 * 3600)
        return (struct tscale){"time since first submit (minutes)", 60};
    if (span_s <= 4 * 86400)
        return (struct tscale){"time since first submit (hours)", 3600};
    return (struct tscale){"time since first submit (days)", 86400};
}

/* The middle of bucket i's covered part, in seconds from t0. */
static double bucket_mid_s(const struct gp_series *s, size_t i)
{
    int64_t a = (int64_t)i * s->width_us;
    int64_t b = a + s->width_us;

    if (b > s->end_us - s->t0_us)
        b = s->end_us - s->t0_us;
    return gp_us_to_s(a + b) / 2;
}

static double series_span_s(const struct gp_series *s)
{
    return gp_us_to_s(s->end_us - s->t0_us);
}

/* What a time chart draws of a run: its series, and with `as_pct` the
 * GPUs a value is a part of (*gpus); NULL: the run has none. */
typedef const struct gp_series *(*series_fn)(const struct gp_metrics *m,
                                             size_t ctx, uint64_t *gpus);

/* One line per run over time (a run without the series is left out). */
static void time_chart(FILE *f, struct gp_metrics *const *runs, size_t n,
                       series_fn get, size_t ctx, bool as_pct, bool log_y,
                       const char *ytitle, const char *label)
{
    struct chart c = {.f = f};
    double span = 0, ymax = 0;
    struct tscale ts;

    for (size_t i = 0; i < n; i++) {
        uint64_t g = 0;
        const struct gp_series *s = get(runs[i], ctx, &g);

        if (!s)
            continue;
        if (series_span_s(s) > span)
            span = series_span_s(s);
        for (size_t k = 0; k < s->n; k++) {
            double v = as_pct ? (g ? s->v[k] * 100 / (double)g : 0) : s->v[k];

            if (v > ymax)
                ymax = v;
        }
    }
    ts = time_scale(span);
    c.x = (struct axis){0, span > 0 ? span / ts.div_s : 1, false};
    c.y = as_pct  ? (struct axis){0, 100, false}
          : log_y ? count_axis(ymax)
                  : y_axis(ymax);
    run_legend(f, runs, n);
    chart_open(&c, label);
    chart_axes(&c, ts.title, ytitle);
    for (size_t i = 0; i < n; i++) {
        uint64_t g = 0;
        const struct gp_series *s = get(runs[i], ctx, &g);

        if (!s || s->n == 0)
            continue;
        fprintf(f,
                "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\" "
                "stroke-linejoin=\"round\" points=\"",
                colour(i));
        for (size_t k = 0; k < s->n; k++) {
            double v = as_pct ? (g ? s->v[k] * 100 / (double)g : 0) : s->v[k];

            fprintf(f, "%s%.1f,%.1f", k ? " " : "",
                    px(&c, bucket_mid_s(s, k) / ts.div_s), py(&c, v));
        }
        fputs("\"/>\n", f);
    }
    chart_close(&c);
}

static const struct gp_series *util_of(const struct gp_metrics *m, size_t ctx,
                                       uint64_t *gpus)
{
    (void)ctx;
    *gpus = gp_metrics_summary(m)->cluster_gpus;
    return gp_metrics_util_series(m);
}

static const struct gp_series *queue_of(const struct gp_metrics *m, size_t ctx,
                                        uint64_t *gpus)
{
    (void)ctx;
    (void)gpus;
    return gp_metrics_queue_series(m);
}

/* GPU type number ctx (its GPUs for the percentage). */
static const struct gp_series *type_of(const struct gp_metrics *m, size_t ctx,
                                       uint64_t *gpus)
{
    return gp_metrics_type_series(m, ctx, NULL, gpus);
}

static const struct gp_series *shrunk_of(const struct gp_metrics *m, size_t ctx,
                                         uint64_t *gpus)
{
    (void)ctx;
    (void)gpus;
    return gp_metrics_shrunk_series(m);
}

/* Do the runs share the first run's GPU types (two or more), in order? */
static size_t shared_types(struct gp_metrics *const *runs, size_t n)
{
    size_t nt = gp_metrics_ntypes(runs[0]);

    for (size_t i = 1; i < n && nt; i++) {
        if (gp_metrics_ntypes(runs[i]) != nt)
            return 0;
        for (size_t k = 0; k < nt; k++) {
            const char *a, *b;

            gp_metrics_type_series(runs[0], k, &a, NULL);
            gp_metrics_type_series(runs[i], k, &b, NULL);
            if (strcmp(a, b) != 0)
                return 0;
        }
    }
    return nt;
}

static const struct gp_series *grown_of(const struct gp_metrics *m, size_t ctx,
                                        uint64_t *gpus)
{
    (void)ctx;
    (void)gpus;
    return gp_metrics_grown_series(m);
}

static bool any_grown(struct gp_metrics *const *runs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (gp_metrics_grown_series(runs[i]))
            return true;
    return false;
}

static bool any_shrunk(struct gp_metrics *const *runs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (gp_metrics_shrunk_series(runs[i]))
            return true;
    return false;
}

/* Per GPU type, each run's GPUs of it in use, as % of the type. */
static void type_section(FILE *f, struct gp_metrics *const *runs, size_t n,
                         size_t nt)
{
    fputs("<h2 id=\"types\">GPUs in use per GPU type</h2>\n"
          "<p class=\"note\">Each type's GPUs allocated to jobs, as a "
          "part of the type's GPUs: where a heterogeneity-aware policy "
          "puts its jobs. The runs CSV (<code>--runs-csv</code>: "
          "<code>gpu_type</code>, <code>gpus</code>, start and end of "
          "every run) recomputes it.</p>\n",
          f);
    for (size_t k = 0; k < nt; k++) {
        const char *name;
        char ytitle[96], label[128];

        gp_metrics_type_series(runs[0], k, &name, NULL);
        snprintf(ytitle, sizeof(ytitle), "%s GPUs in use (%%)", name);
        snprintf(label, sizeof(label), "%s GPUs in use over time", name);
        fprintf(f, "<h3>%s</h3>\n", name);
        time_chart(f, runs, n, type_of, k, true, false, ytitle, label);
    }
}

/* Empirical CDF of JCTs, log x; at most CDF_POINTS steps per run. */
static void cdf_chart(FILE *f, struct gp_metrics *const *runs, size_t n)
{
    struct chart c = {.f = f};
    double lo = 0, hi = 0;
    bool any = false;

    for (size_t i = 0; i < n; i++) {
        size_t nj;
        const double *j = gp_metrics_jcts(runs[i], &nj);

        for (size_t k = 0; k < nj; k++) {
            if (j[k] <= 0)
                continue;
            if (!any || j[k] < lo)
                lo = j[k];
            if (!any || j[k] > hi)
                hi = j[k];
            any = true;
        }
    }
    if (!any) {
        fputs("<p class=\"note\">No job completed.</p>\n", f);
        return;
    }
    /* from the decade below the shortest to a little past the longest, and
     * never less than a decade */
    lo = pow(10, floor(log10(lo)));
    hi *= 1.2;
    if (hi < lo * 10)
        hi = lo * 10;
    c.x = (struct axis){lo, hi, true};
    c.y = (struct axis){0, 1, false};
    run_legend(f, runs, n);
    chart_open(&c, "JCT CDF");
    chart_axes(&c, "job completion time (log scale)", "fraction of jobs");
    for (size_t i = 0; i < n; i++) {
        size_t nj, k;
        const double *j = gp_metrics_jcts(runs[i], &nj);
        double prev = 0;

        if (nj == 0)
            continue;
        k = nj < CDF_POINTS ? nj : CDF_POINTS;
        fprintf(f,
                "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\" "
                "points=\"%.1f,%.1f",
                colour(i), px(&c, j[0]), py(&c, 0));
        for (size_t p = 0; p < k; p++) {
            size_t idx = ((p + 1) * nj + k - 1) / k - 1;
            double y = (double)(idx + 1) / (double)nj;
            double x = px(&c, j[idx]);

            fprintf(f, " %.1f,%.1f %.1f,%.1f", x, py(&c, prev), x, py(&c, y));
            prev = y;
        }
        fputs("\"/>\n", f);
    }
    chart_close(&c);
}

/* The tenants that get their own colour: the first run's top by GPU time. */
struct tenant_set {
    const char *names[TOP_TENANTS];
    size_t n;
};

static void top_set(const struct gp_summary *s, struct tenant_set *ts)
{
    size_t idx[TOP_TENANTS];

    ts->n = gp__top_tenants(s, TOP_TENANTS, idx);
    for (size_t i = 0; i < ts->n; i++)
        ts->names[i] = s->tenants[idx[i]].name;
}

/* Stacked areas of busy GPUs per tenant for one run; "other" on top. */
static int tenant_chart(FILE *f, const struct gp_metrics *m,
                        const struct tenant_set *set, double span_s,
                        const char *label)
{
    const struct gp_summary *s = gp_metrics_summary(m);
    const struct gp_series *util = gp_metrics_util_series(m);
    struct chart c = {.f = f};
    struct tscale ts = time_scale(span_s);
    double *lower, *upper;
    size_t nb = util->n;
    double end = series_span_s(util) / ts.div_s;

    if (nb == 0) {
        fputs("<p class=\"note\">No data.</p>\n", f);
        return GP_OK;
    }
    if (!(lower = calloc(nb, sizeof(*lower))) ||
        !(upper = calloc(nb, sizeof(*upper)))) {
        free(lower);
        return GP_ENOMEM;
    }
    c.x = (struct axis){0, span_s / ts.div_s, false};
    c.y = y_axis((double)s->cluster_gpus * 1.1); /* headroom over the line */
    chart_open(&c, label);
    chart_axes(&c, ts.title, "busy GPUs");
    for (size_t layer = 0; layer <= set->n; layer++) {
        const struct gp_series *t = NULL;
        const char *col = layer < set->n ? tenant_colour(layer) : OTHER_COLOUR;

        if (layer < set->n) {
            size_t k = gp__tenant_find(s, set->names[layer]);

            if (k == (size_t)-1)
                continue;
            t = gp_metrics_tenant_series(m, k);
        }
        for (size_t b = 0; b < nb; b++) {
            /* "other": whatever the named tenants leave of the total */
            double v = t ? t->v[b] : util->v[b] - lower[b];

            upper[b] = lower[b] + (v > 0 ? v : 0);
        }
        fprintf(f, "<polygon fill=\"%s\" fill-opacity=\"0.85\" points=\"", col);
        /* the upper edge left to right, from the axis start to the end */
        fprintf(f, "%.1f,%.1f", px(&c, 0), py(&c, upper[0]));
        for (size_t b = 0; b < nb; b++)
            fprintf(f, " %.1f,%.1f", px(&c, bucket_mid_s(util, b) / ts.div_s),
                    py(&c, upper[b]));
        fprintf(f, " %.1f,%.1f", px(&c, end), py(&c, upper[nb - 1]));
        /* the lower edge back */
        fprintf(f, " %.1f,%.1f", px(&c, end), py(&c, lower[nb - 1]));
        for (size_t b = nb; b-- > 0;)
            fprintf(f, " %.1f,%.1f", px(&c, bucket_mid_s(util, b) / ts.div_s),
                    py(&c, lower[b]));
        fprintf(f, " %.1f,%.1f\"/>\n", px(&c, 0), py(&c, lower[0]));
        memcpy(lower, upper, nb * sizeof(*lower));
    }
    fprintf(f,
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
            "stroke=\"#222\" stroke-dasharray=\"4 3\"/>\n",
            ML, py(&c, (double)s->cluster_gpus), CW - MR,
            py(&c, (double)s->cluster_gpus));
    chart_close(&c);
    free(lower);
    free(upper);
    return GP_OK;
}

/* ---- the load sweep ----------------------------------------------------- */

/* Runs over more than one cluster size: a sweep of offered load. */
static bool is_sweep(struct gp_metrics *const *runs, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (gp_metrics_summary(runs[i])->cluster_gpus !=
            gp_metrics_summary(runs[0])->cluster_gpus)
            return true;
    return false;
}

struct sweep_pt {
    size_t run;
    size_t policy; /* index into the policy names, by first appearance */
    double load;
};

static int cmp_sweep_pt(const void *a, const void *b)
{
    const struct sweep_pt *x = a, *y = b;

    if (x->policy != y->policy)
        return x->policy < y->policy ? -1 : 1;
    if (x->load != y->load)
        return x->load < y->load ? -1 : 1;
    return (x->run > y->run) - (x->run < y->run);
}

enum sweep_y { SWEEP_WAIT_H, SWEEP_UTIL_PCT, SWEEP_FAIRSHARE_PCT };

/* Does a run give a point on this chart, and where? */
static bool sweep_y(const struct gp_summary *s, enum sweep_y what, double *y)
{
    switch (what) {
    case SWEEP_WAIT_H:
        *y = s->avg_wait_s / 3600;
        return true;
    case SWEEP_UTIL_PCT:
        *y = s->gpu_utilization * 100;
        return true;
    case SWEEP_FAIRSHARE_PCT:
        *y = s->fairshare_compliance * 100;
        return s->fairshare_samples > 0 && gp__multi_tenant(s);
    }
    return false;
}

/* One line per policy with a marker per run, x = offered load; pts sorted
 * by policy, then load. */
static void sweep_chart(FILE *f, struct gp_metrics *const *runs,
                        const struct sweep_pt *pts, size_t npts,
                        double max_load, enum sweep_y what, const char *ytitle,
                        const char *label)
{
    struct chart c = {.f = f};
    double ymin = INFINITY, ymax = 0, y, min_load = max_load;

    for (size_t p = 0; p < npts; p++) {
        if (pts[p].load < min_load)
            min_load = pts[p].load;
        if (!sweep_y(gp_metrics_summary(runs[pts[p].run]), what, &y))
            continue;
        ymin = y < ymin ? y : ymin;
        ymax = y > ymax ? y : ymax;
    }
    if (ymin > ymax)
        ymin = ymax;
    /* both axes over the data: the loads and figures of a sweep sit far
     * from 0 */
    c.x = data_axis(min_load, max_load, 0, INFINITY);
    c.y = data_axis(ymin, ymax, 0, what == SWEEP_WAIT_H ? INFINITY : 100);
    chart_open(&c, label);
    chart_axes(&c, "offered load (GPU-work submitted / GPU capacity)", ytitle);
    for (size_t p = 0; p < npts;) {
        size_t q = p, k = 0, have = 0;

        while (q < npts && pts[q].policy == pts[p].policy)
            q++;
        for (size_t i = p; i < q; i++)
            have += sweep_y(gp_metrics_summary(runs[pts[i].run]), what, &y);
        if (have == 0) {
            p = q;
            continue;
        }
        fprintf(f,
                "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\" "
                "stroke-linejoin=\"round\" points=\"",
                colour(pts[p].policy));
        for (size_t i = p; i < q; i++)
            if (sweep_y(gp_metrics_summary(runs[pts[i].run]), what, &y))
                fprintf(f, "%s%.1f,%.1f", k++ ? " " : "", px(&c, pts[i].load),
                        py(&c, y));
        fputs("\"/>\n", f);
        for (size_t i = p; i < q; i++)
            if (sweep_y(gp_metrics_summary(runs[pts[i].run]), what, &y))
                fprintf(f,
                        "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" "
                        "fill=\"%s\"/>\n",
                        px(&c, pts[i].load), py(&c, y), colour(pts[p].policy));
        p = q;
    }
    chart_close(&c);
}

static int sweep_section(FILE *f, struct gp_metrics *const *runs, size_t n)
{
    const char **names;
    struct sweep_pt *pts;
    size_t nnames = 0, npts = 0, left_out = 0;
    double max_load = 0, y;
    bool fair = false;

    if (!(names = calloc(n, sizeof(*names))) ||
        !(pts = calloc(n, sizeof(*pts)))) {
        free(names);
        return GP_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        const struct gp_summary *s = gp_metrics_summary(runs[i]);
        size_t k = 0;

        if (!s->offered_load_known) {
            left_out++;
            continue;
        }
        while (k < nnames && strcmp(names[k], s->policy) != 0)
            k++;
        if (k == nnames)
            names[nnames++] = s->policy;
        pts[npts].run = i;
        pts[npts].policy = k;
        pts[npts++].load = s->offered_load;
        if (s->offered_load > max_load)
            max_load = s->offered_load;
        fair |= sweep_y(s, SWEEP_FAIRSHARE_PCT, &y);
    }
    qsort(pts, npts, sizeof(*pts), cmp_sweep_pt);
    fputs("<h2 id=\"sweep\">Load sweep</h2>\n", f);
    fputs("<p class=\"note\">Runs on clusters of different sizes, one line "
          "per policy and a point per run. Offered load: the GPU-work of the "
          "jobs submitted (duration &times; GPUs) over the cluster&#39;s "
          "GPU-time from the first submit to the last.",
          f);
    if (left_out)
        fprintf(f, " %zu run%s with no submit span left out.", left_out,
                left_out == 1 ? "" : "s");
    fputs("</p>\n", f);
    if (npts == 0) {
        fputs("<p class=\"note\">No run has an offered load.</p>\n", f);
        free(names);
        free(pts);
        return GP_OK;
    }
    fputs("<div class=\"legend\">", f);
    for (size_t k = 0; k < nnames; k++)
        legend_item(f, colour(k), names[k]);
    fputs("</div>\n", f);
    fputs("<h3>Average wait vs offered load</h3>\n", f);
    sweep_chart(f, runs, pts, npts, max_load, SWEEP_WAIT_H,
                "average wait (hours)", "average wait vs offered load");
    fputs("<h3>GPU utilization (to the makespan) vs offered load</h3>\n", f);
    sweep_chart(f, runs, pts, npts, max_load, SWEEP_UTIL_PCT,
                "GPU utilization, makespan (%)",
                "GPU utilization (to the makespan) vs offered load");
    if (fair) {
        fputs("<h3>Fair-share compliance vs offered load</h3>\n", f);
        sweep_chart(f, runs, pts, npts, max_load, SWEEP_FAIRSHARE_PCT,
                    "fair-share compliance (%)",
                    "fair-share compliance vs offered load");
    }
    free(names);
    free(pts);
    return GP_OK;
}

/* ---- tables ------------------------------------------------------------- */

static void td(FILE *f, const char *cls, const char *text)
{
    if (cls)
        fprintf(f, "<td class=\"%s\">", cls);
    else
        fputs("<td>", f);
    gp__html_esc(f, text);
    fputs("</td>", f);
}

/* A table with a column per run, named in the run's colour, up to <tbody>. */
static void table_head(FILE *f, struct gp_metrics *const *runs, size_t n)
{
    char buf[128];

    fputs("<table class=\"sum\">\n<thead><tr><th class=\"l\"></th>", f);
    for (size_t i = 0; i < n; i++) {
        gp__run_name(runs, n, i, buf, sizeof(buf));
        fprintf(f, "<th style=\"color:%s\">", colour(i));
        gp__html_esc(f, buf);
        fputs("</th>", f);
    }
    fputs("</tr></thead>\n<tbody>\n", f);
}

static void summary_table(FILE *f, struct gp_metrics *const *runs, size_t n)
{
    char buf[128];
    struct gp__tunit unit;
    bool gap = false;

    table_head(f, runs, n);
    for (size_t r = 0; r < gp__nrows; r++) {
        const struct gp__row *row = &gp__rows[r];

        gap |= r > 0 && row->group_start;
        if (!gp__row_shown(row, runs, n))
            continue;
        gp__row_label(row, runs, n, buf, sizeof(buf), &unit);
        fputs(gap ? "<tr class=\"s\">" : "<tr>", f);
        gap = false;
        td(f, "l", buf);
        for (size_t i = 0; i < n; i++) {
            gp__row_cell(row, gp_metrics_summary(runs[i]), unit, buf,
                         sizeof(buf));
            td(f, NULL, buf);
        }
        fputs("</tr>\n", f);
    }
    fputs("<tr class=\"s\"><td class=\"l\">placement</td>", f);
    for (size_t i = 0; i < n; i++)
        td(f, NULL, gp_metrics_summary(runs[i])->placement);
    fputs("</tr>\n<tr><td class=\"l\">cluster GPUs</td>", f);
    for (size_t i = 0; i < n; i++) {
        snprintf(buf, sizeof(buf), "%llu",
                 (unsigned long long)gp_metrics_summary(runs[i])->cluster_gpus);
        td(f, NULL, buf);
    }
    fputs("</tr>\n</tbody></table>\n", f);
}

/* The figures of the tenants holding the most GPU time, run by run. */
static void tenant_table(FILE *f, struct gp_metrics *const *runs, size_t n)
{
    const struct gp_summary *first = gp_metrics_summary(runs[0]);
    size_t top[TABLE_TENANTS], ntop;
    char buf[128];
    struct gp__tunit unit;

    ntop = gp__top_tenants(first, TABLE_TENANTS, top);
    if (!ntop) {
        fputs("<p class=\"note\">No tenants.</p>\n", f);
        return;
    }
    table_head(f, runs, n);
    for (size_t r = 0; r < gp__ntrows; r++) {
        const struct gp__trow *row = &gp__trows[r];

        if (!gp__trow_shown(row, runs, n))
            continue;
        gp__trow_label(row, runs, n, buf, sizeof(buf), &unit);
        fprintf(f, "<tr class=\"g\"><td colspan=\"%zu\">", n + 1);
        gp__html_esc(f, buf);
        fputs("</td></tr>\n", f);
        for (size_t t = 0; t < ntop; t++) {
            const char *name = first->tenants[top[t]].name;

            fputs("<tr>", f);
            td(f, "l t", name);
            for (size_t i = 0; i < n; i++) {
                const struct gp_summary *s = gp_metrics_summary(runs[i]);
                size_t k = gp__tenant_find(s, name);

                gp__trow_cell(row, s, k == (size_t)-1 ? NULL : &s->tenants[k],
                              unit, buf, sizeof(buf));
                td(f, NULL, buf);
            }
            fputs("</tr>\n", f);
        }
    }
    fputs("</tbody></table>\n", f);
    fprintf(f,
            "<p class=\"note\">The %zu tenants (of %zu) holding the most GPU "
            "time in the first run.</p>\n",
            ntop, first->ntenants);
}

static void info_row(FILE *f, const char *key, const char *value)
{
    if (!value || !*value)
        return;
    fputs("<tr><th>", f);
    gp__html_esc(f, key);
    fputs("</th><td>", f);
    gp__html_esc(f, value);
    fputs("</td></tr>\n", f);
}

/* A tenant's busy GPUs over time in a run, or NULL if it is not there. */
static const struct gp_series *tenant_series(const struct gp_metrics *m,
                                             const char *name)
{
    size_t k = gp__tenant_find(gp_metrics_summary(m), name);

    return k == (size_t)-1 ? NULL : gp_metrics_tenant_series(m, k);
}

/* Each top tenant with a guarantee: its busy GPUs over time, a line per
 * run in the run's colour, and its guarantee dashed. */
static void guarantee_charts(FILE *f, struct gp_metrics *const *runs, size_t n,
                             const struct tenant_set *set, double span_s)
{
    const struct gp_summary *first = gp_metrics_summary(runs[0]);
    struct tscale ts = time_scale(span_s);

    for (size_t t = 0; t < set->n; t++) {
        size_t k0 = gp__tenant_find(first, set->names[t]);
        uint64_t g = first->tenants[k0].guarantee;
        struct chart c = {.f = f};
        double ymax = (double)g;
        char label[256];

        for (size_t i = 0; i < n; i++) {
            const struct gp_series *ser = tenant_series(runs[i], set->names[t]);

            for (size_t b = 0; ser && b < ser->n; b++)
                ymax = ser->v[b] > ymax ? ser->v[b] : ymax;
        }
        snprintf(label, sizeof(label), "%s: busy GPUs, guarantee %llu",
                 set->names[t], (unsigned long long)g);
        fputs("<h3>", f);
        gp__html_esc(f, label);
        fputs("</h3>\n", f);
        c.x = (struct axis){0, span_s > 0 ? span_s / ts.div_s : 1, false};
        c.y = y_axis(ymax * 1.1);
        chart_open(&c, label);
        chart_axes(&c, ts.title, "busy GPUs");
        for (size_t i = 0; i < n; i++) {
            const struct gp_series *ser = tenant_series(runs[i], set->names[t]);

            if (!ser || ser->n == 0)
                continue;
            fprintf(f,
                    "<polyline fill=\"none\" stroke=\"%s\" "
                    "stroke-width=\"1.4\" stroke-linejoin=\"round\" "
                    "points=\"",
                    colour(i));
            for (size_t b = 0; b < ser->n; b++)
                fprintf(f, "%s%.1f,%.1f", b ? " " : "",
                        px(&c, bucket_mid_s(ser, b) / ts.div_s),
                        py(&c, ser->v[b]));
            fputs("\"/>\n", f);
        }
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                "stroke=\"#222\" stroke-dasharray=\"6 4\"/>\n",
                ML, py(&c, (double)g), CW - MR, py(&c, (double)g));
        chart_close(&c);
    }
}

/* The tenants of the set the first run gives a guarantee. */
static size_t guaranteed_in(const struct gp_summary *first,
                            const struct tenant_set *set)
{
    size_t n = 0;

    for (size_t t = 0; t < set->n; t++) {
        size_t k = gp__tenant_find(first, set->names[t]);

        n += k != (size_t)-1 && first->tenants[k].guarantee > 0;
    }
    return n;
}

/* What the figures mean, in a sentence each; docs/metrics.md has the rest. */
static const char *const glossary[][2] = {
    {"JCT", "job completion time: end minus submission, for completed jobs"},
    {"wait", "time from submission to the first start"},
    {"makespan", "from the first submission to the last job's end"},
    {"GPU utilization, makespan", "GPU-seconds held by jobs over cluster "
                                  "GPUs times the makespan"},
    {"GPU utilization ceiling", "the completed work over cluster GPUs "
                                "times the lower bound of the makespan: "
                                "the most any policy could reach"},
    {"queue length", "jobs waiting, averaged over time"},
    {"offered load", "GPU-work submitted per GPU-second of the cluster "
                     "over the arrival window"},
    {"guarantee compliance", "of the tenant-minutes with demand, the share "
                             "in which a tenant held at least 95% of "
                             "min(demand, guarantee)"},
    {"fair-share compliance", "the same against its entitlement: its "
                              "guarantee up to its demand plus a weighted "
                              "share of what remains"},
    {"reclaim delay", "from a tenant asking for its guaranteed GPUs back "
                      "to holding them"},
    {"GPU time lost", "work thrown away by preemptions and GPU time spent "
                      "restarting, in GPU-hours"},
    {"lower bounds", "no policy can beat them: the mean duration (JCT) "
                     "and work conservation with arrivals (makespan)"},
    {"GPUs in use per GPU type", "each type's GPUs allocated to jobs over "
                                 "time, as a part of the type's GPUs"},
    {"elastic jobs below their size", "GPUs the running elastic jobs lack "
                                      "of what they asked for, summed"},
};

static void glossary_section(FILE *f)
{
    fputs("<h2 id=\"figures\">What the figures mean</h2>\n<dl>\n", f);
    for (size_t i = 0; i < sizeof(glossary) / sizeof(glossary[0]); i++) {
        fputs("<dt>", f);
        gp__html_esc(f, glossary[i][0]);
        fputs("</dt><dd>", f);
        gp__html_esc(f, glossary[i][1]);
        fputs("</dd>\n", f);
    }
    fputs("</dl>\n<p class=\"note\">docs/metrics.md in gpupool's source "
          "defines every figure exactly and shows how to recompute each "
          "from the jobs and runs CSVs (--jobs-csv, --runs-csv).</p>\n",
          f);
}

struct toc_entry {
    const char *id, *title;
    bool shown;
};

static int write_html(FILE *f, struct gp_metrics *const *runs, size_t n,
                      const struct gp_report_info *info)
{
    const char *title = info && info->title && *info->title
                            ? info->title
                            : "gpupool simulation report";
    struct tenant_set set;
    double span = 0;
    size_t nguaranteed;
    int rc;

    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
          "charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, "
          "initial-scale=1\">\n<title>",
          f);
    gp__html_esc(f, title);
    fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>", gp__css);
    gp__html_esc(f, title);
    fputs("</h1>\n<table class=\"info\">\n", f);
    /* what was simulated, as the runs say it; the caller's trace and
     * cluster stand in for runs that were not told */
    for (size_t k = 0; k < GP__NSETTINGS; k++) {
        const char *key;
        char value[4096];

        if (gp__setting(runs, n, k, &key, value, sizeof(value)))
            info_row(f, key, value);
        else if (info && k == 0)
            info_row(f, "trace", info->trace);
        else if (info && k == 1)
            info_row(f, "cluster", info->cluster);
        else if (info && k == GP__NSETTINGS - 1)
            info_row(f, "command", info->command);
    }
    fputs("</table>\n", f);
    if (n == 0) {
        fputs("<p class=\"note\">No runs.</p>\n</body>\n</html>\n", f);
        return GP_OK;
    }
    top_set(gp_metrics_summary(runs[0]), &set);
    nguaranteed = guaranteed_in(gp_metrics_summary(runs[0]), &set);
    {
        const struct toc_entry toc[] = {
            {"sweep", "Load sweep", is_sweep(runs, n)},
            {"util", "GPU utilization over time", true},
            {"types", "GPUs in use per GPU type", shared_types(runs, n) > 0},
            {"elastic", "Elastic jobs below their size", any_shrunk(runs, n)},
            {"grown", "Elastic jobs above their size", any_grown(runs, n)},
            {"queue", "Jobs waiting over time", true},
            {"cdf", "Job completion time CDF", true},
            {"usage", "GPU usage per tenant", true},
            {"guarantees", "Each tenant against its guarantee",
             nguaranteed > 0},
            {"summary", "Summary", true},
            {"tenants", "Tenants", true},
            {"figures", "What the figures mean", true},
        };

        fputs("<nav><h2>Contents</h2>\n<ul>\n", f);
        for (size_t i = 0; i < sizeof(toc) / sizeof(toc[0]); i++)
            if (toc[i].shown)
                fprintf(f, "<li><a href=\"#%s\">%s</a></li>\n", toc[i].id,
                        toc[i].title);
        fputs("</ul></nav>\n", f);
    }

    /* the charts first, then the tables behind them */
    if (is_sweep(runs, n) && (rc = sweep_section(f, runs, n)) != GP_OK)
        return rc;

    fputs("<h2 id=\"util\">GPU utilization over time</h2>\n", f);
    time_chart(f, runs, n, util_of, 0, true, false, "busy GPUs (% of cluster)",
               "GPU utilization over time");
    if (shared_types(runs, n))
        type_section(f, runs, n, shared_types(runs, n));
    if (any_shrunk(runs, n)) {
        fputs("<h2 id=\"elastic\">Elastic jobs below their size</h2>\n"
              "<p class=\"note\">GPUs the running elastic jobs lack of "
              "what they asked for (shrunk, or started on fewer): each "
              "job's GPU count over time is in the runs CSV, a row per "
              "run interval, a resize closing one and opening the "
              "next.</p>\n",
              f);
        time_chart(f, runs, n, shrunk_of, 0, false, false, "GPUs below asked",
                   "elastic jobs' GPUs below their size");
    }
    if (any_grown(runs, n)) {
        fputs("<h2 id=\"grown\">Elastic jobs above their size</h2>\n"
              "<p class=\"note\">GPUs the running elastic jobs hold beyond "
              "what they asked for (grown into free GPUs, or started on "
              "more: optimus, pollux): each job's GPU count over time is in "
              "the runs CSV, a row per run interval.</p>\n",
              f);
        time_chart(f, runs, n, grown_of, 0, false, false, "GPUs above asked",
                   "elastic jobs' GPUs above their size");
    }
    fputs("<h2 id=\"queue\">Jobs waiting over time</h2>\n", f);
    time_chart(f, runs, n, queue_of, 0, false, true, "jobs waiting (log scale)",
               "jobs waiting over time");
    fputs("<p class=\"note\">Log scale: an average below one job is drawn "
          "at 1.</p>\n",
          f);
    fputs("<h2 id=\"cdf\">Job completion time CDF</h2>\n", f);
    cdf_chart(f, runs, n);

    fputs("<h2 id=\"usage\">GPU usage per tenant</h2>\n", f);
    for (size_t i = 0; i < n; i++)
        if (series_span_s(gp_metrics_util_series(runs[i])) > span)
            span = series_span_s(gp_metrics_util_series(runs[i]));
    fputs("<div class=\"legend\">", f);
    for (size_t i = 0; i < set.n; i++)
        legend_item(f, tenant_colour(i), set.names[i]);
    legend_item(f, OTHER_COLOUR, "other");
    fputs("<div><span style=\"background:none;border-top:2px dashed #222;"
          "height:0\"></span>cluster GPUs</div></div>\n",
          f);
    for (size_t i = 0; i < n; i++) {
        char name[128];

        gp__run_name(runs, n, i, name, sizeof(name));
        fputs("<h3>", f);
        gp__html_esc(f, name);
        fputs("</h3>\n", f);
        if ((rc = tenant_chart(f, runs[i], &set, span, name)) != GP_OK)
            return rc;
    }
    if (nguaranteed > 0) {
        fputs("<h2 id=\"guarantees\">Each tenant against its guarantee</h2>\n"
              "<p class=\"note\">The GPUs a tenant held over time, a line per "
              "run, and its guarantee (dashed).</p>\n",
              f);
        fputs("<div class=\"legend\">", f);
        for (size_t i = 0; i < n; i++) {
            char name[128];

            gp__run_name(runs, n, i, name, sizeof(name));
            legend_item(f, colour(i), name);
        }
        fputs("<div><span style=\"background:none;border-top:2px dashed "
              "#222;height:0\"></span>guarantee</div></div>\n",
              f);
        guarantee_charts(f, runs, n, &set, span);
    }

    fputs("<h2 id=\"summary\">Summary</h2>\n", f);
    summary_table(f, runs, n);
    for (size_t i = 0; i < n; i++) {
        char note[1024];

        if (!gp__rejected_note(runs, n, i, note, sizeof(note)))
            continue;
        fputs("<p class=\"note\">", f);
        gp__html_esc(f, note);
        fputs("</p>\n", f);
    }
    fputs("<h2 id=\"tenants\">Tenants</h2>\n", f);
    tenant_table(f, runs, n);
    glossary_section(f);
    fputs("<footer>Generated by gpupool. Times are simulated. Charts over "
          "time show averages over buckets (at most 512 per run).</footer>\n"
          "</body>\n</html>\n",
          f);
    return GP_OK;
}

/* ---- files -------------------------------------------------------------- */

/* mkdir -p: every missing component, each must end up a directory. */
int gp__make_dirs(const char *dir, struct gp_diag *diag)
{
    size_t len = strlen(dir);
    char *p = malloc(len + 1);
    struct stat st;
    int rc = GP_OK;

    if (!p)
        return GP_ENOMEM;
    memcpy(p, dir, len + 1);
    for (size_t i = 1; i <= len && rc == GP_OK; i++) {
        if (p[i] != '/' && p[i] != '\0')
            continue;
        p[i] = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST)
            rc = gp_diag_set(diag, GP_EIO, p, "cannot create directory: %s",
                             strerror(errno));
        else if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode))
            rc = gp_diag_set(diag, GP_EIO, p, "not a directory");
        if (i < len)
            p[i] = '/';
    }
    free(p);
    return rc;
}

int gp_report_write(const char *dir, struct gp_metrics *const *runs, size_t n,
                    const struct gp_report_info *info, struct gp_diag *diag)
{
    char *path;
    FILE *f;
    int rc;

    if (!dir || !*dir)
        return gp_diag_set(diag, GP_EINVAL, "report", "no directory given");
    for (size_t i = 0; i < n; i++)
        if (!gp__metrics_finished(runs[i]))
            return gp_diag_set(diag, GP_ESTATE, "report",
                               "run %zu has not finished", i);
    if ((rc = gp__make_dirs(dir, diag)) != GP_OK)
        return rc;
    if (!(path = malloc(strlen(dir) + sizeof("/index.html"))))
        return GP_ENOMEM;
    strcpy(path, dir);
    strcat(path, "/index.html");
    if (!(f = fopen(path, "w"))) {
        rc = gp_diag_set(diag, GP_EIO, path, "cannot create: %s",
                         strerror(errno));
        free(path);
        return rc;
    }
    rc = write_html(f, runs, n, info);
    if (ferror(f) && rc == GP_OK)
        rc = gp_diag_set(diag, GP_EIO, path, "write failed");
    if (fclose(f) != 0 && rc == GP_OK)
        rc = gp_diag_set(diag, GP_EIO, path, "cannot close: %s",
                         strerror(errno));
    if (rc == GP_ENOMEM)
        gp_diag_set(diag, rc, path, "out of memory");
    free(path);
    return rc;
}
