/* compare.c - gpupool compare's results: several traces, each run under the
 * same policies, in one summary CSV, one text table and one HTML page that
 * links each trace's own report.
 *
 * Every figure here is one the per-trace report and the summary CSV carry
 * too (docs/metrics.md defines them); this file only lays them side by
 * side, a row per trace and a column per policy.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpupool/report.h"
#include "sim/metrics_priv.h"

/* One figure of the comparison: how to read it off a run, how to print it. */
struct figure {
    const char *title;
    const char *unit; /* shown after the title */
    /* false when the run has no such figure (no tenants, no samples) */
    bool (*get)(const struct gp_summary *s, double *out);
    int decimals;
};

static bool avg_jct_h(const struct gp_summary *s, double *out)
{
    *out = s->avg_jct_s / 3600;
    return s->completed > 0;
}

static bool p99_jct_h(const struct gp_summary *s, double *out)
{
    *out = s->p99_jct_s / 3600;
    return s->completed > 0;
}

static bool avg_wait_h(const struct gp_summary *s, double *out)
{
    *out = s->avg_wait_s / 3600;
    return s->completed > 0;
}

static bool makespan_h(const struct gp_summary *s, double *out)
{
    *out = s->makespan_s / 3600;
    return s->completed > 0;
}

static bool utilization_pct(const struct gp_summary *s, double *out)
{
    *out = 100 * s->gpu_utilization;
    return s->completed > 0;
}

static bool preemptions(const struct gp_summary *s, double *out)
{
    *out = (double)s->preemptions;
    return true;
}

static bool fairshare_pct(const struct gp_summary *s, double *out)
{
    *out = 100 * s->fairshare_compliance;
    return s->fairshare_samples > 0;
}

static bool unfinished(const struct gp_summary *s, double *out)
{
    *out = (double)s->unfinished;
    return true;
}

static const struct figure figures[] = {
    {"average JCT", "hours", avg_jct_h, 2},
    {"p99 JCT", "hours", p99_jct_h, 2},
    {"average wait", "hours", avg_wait_h, 2},
    {"makespan", "hours", makespan_h, 2},
    {"GPU utilization to the makespan", "%", utilization_pct, 1},
    {"fair-share compliance", "% of tenant-minutes", fairshare_pct, 1},
    {"preemptions", "", preemptions, 0},
    {"jobs unfinished", "", unfinished, 0},
};
#define NFIGURES (sizeof(figures) / sizeof(figures[0]))

/* The policies, in the order they first appear. */
struct columns {
    const char **names;
    size_t n;
};

static int policy_columns(const struct gp_compare_case *cases, size_t ncases,
                          struct columns *cols)
{
    size_t cap = 0;

    for (size_t c = 0; c < ncases; c++)
        cap += cases[c].n;
    cols->n = 0;
    if (!(cols->names = calloc(cap ? cap : 1, sizeof(*cols->names))))
        return GP_ENOMEM;
    for (size_t c = 0; c < ncases; c++)
        for (size_t i = 0; i < cases[c].n; i++) {
            const char *p = gp_metrics_summary(cases[c].runs[i])->policy;
            size_t k = 0;

            while (k < cols->n && strcmp(cols->names[k], p) != 0)
                k++;
            if (k == cols->n)
                cols->names[cols->n++] = p;
        }
    return GP_OK;
}

/* The run of a case under a policy, or NULL. */
static const struct gp_summary *run_of(const struct gp_compare_case *c,
                                       const char *policy)
{
    for (size_t i = 0; i < c->n; i++) {
        const struct gp_summary *s = gp_metrics_summary(c->runs[i]);

        if (strcmp(s->policy, policy) == 0)
            return s;
    }
    return NULL;
}

/* Does any run have this figure? (A table of dashes is left out.) */
static bool figure_shown(const struct figure *fig,
                         const struct gp_compare_case *cases, size_t ncases)
{
    double x;

    for (size_t c = 0; c < ncases; c++)
        for (size_t i = 0; i < cases[c].n; i++)
            if (fig->get(gp_metrics_summary(cases[c].runs[i]), &x))
                return true;
    return false;
}

static void cell(const struct figure *fig, const struct gp_summary *s,
                 char *buf, size_t len)
{
    double x;

    if (!s || !fig->get(s, &x) || !isfinite(x))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.*f", fig->decimals, x);
}

static const char *cluster_of(const struct gp_compare_case *c)
{
    return c->n ? gp_metrics_summary(c->runs[0])->cluster_spec : "";
}

static void text_tables(FILE *out, const struct gp_compare_case *cases,
                        size_t ncases, const struct columns *cols)
{
    int lw = 5, cw = 8, kw = 7;

    for (size_t c = 0; c < ncases; c++) {
        int l = (int)strlen(cases[c].label),
            k = (int)strlen(cluster_of(&cases[c]));

        lw = l > lw ? l : lw;
        kw = k > kw ? k : kw;
    }
    if (kw > 40)
        kw = 40;
    for (size_t k = 0; k < cols->n; k++) {
        int w = (int)strlen(cols->names[k]);
        cw = w > cw ? w : cw;
    }
    for (size_t f = 0; f < NFIGURES; f++) {
        const struct figure *fig = &figures[f];

        if (!figure_shown(fig, cases, ncases))
            continue;
        fprintf(out, "%s%s%s%s\n", f ? "\n" : "", fig->title,
                *fig->unit ? ", " : "", fig->unit);
        fprintf(out, "%-*s  %-*.*s", lw, "trace", kw, kw, "cluster");
        for (size_t k = 0; k < cols->n; k++)
            fprintf(out, "  %*s", cw, cols->names[k]);
        fputc('\n', out);
        for (size_t c = 0; c < ncases; c++) {
            fprintf(out, "%-*s  %-*.*s", lw, cases[c].label, kw, kw,
                    cluster_of(&cases[c]));
            for (size_t k = 0; k < cols->n; k++) {
                char v[64];

                cell(fig, run_of(&cases[c], cols->names[k]), v, sizeof(v));
                fprintf(out, "  %*s", cw, v);
            }
            fputc('\n', out);
        }
    }
}

static void html_page(FILE *f, const struct gp_compare_case *cases,
                      size_t ncases, const struct columns *cols,
                      const char *command)
{
    fprintf(f,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
            "charset=\"utf-8\">\n<meta name=\"viewport\" "
            "content=\"width=device-width, initial-scale=1\">\n"
            "<title>gpupool compare</title>\n<style>\n%s</style>\n</head>\n"
            "<body>\n<h1>gpupool compare</h1>\n<table class=\"info\">\n"
            "<tr><th>command</th><td>",
            gp__css);
    gp__html_esc(f, command);
    fputs("</td></tr>\n<tr><th>every run's figures</th><td><a "
          "href=\"summary.csv\">summary.csv</a> (a row per run: what was "
          "simulated and every figure; docs/metrics.md defines each)"
          "</td></tr>\n</table>\n<h2>Traces</h2>\n<table>\n<tr><th>trace"
          "</th><th>file</th><th>cluster</th><th>preemption</th><th>report"
          "</th></tr>\n",
          f);
    for (size_t c = 0; c < ncases; c++) {
        const struct gp_summary *s =
            cases[c].n ? gp_metrics_summary(cases[c].runs[0]) : NULL;

        fputs("<tr><td>", f);
        gp__html_esc(f, cases[c].label);
        fputs("</td><td>", f);
        gp__html_esc(f, s ? s->trace : "");
        fputs("</td><td>", f);
        gp__html_esc(f, s ? s->cluster_spec : "");
        fputs("</td><td>", f);
        gp__html_esc(f, s ? s->preemption : "");
        fputs("</td><td><a href=\"", f);
        gp__html_esc(f, cases[c].label);
        fputs("/index.html\">charts</a>, jobs CSV per policy</td></tr>\n", f);
    }
    fputs("</table>\n", f);
    for (size_t fi = 0; fi < NFIGURES; fi++) {
        const struct figure *fig = &figures[fi];

        if (!figure_shown(fig, cases, ncases))
            continue;
        fputs("<h2>", f);
        gp__html_esc(f, fig->title);
        if (*fig->unit) {
            fputs(", ", f);
            gp__html_esc(f, fig->unit);
        }
        fputs("</h2>\n<table class=\"sum\">\n<tr><th>trace</th>", f);
        for (size_t k = 0; k < cols->n; k++) {
            fputs("<th>", f);
            gp__html_esc(f, cols->names[k]);
            fputs("</th>", f);
        }
        fputs("</tr>\n", f);
        for (size_t c = 0; c < ncases; c++) {
            fputs("<tr><td>", f);
            gp__html_esc(f, cases[c].label);
            fputs("</td>", f);
            for (size_t k = 0; k < cols->n; k++) {
                char v[64];

                cell(fig, run_of(&cases[c], cols->names[k]), v, sizeof(v));
                fprintf(f, "<td>%s</td>", v);
            }
            fputs("</tr>\n", f);
        }
        fputs("</table>\n", f);
    }
    fputs("<footer>Generated by gpupool. Times are simulated.</footer>\n"
          "</body>\n</html>\n",
          f);
}

/* Open DIR/name for writing; diag names the path when it cannot. */
static FILE *create(const char *dir, const char *name, struct gp_diag *diag,
                    char *path, size_t len)
{
    FILE *f;

    snprintf(path, len, "%s/%s", dir, name);
    if (!(f = fopen(path, "w")))
        gp_diag_set(diag, GP_EIO, path, "cannot create: %s", strerror(errno));
    return f;
}

static int finish(FILE *f, const char *path, int rc, struct gp_diag *diag)
{
    if (rc == GP_ENOMEM)
        gp_diag_set(diag, rc, path, "out of memory");
    if (ferror(f) && rc == GP_OK)
        rc = gp_diag_set(diag, GP_EIO, path, "write failed");
    if (fclose(f) != 0 && rc == GP_OK)
        rc = gp_diag_set(diag, GP_EIO, path, "cannot close: %s",
                         strerror(errno));
    return rc;
}

int gp_compare_write(const char *dir, const struct gp_compare_case *cases,
                     size_t ncases, const char *command, bool with_wall,
                     FILE *table, struct gp_diag *diag)
{
    struct gp_metrics **all = NULL;
    struct columns cols = {0};
    char path[4096];
    size_t n = 0;
    FILE *f;
    int rc;

    for (size_t c = 0; c < ncases; c++)
        n += cases[c].n;
    if ((rc = gp__make_dirs(dir, diag)) != GP_OK)
        return rc;
    if (!(all = calloc(n ? n : 1, sizeof(*all))) ||
        (rc = policy_columns(cases, ncases, &cols)) != GP_OK) {
        rc = gp_diag_set(diag, GP_ENOMEM, dir, "out of memory");
        goto out;
    }
    n = 0;
    for (size_t c = 0; c < ncases; c++)
        for (size_t i = 0; i < cases[c].n; i++)
            all[n++] = cases[c].runs[i];

    if (!(f = create(dir, "summary.csv", diag, path, sizeof(path)))) {
        rc = GP_EIO;
        goto out;
    }
    rc = gp_output_summary_csv(f, all, n, true, with_wall);
    if ((rc = finish(f, path, rc, diag)) != GP_OK)
        goto out;

    if (!(f = create(dir, "index.html", diag, path, sizeof(path)))) {
        rc = GP_EIO;
        goto out;
    }
    html_page(f, cases, ncases, &cols, command);
    if ((rc = finish(f, path, GP_OK, diag)) != GP_OK)
        goto out;
    if (table)
        text_tables(table, cases, ncases, &cols);
out:
    free(all);
    free(cols.names);
    return rc;
}
