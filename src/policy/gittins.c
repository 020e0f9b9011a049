/* gittins.c - the Gittins index of a job's attained GPU-time, from an
 * empirical distribution of jobs' total GPU-time (Gu et al., Tiresias,
 * NSDI'19, sec. 4.2; Gittins, "Multi-armed bandit allocation indices").
 *
 * With S a job's total service drawn from the samples, a what it has
 * attained, and a quantum D:
 *
 *     index(a) = P(S - a <= D | S > a) / E[min(S - a, D) | S > a]
 *
 * the chance it finishes within the next quantum per unit of service it
 * is expected to use meanwhile: high for a job likely to end soon. With
 * the samples sorted and their prefix sums, one index costs two binary
 * searches. A job past every sample has index 0 (last); with no samples
 * every job has index 0 and the caller's tie-break decides.
 *
 * Samples come from a file (one column of GPU-seconds, as Tiresias's
 * yarn-gput*.csv) and from finished jobs as they end. The sorted table is
 * rebuilt lazily once the samples have grown by 5% (at least one) since
 * it was built, so learning online costs O(n log n) in all, amortized.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/heap.h" /* gp__grow */
#include "policy/policy.h"

struct gp_gittins {
    const struct gp_env *env;
    double quantum;
    double *all; /* every sample, in arrival order */
    uint32_t n, cap;
    double *sorted, *prefix; /* the table: sorted[0..built), prefix[0..built] */
    size_t built;
};

int gp__gittins_new(struct gp_gittins **out, const struct gp_env *env,
                    double quantum)
{
    struct gp_gittins *g = gp_env_calloc(env, 1, sizeof(*g));

    if (!g)
        return GP_ENOMEM;
    g->env = env;
    g->quantum = quantum;
    *out = g;
    return GP_OK;
}

void gp__gittins_free(struct gp_gittins *g)
{
    if (!g)
        return;
    gp_env_free(g->env, g->all);
    gp_env_free(g->env, g->sorted);
    gp_env_free(g->env, g->prefix);
    gp_env_free(g->env, g);
}

size_t gp__gittins_nsamples(const struct gp_gittins *g)
{
    return g->n;
}

int gp__gittins_add(struct gp_gittins *g, double sample)
{
    if (!(sample >= 0) || !isfinite(sample))
        return GP_EINVAL;
    int rc;

    if ((rc = gp__grow(g->env, (void **)&g->all, &g->cap, sizeof(*g->all),
                       g->n + 1)) != GP_OK)
        return rc;
    g->all[g->n++] = sample;
    return GP_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* Rebuild the table when the samples grew by 5% since; false if memory
 * ran out (the old table stays). */
static bool refresh(struct gp_gittins *g)
{
    double *s, *p;

    if (g->n == g->built || g->n - g->built < (g->built + 19) / 20)
        return true;
    s = gp_env_realloc(g->env, g->sorted, g->n * sizeof(*s));
    if (!s)
        return false;
    g->sorted = s;
    p = gp_env_realloc(g->env, g->prefix, (g->n + 1) * sizeof(*p));
    if (!p)
        return false;
    g->prefix = p;
    memcpy(s, g->all, g->n * sizeof(*s));
    qsort(s, g->n, sizeof(*s), cmp_double);
    p[0] = 0;
    for (size_t i = 0; i < g->n; i++)
        p[i + 1] = p[i] + s[i];
    g->built = g->n;
    return true;
}

/* The first sample > x. */
static size_t above(const double *s, size_t n, double x)
{
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (s[mid] > x)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

double gp__gittins_index(struct gp_gittins *g, double attained)
{
    size_t i, j, n;
    double used;

    (void)refresh(g);
    n = g->built;
    i = above(g->sorted, n, attained);
    if (i == n)
        return 0; /* past every sample, or none */
    j = above(g->sorted, n, attained + g->quantum);
    /* the service the survivors use within the quantum: those ending
     * inside it their remainder, the rest the whole quantum */
    used = g->prefix[j] - g->prefix[i] - (double)(j - i) * attained +
           (double)(n - j) * g->quantum;
    return used > 0 ? (double)(j - i) / used : 0;
}

int gp__gittins_load(struct gp_gittins *g, const char *path, const char *key,
                     struct gp_diag *diag)
{
    FILE *f = fopen(path, "r");
    char line[4096];
    unsigned long lineno = 0;
    long col = -1; /* the column read; -1 until the first line says */
    size_t before = g->n;
    int rc = GP_OK;

    if (!f)
        return gp_diag_set(diag, GP_ENOENT, key, "%s: %s", path,
                           strerror(errno));
    while (rc == GP_OK && fgets(line, sizeof(line), f)) {
        char *fields[64], *p = line;
        size_t nf = 0;

        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            rc = gp_diag_set(diag, GP_EPARSE, key,
                             "%s:%lu: line longer than %zu bytes", path, lineno,
                             sizeof(line) - 1);
            break;
        }
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0])
            continue;
        while (p && nf < 64) { /* empty fields kept */
            fields[nf++] = p;
            if ((p = strchr(p, ',')))
                *p++ = '\0';
        }
        if (col < 0) {
            char *end;

            (void)strtod(fields[0], &end);
            if (end != fields[0] && *end == '\0') {
                col = 0; /* no header: one number a line */
            } else {
                for (size_t k = 0; k < nf && col < 0; k++)
                    if (!strcmp(fields[k], "duration") ||
                        !strcmp(fields[k], "gpu_time"))
                        col = (long)k;
                if (col < 0 && nf == 1)
                    col = 0;
                if (col < 0)
                    rc = gp_diag_set(diag, GP_EPARSE, key,
                                     "%s:%lu: no column duration or "
                                     "gpu_time in the header",
                                     path, lineno);
                continue;
            }
        }
        if ((size_t)col >= nf) {
            rc = gp_diag_set(diag, GP_EPARSE, key, "%s:%lu: no column %ld",
                             path, lineno, col + 1);
        } else {
            char *end;
            double v;

            errno = 0;
            v = strtod(fields[col], &end);
            if (end == fields[col] || *end || errno)
                rc = gp_diag_set(diag, GP_EPARSE, key,
                                 "%s:%lu: expected GPU-seconds >= 0, got "
                                 "\"%s\"",
                                 path, lineno, fields[col]);
            else if ((rc = gp__gittins_add(g, v)) == GP_EINVAL)
                rc = gp_diag_set(diag, GP_EPARSE, key,
                                 "%s:%lu: expected GPU-seconds >= 0, got "
                                 "\"%s\"",
                                 path, lineno, fields[col]);
        }
    }
    if (rc == GP_OK && ferror(f))
        rc = gp_diag_set(diag, GP_EIO, key, "%s: read error", path);
    if (rc == GP_OK && g->n == before)
        rc = gp_diag_set(diag, GP_EPARSE, key, "%s: no samples", path);
    fclose(f);
    return rc;
}
