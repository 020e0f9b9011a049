/* io.h - byte streams for trace files: plain, gzip, xz, bzip2 or zstd, and
 * tar or zip archives (plain or compressed), read line by line with a cap on
 * line length. libarchive does the decoding.
 *
 * Compression and container are detected from the leading bytes, never from
 * the name. A truncated or corrupt stream is GP_EIO with a diag naming the
 * file (and member); a line longer than GP_INPUT_MAX_LINE is GP_ERANGE
 * naming file:line, and reading the member stops there (its rest is never
 * read: it could be endless). More than GP_INPUT_MAX_BYTES decoded bytes,
 * or more than GP_INPUT_MAX_MEMBERS members, is GP_ERANGE. CRLF endings and
 * a missing final newline are accepted.
 */
#ifndef GPUPOOL_TRACE_IO_H
#define GPUPOOL_TRACE_IO_H

#include <stddef.h>
#include <stdint.h>

#include "gpupool/err.h"

#define GP_INPUT_MAX_LINE (1u << 20)
/* Decoded bytes one input may yield, all members together (each pass). */
#define GP_INPUT_MAX_BYTES (UINT64_C(4) << 30)
/* Regular members of one archive. */
#define GP_INPUT_MAX_MEMBERS 100000u

struct gp_input;

int gp_input_open_path(struct gp_input **out, const char *path,
                       struct gp_diag *diag);
/* `buf` must outlive the input; `name` is used in error places. */
int gp_input_open_mem(struct gp_input **out, const void *buf, size_t len,
                      const char *name, struct gp_diag *diag);
void gp_input_close(struct gp_input *in);

/* Step to the next member. For an archive (tar, zip): the next regular
 * file, in name order (bytewise; the order the archive was packed in does
 * not change what a trace reads), name = the member's path; the first call
 * lists the archive, so a truncated tarball fails here, and an archive must
 * come from a regular file or memory (it is read twice). The cost is linear
 * in the archive's size whatever its order (one listing pass, then one
 * streaming pass, or one pass into a spool file when the archive is not in
 * name order). For anything else: the stream itself, once (name = the
 * file's base name). 1 = positioned at a member,
 * 0 = no more members, < 0 = error. Must be called once before reading. */
int gp_input_next_member(struct gp_input *in, const char **name,
                         struct gp_diag *diag);
/* Is the stream an archive (tar or zip)? Valid after the first next_member. */
int gp_input_is_tar(const struct gp_input *in);

/* The next line of the current member, without its end-of-line bytes.
 * *line stays valid until the next call and is NUL-terminated.
 * 1 = a line, 0 = end of member, < 0 = error. */
int gp_input_getline(struct gp_input *in, char **line, size_t *len,
                     struct gp_diag *diag);
/* Read the same line again at the next getline (one line of look-back;
 * the bytes are those getline returned, as the caller left them). */
void gp_input_ungetline(struct gp_input *in);
/* Raw bytes of the current member: *got = 0 at its end. */
int gp_input_read(struct gp_input *in, void *buf, size_t len, size_t *got,
                  struct gp_diag *diag);
/* Look at the next bytes of the current member without consuming them:
 * up to GP_INPUT_PEEK_MAX bytes (fewer only at the member's end), not
 * NUL-terminated. *buf stays valid until the next read. Used to probe
 * formats. */
#define GP_INPUT_PEEK_MAX (64u << 10)
int gp_input_peek(struct gp_input *in, const char **buf, size_t *len,
                  struct gp_diag *diag);
/* Go back to before the first member (call next_member again). Regular
 * files and memory can be rewound (compressed streams are decoded again);
 * a pipe cannot (GP_EIO). */
int gp_input_rewind(struct gp_input *in, struct gp_diag *diag);

/* "file:line" of the last line read ("raw-traces.tar.gz:cluster04.csv:17"
 * inside archives). Valid until the next call. */
const char *gp_input_where(struct gp_input *in);
uint64_t gp_input_lineno(const struct gp_input *in);
const char *gp_input_name(const struct gp_input *in); /* the file */
/* The current member's name (as next_member gave it); NULL before the first
 * member and after the last. */
const char *gp_input_member(const struct gp_input *in);
/* The part of a path or member name after its last '/' ("a/b.csv" ->
 * "b.csv"; a name with no '/' is its own base). Points into `path`. */
const char *gp_path_base(const char *path);

#endif
