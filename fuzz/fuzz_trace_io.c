/* fuzz_trace_io.c - any bytes through the input layer itself: decoding
 * (gzip, xz, bzip2, zstd), tar and zip framing and the line reader, with peeks,
 * raw reads, a rewind and a second pass that must see the same members. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Read every member; returns how many were seen, or -1 on an error. */
static long pass(struct gp_input *in, int how)
{
    struct gp_diag d;
    const char *name;
    long members = 0;
    int rc;

    while ((rc = gp_input_next_member(in, &name, &d)) == 1) {
        const char *buf;
        char *line, raw[97];
        size_t len, got;

        members++;
        if (strlen(name) == 0 && gp_input_is_tar(in))
            abort();
        if (gp_input_peek(in, &buf, &len, &d) < 0)
            return -1;
        if (len > GP_INPUT_PEEK_MAX)
            abort();
        if (how == 1) {
            do {
                if (gp_input_read(in, raw, sizeof(raw), &got, &d) < 0)
                    return -1;
            } while (got > 0);
            continue;
        }
        while ((rc = gp_input_getline(in, &line, &len, &d)) != 0) {
            if (rc < 0) /* an overlong line stops reading, too */
                return -1;
            if (len > GP_INPUT_MAX_LINE || line[len] != 0)
                abort();
            (void)gp_input_where(in);
            if (how == 2 && len % 3 == 0) {
                gp_input_ungetline(in);
                if (gp_input_getline(in, &line, &len, &d) != 1)
                    abort();
            }
        }
    }
    return rc < 0 ? -1 : members;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gp_input *in = NULL;
    struct gp_diag d;
    long first, again;

    if (gp_input_open_mem(&in, data, size, "fuzz.tar.gz", &d) != GP_OK)
        return 0;
    first = pass(in, 0);
    if (first >= 0 && gp_input_rewind(in, &d) == GP_OK) {
        again = pass(in, size % 2 ? 1 : 2);
        if (again >= 0 && again != first)
            abort();
    }
    gp_input_close(in);
    return 0;
}
