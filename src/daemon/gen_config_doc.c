/* gen_config_doc.c - write docs/config.md from the config table:
 * `gen_config_doc [OUT]` (stdout without OUT). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon/config.h"

int main(int argc, char **argv)
{
    FILE *out = stdout;
    int rc;

    if (argc > 2) {
        fprintf(stderr, "usage: gen_config_doc [OUT]\n");
        return 2;
    }
    if (argc == 2 && !(out = fopen(argv[1], "w"))) {
        fprintf(stderr, "gen_config_doc: %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    rc = gp_config_write_doc(out);
    if (out != stdout && fclose(out) != 0)
        rc = GP_EIO;
    if (rc != GP_OK) {
        fprintf(stderr, "gen_config_doc: %s: cannot write\n",
                argc == 2 ? argv[1] : "stdout");
        return 1;
    }
    return 0;
}
