/* csv.c - CSV lines, headers and values for the trace readers.
 *
 * Splitting works in place on the line the input hands out: separators
 * become NULs, quoted fields are unescaped where they stand. Values are
 * checked by a small scanner before strtod/strtoull see them, so NaN, inf,
 * hex floats and trailing garbage are rejected with a message that quotes
 * the bad text and names the field.
 */
#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "trace/csv.h"
#include "trace/reader.h"

/* ---- messages ---------------------------------------------------------- */

const char *gp_csv_quote(const char *s, size_t len, char *buf, size_t size)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0, max = 40;

    if (size < 8) {
        if (size)
            buf[0] = 0;
        return buf;
    }
    buf[o++] = '"';
    for (size_t i = 0; i < len && i < max && o + 6 < size; i++) {
        unsigned char c = (unsigned char)s[i];

        if (c == '"' || c == '\\') {
            buf[o++] = '\\';
            buf[o++] = (char)c;
        } else if (c < 0x20 || c == 0x7f) {
            buf[o++] = '\\';
            buf[o++] = 'x';
            buf[o++] = hex[c >> 4];
            buf[o++] = hex[c & 15];
        } else {
            buf[o++] = (char)c;
        }
    }
    if (len > max && o + 5 < size) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o++] = '"';
    buf[o] = 0;
    return buf;
}

static const char *where_of(struct gp_input *in)
{
    return in ? gp_input_where(in) : "";
}

int gp_csv_field_error(struct gp_input *in, const char *field,
                       struct gp_diag *diag, const char *fmt, ...)
{
    char msg[sizeof(diag->msg)];
    va_list ap;

    if (!diag)
        return GP_EPARSE;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return gp_diag_set(diag, GP_EPARSE, where_of(in), "field '%s': %s", field,
                       msg);
}

/* ---- text -------------------------------------------------------------- */

/* Length of the UTF-8 sequence at s (at most n bytes), 0 if invalid:
 * overlong forms, surrogates and code points past U+10FFFF included. */
static size_t utf8_len(const unsigned char *s, size_t n, uint32_t *cp)
{
    size_t len, i;
    uint32_t c;

    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    if (s[0] >= 0xc2 && s[0] <= 0xdf)
        len = 2, c = s[0] & 0x1fu;
    else if (s[0] >= 0xe0 && s[0] <= 0xef)
        len = 3, c = s[0] & 0x0fu;
    else if (s[0] >= 0xf0 && s[0] <= 0xf4)
        len = 4, c = s[0] & 0x07u;
    else
        return 0;
    if (len > n)
        return 0;
    for (i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        c = (c << 6) | (s[i] & 0x3fu);
    }
    if ((len == 3 && c < 0x800) || (len == 4 && c < 0x10000) || c > 0x10ffff ||
        (c >= 0xd800 && c <= 0xdfff))
        return 0;
    *cp = c;
    return len;
}

const char *gp_text_check(const char *s, size_t len, char *buf, size_t size)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;

    while (i < len) {
        uint32_t cp = 0;
        size_t k = utf8_len(u + i, len - i, &cp);

        if (k == 0) {
            snprintf(buf, size, "invalid UTF-8 at byte %zu", i + 1);
            return buf;
        }
        if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f)) {
            snprintf(buf, size, "control character 0x%02x at byte %zu",
                     (unsigned)cp, i + 1);
            return buf;
        }
        i += k;
    }
    return NULL;
}

/* ---- splitting --------------------------------------------------------- */

static int too_many(struct gp_input *in, struct gp_diag *diag)
{
    return gp_diag_set(diag, GP_EPARSE, where_of(in),
                       "more than %d fields in a row", GP_CSV_MAX_FIELDS);
}

int gp_csv_split(struct gp_csv_row *row, char *line, size_t len, char sep,
                 struct gp_input *in, struct gp_diag *diag)
{
    char *p = line, *end = line + len;

    row->n = 0;
    if (memchr(line, 0, len))
        return gp_diag_set(diag, GP_EPARSE, where_of(in),
                           "line contains a NUL byte");
    for (;;) { /* an unquoted field, the common case, costs one memchr */
        char *start = p, *w, *q;

        if (row->n == GP_CSV_MAX_FIELDS)
            return too_many(in, diag);
        if (p < end && *p == '"') {
            for (w = p++;;) {
                if (p == end)
                    return gp_diag_set(diag, GP_EPARSE, where_of(in),
                                       "unterminated quote in field %zu",
                                       row->n + 1);
                if (*p == '"') {
                    if (p + 1 < end && p[1] == '"') {
                        *w++ = '"';
                        p += 2;
                        continue;
                    }
                    p++;
                    break;
                }
                *w++ = *p++;
            }
            if (p < end && *p != sep)
                return gp_diag_set(diag, GP_EPARSE, where_of(in),
                                   "text after the closing quote of field %zu",
                                   row->n + 1);
            *w = 0;
            row->f[row->n] = start;
            row->len[row->n++] = (size_t)(w - start);
            if (p == end)
                return GP_OK;
            p++;
            continue;
        }
        q = memchr(p, sep, (size_t)(end - p));
        row->f[row->n] = p;
        if (!q) {
            row->len[row->n++] = (size_t)(end - p);
            return GP_OK;
        }
        *q = 0;
        row->len[row->n++] = (size_t)(q - p);
        p = q + 1;
    }
}

/* ---- headers ----------------------------------------------------------- */

static void trimmed(const char *s, size_t len, size_t i, const char **out,
                    size_t *out_len)
{
    if (i == 0 && len >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0) {
        s += 3;
        len -= 3;
    }
    while (len > 0 && (*s == ' ' || *s == '\t')) {
        s++;
        len--;
    }
    while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
        len--;
    *out = s;
    *out_len = len;
}

/* Append to a message buffer, silently cut at its end. */
static void cat(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void cat(char *buf, size_t size, const char *fmt, ...)
{
    size_t n = strlen(buf);
    va_list ap;

    if (n + 1 >= size)
        return;
    va_start(ap, fmt);
    vsnprintf(buf + n, size - n, fmt, ap);
    va_end(ap);
}

int gp_csv_header(const struct gp_csv_row *hdr, const struct gp_csv_col *cols,
                  size_t ncols, bool strict, int *idx, struct gp_input *in,
                  struct gp_diag *diag)
{
    char msg[sizeof(diag->msg)] = "";
    char q[64];
    bool missing = false;

    if (ncols > GP_CSV_MAX_COLS)
        return gp_diag_set(diag, GP_EINVAL, where_of(in), "too many columns");
    for (size_t c = 0; c < ncols; c++)
        idx[c] = -1;
    for (size_t i = 0; i < hdr->n; i++) {
        const char *name;
        size_t len, c;

        trimmed(hdr->f[i], hdr->len[i], i, &name, &len);
        for (c = 0; c < ncols; c++)
            if (strlen(cols[c].name) == len &&
                memcmp(cols[c].name, name, len) == 0)
                break;
        if (c < ncols) {
            if (idx[c] >= 0)
                return gp_diag_set(diag, GP_EPARSE, where_of(in),
                                   "column '%s' appears twice in the header",
                                   cols[c].name);
            idx[c] = (int)i;
        } else if (strict) {
            cat(msg, sizeof(msg), "unknown column %s (known: ",
                gp_csv_quote(name, len, q, sizeof(q)));
            for (c = 0; c < ncols; c++)
                cat(msg, sizeof(msg), "%s%s", c ? ", " : "", cols[c].name);
            cat(msg, sizeof(msg), ")");
            return gp_diag_set(diag, GP_EPARSE, where_of(in), "%s", msg);
        }
    }
    for (size_t c = 0; c < ncols; c++) {
        if (cols[c].required && idx[c] < 0) {
            cat(msg, sizeof(msg), "%s'%s'",
                missing ? ", " : "missing required column(s) ", cols[c].name);
            missing = true;
        }
    }
    if (missing)
        return gp_diag_set(diag, GP_EPARSE, where_of(in), "%s", msg);
    return GP_OK;
}

/* ---- members with headers ---------------------------------------------- */

/* Read the current member's header. 1 = read, 0 = the member is empty. */
static int read_header(struct gp_csv_reader *r, struct gp_diag *diag)
{
    char *line;
    size_t len;
    int rc;

    do {
        if ((rc = gp_input_getline(r->in, &line, &len, diag)) <= 0)
            return rc;
    } while (len == 0);
    if ((rc = gp_csv_split(&r->row, line, len, r->sep, r->in, diag)) != GP_OK)
        return rc;
    rc = gp_csv_header(&r->row, r->cols, r->ncols, r->strict, r->idx, r->in,
                       diag);
    if (rc != GP_OK)
        return rc;
    r->nhdr = r->row.n;
    r->in_member = true;
    r->nmembers++;
    return 1;
}

static bool wanted(const struct gp_csv_reader *r)
{
    return !r->want || !gp_input_is_tar(r->in) || r->want(r->member);
}

int gp_csv_reader_open(struct gp_csv_reader *r, struct gp_input *in,
                       const struct gp_csv_col *cols, size_t ncols, bool strict,
                       bool (*want)(const char *member), struct gp_diag *diag)
{
    int rc;

    memset(r, 0, sizeof(*r));
    r->in = in;
    r->cols = cols;
    r->ncols = ncols;
    r->strict = strict;
    r->sep = ',';
    r->want = want;
    r->member = gp_input_member(in);
    for (;;) {
        if (r->member && wanted(r)) {
            if ((rc = read_header(r, diag)) < 0)
                return rc;
            if (rc == 1)
                return GP_OK;
        }
        if ((rc = gp_input_next_member(in, &r->member, diag)) < 0)
            return rc;
        if (rc == 0)
            break;
    }
    if (!gp_input_is_tar(in))
        return gp_diag_set(diag, GP_EPARSE, gp_input_name(in),
                           "the file is empty (no header row)");
    return gp_diag_set(diag, GP_EPARSE, gp_input_name(in),
                       "the archive has no member this format reads");
}

int gp_csv_reader_new(void **out, size_t size, struct gp_input *in,
                      const struct gp_csv_col *cols, size_t ncols, bool strict,
                      bool (*want)(const char *member), struct gp_diag *diag)
{
    struct gp_csv_reader *r;
    int rc;

    assert(size >= sizeof(*r));
    if (!(r = calloc(1, size)))
        return gp_diag_set(diag, GP_ENOMEM, gp_input_name(in), "out of memory");
    if ((rc = gp_csv_reader_open(r, in, cols, ncols, strict, want, diag)) !=
        GP_OK) {
        free(r);
        return rc;
    }
    *out = r;
    return GP_OK;
}

void gp_csv_reader_free(void *r)
{
    free(r);
}

bool gp_csv_member_is_csv(const char *member)
{
    size_t n = strlen(member);

    return n >= 4 && strcmp(member + n - 4, ".csv") == 0;
}

int gp_csv_reader_next(struct gp_csv_reader *r, struct gp_diag *diag)
{
    char *line;
    size_t len;
    int rc;

    for (;;) {
        if (r->done)
            return 0;
        if (!r->in_member) {
            if ((rc = gp_input_next_member(r->in, &r->member, diag)) < 0)
                return rc;
            if (rc == 0) {
                r->done = true;
                return 0;
            }
            if (!wanted(r))
                continue;
            if ((rc = read_header(r, diag)) < 0)
                return rc; /* the member is skipped on the next call */
            continue;
        }
        if ((rc = gp_input_getline(r->in, &line, &len, diag)) < 0)
            return rc;
        if (rc == 0) {
            r->in_member = false;
            continue;
        }
        if (len == 0)
            continue;
        if ((rc = gp_csv_split(&r->row, line, len, r->sep, r->in, diag)) !=
            GP_OK)
            return rc;
        if (r->row.n != r->nhdr)
            return gp_diag_set(diag, GP_EPARSE, gp_input_where(r->in),
                               "%zu fields where the header has %zu", r->row.n,
                               r->nhdr);
        return 1;
    }
}

/* ---- values ------------------------------------------------------------ */

enum numkind { NUM_BAD, NUM_EMPTY, NUM_NONFINITE, NUM_INT, NUM_DEC };

/* Check that s is one decimal number with optional blanks around it. */
static enum numkind scan_number(const char *s)
{
    const char *p = s;
    size_t digits = 0;
    enum numkind kind = NUM_INT;

    while (*p == ' ' || *p == '\t')
        p++;
    if (!*p)
        return NUM_EMPTY;
    if (*p == '+' || *p == '-')
        p++;
    if (strncasecmp(p, "nan", 3) == 0 || strncasecmp(p, "inf", 3) == 0)
        return NUM_NONFINITE;
    while (*p >= '0' && *p <= '9') {
        p++;
        digits++;
    }
    if (*p == '.') {
        kind = NUM_DEC;
        p++;
        while (*p >= '0' && *p <= '9') {
            p++;
            digits++;
        }
    }
    if (!digits)
        return NUM_BAD;
    if (*p == 'e' || *p == 'E') {
        kind = NUM_DEC;
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return NUM_BAD;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    while (*p == ' ' || *p == '\t')
        p++;
    return *p ? NUM_BAD : kind;
}

static int bad_number(struct gp_input *in, const char *field, const char *s,
                      enum numkind kind, struct gp_diag *diag)
{
    char q[64];

    if (kind == NUM_EMPTY)
        return gp_csv_field_error(in, field, diag, "is empty");
    gp_csv_quote(s, strlen(s), q, sizeof(q));
    if (kind == NUM_NONFINITE)
        return gp_csv_field_error(in, field, diag, "%s is not a finite number",
                                  q);
    return gp_csv_field_error(in, field, diag, "%s is not a number", q);
}

int gp_csv_double(struct gp_input *in, const char *field, const char *s,
                  double lo, double hi, double *out, struct gp_diag *diag)
{
    enum numkind kind = scan_number(s);
    char q[64];
    double v;

    if (kind != NUM_INT && kind != NUM_DEC)
        return bad_number(in, field, s, kind, diag);
    v = strtod(s, NULL);
    if (!isfinite(v))
        return bad_number(in, field, s, NUM_NONFINITE, diag);
    if (v < lo || v > hi) {
        gp_csv_quote(s, strlen(s), q, sizeof(q));
        if (v < 0 && lo >= 0)
            return gp_csv_field_error(in, field, diag, "%s is negative", q);
        return gp_csv_field_error(in, field, diag,
                                  "%s is out of range (%g..%g)", q, lo, hi);
    }
    *out = v;
    return GP_OK;
}

/* A whole number as a sign and magnitude; GP_OK or GP_EPARSE. */
static int whole(struct gp_input *in, const char *field, const char *s,
                 bool *neg, uint64_t *mag, struct gp_diag *diag)
{
    enum numkind kind = scan_number(s);
    const char *p = s;
    char q[64];

    if (kind != NUM_INT && kind != NUM_DEC)
        return bad_number(in, field, s, kind, diag);
    while (*p == ' ' || *p == '\t')
        p++;
    *neg = *p == '-';
    if (*p == '+' || *p == '-')
        p++;
    if (kind == NUM_INT) {
        char *end;

        *mag = strtoull(p, &end, 10);
        if (*mag == UINT64_MAX) /* strtoull saturates */
            goto range;
    } else {
        double v = strtod(p, NULL);

        if (!isfinite(v))
            return bad_number(in, field, s, NUM_NONFINITE, diag);
        if (v != floor(v)) {
            gp_csv_quote(s, strlen(s), q, sizeof(q));
            return gp_csv_field_error(in, field, diag,
                                      "%s is not a whole number", q);
        }
        if (v >= 18446744073709551615.0)
            goto range;
        *mag = (uint64_t)v;
    }
    if (*mag == 0)
        *neg = false;
    return GP_OK;
range:
    gp_csv_quote(s, strlen(s), q, sizeof(q));
    return gp_csv_field_error(in, field, diag, "%s is out of range", q);
}

int gp_csv_u64(struct gp_input *in, const char *field, const char *s,
               uint64_t lo, uint64_t hi, uint64_t *out, struct gp_diag *diag)
{
    uint64_t v;
    bool neg;
    char q[64];
    int rc;

    if ((rc = whole(in, field, s, &neg, &v, diag)) != GP_OK)
        return rc;
    if (neg || v < lo || v > hi) {
        gp_csv_quote(s, strlen(s), q, sizeof(q));
        if (neg)
            return gp_csv_field_error(in, field, diag, "%s is negative", q);
        return gp_csv_field_error(
            in, field, diag, "%s is out of range (%llu..%llu)", q,
            (unsigned long long)lo, (unsigned long long)hi);
    }
    *out = v;
    return GP_OK;
}

int gp_csv_u32(struct gp_input *in, const char *field, const char *s,
               uint32_t lo, uint32_t hi, uint32_t *out, struct gp_diag *diag)
{
    uint64_t v = 0;
    int rc = gp_csv_u64(in, field, s, lo, hi, &v, diag);

    if (rc == GP_OK)
        *out = (uint32_t)v;
    return rc;
}

int gp_csv_i64(struct gp_input *in, const char *field, const char *s,
               int64_t lo, int64_t hi, int64_t *out, struct gp_diag *diag)
{
    uint64_t mag;
    int64_t v;
    bool neg;
    char q[64];
    int rc;

    if ((rc = whole(in, field, s, &neg, &mag, diag)) != GP_OK)
        return rc;
    if (mag > (uint64_t)INT64_MAX + (neg ? 1 : 0))
        goto range;
    v = neg ? (mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag)
            : (int64_t)mag;
    if (v < lo || v > hi)
        goto range;
    *out = v;
    return GP_OK;
range:
    gp_csv_quote(s, strlen(s), q, sizeof(q));
    return gp_csv_field_error(in, field, diag,
                              "%s is out of range (%lld..%lld)", q,
                              (long long)lo, (long long)hi);
}

int gp_csv_seconds(struct gp_input *in, const char *field, const char *s,
                   int64_t lo_us, int64_t hi_us, int64_t *out_us,
                   struct gp_diag *diag)
{
    enum numkind kind = scan_number(s);
    double v, us;
    char q[64];

    if (kind != NUM_INT && kind != NUM_DEC)
        return bad_number(in, field, s, kind, diag);
    v = strtod(s, NULL);
    if (!isfinite(v))
        return bad_number(in, field, s, NUM_NONFINITE, diag);
    us = v * 1e6;
    gp_csv_quote(s, strlen(s), q, sizeof(q));
    if (v < 0 && lo_us >= 0)
        return gp_csv_field_error(in, field, diag, "%s is negative", q);
    if (us < (double)lo_us - 0.5) {
        if (lo_us == 1)
            return gp_csv_field_error(in, field, diag,
                                      "%s must be greater than 0", q);
        return gp_csv_field_error(in, field, diag,
                                  "%s is below the minimum (%.6g s)", q,
                                  (double)lo_us / 1e6);
    }
    if (us > (double)hi_us)
        return gp_csv_field_error(in, field, diag,
                                  "%s is too large (at most %.6g s)", q,
                                  (double)hi_us / 1e6);
    *out_us = llround(us);
    if (*out_us < lo_us) /* a positive value that rounds to 0 us */
        return gp_csv_field_error(in, field, diag, "%s must be greater than 0",
                                  q);
    return GP_OK;
}

int gp_csv_bool(struct gp_input *in, const char *field, const char *s,
                bool *out, struct gp_diag *diag)
{
    static const char *const yes[] = {"1", "true", "yes"};
    static const char *const no[] = {"0", "false", "no"};
    const char *t;
    size_t len;
    char q[64];

    trimmed(s, strlen(s), 1, &t, &len);
    for (size_t i = 0; i < 3; i++) {
        if (strlen(yes[i]) == len && strncasecmp(t, yes[i], len) == 0) {
            *out = true;
            return GP_OK;
        }
        if (strlen(no[i]) == len && strncasecmp(t, no[i], len) == 0) {
            *out = false;
            return GP_OK;
        }
    }
    return gp_csv_field_error(in, field, diag,
                              "%s is not a boolean (0/1/true/false/yes/no)",
                              gp_csv_quote(s, strlen(s), q, sizeof(q)));
}

int gp_csv_datetime(struct gp_input *in, const char *field, const char *s,
                    int64_t *out_us, struct gp_diag *diag)
{
    const char *t;
    size_t len;
    char q[64];

    trimmed(s, strlen(s), 1, &t, &len);
    if (len == 0)
        return gp_csv_field_error(in, field, diag, "is empty");
    if (gp_trace_parse_datetime(t, len, out_us) != GP_OK)
        return gp_csv_field_error(in, field, diag,
                                  "%s is not a time \"YYYY-MM-DD HH:MM:SS\"",
                                  gp_csv_quote(s, strlen(s), q, sizeof(q)));
    return GP_OK;
}

bool gp_csv_blank(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return *s == 0;
}

int gp_csv_not_gpu(struct gp_input *in, struct gp_diag *diag, const char *why)
{
    gp_diag_set(diag, GP_TRACE_NOT_GPU, where_of(in), "%s", why);
    return GP_TRACE_NOT_GPU;
}
