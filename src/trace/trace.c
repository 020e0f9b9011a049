/* trace.c - opening a trace: choose the reader (by --format or by probing
 * first lines), stream its jobs, and keep the books on skipped rows.
 *
 * Key decision: detection looks only at the first line of a member, through
 * gp_input_peek, so nothing is consumed and an overlong first line (a JSON
 * array on one line) cannot fail the probe. When the first member of an
 * archive matches nothing (a LICENSE file), the next members are tried and
 * the input is rewound before the reader starts.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "trace/csv.h"
#include "trace/fmt_pai.h"
#include "trace/reader.h"

#define MAX_PROBE_MEMBERS 64
#define MAX_REASONS 32

static const struct gp_trace_reader_ops *const readers[] = {
#define X(id) &gp_trace_reader_##id,
    GP_TRACE_READER_LIST(X)
#undef X
};
#define NREADERS (sizeof(readers) / sizeof(readers[0]))

/* C cannot read the strings out of the ops tables in a constant
 * initializer, so the public list repeats them; a missing INFO_ line fails
 * the build and test_trace_formats checks that the strings agree. */
/* clang-format off */
#define INFO_gpupool \
    {"gpupool", \
     "gpupool CSV: a header names the columns (docs/traces.md)"}
#define INFO_philly_json \
    {"philly-json", \
     "Philly cluster_job_log: one JSON array of jobs"}
#define INFO_philly_csv \
    {"philly-csv", \
     "Philly per-job table of Pollux: timestamp,duration,num_gpus,..."}
#define INFO_itp \
    {"itp", \
     "Microsoft ITP (ElasticFlow): clusterNN.csv files or tarball"}
#define INFO_helios \
    {"helios", \
     "Helios cluster_log.csv (job_id,user,vc,gpu_num,...)"}
#define INFO_helios_excerpt \
    {"gws-excerpt", \
     "Gen-Parallel-Workloads excerpt of Helios/Philly (u_id,...,interval)"}
#define INFO_gavel \
    {"gavel", \
     "Gavel .trace files (7- or 10-field TSV; a .tar.gz of them " \
     "replays several VCs); durations from Gavel's V100 " \
     "throughputs"}
#define INFO_openb \
    {"openb", \
     "Alibaba GPU trace 2023 (openb) pod list; GPU slices become " \
     "whole GPUs"}
#define INFO_pai \
    {"pai", \
     "Alibaba PAI 2020 pai_job_table.csv joined with " \
     "pai_task_table.csv (--trace-aux)"}
#define INFO_tiresias \
    {"tiresias", \
     "Tiresias simulator job CSV (job_id,num_gpu,submit_time," \
     "...,duration,interval)"}
#define INFO_pollux \
    {"pollux", \
     "Pollux artifact workload: name,time,application,num_replicas," \
     "batch_size"}
/* clang-format on */

const struct gp_trace_format_info gp_trace_formats[] = {
#define X(id) INFO_##id,
    GP_TRACE_READER_LIST(X)
#undef X
        {NULL, NULL},
};

struct reason {
    char key[128];
    char where[160];
    char msg[320];
    uint64_t count;
};

struct gp_trace {
    struct gp_input *in;
    const struct gp_trace_reader_ops *ops;
    void *priv;
    bool priv_open;
    struct gp_trace_opts opts;
    char aux[PATH_MAX]; /* a PAI task table found next to the job table */
    uint64_t rows, skipped;
    struct reason reasons[MAX_REASONS];
    size_t nreasons;
    uint64_t other; /* skips past MAX_REASONS kinds */
    int fatal;      /* sticky error, or 0 */
    struct gp_diag fatal_diag;
    bool done;
};

/* ---- the reader list --------------------------------------------------- */

static void list_names(char *buf, size_t size)
{
    size_t o = 0;

    buf[0] = 0;
    for (size_t i = 0; i < NREADERS && o + 1 < size; i++) {
        int n = snprintf(buf + o, size - o, "%s%s", i ? ", " : "",
                         readers[i]->name);

        if (n < 0)
            break;
        o += (size_t)n;
    }
}

static const struct gp_trace_reader_ops *find_reader(const char *name)
{
    for (size_t i = 0; i < NREADERS; i++)
        if (strcmp(readers[i]->name, name) == 0)
            return readers[i];
    return NULL;
}

/* ---- detection --------------------------------------------------------- */

/* The best reader for the current member's first line; score 0 = none.
 * The start of the line goes to `first` (for the message when nothing
 * matches) if it is still empty. */
static int probe_member(struct gp_input *in, const char *member,
                        const struct gp_trace_reader_ops **best, int *score,
                        char *first, size_t first_size, struct gp_diag *diag)
{
    const char *buf, *nl;
    size_t len;
    char *line;
    int rc;

    if ((rc = gp_input_peek(in, &buf, &len, diag)) != GP_OK)
        return rc;
    if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0) {
        buf += 3;
        len -= 3;
    }
    if ((nl = memchr(buf, '\n', len)))
        len = (size_t)(nl - buf);
    if (len > 0 && buf[len - 1] == '\r')
        len--;
    if (!(line = malloc(len + 1)))
        return gp_diag_set(diag, GP_ENOMEM, gp_input_name(in), "out of memory");
    memcpy(line, buf, len);
    line[len] = 0;
    if (!first[0] && len > 0) {
        size_t n = len < first_size - 4 ? len : first_size - 4;

        for (size_t i = 0; i < n; i++)
            first[i] =
                (unsigned char)line[i] < 0x20 || (unsigned char)line[i] >= 0x7f
                    ? '?'
                    : line[i];
        strcpy(first + n, n < len ? "..." : "");
    }
    for (size_t i = 0; i < NREADERS; i++) {
        int s = readers[i]->probe(line, len, member);

        if (s > *score) {
            *score = s;
            *best = readers[i];
        }
    }
    free(line);
    return GP_OK;
}

static int detect(struct gp_input *in, const struct gp_trace_reader_ops **out,
                  struct gp_diag *diag)
{
    const struct gp_trace_reader_ops *best = NULL;
    const char *member;
    char first[64] = "", names[256];
    int score = 0, rc = 0, k;

    for (k = 0; k < MAX_PROBE_MEMBERS; k++) {
        if ((rc = gp_input_next_member(in, &member, diag)) < 0)
            return rc;
        if (rc == 0)
            break;
        rc =
            probe_member(in, member, &best, &score, first, sizeof(first), diag);
        if (rc < 0)
            return rc;
        if (score > 0)
            break;
    }
    if (score == 0) {
        if (!first[0])
            return gp_diag_set(diag, GP_EPARSE, gp_input_name(in),
                               "the trace is empty");
        list_names(names, sizeof(names));
        return gp_diag_set(diag, GP_EPARSE, gp_input_name(in),
                           "no known trace format starts with \"%s\"; "
                           "name one with --format (%s)",
                           first, names);
    }
    if (k > 0) { /* the reader expects to start at the first member */
        if ((rc = gp_input_rewind(in, diag)) < 0)
            return rc;
        if ((rc = gp_input_next_member(in, &member, diag)) < 0)
            return rc;
    }
    *out = best;
    return GP_OK;
}

/* ---- open / close ------------------------------------------------------ */

/* `path` is the trace's path, or NULL for bytes in memory. */
static int start(struct gp_trace **out, struct gp_input *in, const char *path,
                 const struct gp_trace_opts *opts, struct gp_diag *diag)
{
    const char *format = opts ? opts->format : NULL;
    struct gp_trace *t = calloc(1, sizeof(*t));
    const char *member;
    char names[256];
    int rc;

    if (!t) {
        gp_input_close(in);
        return gp_diag_set(diag, GP_ENOMEM, gp_input_name(in), "out of memory");
    }
    t->in = in;
    if (opts)
        t->opts = *opts;
    if (format && format[0] && strcmp(format, "auto") != 0) {
        if (!(t->ops = find_reader(format))) {
            list_names(names, sizeof(names));
            rc = gp_diag_set(diag, GP_EINVAL, "--format",
                             "unknown trace format '%s' (known: auto, %s)",
                             format, names);
            goto fail;
        }
        if ((rc = gp_input_next_member(in, &member, diag)) < 0)
            goto fail;
        if (rc == 0) {
            rc = gp_diag_set(diag, GP_EPARSE, gp_input_name(in),
                             "the archive has no files");
            goto fail;
        }
    } else if ((rc = detect(in, &t->ops, diag)) < 0) {
        goto fail;
    }
    /* A PAI reader sees a stream, not a path: the task table it needs is
     * looked for here, next to the job table, when none was given. */
    if (t->ops == &gp_trace_reader_pai && path &&
        (!t->opts.aux_path || !t->opts.aux_path[0]) &&
        gp__pai_find_task_table(path, t->aux, sizeof(t->aux)))
        t->opts.aux_path = t->aux;
    if ((rc = t->ops->open(&t->priv, in, &t->opts, diag)) < 0)
        goto fail;
    t->priv_open = true;
    *out = t;
    return GP_OK;
fail:
    gp_trace_close(t);
    return rc;
}

int gp_trace_open(struct gp_trace **out, const char *path,
                  const struct gp_trace_opts *opts, struct gp_diag *diag)
{
    struct gp_input *in;
    int rc;

    if (!out || !path)
        return gp_diag_set(diag, GP_EINVAL, "", "no trace path");
    if ((rc = gp_input_open_path(&in, path, diag)) < 0)
        return rc;
    return start(out, in, path, opts, diag);
}

int gp_trace_open_mem(struct gp_trace **out, const void *buf, size_t len,
                      const char *name, const struct gp_trace_opts *opts,
                      struct gp_diag *diag)
{
    struct gp_input *in;
    int rc;

    if (!out || (!buf && len))
        return gp_diag_set(diag, GP_EINVAL, "", "no trace bytes");
    if ((rc = gp_input_open_mem(&in, buf ? buf : "", len, name, diag)) < 0)
        return rc;
    return start(out, in, NULL, opts, diag);
}

void gp_trace_close(struct gp_trace *t)
{
    if (!t)
        return;
    if (t->priv_open && t->ops->close)
        t->ops->close(t->priv);
    gp_input_close(t->in);
    free(t);
}

/* ---- reading ----------------------------------------------------------- */

/* Group skips by their message with the values taken out: digits become
 * '#', quoted text becomes "*". */
static void reason_key(const char *msg, char *key, size_t size)
{
    size_t o = 0;

    for (const char *p = msg; *p && o + 4 < size; p++) {
        if (*p >= '0' && *p <= '9') {
            while (p[1] >= '0' && p[1] <= '9')
                p++;
            key[o++] = '#';
        } else if (*p == '"') {
            while (p[1] && p[1] != '"') {
                if (p[1] == '\\' && p[2])
                    p++;
                p++;
            }
            if (p[1])
                p++;
            memcpy(key + o, "\"*\"", 3);
            o += 3;
        } else {
            key[o++] = *p;
        }
    }
    key[o] = 0;
}

static void note_skip(struct gp_trace *t, const struct gp_diag *d)
{
    char key[128];
    size_t i;

    t->skipped++;
    reason_key(d->msg, key, sizeof(key));
    for (i = 0; i < t->nreasons; i++) {
        if (strcmp(t->reasons[i].key, key) == 0) {
            t->reasons[i].count++;
            return;
        }
    }
    if (t->nreasons == MAX_REASONS) {
        t->other++;
        return;
    }
    snprintf(t->reasons[i].key, sizeof(t->reasons[i].key), "%s", key);
    snprintf(t->reasons[i].where, sizeof(t->reasons[i].where), "%s", d->where);
    snprintf(t->reasons[i].msg, sizeof(t->reasons[i].msg), "%s", d->msg);
    t->reasons[i].count = 1;
    t->nreasons++;
}

static int sticky(struct gp_trace *t, int rc, const struct gp_diag *d,
                  struct gp_diag *diag)
{
    t->fatal = rc;
    t->fatal_diag = *d;
    if (diag)
        *diag = *d;
    return rc;
}

/* Every string of a job must be printable text (see gp_text_check): the
 * first that is not makes the row bad, naming the field. */
static int check_text(struct gp_trace *t, const struct gp_job_spec *j,
                      struct gp_diag *d)
{
    const char *const fields[] = {"id", "tenant", "user", "name", "gpu_type"};
    const char *const vals[] = {j->id, j->tenant, j->user, j->name,
                                j->gpu_type};
    char why[64];

    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        const char *bad;

        if (!vals[i])
            continue;
        if ((bad = gp_text_check(vals[i], strlen(vals[i]), why, sizeof(why))))
            return gp_diag_set(d, GP_EPARSE, gp_input_where(t->in),
                               "field '%s': %s (control characters and "
                               "invalid UTF-8 are refused)",
                               fields[i], bad);
    }
    return GP_OK;
}

int gp_trace_next(struct gp_trace *t, struct gp_job_spec *out,
                  struct gp_diag *diag)
{
    struct gp_diag d;

    if (t->fatal) {
        if (diag)
            *diag = t->fatal_diag;
        return t->fatal;
    }
    if (t->done)
        return 0;
    for (;;) {
        int rc;

        memset(&d, 0, sizeof(d));
        memset(out, 0, sizeof(*out));
        rc = t->ops->next(t->priv, out, &d);
        if (rc != 0 && t->rows == GP_TRACE_MAX_ROWS) {
            gp_diag_set(&d, GP_ERANGE, gp_input_where(t->in),
                        "more than %llu rows: over the cap of a trace "
                        "(docs/traces.md)",
                        (unsigned long long)GP_TRACE_MAX_ROWS);
            return sticky(t, GP_ERANGE, &d, diag);
        }
        if (rc == 1 && check_text(t, out, &d) != GP_OK)
            rc = GP_EPARSE; /* a bad row, skippable */
        if (rc == 1) {
            t->rows++;
            return 1;
        }
        if (rc == 0) {
            t->done = true;
            /* said once, like a bad row: a caller reading on past
             * GP_EPARSE then sees the end */
            if (t->rows == 0)
                return gp_diag_set(diag, GP_EPARSE, gp_input_name(t->in),
                                   "the trace has no job rows");
            return 0;
        }
        if (rc == GP_TRACE_NOT_GPU) {
            t->rows++;
            note_skip(t, &d);
            continue;
        }
        if (rc == GP_EPARSE) {
            t->rows++;
            if (t->opts.skip_bad) {
                note_skip(t, &d);
                continue;
            }
            if (diag)
                *diag = d;
            return rc;
        }
        return sticky(t, rc < 0 ? rc : GP_EINVAL, &d, diag);
    }
}

const char *gp_trace_format(const struct gp_trace *t)
{
    return t->ops->name;
}

const char *gp_trace_preset(const struct gp_trace *t)
{
    return t->ops->preset;
}

uint64_t gp_trace_rows(const struct gp_trace *t)
{
    return t->rows;
}

uint64_t gp_trace_skipped(const struct gp_trace *t)
{
    return t->skipped;
}

void gp_trace_print_skips(const struct gp_trace *t, FILE *out)
{
    for (size_t i = 0; i < t->nreasons; i++)
        fprintf(out, "%10llu skipped: %s (first at %s)\n",
                (unsigned long long)t->reasons[i].count, t->reasons[i].msg,
                t->reasons[i].where);
    if (t->other)
        fprintf(out, "%10llu skipped: for other reasons\n",
                (unsigned long long)t->other);
}

/* ---- shared by the readers --------------------------------------------- */

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
    int64_t era, yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static bool digits(const char *s, size_t n, int64_t *v)
{
    *v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        *v = *v * 10 + (s[i] - '0');
    }
    return true;
}

int gp_trace_parse_datetime(const char *s, size_t len, int64_t *us)
{
    static const int mdays[12] = {31, 28, 31, 30, 31, 30,
                                  31, 31, 30, 31, 30, 31};
    int64_t y, mo, d, h, mi, sec;
    int dim;

    if (len != 19 || s[4] != '-' || s[7] != '-' || s[10] != ' ' ||
        s[13] != ':' || s[16] != ':')
        return GP_EPARSE;
    if (!digits(s, 4, &y) || !digits(s + 5, 2, &mo) || !digits(s + 8, 2, &d) ||
        !digits(s + 11, 2, &h) || !digits(s + 14, 2, &mi) ||
        !digits(s + 17, 2, &sec))
        return GP_EPARSE;
    if (mo < 1 || mo > 12 || h > 23 || mi > 59 || sec > 59)
        return GP_EPARSE;
    dim = mdays[mo - 1];
    if (mo == 2 && y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))
        dim = 29;
    if (d < 1 || d > dim)
        return GP_EPARSE;
    *us = ((days_from_civil(y, mo, d) * 86400) + h * 3600 + mi * 60 + sec) *
          GP_US_PER_S;
    return GP_OK;
}
