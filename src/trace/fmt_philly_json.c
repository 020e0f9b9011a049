/* fmt_philly_json.c - the original Philly job log (cluster_job_log of
 * msr-fiddle/philly-traces): one JSON array of job objects, each with a
 * list of attempts, each attempt with the servers and GPUs it held.
 *
 * Key decision: the array can be hundreds of MB on a single line, so it is
 * never loaded whole. The bytes are scanned for the top-level elements
 * (brace depth, with strings and escapes respected) and only one element at
 * a time goes to jansson. Lines are counted while scanning so that errors
 * still name file:line.
 *
 * Mapping: id = jobid, tenant = vc, user = user, submit = submitted_time,
 * gpus = GPUs of the first attempt (the `gpus` lists over its `detail`),
 * duration = the sum over attempts of end_time - start_time. A job with no
 * attempts never ran and one whose attempt has no end_time was still running
 * when the log was cut: both are skipped as not schedulable work.
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/csv.h"
#include "trace/reader.h"

#define CHUNK (64u << 10)
#define MAX_ELEMENT (16u << 20)

struct philly_json {
    struct gp_input *in;
    const char *member;
    bool in_member; /* inside a member's array */
    bool done;
    unsigned char *chunk;
    size_t cpos, clen;
    uint64_t line; /* line of the next byte, from 1 */
    char *elem;
    size_t elen, ecap;
    uint64_t start_line; /* of the current element */
    uint64_t njobs;      /* elements seen in this input */
    json_t *job;         /* the last element; out's strings point into it */
    char where[200];
};

static bool wanted(const char *member)
{
    const char *b = gp_path_base(member);
    size_t n = strlen(b);

    return strcmp(b, "cluster_job_log") == 0 ||
           (n >= 5 && strcmp(b + n - 5, ".json") == 0);
}

static int philly_json_probe(const char *line, size_t len, const char *member)
{
    size_t i = 0;

    while (i < len && (line[i] == ' ' || line[i] == '\t'))
        i++;
    if (i == len || line[i] != '[')
        return 0;
    if (strstr(line, "\"jobid\"") || strstr(line, "\"submitted_time\"") ||
        strstr(line, "\"attempts\""))
        return 100;
    if (member && strcmp(gp_path_base(member), "cluster_job_log") == 0)
        return 100;
    return 10; /* a pretty-printed array starts with a lone '[' */
}

/* ---- bytes ------------------------------------------------------------- */

/* The next byte of the member without consuming it: 1, or 0 at its end. */
static int peekc(struct philly_json *p, int *c, struct gp_diag *diag)
{
    if (p->cpos == p->clen) {
        size_t got;
        int rc = gp_input_read(p->in, p->chunk, CHUNK, &got, diag);

        if (rc < 0)
            return rc;
        p->cpos = 0;
        p->clen = got;
        if (got == 0)
            return 0;
    }
    *c = p->chunk[p->cpos];
    return 1;
}

static void advance(struct philly_json *p)
{
    if (p->chunk[p->cpos++] == '\n')
        p->line++;
}

/* Skip blanks (and, between elements, commas). */
static int skip_space(struct philly_json *p, bool commas, int *c,
                      struct gp_diag *diag)
{
    int rc;

    while ((rc = peekc(p, c, diag)) == 1) {
        if (*c == ' ' || *c == '\t' || *c == '\n' || *c == '\r' ||
            (commas && *c == ','))
            advance(p);
        else
            break;
    }
    return rc;
}

static const char *where_at(struct philly_json *p, uint64_t line)
{
    if (gp_input_is_tar(p->in))
        snprintf(p->where, sizeof(p->where), "%s:%s:%llu", gp_input_name(p->in),
                 p->member, (unsigned long long)line);
    else
        snprintf(p->where, sizeof(p->where), "%s:%llu", gp_input_name(p->in),
                 (unsigned long long)line);
    return p->where;
}

/* Position after the '[' of the current member. 1 = there, 0 = the member
 * is empty. */
static int start_member(struct philly_json *p, struct gp_diag *diag)
{
    int c, rc;

    p->cpos = p->clen = 0;
    p->line = 1;
    if ((rc = skip_space(p, false, &c, diag)) <= 0)
        return rc;
    if (c == 0xef) { /* a UTF-8 byte-order mark */
        for (int i = 0; i < 3 && peekc(p, &c, diag) == 1; i++)
            advance(p);
        if ((rc = skip_space(p, false, &c, diag)) <= 0)
            return rc;
    }
    if (c != '[')
        return gp_diag_set(diag, GP_EPARSE, where_at(p, p->line),
                           "expected '[' (a JSON array of jobs)");
    advance(p);
    p->in_member = true;
    return 1;
}

static int next_member(struct philly_json *p, struct gp_diag *diag)
{
    int rc;

    for (;;) {
        if ((rc = gp_input_next_member(p->in, &p->member, diag)) <= 0)
            return rc;
        if (!gp_input_is_tar(p->in) || wanted(p->member))
            return 1;
    }
}

/* Append n scanned bytes to the element; past MAX_ELEMENT they are
 * dropped (scanning goes on, the size is reported when the element ends). */
static int elem_append(struct philly_json *p, const unsigned char *b, size_t n,
                       struct gp_diag *diag)
{
    if (n > MAX_ELEMENT - p->elen)
        n = MAX_ELEMENT - p->elen;
    if (p->elen + n > p->ecap) {
        size_t cap = p->ecap ? p->ecap : 4096;
        char *e;

        while (cap < p->elen + n)
            cap *= 2;
        if (!(e = realloc(p->elem, cap)))
            return gp_diag_set(diag, GP_ENOMEM, gp_input_name(p->in),
                               "out of memory");
        p->elem = e;
        p->ecap = cap;
    }
    memcpy(p->elem + p->elen, b, n);
    p->elen += n;
    return GP_OK;
}

struct scan {
    int depth;
    bool in_str, esc, scalar;
};

/* Run the scanner over b[0..n): how many bytes belong to the element; *end
 * is set when it ends within them. A scalar ends before its delimiter, an
 * object, array or string with its closing byte. */
static size_t scan_bytes(struct philly_json *p, struct scan *st,
                         const unsigned char *b, size_t n, bool *end)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = b[i];

        if (c == '\n')
            p->line++;
        if (st->in_str) {
            if (st->esc)
                st->esc = false;
            else if (c == '\\')
                st->esc = true;
            else if (c == '"')
                st->in_str = false;
            else
                continue;
        } else if (st->scalar) {
            if (c == ',' || c == ']' || c == ' ' || c == '\t' || c == '\n' ||
                c == '\r') {
                if (c == '\n')
                    p->line--; /* not consumed */
                *end = true;
                return i;
            }
            if (c == '"')
                st->in_str = true;
            continue;
        } else if (c == '"') {
            st->in_str = true;
        } else if (c == '{' || c == '[') {
            st->depth++;
        } else if (c == '}' || c == ']') {
            st->depth--;
        }
        if (!st->in_str && st->depth <= 0) {
            *end = true;
            return i + 1;
        }
    }
    return n;
}

/* Collect the element starting at the next byte into p->elem. 1 = done,
 * 0 = the member ended inside it. */
static int scan_element(struct philly_json *p, struct gp_diag *diag)
{
    struct scan st = {0, false, false, false};
    bool end = false;
    int c, rc;

    p->elen = 0;
    if ((rc = peekc(p, &c, diag)) <= 0)
        return rc;
    st.scalar = c != '{' && c != '[' && c != '"';
    if (st.scalar) { /* its first byte is part of it, whatever it is */
        if ((rc = elem_append(p, p->chunk + p->cpos, 1, diag)) < 0)
            return rc;
        advance(p);
    }
    for (;;) {
        size_t n;

        if ((rc = peekc(p, &c, diag)) < 0)
            return rc;
        if (rc == 0)
            return st.scalar && p->elen > 0 ? 1 : 0;
        n = scan_bytes(p, &st, p->chunk + p->cpos, p->clen - p->cpos, &end);
        if ((rc = elem_append(p, p->chunk + p->cpos, n, diag)) < 0)
            return rc;
        p->cpos += n;
        if (end)
            return 1;
    }
}

/* ---- one job ----------------------------------------------------------- */

static int job_error(struct philly_json *p, struct gp_diag *diag,
                     const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int job_error(struct philly_json *p, struct gp_diag *diag,
                     const char *field, const char *fmt, ...)
{
    char msg[200];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (field)
        return gp_diag_set(diag, GP_EPARSE, where_at(p, p->start_line),
                           "job %llu: field '%s': %s",
                           (unsigned long long)p->njobs, field, msg);
    return gp_diag_set(diag, GP_EPARSE, where_at(p, p->start_line),
                       "job %llu: %s", (unsigned long long)p->njobs, msg);
}

static int skip_job(struct philly_json *p, struct gp_diag *diag,
                    const char *why)
{
    gp_diag_set(diag, GP_TRACE_NOT_GPU, where_at(p, p->start_line), "%s", why);
    return GP_TRACE_NOT_GPU;
}

/* An optional string member: NULL when missing or null. */
static int get_str(struct philly_json *p, json_t *o, const char *key,
                   const char **out, struct gp_diag *diag)
{
    json_t *v = json_object_get(o, key);

    *out = NULL;
    if (!v || json_is_null(v))
        return GP_OK;
    if (!json_is_string(v))
        return job_error(p, diag, key, "is not a string");
    *out = json_string_value(v);
    return GP_OK;
}

/* A time member: 1 = *us set, 0 = missing (absent, null or "None"). */
static int get_time(struct philly_json *p, json_t *o, const char *key,
                    const char *field, int64_t *us, struct gp_diag *diag)
{
    json_t *v = json_object_get(o, key);
    const char *s;
    char q[64];

    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return job_error(p, diag, field, "is not a string");
    s = json_string_value(v);
    if (strcmp(s, "None") == 0)
        return 0;
    if (gp_trace_parse_datetime(s, json_string_length(v), us) != GP_OK) {
        gp_csv_quote(s, json_string_length(v), q, sizeof(q));
        return job_error(p, diag, field,
                         "%s is not a time \"YYYY-MM-DD HH:MM:SS\"", q);
    }
    if (*us < 0 || *us > GP_TRACE_MAX_SUBMIT_US)
        return job_error(p, diag, field, "is outside 1970..2069");
    return 1;
}

static int map_job(struct philly_json *p, json_t *o, struct gp_job_spec *out,
                   struct gp_diag *diag)
{
    json_t *attempts, *a;
    int64_t sum_us = 0;
    uint64_t gpus = 0;
    char field[64];
    size_t i;
    int rc;

    if (!json_is_object(o))
        return job_error(p, diag, NULL, "is not a JSON object");
    if ((rc = get_str(p, o, "jobid", &out->id, diag)) < 0 ||
        (rc = get_str(p, o, "vc", &out->tenant, diag)) < 0 ||
        (rc = get_str(p, o, "user", &out->user, diag)) < 0)
        return rc;
    if (!out->id || !out->id[0])
        return job_error(p, diag, "jobid", "is missing");
    if ((rc = get_time(p, o, "submitted_time", "submitted_time",
                       &out->submit_us, diag)) < 0)
        return rc;
    if (rc == 0)
        return job_error(p, diag, "submitted_time", "is missing");
    attempts = json_object_get(o, "attempts");
    if (!attempts || json_is_null(attempts))
        return job_error(p, diag, "attempts", "is missing");
    if (!json_is_array(attempts))
        return job_error(p, diag, "attempts", "is not a list");
    if (json_array_size(attempts) == 0)
        return skip_job(p, diag, "never ran (no attempts)");
    json_array_foreach(attempts, i, a)
    {
        int64_t start_us, end_us;

        if (!json_is_object(a)) {
            snprintf(field, sizeof(field), "attempts[%zu]", i);
            return job_error(p, diag, field, "is not an object");
        }
        snprintf(field, sizeof(field), "attempts[%zu].end_time", i);
        if ((rc = get_time(p, a, "end_time", field, &end_us, diag)) < 0)
            return rc;
        if (rc == 0)
            return skip_job(p, diag, "still running at snapshot");
        snprintf(field, sizeof(field), "attempts[%zu].start_time", i);
        if ((rc = get_time(p, a, "start_time", field, &start_us, diag)) < 0)
            return rc;
        if (rc == 0)
            return job_error(p, diag, field, "is missing");
        if (end_us < start_us) {
            snprintf(field, sizeof(field), "attempts[%zu].end_time", i);
            return job_error(p, diag, field, "is before start_time");
        }
        sum_us += end_us - start_us;
        if (sum_us > GP_TRACE_MAX_DURATION_US)
            return job_error(p, diag, field,
                             "makes the run longer than 10 "
                             "years");
        if (i == 0) {
            json_t *detail = json_object_get(a, "detail"), *d;
            size_t k;

            if (!json_is_array(detail))
                return job_error(p, diag, "attempts[0].detail",
                                 "is missing or not a list");
            json_array_foreach(detail, k, d)
            {
                json_t *g = json_object_get(d, "gpus");

                if (!json_is_array(g)) {
                    snprintf(field, sizeof(field),
                             "attempts[0].detail[%zu].gpus", k);
                    return job_error(p, diag, field,
                                     "is missing or not a list");
                }
                gpus += json_array_size(g);
            }
        }
    }
    if (gpus > GP_TRACE_MAX_GPUS)
        return job_error(p, diag, "attempts[0].detail",
                         "has more than 1000000 GPUs");
    out->gpus = (uint32_t)gpus;
    out->duration_us = sum_us;
    if (gpus == 0)
        return skip_job(p, diag, "no GPUs in the first attempt");
    if (sum_us == 0)
        return skip_job(p, diag, "zero run time");
    return 1;
}

/* ---- the ops ----------------------------------------------------------- */

static void philly_json_close(void *priv)
{
    struct philly_json *p = priv;

    if (!p)
        return;
    json_decref(p->job);
    free(p->elem);
    free(p->chunk);
    free(p);
}

static int philly_json_open(void **priv, struct gp_input *in,
                            const struct gp_trace_opts *opts,
                            struct gp_diag *diag)
{
    struct philly_json *p = calloc(1, sizeof(*p));
    int rc;

    (void)opts;
    if (!p || !(p->chunk = malloc(CHUNK))) {
        free(p);
        return gp_diag_set(diag, GP_ENOMEM, gp_input_name(in), "out of memory");
    }
    p->in = in;
    p->member = gp_input_member(in);
    for (;;) {
        if (p->member && (!gp_input_is_tar(in) || wanted(p->member))) {
            if ((rc = start_member(p, diag)) < 0)
                goto fail;
            if (rc == 1)
                break;
        }
        if ((rc = next_member(p, diag)) < 0)
            goto fail;
        if (rc == 0) {
            rc = gp_diag_set(diag, GP_EPARSE, gp_input_name(in),
                             gp_input_is_tar(in)
                                 ? "the archive has no cluster_job_log or "
                                   ".json member"
                                 : "the file is empty");
            goto fail;
        }
    }
    *priv = p;
    return GP_OK;
fail:
    philly_json_close(p);
    return rc;
}

static int philly_json_next(void *priv, struct gp_job_spec *out,
                            struct gp_diag *diag)
{
    struct philly_json *p = priv;
    json_error_t jerr;
    int c, rc;

    json_decref(p->job);
    p->job = NULL;
    for (;;) {
        if (p->done)
            return 0;
        if (!p->in_member) {
            if ((rc = next_member(p, diag)) < 0)
                return rc;
            if (rc == 0) {
                p->done = true;
                return 0;
            }
            if ((rc = start_member(p, diag)) < 0)
                return rc; /* that member is skipped on the next call */
            continue;
        }
        if ((rc = skip_space(p, true, &c, diag)) < 0)
            return rc;
        if (rc == 0) {
            p->in_member = false;
            return gp_diag_set(diag, GP_EPARSE, where_at(p, p->line),
                               "the JSON array of jobs is not closed "
                               "(truncated file?)");
        }
        if (c == ']') {
            p->in_member = false; /* what follows the array is ignored */
            continue;
        }
        p->start_line = p->line;
        p->njobs++;
        if ((rc = scan_element(p, diag)) < 0)
            return rc;
        if (rc == 0) {
            p->in_member = false;
            return gp_diag_set(diag, GP_EPARSE, where_at(p, p->start_line),
                               "job %llu is cut off by the end of the file",
                               (unsigned long long)p->njobs);
        }
        if (p->elen == MAX_ELEMENT)
            return job_error(p, diag, NULL, "is 16 MiB or larger");
        p->job = json_loadb(p->elem, p->elen, JSON_DECODE_ANY, &jerr);
        if (!p->job)
            return job_error(p, diag, NULL, "bad JSON: %s", jerr.text);
        return map_job(p, p->job, out, diag);
    }
}

const struct gp_trace_reader_ops gp_trace_reader_philly_json = {
    .name = "philly-json",
    .summary = "Philly cluster_job_log: one JSON array of jobs",
    .preset = "philly",
    .probe = philly_json_probe,
    .open = philly_json_open,
    .next = philly_json_next,
    .close = philly_json_close,
};
