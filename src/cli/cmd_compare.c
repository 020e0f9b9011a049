/* cmd_compare.c - `gpupool compare`: a set of policies over a set of traces,
 * in one table, one summary CSV and one report.
 *
 * Each trace is one `gpupool sim` with the options given here (the same
 * policies and settings for every trace; a cluster and tenants file per
 * trace when several are given), its report and jobs CSV in
 * DIR/<label>/. gp_compare_write then lays the runs side by side.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "gpupool/report.h"
#include "sim/metrics_priv.h" /* gp__make_dirs */

#define MAX_CASES 32
#define LABEL_MAX 64

struct compare_args {
    char *traces[MAX_CASES], *clusters[MAX_CASES], *tenants[MAX_CASES],
        *labels[MAX_CASES];
    size_t ntraces, nclusters, ntenants, nlabels;
    const char *out;
    char **pass; /* the options handed to every gpupool sim */
    int npass;
    bool with_wall;
};

static void compare_usage(FILE *out)
{
    fputs("usage: gpupool compare --trace FILE [--trace FILE ...] "
          "[options]\n\n"
          "Run the same policies over several traces: one gpupool sim per "
          "trace, then\n"
          "one table (a row per trace, a column per policy), DIR/summary.csv "
          "(a row\n"
          "per run, every figure) and DIR/index.html linking each trace's "
          "report\n"
          "(DIR/<label>/index.html) and jobs CSV (DIR/<label>/jobs.csv"
          "[.<policy>.csv]).\n\n"
          "  -t, --trace FILE     a trace (repeat for each; at most 32)\n"
          "  -c, --cluster SPEC   the cluster: once for every trace, or once "
          "per trace\n"
          "                       in the same order (default: each trace's "
          "preset)\n"
          "      --tenants FILE   tenants: once for every trace, or once per "
          "trace\n"
          "      --label NAME     the trace's name in the tables and its "
          "folder: once\n"
          "                       per trace (default: the file's name "
          "without\n"
          "                       extensions)\n"
          "  -o, --out DIR        where the results go (default "
          "gpupool-compare)\n"
          "  -p, --policy LIST    the policies, and every other option of "
          "gpupool sim\n"
          "                       (see gpupool sim --help) but --report, "
          "--json,\n"
          "                       --jobs-csv, --runs-csv, --fairshare-csv, "
          "--summary-csv\n"
          "                       and --sweep-load\n",
          out);
}

/* Is argv[*i] the option `lng` (or `shrt`)? Then *val is its value (from
 * "--x=v" or the next argument) and *i moves past it. -1: no value. */
static int take(int argc, char **argv, int *i, const char *lng,
                const char *shrt, char **val)
{
    char *a = argv[*i];
    size_t n = strlen(lng);

    if (strncmp(a, lng, n) == 0 && a[n] == '=') {
        *val = a + n + 1;
        return 1;
    }
    if (strcmp(a, lng) != 0 && !(shrt && strcmp(a, shrt) == 0))
        return 0;
    if (*i + 1 >= argc)
        return -1;
    *val = argv[++*i];
    return 1;
}

static int add(char **list, size_t *n, char *v, const char *opt)
{
    if (*n == MAX_CASES) {
        fprintf(stderr, "gpupool compare: %s: at most %d\n", opt, MAX_CASES);
        return 2;
    }
    list[(*n)++] = v;
    return 0;
}

/* gpupool sim's options that compare does not pass on: it writes these
 * files itself, and a sweep is one trace's study */
static const struct {
    const char *opt, *why;
} refused[] = {
    {"--report", "compare writes its results into --out itself"},
    {"--json", "compare writes its results into --out itself"},
    {"--jobs-csv", "compare writes its results into --out itself"},
    {"--runs-csv", "compare writes its results into --out itself"},
    {"--fairshare-csv", "compare writes its results into --out itself"},
    {"--summary-csv", "compare writes its results into --out itself"},
    {"--sweep-load", "run a sweep per trace with gpupool sim"},
};

static int parse_compare(int argc, char **argv, struct compare_args *a)
{
    static const struct {
        const char *lng, *shrt;
    } own[] = {{"--trace", "-t"},
               {"--cluster", "-c"},
               {"--tenants", NULL},
               {"--label", NULL},
               {"--out", "-o"}};

    memset(a, 0, sizeof(*a));
    a->out = "gpupool-compare";
    a->with_wall = true;
    if (!(a->pass = calloc((size_t)argc + 1, sizeof(*a->pass))))
        return 1;
    for (int i = 1; i < argc; i++) {
        char *val = NULL;
        size_t k;
        int r = 0, rc;

        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            compare_usage(stdout);
            return -1;
        }
        for (k = 0; k < sizeof(own) / sizeof(own[0]); k++)
            if ((r = take(argc, argv, &i, own[k].lng, own[k].shrt, &val)))
                break;
        if (r < 0) {
            fprintf(stderr,
                    "gpupool compare: %s needs a value; see `gpupool "
                    "compare --help`\n",
                    argv[i]);
            return 2;
        }
        if (r == 0) {
            for (size_t j = 0; j < sizeof(refused) / sizeof(refused[0]); j++) {
                size_t n = strlen(refused[j].opt);

                if (strncmp(argv[i], refused[j].opt, n) == 0 &&
                    (argv[i][n] == '\0' || argv[i][n] == '=')) {
                    fprintf(stderr,
                            "gpupool compare: %s: %s; see `gpupool "
                            "compare --help`\n",
                            refused[j].opt, refused[j].why);
                    return 2;
                }
            }
            if (strcmp(argv[i], "--no-wall") == 0)
                a->with_wall = false;
            a->pass[a->npass++] = argv[i];
            continue;
        }
        switch (k) {
        case 0:
            rc = add(a->traces, &a->ntraces, val, "--trace");
            break;
        case 1:
            rc = add(a->clusters, &a->nclusters, val, "--cluster");
            break;
        case 2:
            rc = add(a->tenants, &a->ntenants, val, "--tenants");
            break;
        case 3:
            rc = add(a->labels, &a->nlabels, val, "--label");
            break;
        default:
            a->out = val;
            rc = 0;
        }
        if (rc)
            return rc;
    }
    if (a->ntraces == 0) {
        fprintf(stderr, "gpupool compare: no --trace given; see `gpupool "
                        "compare --help`\n");
        return 2;
    }
    if ((a->nclusters > 1 && a->nclusters != a->ntraces) ||
        (a->ntenants > 1 && a->ntenants != a->ntraces) ||
        (a->nlabels && a->nlabels != a->ntraces)) {
        fprintf(stderr,
                "gpupool compare: %zu traces but %zu --cluster, %zu "
                "--tenants, %zu --label: give each once for every trace or "
                "once per trace (--label: once per trace)\n",
                a->ntraces, a->nclusters, a->ntenants, a->nlabels);
        return 2;
    }
    return 0;
}

/* A folder name from a label: letters, digits, '-', '_' and '.' kept, the
 * rest '_'; never empty, never "." or "..". */
static void sanitize(const char *in, char *out, size_t len)
{
    size_t k = 0;

    for (; *in && k + 1 < len; in++) {
        char c = *in;
        bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';

        out[k++] = keep ? c : '_';
    }
    out[k] = '\0';
    if (k == 0 || strcmp(out, ".") == 0 || strcmp(out, "..") == 0)
        snprintf(out, len, "trace");
}

/* The default label: the file's name up to its first '.', made unique
 * among the labels before it with "-2", "-3", ... */
static void make_label(const struct compare_args *a, size_t i,
                       char labels[][LABEL_MAX])
{
    char base[LABEL_MAX];

    if (a->nlabels) {
        sanitize(a->labels[i], base, sizeof(base));
    } else {
        const char *name = strrchr(a->traces[i], '/');
        char *dot;

        sanitize(name ? name + 1 : a->traces[i], base, sizeof(base));
        if ((dot = strchr(base, '.')) && dot != base)
            *dot = '\0';
    }
    snprintf(labels[i], LABEL_MAX, "%s", base);
    for (unsigned n = 2;; n++) {
        size_t j = 0;

        while (j < i && strcmp(labels[j], labels[i]) != 0)
            j++;
        if (j == i)
            break;
        snprintf(labels[i], LABEL_MAX, "%.50s-%u", base, n);
    }
}

/* the arguments compare adds to each gpupool sim (argv is not const) */
static char arg_sim[] = "sim", arg_trace[] = "--trace",
            arg_cluster[] = "--cluster", arg_tenants[] = "--tenants",
            arg_report[] = "--report", arg_jobs[] = "--jobs-csv",
            arg_quiet[] = "--quiet";

int gp_cmd_compare(int argc, char **argv)
{
    struct compare_args a;
    struct gp__sim_keep *keep = calloc(1, sizeof(*keep));
    struct gp_compare_case cases[MAX_CASES];
    char labels[MAX_CASES][LABEL_MAX], command[2048] = "", buf[600];
    struct gp_diag diag = {{0}, {0}};
    int status = 1, rc;

    if (!keep) {
        fprintf(stderr, "gpupool compare: out of memory\n");
        return 1;
    }
    if ((rc = parse_compare(argc, argv, &a)) != 0) {
        status = rc < 0 ? 0 : rc;
        goto out;
    }
    for (int i = 0, n = 0; i < argc && n < (int)sizeof(command) - 2; i++)
        n += snprintf(command + n, sizeof(command) - (size_t)n, "%s%s",
                      i ? " " : "gpupool ", argv[i]);
    for (size_t t = 0; t < a.ntraces; t++) {
        char report[4000], jobs[4096];
        char **sv = calloc((size_t)a.npass + 16, sizeof(*sv));
        int sc = 0;
        size_t first = keep->n;

        if (!sv) {
            fprintf(stderr, "gpupool compare: out of memory\n");
            goto out;
        }
        make_label(&a, t, labels);
        snprintf(report, sizeof(report), "%s/%s", a.out, labels[t]);
        if ((rc = gp__make_dirs(report, &diag)) != GP_OK) {
            fprintf(stderr, "gpupool compare: --out: %s\n",
                    gp_diag_format(&diag, rc, buf, sizeof(buf)));
            free(sv);
            goto out;
        }
        snprintf(jobs, sizeof(jobs), "%s/jobs.csv", report);
        sv[sc++] = arg_sim;
        for (int k = 0; k < a.npass; k++)
            sv[sc++] = a.pass[k];
        sv[sc++] = arg_trace;
        sv[sc++] = a.traces[t];
        if (a.nclusters) {
            sv[sc++] = arg_cluster;
            sv[sc++] = a.clusters[a.nclusters > 1 ? t : 0];
        }
        if (a.ntenants) {
            sv[sc++] = arg_tenants;
            sv[sc++] = a.tenants[a.ntenants > 1 ? t : 0];
        }
        sv[sc++] = arg_report;
        sv[sc++] = report;
        sv[sc++] = arg_jobs;
        sv[sc++] = jobs;
        sv[sc++] = arg_quiet;
        fprintf(stderr, "gpupool compare: %s (%s)\n", labels[t], a.traces[t]);
        rc = gp__sim_keep_runs(sc, sv, keep);
        free(sv);
        if (rc != 0) {
            fprintf(stderr, "gpupool compare: the run of %s failed\n",
                    a.traces[t]);
            status = rc;
            goto out;
        }
        cases[t] = (struct gp_compare_case){labels[t], keep->runs + first,
                                            keep->n - first};
    }
    if ((rc = gp_compare_write(a.out, cases, a.ntraces, command, a.with_wall,
                               stdout, &diag)) != GP_OK) {
        fprintf(stderr, "gpupool compare: %s\n",
                gp_diag_format(&diag, rc, buf, sizeof(buf)));
        goto out;
    }
    printf("\nresults: %s/index.html, %s/summary.csv\n", a.out, a.out);
    status = 0;
out:
    for (size_t i = 0; i < keep->n; i++)
        gp_metrics_free(keep->runs[i]);
    free(keep);
    free(a.pass);
    if (fflush(stdout) != 0 && status == 0) {
        fprintf(stderr, "gpupool compare: writing the output failed\n");
        status = 1;
    }
    return status;
}
