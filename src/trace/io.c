/* io.c - trace byte streams: a source (a file or memory), a decoder chosen
 * by the leading bytes (none, gzip, xz), optional tar framing, and a line
 * reader on top.
 *
 * Key decision: one 64 KiB buffer of decoded bytes (sbuf) serves every layer
 * above the decoder. A line that lies wholly inside it is handed out in place
 * (its '\n' overwritten with NUL); only a line that straddles a refill, or
 * ends a member without a newline, is copied into lbuf. A row costs one
 * memchr and no allocation.
 *
 * Tar members come out in name order, so a trace reads the same however it
 * was packed: the first next_member lists the archive (one decoding pass),
 * later calls walk forward to the wanted member and rewind only when it lies
 * behind. The archive format is ustar/GNU/pax as written by GNU tar and
 * bsdtar: 512-byte headers, octal (or base-256) sizes, GNU 'L' long names
 * and pax 'path'/'size' records.
 */
#include <assert.h>
#include <errno.h>
#include <lzma.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "trace/io.h"

#define SBUF_SIZE (64u << 10)
#define CBUF_SIZE (64u << 10)
#define TAR_BLOCK 512u
#define MAX_MEMBERS 100000u
#define MAX_NAME 4096u
#define MAX_PAX (64u << 10)
#define MAX_MEMBER_SIZE (UINT64_C(1) << 62)
#define XZ_MEMLIMIT (UINT64_C(256) << 20)

enum codec { CODEC_NONE, CODEC_GZIP, CODEC_XZ };
enum kind { KIND_UNKNOWN, KIND_PLAIN, KIND_TAR };
enum state { ST_BEFORE, ST_IN, ST_AFTER };

struct member {
    char *name;
    uint64_t ordinal; /* among regular members, in archive order */
};

struct gp_input {
    char *name; /* base name of the file, for places */

    /* source */
    FILE *f;
    const unsigned char *mem;
    size_t mem_len, mem_pos;
    bool src_eof;

    /* decoder */
    enum codec codec;
    z_stream z;
    bool z_live;
    lzma_stream x;
    bool x_live;
    bool dec_end; /* the decoder finished a stream */
    unsigned char *cbuf;
    size_t cpos, clen;

    /* decoded bytes */
    char *sbuf; /* SBUF_SIZE + 1, room for a NUL after the last byte */
    size_t spos, slen;
    bool eof; /* nothing more after sbuf */

    /* members */
    enum kind kind;
    enum state state;
    struct member *members;
    size_t nmembers, next;
    uint64_t ordinal; /* ordinal of the next regular member header */
    uint64_t left;    /* bytes of the current member not consumed */
    uint64_t pad;     /* padding after the current member */
    const char *member;
    char hname[MAX_NAME + 1]; /* name of the header just read */

    /* lines */
    char *lbuf;
    size_t lcap;
    char *last;
    size_t last_len;
    bool unget;
    uint64_t lineno;
    char where[320];
};

static int io_error(struct gp_input *in, struct gp_diag *diag, const char *fmt,
                    const char *arg)
{
    return gp_diag_set(diag, GP_EIO, in->name, fmt, arg);
}

/* ---- source ------------------------------------------------------------ */

static int src_read(struct gp_input *in, unsigned char *buf, size_t cap,
                    size_t *got, struct gp_diag *diag)
{
    size_t n;

    if (in->src_eof || cap == 0) {
        *got = 0;
        return GP_OK;
    }
    if (in->f) {
        n = fread(buf, 1, cap, in->f);
        if (n < cap) {
            if (ferror(in->f))
                return io_error(in, diag, "read error: %s", strerror(errno));
            in->src_eof = true;
        }
    } else {
        n = in->mem_len - in->mem_pos;
        if (n > cap)
            n = cap;
        memcpy(buf, in->mem + in->mem_pos, n);
        in->mem_pos += n;
        if (in->mem_pos == in->mem_len)
            in->src_eof = true;
    }
    *got = n;
    return GP_OK;
}

/* Move unread compressed bytes to the front and read more behind them. */
static int cbuf_refill(struct gp_input *in, struct gp_diag *diag)
{
    size_t got = 0;
    int rc;

    if (in->cpos > 0) {
        memmove(in->cbuf, in->cbuf + in->cpos, in->clen - in->cpos);
        in->clen -= in->cpos;
        in->cpos = 0;
    }
    rc = src_read(in, in->cbuf + in->clen, CBUF_SIZE - in->clen, &got, diag);
    if (rc == GP_OK)
        in->clen += got;
    return rc;
}

/* ---- decoders: append decoded bytes to sbuf ---------------------------- */

static int decode_none(struct gp_input *in, struct gp_diag *diag)
{
    size_t room = SBUF_SIZE - in->slen, got = 0;
    int rc;

    if (in->cpos < in->clen) { /* the magic-sniffing bytes come first */
        got = in->clen - in->cpos;
        if (got > room)
            got = room;
        memcpy(in->sbuf + in->slen, in->cbuf + in->cpos, got);
        in->cpos += got;
        in->slen += got;
        return GP_OK;
    }
    rc = src_read(in, (unsigned char *)in->sbuf + in->slen, room, &got, diag);
    if (rc != GP_OK)
        return rc;
    in->slen += got;
    if (got == 0)
        in->eof = true;
    return GP_OK;
}

/* After a gzip stream ends: another gzip member follows, or zero padding,
 * or nothing. 1 = another member, 0 = end. */
static int gzip_after_end(struct gp_input *in, struct gp_diag *diag)
{
    for (;;) {
        int rc;

        while (in->cpos < in->clen && in->cbuf[in->cpos] == 0)
            in->cpos++;
        if (in->clen - in->cpos < 2 && !in->src_eof) {
            if ((rc = cbuf_refill(in, diag)) != GP_OK)
                return rc;
            continue;
        }
        if (in->cpos == in->clen)
            return 0;
        if (in->clen - in->cpos >= 2 && in->cbuf[in->cpos] == 0x1f &&
            in->cbuf[in->cpos + 1] == 0x8b) {
            if (inflateReset(&in->z) != Z_OK)
                return io_error(in, diag, "corrupt gzip stream%s", "");
            return 1;
        }
        return io_error(in, diag, "trailing garbage after gzip stream%s", "");
    }
}

static int decode_gzip(struct gp_input *in, struct gp_diag *diag)
{
    for (;;) {
        size_t room = SBUF_SIZE - in->slen, before_in, before_out;
        int rc, zrc;

        if (in->dec_end) {
            if ((rc = gzip_after_end(in, diag)) < 0)
                return rc;
            if (rc == 0) {
                in->eof = true;
                return GP_OK;
            }
            in->dec_end = false;
        }
        if (in->cpos == in->clen) {
            if (in->src_eof)
                return io_error(in, diag, "truncated gzip stream%s", "");
            if ((rc = cbuf_refill(in, diag)) != GP_OK)
                return rc;
            continue;
        }
        before_in = in->cpos;
        before_out = in->slen;
        in->z.next_in = in->cbuf + in->cpos;
        in->z.avail_in = (uInt)(in->clen - in->cpos);
        in->z.next_out = (unsigned char *)in->sbuf + in->slen;
        in->z.avail_out = (uInt)room;
        zrc = inflate(&in->z, Z_NO_FLUSH);
        in->cpos = in->clen - in->z.avail_in;
        in->slen = SBUF_SIZE - in->z.avail_out;
        if (zrc == Z_STREAM_END)
            in->dec_end = true;
        else if (zrc == Z_MEM_ERROR)
            return gp_diag_set(diag, GP_ENOMEM, in->name, "out of memory");
        else if (zrc != Z_OK && zrc != Z_BUF_ERROR)
            return io_error(in, diag, "corrupt gzip stream: %s",
                            in->z.msg ? in->z.msg : "bad data");
        if (SBUF_SIZE - in->slen < room)
            return GP_OK;
        if (in->cpos == before_in && in->slen == before_out && !in->dec_end) {
            /* zlib made no progress: it needs more input than we hold */
            if (in->src_eof)
                return io_error(in, diag, "truncated gzip stream%s", "");
            if (in->clen - in->cpos == CBUF_SIZE)
                return io_error(in, diag, "corrupt gzip stream%s", "");
            if ((rc = cbuf_refill(in, diag)) != GP_OK)
                return rc;
        }
    }
}

static int decode_xz(struct gp_input *in, struct gp_diag *diag)
{
    for (;;) {
        size_t room = SBUF_SIZE - in->slen;
        lzma_action action = LZMA_RUN;
        lzma_ret xrc;
        int rc;

        if (in->dec_end) {
            in->eof = true;
            return GP_OK;
        }
        if (in->cpos == in->clen && !in->src_eof) {
            if ((rc = cbuf_refill(in, diag)) != GP_OK)
                return rc;
            continue;
        }
        if (in->cpos == in->clen && in->src_eof)
            action = LZMA_FINISH;
        in->x.next_in = in->cbuf + in->cpos;
        in->x.avail_in = in->clen - in->cpos;
        in->x.next_out = (uint8_t *)in->sbuf + in->slen;
        in->x.avail_out = room;
        xrc = lzma_code(&in->x, action);
        in->cpos = in->clen - in->x.avail_in;
        in->slen = SBUF_SIZE - in->x.avail_out;
        switch (xrc) {
        case LZMA_OK:
            break;
        case LZMA_STREAM_END:
            in->dec_end = true;
            break;
        case LZMA_BUF_ERROR:
            return io_error(in, diag, "truncated xz stream%s", "");
        case LZMA_MEM_ERROR:
            return gp_diag_set(diag, GP_ENOMEM, in->name, "out of memory");
        case LZMA_MEMLIMIT_ERROR:
            return io_error(
                in, diag, "xz stream needs more than 256 MiB to decode%s", "");
        case LZMA_FORMAT_ERROR:
            return io_error(in, diag, "corrupt xz stream: bad format%s", "");
        case LZMA_OPTIONS_ERROR:
            return io_error(in, diag, "unsupported xz stream options%s", "");
        default:
            return io_error(in, diag, "corrupt xz stream%s", "");
        }
        if (SBUF_SIZE - in->slen < room || in->dec_end)
            return GP_OK;
    }
}

/* Make room at the end of sbuf and decode some more bytes into it; sets
 * in->eof when the stream has no more. */
static int fill(struct gp_input *in, struct gp_diag *diag)
{
    if (in->spos > 0) {
        memmove(in->sbuf, in->sbuf + in->spos, in->slen - in->spos);
        in->slen -= in->spos;
        in->spos = 0;
    }
    if (in->eof || in->slen == SBUF_SIZE)
        return GP_OK;
    switch (in->codec) {
    case CODEC_GZIP:
        return decode_gzip(in, diag);
    case CODEC_XZ:
        return decode_xz(in, diag);
    default:
        return decode_none(in, diag);
    }
}

/* At least n (<= SBUF_SIZE) decoded bytes at sbuf + spos, unless the stream
 * ends first. *avail = what is there. */
static int need(struct gp_input *in, size_t n, size_t *avail,
                struct gp_diag *diag)
{
    int rc;

    while (in->slen - in->spos < n && !in->eof) {
        if ((rc = fill(in, diag)) != GP_OK)
            return rc;
    }
    *avail = in->slen - in->spos;
    return GP_OK;
}

static int decoder_start(struct gp_input *in, struct gp_diag *diag)
{
    in->dec_end = false;
    if (in->codec == CODEC_GZIP) {
        if (in->z_live)
            return inflateReset(&in->z) == Z_OK
                       ? GP_OK
                       : gp_diag_set(diag, GP_ENOMEM, in->name,
                                     "out of memory");
        memset(&in->z, 0, sizeof(in->z));
        if (inflateInit2(&in->z, 15 + 16) != Z_OK)
            return gp_diag_set(diag, GP_ENOMEM, in->name, "out of memory");
        in->z_live = true;
    } else if (in->codec == CODEC_XZ) {
        lzma_stream init = LZMA_STREAM_INIT;

        if (in->x_live)
            lzma_end(&in->x);
        in->x = init;
        in->x_live = false;
        if (lzma_stream_decoder(&in->x, XZ_MEMLIMIT, LZMA_CONCATENATED) !=
            LZMA_OK)
            return gp_diag_set(diag, GP_ENOMEM, in->name, "out of memory");
        in->x_live = true;
    }
    return GP_OK;
}

/* Back to byte 0 of the source, decoder reset. */
static int rewind_stream(struct gp_input *in, struct gp_diag *diag)
{
    if (in->f) {
        if (fseek(in->f, 0, SEEK_SET) != 0)
            return io_error(in, diag, "cannot rewind: %s", strerror(errno));
        clearerr(in->f);
    } else {
        in->mem_pos = 0;
    }
    in->src_eof = false;
    in->cpos = in->clen = 0;
    in->spos = in->slen = 0;
    in->eof = false;
    return decoder_start(in, diag);
}

static int sniff(struct gp_input *in, struct gp_diag *diag)
{
    static const unsigned char xz_magic[6] = {0xfd, '7', 'z', 'X', 'Z', 0};
    const unsigned char *b = in->cbuf;
    int rc;

    while (in->clen < 16 && !in->src_eof)
        if ((rc = cbuf_refill(in, diag)) != GP_OK)
            return rc;
    if (in->clen >= 2 && b[0] == 0x1f && b[1] == 0x8b)
        in->codec = CODEC_GZIP;
    else if (in->clen >= 6 && memcmp(b, xz_magic, 6) == 0)
        in->codec = CODEC_XZ;
    else if (in->clen >= 4 && memcmp(b, "PK\3\4", 4) == 0)
        return io_error(
            in, diag, "zip archives are not supported; unpack it first%s", "");
    else if (in->clen >= 10 && memcmp(b, "BZh", 3) == 0 &&
             memcmp(b + 4, "1AY&SY", 6) == 0)
        return io_error(in, diag,
                        "bzip2 is not supported; recompress with xz or gzip%s",
                        "");
    else if (in->clen >= 4 && b[0] == 0x28 && b[1] == 0xb5 && b[2] == 0x2f &&
             b[3] == 0xfd)
        return io_error(in, diag,
                        "zstd is not supported; recompress with xz or gzip%s",
                        "");
    else
        in->codec = CODEC_NONE;
    return decoder_start(in, diag);
}

/* ---- open / close ------------------------------------------------------ */

static int input_new(struct gp_input **out, const char *path,
                     struct gp_diag *diag)
{
    struct gp_input *in = calloc(1, sizeof(*in));
    const char *base = strrchr(path, '/');

    base = base && base[1] ? base + 1 : path;
    if (!in)
        return gp_diag_set(diag, GP_ENOMEM, path, "out of memory");
    in->name = strdup(base);
    in->cbuf = malloc(CBUF_SIZE);
    in->sbuf = malloc(SBUF_SIZE + 1);
    if (!in->name || !in->cbuf || !in->sbuf) {
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
    int rc;

    if ((rc = input_new(&in, path, diag)) != GP_OK)
        return rc;
    in->f = fopen(path, "rb");
    if (!in->f) {
        rc =
            gp_diag_set(diag, GP_EIO, path, "cannot open: %s", strerror(errno));
        goto fail;
    }
    if ((rc = sniff(in, diag)) != GP_OK)
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
    in->src_eof = len == 0;
    if ((rc = sniff(in, diag)) != GP_OK) {
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
    if (in->f)
        fclose(in->f);
    if (in->z_live)
        inflateEnd(&in->z);
    if (in->x_live)
        lzma_end(&in->x);
    for (size_t i = 0; i < in->nmembers; i++)
        free(in->members[i].name);
    free(in->members);
    free(in->lbuf);
    free(in->sbuf);
    free(in->cbuf);
    free(in->name);
    free(in);
}

/* ---- tar --------------------------------------------------------------- */

struct tar_hdr {
    char type;
    uint64_t size;
    bool end; /* end of archive */
};

static uint64_t octal(const unsigned char *p, size_t n, bool *ok)
{
    uint64_t v = 0;
    size_t i = 0;

    if (n > 0 && (p[0] & 0x80)) { /* GNU base-256 */
        v = p[0] & 0x3f;
        if (p[0] & 0x40)
            *ok = false; /* negative */
        for (i = 1; i < n; i++) {
            if (v >> 55)
                *ok = false;
            v = (v << 8) | p[i];
        }
        return v;
    }
    while (i < n && p[i] == ' ')
        i++;
    for (; i < n && p[i] >= '0' && p[i] <= '7'; i++) {
        if (v >> 60)
            *ok = false;
        v = v * 8 + (uint64_t)(p[i] - '0');
    }
    for (; i < n; i++)
        if (p[i] != ' ' && p[i] != 0)
            *ok = false;
    return v;
}

static bool checksum_ok(const unsigned char *h)
{
    uint64_t want, sum_u = 0;
    int64_t sum_s = 0;
    bool ok = true;

    want = octal(h + 148, 8, &ok);
    if (!ok)
        return false;
    for (size_t i = 0; i < TAR_BLOCK; i++) {
        unsigned char c = (i >= 148 && i < 156) ? ' ' : h[i];

        sum_u += c;
        sum_s += (signed char)c;
    }
    return sum_u == want || (uint64_t)sum_s == want;
}

static bool looks_like_tar(const unsigned char *h)
{
    return memcmp(h + 257, "ustar", 5) == 0 && checksum_ok(h);
}

static bool all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

static int truncated_tar(struct gp_input *in, struct gp_diag *diag)
{
    return io_error(in, diag, "truncated tar archive%s", "");
}

/* Consume n decoded bytes (member data, padding, a long name, a pax
 * record), copying them to dst[0..n) unless dst is NULL. */
static int take_bytes(struct gp_input *in, char *dst, uint64_t n,
                      struct gp_diag *diag)
{
    while (n > 0) {
        size_t avail = in->slen - in->spos;
        int rc;

        if (avail == 0) {
            if (in->eof)
                return truncated_tar(in, diag);
            if ((rc = fill(in, diag)) != GP_OK)
                return rc;
            continue;
        }
        if (avail > n)
            avail = (size_t)n;
        if (dst) {
            memcpy(dst, in->sbuf + in->spos, avail);
            dst += avail;
        }
        in->spos += avail;
        n -= avail;
    }
    return GP_OK;
}

static uint64_t padding(uint64_t size)
{
    return (TAR_BLOCK - size % TAR_BLOCK) % TAR_BLOCK;
}

/* Pull "path" and "size" out of pax records "LEN key=value\n". */
static void pax_parse(const char *p, size_t n, char *name, bool *have_name,
                      uint64_t *size, bool *have_size)
{
    size_t i = 0;

    while (i < n) {
        size_t rec = 0, j = i;

        while (j < n && p[j] >= '0' && p[j] <= '9' && rec < n)
            rec = rec * 10 + (size_t)(p[j++] - '0');
        if (j >= n || p[j] != ' ' || rec == 0 || rec > n - i)
            return;
        {
            const char *kv = p + j + 1, *end = p + i + rec - 1;
            const char *eq =
                kv < end ? memchr(kv, '=', (size_t)(end - kv)) : NULL;

            if (eq && *end == '\n') {
                size_t klen = (size_t)(eq - kv), vlen = (size_t)(end - eq - 1);

                if (klen == 4 && memcmp(kv, "path", 4) == 0 &&
                    vlen <= MAX_NAME && !memchr(eq + 1, 0, vlen)) {
                    memcpy(name, eq + 1, vlen);
                    name[vlen] = 0;
                    *have_name = true;
                } else if (klen == 4 && memcmp(kv, "size", 4) == 0) {
                    uint64_t v = 0;
                    size_t k;

                    for (k = 0; k < vlen && eq[1 + k] >= '0' &&
                                eq[1 + k] <= '9' && v < MAX_MEMBER_SIZE;
                         k++)
                        v = v * 10 + (uint64_t)(eq[1 + k] - '0');
                    if (k == vlen && vlen > 0) {
                        *size = v;
                        *have_size = true;
                    }
                }
            }
        }
        i += rec;
    }
}

/* Read the next header that describes a file system object (long-name and
 * pax records are folded into it); its name lands in in->hname and the
 * stream is left at its data. */
static int read_header(struct gp_input *in, struct tar_hdr *h,
                       struct gp_diag *diag)
{
    bool have_name = false, have_size = false;
    uint64_t pax_size = 0;

    for (;;) {
        const unsigned char *b;
        size_t avail = 0;
        uint64_t size;
        bool ok = true;
        char type;
        int rc;

        if ((rc = need(in, TAR_BLOCK, &avail, diag)) != GP_OK)
            return rc;
        if (avail == 0 && !have_name && !have_size) {
            h->end = true; /* the end-of-archive blocks are optional */
            return GP_OK;
        }
        if (avail < TAR_BLOCK)
            return truncated_tar(in, diag);
        b = (const unsigned char *)in->sbuf + in->spos;
        if (all_zero(b, TAR_BLOCK) && !have_name && !have_size) {
            h->end = true;
            return GP_OK;
        }
        if (!checksum_ok(b))
            return io_error(in, diag, "corrupt tar header (bad checksum)%s",
                            "");
        size = octal(b + 124, 12, &ok);
        if (!ok || size > MAX_MEMBER_SIZE)
            return io_error(in, diag, "corrupt tar header (bad size)%s", "");
        type = (char)b[156];
        if (!have_name) {
            size_t n = strnlen((const char *)b, 100), np = 0;

            /* POSIX ustar keeps a path prefix; GNU uses that area for times */
            if (memcmp(b + 257, "ustar\0", 6) == 0)
                np = strnlen((const char *)b + 345, 155);
            if (np > 0) {
                memcpy(in->hname, b + 345, np);
                in->hname[np++] = '/';
            }
            memcpy(in->hname + np, b, n);
            in->hname[np + n] = 0;
        }
        in->spos += TAR_BLOCK;
        if (type == 'L') { /* GNU long name of the next header */
            if (size > MAX_NAME)
                return io_error(in, diag, "tar member name too long%s", "");
            if ((rc = take_bytes(in, in->hname, size, diag)) != GP_OK)
                return rc;
            in->hname[size] = 0;
            have_name = true;
            if ((rc = take_bytes(in, NULL, padding(size), diag)) != GP_OK)
                return rc;
            continue;
        }
        if (type == 'x' && size <= MAX_PAX) {
            char *pax = malloc((size_t)size + 1);

            if (!pax)
                return gp_diag_set(diag, GP_ENOMEM, in->name, "out of memory");
            rc = take_bytes(in, pax, size, diag);
            if (rc == GP_OK)
                pax_parse(pax, (size_t)size, in->hname, &have_name, &pax_size,
                          &have_size);
            free(pax);
            if (rc == GP_OK)
                rc = take_bytes(in, NULL, padding(size), diag);
            if (rc != GP_OK)
                return rc;
            continue;
        }
        if (type == 'x' || type == 'g' || type == 'K') {
            if ((rc = take_bytes(in, NULL, size + padding(size), diag)) !=
                GP_OK)
                return rc;
            continue;
        }
        h->end = false;
        h->type = type;
        h->size = have_size ? pax_size : size;
        if (h->size > MAX_MEMBER_SIZE)
            return io_error(in, diag, "corrupt tar header (bad size)%s", "");
        return GP_OK;
    }
}

static bool is_regular(const struct tar_hdr *h, const char *name)
{
    size_t n = strlen(name);

    if (h->type != '0' && h->type != 0 && h->type != '7')
        return false;
    return n > 0 && name[n - 1] != '/';
}

static int cmp_member(const void *a, const void *b)
{
    const struct member *x = a, *y = b;
    int c = strcmp(x->name, y->name);

    if (c)
        return c;
    return x->ordinal < y->ordinal ? -1 : x->ordinal > y->ordinal;
}

/* One pass over the archive: list its regular members, sorted by name. */
static int tar_list(struct gp_input *in, struct gp_diag *diag)
{
    size_t cap = 0;
    uint64_t ordinal = 0;
    int rc;

    for (;;) {
        struct tar_hdr h;

        if ((rc = read_header(in, &h, diag)) != GP_OK)
            return rc;
        if (h.end)
            break;
        if (is_regular(&h, in->hname)) {
            if (in->nmembers == MAX_MEMBERS)
                return io_error(
                    in, diag, "tar archive has more than 100000 members%s", "");
            if (in->nmembers == cap) {
                size_t ncap = cap ? cap * 2 : 16;
                struct member *m =
                    realloc(in->members, ncap * sizeof(*in->members));

                if (!m)
                    return gp_diag_set(diag, GP_ENOMEM, in->name,
                                       "out of memory");
                in->members = m;
                cap = ncap;
            }
            in->members[in->nmembers].name = strdup(in->hname);
            if (!in->members[in->nmembers].name)
                return gp_diag_set(diag, GP_ENOMEM, in->name, "out of memory");
            in->members[in->nmembers++].ordinal = ordinal++;
        }
        if ((rc = take_bytes(in, NULL, h.size + padding(h.size), diag)) !=
            GP_OK)
            return rc;
    }
    if (in->nmembers > 1)
        qsort(in->members, in->nmembers, sizeof(*in->members), cmp_member);
    in->ordinal = 0;
    return rewind_stream(in, diag);
}

static int tar_next(struct gp_input *in, const char **name,
                    struct gp_diag *diag)
{
    uint64_t target;
    int rc;

    if (in->next == in->nmembers) {
        in->state = ST_AFTER;
        return 0;
    }
    target = in->members[in->next].ordinal;
    if (target < in->ordinal) {
        if ((rc = rewind_stream(in, diag)) != GP_OK)
            return rc;
        in->ordinal = 0;
    }
    for (;;) {
        struct tar_hdr h;

        if ((rc = read_header(in, &h, diag)) != GP_OK)
            return rc;
        if (h.end)
            return io_error(in, diag, "tar archive changed while reading%s",
                            "");
        if (is_regular(&h, in->hname) && in->ordinal++ == target) {
            in->left = h.size;
            in->pad = padding(h.size);
            break;
        }
        if ((rc = take_bytes(in, NULL, h.size + padding(h.size), diag)) !=
            GP_OK)
            return rc;
    }
    in->member = in->members[in->next++].name;
    *name = in->member;
    in->state = ST_IN;
    return 1;
}

/* ---- members ----------------------------------------------------------- */

int gp_input_next_member(struct gp_input *in, const char **name,
                         struct gp_diag *diag)
{
    int rc;

    in->unget = false;
    in->lineno = 0;
    if (in->kind == KIND_UNKNOWN) {
        size_t avail = 0;

        if ((rc = need(in, TAR_BLOCK, &avail, diag)) != GP_OK)
            return rc;
        if (avail >= TAR_BLOCK &&
            looks_like_tar((const unsigned char *)in->sbuf + in->spos)) {
            in->kind = KIND_TAR;
            if ((rc = tar_list(in, diag)) != GP_OK)
                return rc;
        } else {
            in->kind = KIND_PLAIN;
        }
    }
    if (in->kind == KIND_PLAIN) {
        if (in->state != ST_BEFORE) {
            in->state = ST_AFTER;
            return 0;
        }
        in->state = ST_IN;
        in->left = UINT64_MAX;
        in->pad = 0;
        in->member = in->name;
        *name = in->name;
        return 1;
    }
    if (in->state == ST_IN) {
        if ((rc = take_bytes(in, NULL, in->left + in->pad, diag)) != GP_OK)
            return rc;
        in->left = in->pad = 0;
    }
    if (in->state == ST_AFTER)
        return 0;
    return tar_next(in, name, diag);
}

int gp_input_is_tar(const struct gp_input *in)
{
    return in->kind == KIND_TAR;
}

int gp_input_rewind(struct gp_input *in, struct gp_diag *diag)
{
    int rc = rewind_stream(in, diag);

    if (rc != GP_OK)
        return rc;
    in->state = ST_BEFORE;
    in->next = 0;
    in->ordinal = 0;
    in->left = in->pad = 0;
    in->lineno = 0;
    in->unget = false;
    return GP_OK;
}

/* ---- reading a member -------------------------------------------------- */

/* Decoded bytes of the current member available at sbuf + spos, filling
 * when empty. 0 = the member's end. */
static int member_avail(struct gp_input *in, size_t *avail,
                        struct gp_diag *diag)
{
    size_t n;
    int rc;

    for (;;) {
        n = in->slen - in->spos;
        if (in->left == 0) {
            *avail = 0;
            return GP_OK;
        }
        if (n > 0)
            break;
        if (in->eof) {
            if (in->kind == KIND_TAR)
                return truncated_tar(in, diag);
            *avail = 0;
            return GP_OK;
        }
        if ((rc = fill(in, diag)) != GP_OK)
            return rc;
    }
    if ((uint64_t)n > in->left)
        n = (size_t)in->left;
    *avail = n;
    return GP_OK;
}

static void consume(struct gp_input *in, size_t n)
{
    in->spos += n;
    if (in->left != UINT64_MAX)
        in->left -= n;
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
        consume(in, avail);
        done += avail;
    }
    *got = done;
    return GP_OK;
}

int gp_input_peek(struct gp_input *in, const char **buf, size_t *len,
                  struct gp_diag *diag)
{
    size_t want = GP_INPUT_PEEK_MAX, avail = 0;
    int rc;

    assert(in->state != ST_BEFORE);
    if (in->state != ST_IN) {
        *buf = in->sbuf + in->spos;
        *len = 0;
        return GP_OK;
    }
    if ((uint64_t)want > in->left)
        want = (size_t)in->left;
    if ((rc = need(in, want, &avail, diag)) != GP_OK) /* compacts as needed */
        return rc;
    if (avail < want && in->kind == KIND_TAR)
        return truncated_tar(in, diag);
    *buf = in->sbuf + in->spos;
    *len = avail < want ? avail : want;
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
            return gp_diag_set(diag, GP_ENOMEM, in->name, "out of memory");
        in->lbuf = b;
        in->lcap = cap;
    }
    memcpy(in->lbuf + *used, p, n);
    *used += n;
    return GP_OK;
}

/* The rest of an overlong line is dropped so that the next getline starts
 * at the next line: the error is then a skippable bad row. */
static int drop_line(struct gp_input *in, struct gp_diag *diag)
{
    for (;;) {
        size_t avail = 0;
        const char *nl;
        int rc;

        if ((rc = member_avail(in, &avail, diag)) != GP_OK)
            return rc;
        if (avail == 0)
            break;
        nl = memchr(in->sbuf + in->spos, '\n', avail);
        if (nl) {
            consume(in, (size_t)(nl - (in->sbuf + in->spos)) + 1);
            break;
        }
        consume(in, avail);
    }
    return gp_diag_set(diag, GP_EPARSE, gp_input_where(in),
                       "line is longer than %u bytes", GP_INPUT_MAX_LINE);
}

int gp_input_getline(struct gp_input *in, char **line, size_t *len,
                     struct gp_diag *diag)
{
    size_t used = 0, n, avail = 0;
    bool copied = false;
    char *p, *nl;
    int rc;

    assert(in->state != ST_BEFORE);
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
            in->lineno++;
            consume(in, nl ? n + 1 : n);
            if (nl)
                return gp_diag_set(diag, GP_EPARSE, gp_input_where(in),
                                   "line is longer than %u bytes",
                                   GP_INPUT_MAX_LINE);
            return drop_line(in, diag);
        }
        if (nl && !copied) {
            *nl = 0;
            consume(in, n + 1);
            p[n] = 0;
            used = n;
            break;
        }
        if ((rc = lbuf_append(in, &used, p, n, diag)) != GP_OK)
            return rc;
        copied = true;
        consume(in, nl ? n + 1 : n);
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
    if (in->last && in->lineno > 0) {
        in->unget = true;
        in->lineno--;
    }
}

/* ---- places ------------------------------------------------------------ */

const char *gp_input_where(struct gp_input *in)
{
    unsigned long long line = (unsigned long long)in->lineno;

    if (in->kind == KIND_TAR && in->state == ST_IN && in->member) {
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
