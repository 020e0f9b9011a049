/* test_files.h - a whole file into memory, for unit tests (include after
 * cmocka.h). */
#ifndef GPUPOOL_TEST_FILES_H
#define GPUPOOL_TEST_FILES_H

#include <stdio.h>
#include <stdlib.h>

/* The file's bytes with a NUL after them; *len (if not NULL) their count.
 * A file that cannot be read fails the test. The caller frees. */
__attribute__((unused)) static char *test_read_file(const char *path,
                                                    size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;

    if (!f)
        fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    assert_true(n >= 0);
    buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    if (len)
        *len = (size_t)n;
    return buf;
}

#endif
