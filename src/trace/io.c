/* io.c - trace byte streams: a source (a file or memory) read through
 * libarchive, which detects the compression (gzip, xz, bzip2, zstd) and the
 * container (tar in all its dialects, zip) from the leading bytes, and a
 * line reader on top.
 *
 * Key decision: one 64 KiB buffer of decoded bytes (sbuf) serves every layer
 * above libarchive. A line that lies wholly inside it is handed out in place
 * (its '\n' overwritten with NUL); only a line that straddles a refill, or
 * ends a member without a newline, is copied into lbuf. A row costs one
 * memchr and no allocation.
 *
 * Archive members come out in name order, so a trace reads the same however
 * it was packed. The first next_member lists the archive (one decoding
 * pass). When the archive is in name order already (the usual case), the
 * members then stream from a second pass. Otherwise the second pass copies
 * every regular member into a spool file (tmpfile()) and the members are
 * read from there: reading an archive costs two decoding passes and at most
 * one copy whatever its order, never a re-decode per member.
 *
 * Every input is capped: GP_INPUT_MAX_LINE bytes a line (reading stops at
 * the cap, so /dev/zero ends), GP_INPUT_MAX_BYTES decoded bytes in all,
 * GP_INPUT_MAX_MEMBERS regular members.
 */
#include <archive.h>
#include <archive_entry.h>
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <sys/types.h>

#include "trace/io.h"

#define SBUF_SIZE (64u << 10)
#define RBUF_SIZE (64u << 10)
#define MAX_NAME 4096u

enum kind { KIND_UNKNOWN, KIND_PLAIN, KIND_ARCHIVE };
enum state { ST_BEFORE, ST_IN, ST_AFTER };

struct member {
    char *name;
    uint64_t ordinal; /* among regular members, in archive order */
    uint64_t off;     /* in the spool, when there is one */
    uint64_t len;
};

struct gp_input {
    char *name; /* base name of the file, for places */

    /* source */
    FILE *f;
    bool seekable;
    const unsigned char *mem;
    size_t mem_len, mem_pos;
    unsigned char *rbuf;
    const char *codec; /* by the leading bytes, to name it in errors */

    /* decoder and container */
    struct archive *a;

    /* decoded bytes of the current member */
    char *sbuf; /* SBUF_SIZE + 1, room for a NUL after the last byte */
    size_t spos, slen;
    bool eof;       /* nothing more of the member after sbuf */
    uint64_t total; /* decoded bytes handed out in this pass */

    /* members */
    enum kind kind;
    enum state state;
    struct member *members; /* sorted by name */
    size_t nmembers, next;
    uint64_t ordinal; /* ordinal of the next regular entry of `a` */
    bool ordered;     /* packed in name order: stream, no spool */
    FILE *spool;      /* members copied out, when not packed in name order */
    uint64_t left;    /* bytes of the current spooled member not read */
    const char *member;

    /* lines */
    char *lbuf;
    size_t lcap;
    char *last;
    size_t last_len;
    bool unget;
    uint64_t lineno;
    int stop; /* a line past the cap stopped reading: its error, sticky */
    struct gp_diag stop_diag;
    char where[320];
};

/* The file, or "file:member" inside an archive. */
static const char *place(struct gp_input *in)
{
    if (in->kind == KIND_ARCHIVE && in->state == ST_IN && in->member) {
        snprintf(in->where, sizeof(in->where), "%s:%s", in->name, in->member);
        return in->where;
    }
    return in->name;
}

static int nomem(struct gp_input *in, struct gp_diag *diag)
{
    return gp_diag_set(diag, GP_ENOMEM, in->name, "out of memory");
}

/* The compression the leading bytes announce, or NULL. */
static const char *codec_by_magic(const unsigned char *b, size_t n)
{
    if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b)
        return "gzip";
    if (n >= 6 && memcmp(b,
                         "\xfd"
                         "7zXZ\0",
                         6) == 0)
        return "xz";
    if (n >= 3 && memcmp(b, "BZh", 3) == 0)
        return "bzip2";
    if (n >= 4 && memcmp(b, "\x28\xb5\x2f\xfd", 4) == 0)
        return "zstd";
    return NULL;
}

/* libarchive's complaint, as GP_EIO (GP_ENOMEM when it ran out), with
 * what was being decoded: "truncated or corrupt xz stream: ...",
 * "truncated or corrupt tar archive (gzip): ...". */
static int arc_error(struct gp_input *in, struct gp_diag *diag)
{
    struct archive *a = in->a;
    const char *s = a ? archive_error_string(a) : NULL;
    const char *codec = NULL, *fmt;

    if (a && archive_errno(a) == ENOMEM)
        return nomem(in, diag);
    if (a && archive_filter_count(a) > 1)
        codec = archive_filter_name(a, 0);
    else
        codec = in->codec;
    if (in->kind != KIND_ARCHIVE)
        return gp_diag_set(diag, GP_EIO, place(in),
                           "truncated or corrupt %s%s: %s",
                           codec ? codec : "input", codec ? " stream" : "",
                           s ? s : "unknown error");
    fmt = (archive_format(a) & ARCHIVE_FORMAT_BASE_MASK) == ARCHIVE_FORMAT_ZIP
              ? "zip"
              : "tar";
    return gp_diag_set(diag, GP_EIO, place(in),
                       "truncated or corrupt %s archive%s%s%s: %s", fmt,
                       codec ? " (" : "", codec ? codec : "", codec ? ")" : "",
                       s ? s : "unknown error");
}

/* ---- source callbacks ---------------------------------------------------- */

static la_ssize_t src_read(struct archive *a, void *priv, const void **buf)
{
    struct gp_input *in = priv;
    size_t n;

    if (in->f) {
        n = fread(in->rbuf, 1, RBUF_SIZE, in->f);
        if (n == 0 && ferror(in->f)) {
            archive_set_error(a, errno, "read error: %s", strerror(errno));
            return -1;
        }
        if (ftello(in->f) == (off_t)n)
            in->codec = codec_by_magic(in->rbuf, n);
        *buf = in->rbuf;
        return (la_ssize_t)n;
    }
    if (in->mem_pos == 0)
        in->codec = codec_by_magic(in->mem, in->mem_len);
    n = in->mem_len - in->mem_pos; /* all of it at once: no copy */
    *buf = in->mem + in->mem_pos;
    in->mem_pos = in->mem_len;
    return (la_ssize_t)n;
}

static la_int64_t src_seek(struct archive *a, void *priv, la_int64_t off,
                           int whence)
{
    struct gp_input *in = priv;
    int64_t base;

    if (in->f) {
        if (fseeko(in->f, (off_t)off, whence) != 0) {
            archive_set_error(a, errno, "seek error: %s", strerror(errno));
            return ARCHIVE_FATAL;
        }
        return (la_int64_t)ftello(in->f);
    }
    base = whence == SEEK_SET   ? 0
           : whence == SEEK_CUR ? (int64_t)in->mem_pos
                                : (int64_t)in->mem_len;
    if (off < -base || base + off > (int64_t)in->mem_len) {
        archive_set_error(a, EINVAL, "seek out of range");
        return ARCHIVE_FATAL;
    }
    in->mem_pos = (size_t)(base + off);
    return (la_int64_t)in->mem_pos;
}

static la_int64_t src_skip(struct archive *a, void *priv, la_int64_t n)
{
    struct gp_input *in = priv;

    if (in->f) {
        if (!in->seekable || fseeko(in->f, (off_t)n, SEEK_CUR) != 0)
            return 0; /* libarchive reads past instead */
        return n;
    }
    (void)a;
    if ((uint64_t)n > in->mem_len - in->mem_pos)
        n = (la_int64_t)(in->mem_len - in->mem_pos);
    in->mem_pos += (size_t)n;
    return n;
}

/* A fresh decoder at byte 0 of the source. */
static int arc_open(struct gp_input *in, struct gp_diag *diag)
{
    struct archive *a;
    bool again = in->a != NULL;

    if (in->a)
        archive_read_free(in->a);
    in->a = NULL;
    in->ordinal = 0;
    in->total = 0;
    if (in->f && again) { /* a pipe cannot, and need not the first time */
        if (fseeko(in->f, 0, SEEK_SET) != 0)
            return gp_diag_set(diag, GP_EIO, in->name, "cannot rewind: %s",
                               strerror(errno));
        clearerr(in->f);
    } else {
        in->mem_pos = 0;
    }
    if (!(a = archive_read_new()))
        return nomem(in, diag);
    in->a = a;
    /* Only these: every one is built into Debian's libarchive13 (no
     * external programs), and no other container claims text. */
    if (archive_read_support_filter_gzip(a) != ARCHIVE_OK ||
        archive_read_support_filter_xz(a) != ARCHIVE_OK ||
        archive_read_support_filter_bzip2(a) != ARCHIVE_OK ||
        archive_read_support_filter_zstd(a) != ARCHIVE_OK ||
        archive_read_support_format_tar(a) != ARCHIVE_OK ||
        archive_read_support_format_gnutar(a) != ARCHIVE_OK ||
        (in->seekable
             ? archive_read_support_format_zip_seekable(a)
             : archive_read_support_format_zip_streamable(a)) != ARCHIVE_OK ||
        archive_read_support_format_empty(a) != ARCHIVE_OK ||
        archive_read_support_format_raw(a) != ARCHIVE_OK)
        return arc_error(in, diag);
    archive_read_set_read_callback(a, src_read);
    archive_read_set_skip_callback(a, src_skip);
    if (in->seekable)
        archive_read_set_seek_callback(a, src_seek);
    archive_read_set_callback_data(a, in);
    if (archive_read_open1(a) != ARCHIVE_OK)
        return arc_error(in, diag);
    return GP_OK;
}

/* The next entry of the decoder that is a regular file; 1 = found (its
 * name and size out), 0 = the archive's end. */
static int arc_next_regular(struct gp_input *in, const char **name,
                            int64_t *size, struct gp_diag *diag)
{
    for (;;) {
        struct archive_entry *e;
        const char *n;
        int rc = archive_read_next_header(in->a, &e);

        if (rc == ARCHIVE_EOF)
            return 0;
        if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN)
            return arc_error(in, diag);
        if (in->kind == KIND_UNKNOWN) {
            int fmt = archive_format(in->a) & ARCHIVE_FORMAT_BASE_MASK;

            in->kind = fmt == ARCHIVE_FORMAT_RAW ? KIND_PLAIN : KIND_ARCHIVE;
        }
        n = archive_entry_pathname(e);
        if (in->kind == KIND_ARCHIVE &&
            (archive_entry_filetype(e) != AE_IFREG || !n || !n[0] ||
             n[strlen(n) - 1] == '/'))
            continue; /* directories, links, devices */
        if (n && strlen(n) > MAX_NAME)
            return gp_diag_set(diag, GP_EIO, in->name,
                               "archive member name longer than %u bytes",
                               MAX_NAME);
        *name = n ? n : "";
        *size = archive_entry_size_is_set(e) ? archive_entry_size(e) : 0;
        return 1;
    }
}

static int too_big(struct gp_input *in, struct gp_diag *diag)
{
    return gp_diag_set(diag, GP_ERANGE, place(in),
                       "more than %llu GiB decoded: over the input cap",
                       (unsigned long long)(GP_INPUT_MAX_BYTES >> 30));
}

/* ---- open / close ---------------------------------------------------- */

static int input_new(struct gp_input **out, const char *path,
                     struct gp_diag *diag)
{
    struct gp_input *in = calloc(1, sizeof(*in));
    const char *base = strrchr(path, '/');

    base = base && base[1] ? base + 1 : path;
    if (!in)
        return gp_diag_set(diag, GP_ENOMEM, path, "out of memory");
    in->name = strdup(base);
    in->rbuf = malloc(RBUF_SIZE);
    in->sbuf = malloc(SBUF_SIZE + 1);
    if (!in->name || !in->rbuf || !in->sbuf) {
        gp_input_close(in);
        return gp_diag_set(diag, GP_ENOMEM, path, "out of memory");
    }
    *out = in;
    return GP_OK;
}

int gp_input_open_path(struct gp_input **out, const char *path,
                       struct gp_diag *diag)
{
    struct gp_input *in;
    struct stat st;
    int rc;

    if ((rc = input_new(&in, path, diag)) != GP_OK)
        return rc;
    in->f = fopen(path, "rb");
    if (!in->f) {
        rc =
            gp_diag_set(diag, GP_EIO, path, "cannot open: %s", strerror(errno));
        goto fail;
    }
    in->seekable = fstat(fileno(in->f), &st) == 0 && S_ISREG(st.st_mode);
    if ((rc = arc_open(in, diag)) != GP_OK)
        goto fail;
    *out = in;
    return GP_OK;
fail:
    gp_input_close(in);
    return rc;
}

int gp_input_open_mem(struct gp_input **out, const void *buf, size_t len,
                      const char *name, struct gp_diag *diag)
{
    struct gp_input *in;
    int rc;

    if ((rc = input_new(&in, name && name[0] ? name : "<memory>", diag)) !=
        GP_OK)
        return rc;
    in->mem = buf;
    in->mem_len = len;
    in->seekable = true;
    if ((rc = arc_open(in, diag)) != GP_OK) {
        gp_input_close(in);
        return rc;
    }
    *out = in;
    return GP_OK;
}

void gp_input_close(struct gp_input *in)
{
    if (!in)
        return;
    if (in->a)
        archive_read_free(in->a);
    if (in->f)
        fclose(in->f);
    if (in->spool)
        fclose(in->spool);
    for (size_t i = 0; i < in->nmembers; i++)
        free(in->members[i].name);
    free(in->members);
    free(in->lbuf);
    free(in->sbuf);
    free(in->rbuf);
    free(in->name);
    free(in);
}

/* ---- archives -------------------------------------------------------- */

static int cmp_member(const void *a, const void *b)
{
    const struct member *x = a, *y = b;
    int c = strcmp(x->name, y->name);

    if (c)
        return c;
    return x->ordinal < y->ordinal ? -1 : x->ordinal > y->ordinal;
}

/* One pass over the archive (the decoder is at its first entry, whose
 * name and size are given): list its regular members, sorted by name. */
static int arc_list(struct gp_input *in, const char *name, int64_t size,
                    struct gp_diag *diag)
{
    size_t cap = 0;
    uint64_t bytes = 0;
    int rc = 1;

    for (; rc == 1; rc = arc_next_regular(in, &name, &size, diag)) {
        if (in->nmembers == GP_INPUT_MAX_MEMBERS)
            return gp_diag_set(diag, GP_ERANGE, in->name,
                               "archive has more than %u members",
                               GP_INPUT_MAX_MEMBERS);
        if (size > 0 && (bytes += (uint64_t)size) > GP_INPUT_MAX_BYTES)
            return too_big(in, diag);
        if (in->nmembers == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            struct member *m =
                realloc(in->members, ncap * sizeof(*in->members));

            if (!m)
                return nomem(in, diag);
            in->members = m;
            cap = ncap;
        }
        memset(&in->members[in->nmembers], 0, sizeof(*in->members));
        if (!(in->members[in->nmembers].name = strdup(name)))
            return nomem(in, diag);
        in->members[in->nmembers].ordinal = in->nmembers;
        in->nmembers++;
    }
    if (rc < 0)
        return rc;
    if (in->nmembers > 1)
        qsort(in->members, in->nmembers, sizeof(*in->members), cmp_member);
    in->ordered = true;
    for (size_t i = 0; i < in->nmembers && in->ordered; i++)
        in->ordered = in->members[i].ordinal == i;
    return arc_open(in, diag);
}

/* Copy every regular member, in archive order, into a spool file: one
 * pass, after which members are read in any order at no decoding cost. */
static int arc_spool(struct gp_input *in, struct gp_diag *diag)
{
    struct member **by_ord = malloc(in->nmembers * sizeof(*by_ord));
    uint64_t off = 0;
    int rc = GP_OK;

    if (!by_ord)
        return nomem(in, diag);
    for (size_t i = 0; i < in->nmembers; i++)
        by_ord[in->members[i].ordinal] = &in->members[i];
    if (!(in->spool = tmpfile())) {
        rc = gp_diag_set(diag, GP_EIO, in->name,
                         "cannot make a spool file for an archive not in "
                         "name order: %s",
                         strerror(errno));
        goto out;
    }
    for (size_t i = 0; i < in->nmembers; i++) {
        const char *name;
        int64_t size;

        if ((rc = arc_next_regular(in, &name, &size, diag)) < 0)
            goto out;
        if (rc == 0) {
            rc = gp_diag_set(diag, GP_EIO, in->name,
                             "archive changed while reading");
            goto out;
        }
        by_ord[i]->off = off;
        for (;;) {
            la_ssize_t n = archive_read_data(in->a, in->sbuf, SBUF_SIZE);

            if (n < 0) {
                in->member = by_ord[i]->name;
                in->state = ST_IN;
                rc = arc_error(in, diag);
                goto out;
            }
            if (n == 0)
                break;
            if ((in->total += (uint64_t)n) > GP_INPUT_MAX_BYTES) {
                rc = too_big(in, diag);
                goto out;
            }
            if (fwrite(in->sbuf, 1, (size_t)n, in->spool) != (size_t)n) {
                rc = gp_diag_set(diag, GP_EIO, in->name,
                                 "cannot write the spool file: %s",
                                 strerror(errno));
                goto out;
            }
            off += (uint64_t)n;
        }
        by_ord[i]->len = off - by_ord[i]->off;
    }
    rc = GP_OK;
    archive_read_free(in->a);
    in->a = NULL;
out:
    free(by_ord);
    return rc;
}

static int arc_next(struct gp_input *in, const char **name,
                    struct gp_diag *diag)
{
    struct member *m;
    int rc;

    if (in->next == in->nmembers) {
        in->state = ST_AFTER;
        return 0;
    }
    if (!in->spool && !in->ordered && (rc = arc_spool(in, diag)) != GP_OK)
        return rc;
    m = &in->members[in->next];
    if (in->spool) {
        if (fseeko(in->spool, (off_t)m->off, SEEK_SET) != 0)
            return gp_diag_set(diag, GP_EIO, in->name,
                               "cannot read the spool file: %s",
                               strerror(errno));
        in->left = m->len;
    } else {
        const char *got;
        int64_t size;

        /* streaming in archive order, which is name order */
        if ((rc = arc_next_regular(in, &got, &size, diag)) < 0)
            return rc;
        if (rc == 0 || in->ordinal++ != m->ordinal)
            return gp_diag_set(diag, GP_EIO, in->name,
                               "archive changed while reading");
    }
    in->next++;
    in->member = m->name;
    *name = m->name;
    in->state = ST_IN;
    return 1;
}

/* ---- members --------------------------------------------------------- */

static void member_reset(struct gp_input *in)
{
    in->spos = in->slen = 0;
    in->eof = false;
    in->unget = false;
    in->lineno = 0;
    in->stop = 0;
}

int gp_input_next_member(struct gp_input *in, const char **name,
                         struct gp_diag *diag)
{
    int rc;

    member_reset(in);
    if (in->kind == KIND_UNKNOWN) {
        const char *first = NULL;
        int64_t size = 0;

        if ((rc = arc_next_regular(in, &first, &size, diag)) < 0)
            return rc;
        if (rc == 0 && in->kind == KIND_UNKNOWN) /* no entry at all */
            in->kind = (archive_format(in->a) & ARCHIVE_FORMAT_BASE_MASK) ==
                               ARCHIVE_FORMAT_EMPTY
                           ? KIND_PLAIN
                           : KIND_ARCHIVE;
        if (in->kind == KIND_PLAIN)
            in->eof = rc == 0; /* empty: one member with no bytes */
        else if (rc == 1 && (rc = arc_list(in, first, size, diag)) != GP_OK)
            return rc;
    }
    if (in->kind == KIND_PLAIN) {
        if (in->state != ST_BEFORE) {
            in->state = ST_AFTER;
            return 0;
        }
        in->state = ST_IN;
        in->member = in->name;
        *name = in->name;
        return 1;
    }
    if (in->state == ST_AFTER)
        return 0;
    return arc_next(in, name, diag);
}

int gp_input_is_tar(const struct gp_input *in)
{
    return in->kind == KIND_ARCHIVE;
}

int gp_input_rewind(struct gp_input *in, struct gp_diag *diag)
{
    int rc;

    member_reset(in);
    in->state = ST_BEFORE;
    in->next = 0;
    if (in->spool) /* nothing to decode again */
        return GP_OK;
    if ((rc = arc_open(in, diag)) != GP_OK)
        return rc;
    if (in->kind == KIND_PLAIN) {
        const char *first;
        int64_t size;

        if ((rc = arc_next_regular(in, &first, &size, diag)) < 0)
            return rc;
        in->eof = rc == 0;
    }
    return GP_OK;
}

/* ---- reading a member ------------------------------------------------ */

/* Move what is unread to the front of sbuf and decode more behind it. */
static int fill(struct gp_input *in, struct gp_diag *diag)
{
    size_t room;
    la_ssize_t n;

    if (in->spos > 0) {
        memmove(in->sbuf, in->sbuf + in->spos, in->slen - in->spos);
        in->slen -= in->spos;
        in->spos = 0;
    }
    room = SBUF_SIZE - in->slen;
    if (in->eof || room == 0)
        return GP_OK;
    if (in->spool) {
        if ((uint64_t)room > in->left)
            room = (size_t)in->left;
        n = (la_ssize_t)fread(in->sbuf + in->slen, 1, room, in->spool);
        if (n == 0 && room > 0)
            return gp_diag_set(diag, GP_EIO, place(in),
                               "cannot read the spool file");
        in->left -= (uint64_t)n;
        in->eof = in->left == 0;
    } else {
        n = archive_read_data(in->a, in->sbuf + in->slen, room);
        if (n < 0)
            return arc_error(in, diag);
        if (n == 0)
            in->eof = true;
        if ((in->total += (uint64_t)n) > GP_INPUT_MAX_BYTES)
            return too_big(in, diag);
    }
    in->slen += (size_t)n;
    return GP_OK;
}

/* Decoded bytes of the current member available at sbuf + spos, filling
 * when empty. 0 = the member's end. */
static int member_avail(struct gp_input *in, size_t *avail,
                        struct gp_diag *diag)
{
    int rc;

    while (in->slen == in->spos && !in->eof)
        if ((rc = fill(in, diag)) != GP_OK)
            return rc;
    *avail = in->slen - in->spos;
    return GP_OK;
}

int gp_input_read(struct gp_input *in, void *buf, size_t len, size_t *got,
                  struct gp_diag *diag)
{
    size_t avail = 0, done = 0;
    int rc;

    assert(in->state != ST_BEFORE);
    in->unget = false;
    while (done < len && in->state == ST_IN) {
        if ((rc = member_avail(in, &avail, diag)) != GP_OK)
            return rc;
        if (avail == 0)
            break;
        if (avail > len - done)
            avail = len - done;
        memcpy((char *)buf + done, in->sbuf + in->spos, avail);
        in->spos += avail;
        done += avail;
    }
    *got = done;
    return GP_OK;
}

int gp_input_peek(struct gp_input *in, const char **buf, size_t *len,
                  struct gp_diag *diag)
{
    int rc;

    assert(in->state != ST_BEFORE);
    while (in->state == ST_IN && in->slen - in->spos < GP_INPUT_PEEK_MAX &&
           !in->eof)
        if ((rc = fill(in, diag)) != GP_OK) /* compacts as needed */
            return rc;
    *buf = in->sbuf + in->spos;
    *len = in->state == ST_IN ? in->slen - in->spos : 0;
    return GP_OK;
}

static int lbuf_append(struct gp_input *in, size_t *used, const char *p,
                       size_t n, struct gp_diag *diag)
{
    if (*used + n + 1 > in->lcap) {
        size_t cap = in->lcap ? in->lcap : 4096;
        char *b;

        while (cap < *used + n + 1)
            cap *= 2;
        if (cap > GP_INPUT_MAX_LINE + 1)
            cap = GP_INPUT_MAX_LINE + 1;
        if (!(b = realloc(in->lbuf, cap)))
            return nomem(in, diag);
        in->lbuf = b;
        in->lcap = cap;
    }
    memcpy(in->lbuf + *used, p, n);
    *used += n;
    return GP_OK;
}

int gp_input_getline(struct gp_input *in, char **line, size_t *len,
                     struct gp_diag *diag)
{
    size_t used = 0, n, avail = 0;
    bool copied = false;
    char *p, *nl;
    int rc;

    assert(in->state != ST_BEFORE);
    if (in->stop) {
        if (diag)
            *diag = in->stop_diag;
        return in->stop;
    }
    if (in->unget) {
        in->unget = false;
        in->lineno++;
        *line = in->last;
        *len = in->last_len;
        return 1;
    }
    if (in->state != ST_IN)
        return 0;
    for (;;) {
        if ((rc = member_avail(in, &avail, diag)) != GP_OK)
            return rc;
        if (avail == 0) {
            if (!copied)
                return 0;
            break; /* a last line without a newline */
        }
        p = in->sbuf + in->spos;
        nl = memchr(p, '\n', avail);
        n = nl ? (size_t)(nl - p) : avail;
        if (used + n > GP_INPUT_MAX_LINE) {
            /* Reading stops here: the rest of the line could be endless
             * (/dev/zero), and skipping it would mean reading it. */
            in->lineno++;
            in->stop =
                gp_diag_set(&in->stop_diag, GP_ERANGE, gp_input_where(in),
                            "line is longer than %u bytes; reading "
                            "stops here",
                            GP_INPUT_MAX_LINE);
            if (diag)
                *diag = in->stop_diag;
            return in->stop;
        }
        if (nl && !copied) {
            *nl = 0;
            in->spos += n + 1;
            used = n;
            break;
        }
        if ((rc = lbuf_append(in, &used, p, n, diag)) != GP_OK)
            return rc;
        copied = true;
        in->spos += nl ? n + 1 : n;
        if (nl)
            break;
    }
    if (copied) {
        p = in->lbuf;
        p[used] = 0;
    }
    if (used > 0 && p[used - 1] == '\r')
        p[--used] = 0;
    in->lineno++;
    in->last = p;
    in->last_len = used;
    *line = p;
    *len = used;
    return 1;
}

void gp_input_ungetline(struct gp_input *in)
{
    if (in->last && in->lineno > 0 && !in->stop) {
        in->unget = true;
        in->lineno--;
    }
}

/* ---- places ---------------------------------------------------------- */

const char *gp_input_where(struct gp_input *in)
{
    unsigned long long line = (unsigned long long)in->lineno;

    if (in->kind == KIND_ARCHIVE && in->state == ST_IN && in->member) {
        if (line)
            snprintf(in->where, sizeof(in->where), "%s:%s:%llu", in->name,
                     in->member, line);
        else
            snprintf(in->where, sizeof(in->where), "%s:%s", in->name,
                     in->member);
    } else if (line) {
        snprintf(in->where, sizeof(in->where), "%s:%llu", in->name, line);
    } else {
        snprintf(in->where, sizeof(in->where), "%s", in->name);
    }
    return in->where;
}

uint64_t gp_input_lineno(const struct gp_input *in)
{
    return in->lineno;
}

const char *gp_input_name(const struct gp_input *in)
{
    return in->name;
}

const char *gp_input_member(const struct gp_input *in)
{
    return in->state == ST_IN ? in->member : NULL;
}

const char *gp_path_base(const char *path)
{
    const char *b = strrchr(path, '/');

    return b ? b + 1 : path;
}
