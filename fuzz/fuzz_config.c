/* fuzz_config.c - the daemon's config file parser on any bytes.
 *
 * The input is a config file, optionally followed by a line "--" and lines
 * "section.key=value" applied as --set. Whatever is accepted must dump to
 * a file that loads back to an equal config. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* the input's "--" line, or NULL */
static const char *find_sets(const char *text, size_t size, size_t *file_len)
{
    for (size_t i = 0; i + 2 <= size; i++)
        if ((i == 0 || text[i - 1] == '\n') && memcmp(text + i, "--", 2) == 0 &&
            (i + 2 == size || text[i + 2] == '\n')) {
            *file_len = i;
            return text + i + 2 < text + size ? text + i + 3 : text + size;
        }
    *file_len = size;
    return NULL;
}

static void apply_sets(struct gp_config *c, const char *p, const char *end)
{
    char line[512];

    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = (size_t)((nl ? nl : end) - p);
        char *eq;

        if (n < sizeof(line) && !memchr(p, '\0', n)) {
            memcpy(line, p, n);
            line[n] = '\0';
            if ((eq = strchr(line, '='))) {
                *eq = '\0';
                gp_config_set(c, line, eq + 1, NULL);
            }
        }
        p = nl ? nl + 1 : end;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    struct gp_config c, again;
    struct gp_diag diag;
    const char *sets;
    size_t file_len;
    char *dump = NULL;
    size_t dump_len = 0;
    FILE *f;

    sets = find_sets(text, size, &file_len);
    if (gp_config_parse(&c, "fuzz.ini", text, file_len, &diag) != GP_OK)
        return 0;
    if (sets)
        apply_sets(&c, sets, text + size);
    gp_config_check(&c, &diag);
    if (!(f = open_memstream(&dump, &dump_len)))
        abort();
    if (gp_config_dump(&c, f) != GP_OK || fclose(f) != 0)
        abort();
    /* what was accepted reads back the same */
    if (gp_config_parse(&again, "dump.ini", dump, dump_len, &diag) != GP_OK)
        __builtin_trap();
    if (gp_config_diff(&c, &again, NULL, 0) != 0)
        __builtin_trap();
    gp_config_fini(&again);
    gp_config_fini(&c);
    free(dump);
    return 0;
}
