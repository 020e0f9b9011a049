/* bench_parse.c - the parsers at their documented limits (docs/traces.md,
 * docs/tenants.md, docs/cluster.md): each case builds its input in memory,
 * parses it, and prints the median wall time of --runs runs, so a quadratic
 * path shows as seconds where a linear one takes milliseconds.
 *
 *   philly          data/philly.csv.xz, the whole trace (82,247 jobs)
 *   tenants-flat    100,000 tenants (the cap), all roots
 *   tenants-chain   a 100,000-deep chain: refused at level 33
 *   switches        a cluster JSON of 100,000 switches of one node (the cap)
 *   tar-in-order    8,000 members, packed in name order (.tar.gz)
 *   tar-reversed    the same packed in reverse name order
 *   rows-cap        a gpupool CSV of 10,000,001 rows: stops at the row cap
 *   line-cap        an endless line: stops at 1 MiB
 *
 * Figures, never a test: see bench/README.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <archive.h>
#include <archive_entry.h>

#include "gpupool/trace.h"
#include "trace/clusterspec.h"
#include "trace/io.h"
#include "trace/tenants.h"

#ifndef GP_SOURCE_ROOT
#define GP_SOURCE_ROOT "."
#endif

struct buf {
    char *p;
    size_t len, cap;
};

static void put(struct buf *b, const void *s, size_t n)
{
    if (b->len + n > b->cap) {
        while (b->len + n > b->cap)
            b->cap = b->cap ? b->cap * 2 : 1 << 16;
        if (!(b->p = realloc(b->p, b->cap))) {
            fprintf(stderr, "bench_parse: out of memory\n");
            exit(2);
        }
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

/* fmt takes one or two size_t numbers */
static void putf(struct buf *b, const char *fmt, size_t i, size_t k)
{
    char tmp[128];
    int n = snprintf(tmp, sizeof(tmp), fmt, i, k);

    put(b, tmp, (size_t)n);
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- inputs ------------------------------------------------------------ */

static struct buf tenants_doc(size_t n, int chain)
{
    struct buf b = {0};

    put(&b, "{\"tenants\":[", 12);
    for (size_t i = 0; i < n; i++) {
        if (i)
            put(&b, ",", 1);
        if (chain && i)
            putf(&b, "{\"name\":\"t%zu\",\"parent\":\"t%zu\"}", i, i - 1);
        else
            putf(&b, "{\"name\":\"t%zu\"}", i, 0);
    }
    put(&b, "]}", 2);
    return b;
}

static struct buf switches_doc(size_t n)
{
    struct buf b = {0};

    put(&b, "{\"switches\":[", 13);
    for (size_t i = 0; i < n; i++) {
        if (i)
            put(&b, ",", 1);
        putf(&b, "{\"name\":\"s%zu\",\"nodes\":[{\"gpus\":1}]}", i, 0);
    }
    put(&b, "]}", 2);
    return b;
}

static la_ssize_t put_cb(struct archive *a, void *priv, const void *p, size_t n)
{
    (void)a;
    put(priv, p, n);
    return (la_ssize_t)n;
}

/* n members "mNNNNN.csv" of one line each, a .tar.gz written by
 * libarchive, in name order or reversed. */
static struct buf tarball(size_t n, int reversed)
{
    struct buf b = {0};
    struct archive *a = archive_write_new();
    struct archive_entry *e = archive_entry_new();

    if (!a || !e || archive_write_set_format_ustar(a) != ARCHIVE_OK ||
        archive_write_add_filter_gzip(a) != ARCHIVE_OK ||
        archive_write_open(a, &b, NULL, put_cb, NULL) != ARCHIVE_OK)
        exit(2);
    for (size_t i = 0; i < n; i++) {
        char name[64], body[128];
        int k;

        snprintf(name, sizeof(name), "m%05zu.csv", reversed ? n - 1 - i : i);
        k = snprintf(body, sizeof(body), "line of %s\n", name);
        archive_entry_clear(e);
        archive_entry_set_pathname(e, name);
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_perm(e, 0644);
        archive_entry_set_size(e, k);
        if (archive_write_header(a, e) != ARCHIVE_OK ||
            archive_write_data(a, body, (size_t)k) != k)
            exit(2);
    }
    if (archive_write_close(a) != ARCHIVE_OK)
        exit(2);
    archive_entry_free(e);
    archive_write_free(a);
    return b;
}

static struct buf rows_csv(size_t n)
{
    struct buf b = {0};

    put(&b, "id,submit_s,gpus,duration_s\n", 28);
    for (size_t i = 0; i < n; i++)
        put(&b, "a,0,1,1\n", 8);
    return b;
}

/* ---- cases ------------------------------------------------------------- */

/* Each returns a count to print (jobs, tenants, members, ...), or -1 on an
 * unexpected result; the error it should stop with is checked. */

static long run_trace(const struct buf *b, const char *path, int want)
{
    struct gp_trace *t = NULL;
    struct gp_job_spec j;
    struct gp_diag d = {{0}, {0}};
    long jobs = 0;
    int rc = path ? gp_trace_open(&t, path, NULL, &d)
                  : gp_trace_open_mem(&t, b->p, b->len, "rows.csv", NULL, &d);

    if (rc == GP_OK)
        while ((rc = gp_trace_next(t, &j, &d)) == 1)
            jobs++;
    gp_trace_close(t);
    if (rc != want) {
        fprintf(stderr, "  %s: %s\n", d.where, d.msg);
        return -1;
    }
    return jobs;
}

static long run_tenants(const struct buf *b, int want)
{
    struct gp_tenant_list l;
    struct gp_diag d = {{0}, {0}};
    int rc;
    long n;

    gp_tenant_list_init(&l);
    rc = gp_tenants_parse(&l, b->p, b->len, "t.json", &d);
    n = (long)l.n;
    gp_tenant_list_fini(&l);
    return rc == want ? n : -1;
}

static long run_switches(const struct buf *b)
{
    struct gp_cluster *c = NULL;
    struct gp_diag d = {{0}, {0}};
    long n;

    if (gp__cluster_from_json(b->p, b->len, "c.json", &c, &d) != GP_OK) {
        fprintf(stderr, "  %s: %s\n", d.where, d.msg);
        return -1;
    }
    n = (long)gp_cluster_nswitches(c);
    gp_cluster_free(c);
    return n;
}

static long run_tar(const struct buf *b)
{
    struct gp_input *in = NULL;
    struct gp_diag d = {{0}, {0}};
    const char *m;
    long n = 0;
    int rc;

    if (gp_input_open_mem(&in, b->p, b->len, "m.tar.gz", &d) != GP_OK)
        return -1;
    while ((rc = gp_input_next_member(in, &m, &d)) == 1) {
        char *line;
        size_t len;

        if (gp_input_getline(in, &line, &len, &d) != 1)
            break;
        n++;
    }
    gp_input_close(in);
    return rc == 0 ? n : -1;
}

static long run_line_cap(void)
{
    size_t len = GP_INPUT_MAX_LINE + 4096;
    char *p = malloc(len), *line;
    struct gp_input *in = NULL;
    struct gp_diag d = {{0}, {0}};
    const char *m;
    size_t n;
    int rc = -1;

    if (!p)
        return -1;
    memset(p, 'y', len);
    if (gp_input_open_mem(&in, p, len, "line.csv", &d) == GP_OK &&
        gp_input_next_member(in, &m, &d) == 1)
        rc = gp_input_getline(in, &line, &n, &d);
    gp_input_close(in);
    free(p);
    return rc == GP_ERANGE ? (long)GP_INPUT_MAX_LINE : -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    const char *only = NULL, *philly = GP_SOURCE_ROOT "/data/philly.csv.xz";
    int runs = 5, bad = 0;
    struct buf tflat, tchain, sw, tin, trev, rows;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--philly") == 0 && i + 1 < argc)
            philly = argv[++i];
        else {
            fprintf(stderr, "usage: bench_parse [--runs N] [--case NAME] "
                            "[--philly FILE]\n");
            return 2;
        }
    }
    if (runs < 1 || runs > 101)
        runs = 5;
    tflat = tenants_doc(GP_TENANTS_MAX, 0);
    tchain = tenants_doc(GP_TENANTS_MAX, 1);
    sw = switches_doc(GP_CLUSTER_SPEC_MAX_NODES);
    tin = tarball(8000, 0);
    trev = tarball(8000, 1);
    rows = rows_csv((size_t)GP_TRACE_MAX_ROWS + 1);

#define CASE(name, what, expr)                                                 \
    do {                                                                       \
        double t[101];                                                         \
        long n = 0;                                                            \
        if (only && strcmp(only, name) != 0)                                   \
            break;                                                             \
        for (int r = 0; r < runs; r++) {                                       \
            double t0 = now_s();                                               \
            n = (expr);                                                        \
            t[r] = now_s() - t0;                                               \
        }                                                                      \
        qsort(t, (size_t)runs, sizeof(t[0]), cmp_double);                      \
        if (n < 0)                                                             \
            bad = 1;                                                           \
        printf("%-14s %s=%ld median_ms=%.1f min_ms=%.1f runs=%d%s\n", name,    \
               what, n, t[runs / 2] * 1e3, t[0] * 1e3, runs,                   \
               n < 0 ? " UNEXPECTED" : "");                                    \
        fflush(stdout);                                                        \
    } while (0)

    CASE("philly", "jobs", run_trace(NULL, philly, 0));
    CASE("tenants-flat", "tenants", run_tenants(&tflat, GP_OK));
    CASE("tenants-chain", "accepted", run_tenants(&tchain, GP_ERANGE));
    CASE("switches", "switches", run_switches(&sw));
    CASE("tar-in-order", "members", run_tar(&tin));
    CASE("tar-reversed", "members", run_tar(&trev));
    CASE("rows-cap", "jobs", run_trace(&rows, NULL, GP_ERANGE));
    CASE("line-cap", "bytes", run_line_cap());
#undef CASE
    free(tflat.p);
    free(tchain.p);
    free(sw.p);
    free(tin.p);
    free(trev.p);
    free(rows.p);
    return bad;
}
