/* csv.h - the CSV toolkit shared by the trace readers: splitting a line into
 * fields (RFC 4180 quotes), mapping a header row to columns by name, walking
 * the members of an input with a header per member, and parsing numbers with
 * a diagnostic that names file:line and the field:
 *
 *     philly.csv.xz:1042: field 'duration': "abc" is not a number
 *
 * Fields are split in place: they point into the line buffer of the input,
 * are NUL-terminated, and stay valid until the next line is read. Nothing
 * here allocates per row.
 */
#ifndef GPUPOOL_TRACE_CSV_H
#define GPUPOOL_TRACE_CSV_H

#include <stdbool.h>
#include <stdint.h>

#include "gpupool/base.h"
#include "trace/io.h"

#define GP_CSV_MAX_FIELDS 256
#define GP_CSV_MAX_COLS 64

/* One split line. */
struct gp_csv_row {
    size_t n;
    char *f[GP_CSV_MAX_FIELDS];
    size_t len[GP_CSV_MAX_FIELDS];
};

/* Is s (len bytes) text that is safe to print: valid UTF-8 without
 * control characters (C0 including TAB, DEL, C1 U+0080..U+009F) or NUL?
 * NULL when it is; else a phrase naming the first bad byte, written to buf
 * ("control character 0x1b at byte 4", "invalid UTF-8 at byte 7"). Every
 * reader refuses such names and ids on input (docs/traces.md), so nothing
 * read from a file can drive the user's terminal or break the jobs CSV. */
const char *gp_text_check(const char *s, size_t len, char *buf, size_t size);

/* Split `line` (len bytes, NUL-terminated, modified in place) at `sep`.
 * Quoted fields may contain the separator and doubled quotes; a quoted field
 * cannot span lines. GP_EPARSE (diag at the input's current line) on an
 * unterminated quote, text after a closing quote, a NUL byte, or more than
 * GP_CSV_MAX_FIELDS fields. `in` may be NULL (no place in the diag). */
int gp_csv_split(struct gp_csv_row *row, char *line, size_t len, char sep,
                 struct gp_input *in, struct gp_diag *diag);

/* A column a reader knows. */
struct gp_csv_col {
    const char *name;
    bool required;
};

/* Find `cols` in the header row `hdr` (names compared exactly, after
 * trimming blanks and a UTF-8 byte-order mark). idx[i] = field index of
 * cols[i], or -1 when absent. GP_EPARSE when a required column is missing
 * (all missing ones are named), a known column appears twice, or, when
 * `strict`, the header has a column not in `cols` (the known ones are
 * listed). ncols <= GP_CSV_MAX_COLS. */
int gp_csv_header(const struct gp_csv_row *hdr, const struct gp_csv_col *cols,
                  size_t ncols, bool strict, int *idx, struct gp_input *in,
                  struct gp_diag *diag);

/* Field `idx` of a row, or "" when idx < 0 or the row is shorter. */
static inline const char *gp_csv_get(const struct gp_csv_row *row, int idx)
{
    return idx >= 0 && (size_t)idx < row->n ? row->f[idx] : "";
}

/* ---- members with a header each ---------------------------------------- */

/* Walks the members of an input that `want` accepts (NULL = all; a plain,
 * non-tar stream is always read), reads each member's header into `idx`,
 * and hands out the data rows. Blank lines are skipped. */
struct gp_csv_reader {
    struct gp_input *in;
    const struct gp_csv_col *cols;
    size_t ncols;
    bool strict;
    char sep;
    bool (*want)(const char *member);
    int idx[GP_CSV_MAX_COLS];
    size_t nhdr;        /* fields in the current member's header */
    const char *member; /* current member name */
    bool in_member;     /* header read, rows may follow */
    bool done;
    uint64_t nmembers; /* members whose header was read */
    struct gp_csv_row row;
};

/* Set up and read the first wanted member's header. The input must be
 * positioned at its first member (gp_input_next_member called once).
 * GP_EPARSE when the input is empty, has no wanted member, or its header is
 * bad. */
int gp_csv_reader_open(struct gp_csv_reader *r, struct gp_input *in,
                       const struct gp_csv_col *cols, size_t ncols, bool strict,
                       bool (*want)(const char *member), struct gp_diag *diag);
/* The open() of a reader whose state is a struct starting with a struct
 * gp_csv_reader: allocate `size` zeroed bytes (at least
 * sizeof(struct gp_csv_reader)) and gp_csv_reader_open the reader at their
 * start. *out = the block on success; otherwise GP_ENOMEM or the open's
 * error, and nothing is left allocated. Free with gp_csv_reader_free. */
int gp_csv_reader_new(void **out, size_t size, struct gp_input *in,
                      const struct gp_csv_col *cols, size_t ncols, bool strict,
                      bool (*want)(const char *member), struct gp_diag *diag);
/* Free a block from gp_csv_reader_new; NULL is a no-op. It takes a void *
 * so that a reader's ops table can name it as its close(). */
void gp_csv_reader_free(void *r);
/* The next data row into r->row: 1 = a row, 0 = end. GP_EPARSE = a bad row
 * (wrong number of fields, bad quotes; consumed, call again) or a later
 * member's bad header (that member is skipped as a whole). Other < 0 fatal.
 * A new member changes r->idx and r->member. */
int gp_csv_reader_next(struct gp_csv_reader *r, struct gp_diag *diag);

/* ---- values ------------------------------------------------------------ */

/* Parse field `s` (named `field` in messages) as a whole number in
 * [lo, hi]. Blanks around the number are allowed, as is an integral
 * decimal ("8.0"). GP_EPARSE with a diag at the input's current line for
 * empty, garbage, fractional, negative or out-of-range values. */
int gp_csv_u64(struct gp_input *in, const char *field, const char *s,
               uint64_t lo, uint64_t hi, uint64_t *out, struct gp_diag *diag);
int gp_csv_u32(struct gp_input *in, const char *field, const char *s,
               uint32_t lo, uint32_t hi, uint32_t *out, struct gp_diag *diag);
int gp_csv_i64(struct gp_input *in, const char *field, const char *s,
               int64_t lo, int64_t hi, int64_t *out, struct gp_diag *diag);
/* A finite decimal number in [lo, hi] (NaN, inf, hex are rejected). */
int gp_csv_double(struct gp_input *in, const char *field, const char *s,
                  double lo, double hi, double *out, struct gp_diag *diag);
/* Decimal seconds into microseconds (rounded), within [lo_us, hi_us]. */
int gp_csv_seconds(struct gp_input *in, const char *field, const char *s,
                   int64_t lo_us, int64_t hi_us, int64_t *out_us,
                   struct gp_diag *diag);
/* 0/1/true/false/yes/no, any case. */
int gp_csv_bool(struct gp_input *in, const char *field, const char *s,
                bool *out, struct gp_diag *diag);
/* A "YYYY-MM-DD HH:MM:SS" time into microseconds since 1970 (UTC). */
int gp_csv_datetime(struct gp_input *in, const char *field, const char *s,
                    int64_t *out_us, struct gp_diag *diag);

/* GP_EPARSE for `field` at the input's current line: "field 'x': <msg>". */
int gp_csv_field_error(struct gp_input *in, const char *field,
                       struct gp_diag *diag, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Write `s` quoted for a message ("abc", long values cut with "..."),
 * non-printable bytes escaped. Returns buf. */
const char *gp_csv_quote(const char *s, size_t len, char *buf, size_t size);

/* Does a tar member's name end in ".csv"? A `want` for the readers whose
 * archives mix CSV files with others. */
bool gp_csv_member_is_csv(const char *member);

/* Is s empty or only blanks (an optional value left out)? */
bool gp_csv_blank(const char *s);
/* A valid row that is not a GPU job: diag at the input's current line says
 * why; returns GP_TRACE_NOT_GPU. */
int gp_csv_not_gpu(struct gp_input *in, struct gp_diag *diag, const char *why);

/* Time bounds used by the readers. */
#define GP_SECONDS_PER_YEAR INT64_C(31557600) /* 365.25 days */
#define GP_TRACE_MAX_DURATION_US (10 * GP_SECONDS_PER_YEAR * GP_US_PER_S)
#define GP_TRACE_MAX_SUBMIT_US (100 * GP_SECONDS_PER_YEAR * GP_US_PER_S)
#define GP_TRACE_MAX_GPUS 1000000u

#endif
