/* test_trace_io.c - the trace input layer and the CSV toolkit: containers
 * (plain, gzip, xz, bzip2, zstd, tar, zip), line endings, the line cap,
 * truncated streams, member order, splitting, headers, numbers and times. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_files.h"
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "trace/csv.h"
#include "trace/io.h"
#include "trace/reader.h"

#define DATA GP_SOURCE_ROOT "/tests/data/traces/"

/* ---- helpers ----------------------------------------------------------- */

static struct gp_input *open_path(const char *path)
{
    struct gp_input *in = NULL;
    struct gp_diag d = {{0}, {0}};
    int rc = gp_input_open_path(&in, path, &d);

    if (rc != GP_OK)
        fail_msg("%s: %s: %s", path, d.where, d.msg);
    return in;
}

static struct gp_input *open_mem(const void *buf, size_t len, const char *name)
{
    struct gp_input *in = NULL;
    struct gp_diag d = {{0}, {0}};
    int rc = gp_input_open_mem(&in, buf, len, name, &d);

    if (rc != GP_OK)
        fail_msg("%s: %s: %s", name, d.where, d.msg);
    return in;
}

static const char *member(struct gp_input *in)
{
    const char *name = NULL;
    struct gp_diag d = {{0}, {0}};
    int rc = gp_input_next_member(in, &name, &d);

    if (rc < 0)
        fail_msg("next_member: %s: %s", d.where, d.msg);
    return rc == 1 ? name : NULL;
}

/* All lines of all members, joined with '|' per line and '#' per member. */
static void slurp(struct gp_input *in, char *out, size_t size)
{
    struct gp_diag d = {{0}, {0}};
    size_t o = 0;

    out[0] = 0;
    while (member(in)) {
        char *line;
        size_t len;
        int rc;

        while ((rc = gp_input_getline(in, &line, &len, &d)) == 1) {
            assert_int_equal(strlen(line), len);
            o += (size_t)snprintf(out + o, size - o, "%s|", line);
            assert_true(o < size);
        }
        if (rc < 0)
            fail_msg("getline: %s: %s", d.where, d.msg);
        o += (size_t)snprintf(out + o, size - o, "#");
    }
}

static const char good_lines[] =
    "id,tenant,user,name,gpu_type,submit_s,duration_s,gpus,cpus,mem_mib,"
    "priority,min_gpus,max_gpus,checkpointable,time_limit_s|"
    "j1,vision,alice,resnet50,V100,0,3600,8,32,65536,0,,,true,7200|"
    "j2,nlp,bob,\"bert, \"\"large\"\"\",,12.5,600.25,4,,,10,2,8,no,|"
    "j3,,,,,30,1,1,,,,,,,|#";

/* A minimal ustar header for building archives in memory. */
static void tar_header(unsigned char *h, const char *name, char type,
                       uint64_t size)
{
    unsigned sum = 0;

    memset(h, 0, 512);
    snprintf((char *)h, 100, "%s", name);
    snprintf((char *)h + 100, 8, "0000644");
    snprintf((char *)h + 124, 12, "%011llo", (unsigned long long)size);
    h[156] = (unsigned char)type;
    memcpy(h + 257,
           "ustar\0"
           "00",
           8);
    memset(h + 148, ' ', 8);
    for (int i = 0; i < 512; i++)
        sum += h[i];
    snprintf((char *)h + 148, 8, "%06o", sum);
}

/* ---- containers -------------------------------------------------------- */

static void plain_compressed_and_archives_give_the_same_lines(void **state)
{
    static const char *const files[] = {
        "gpupool/good.csv",     "gpupool/good.csv.gz",
        "gpupool/good.csv.xz",  "gpupool/good.csv.bz2",
        "gpupool/good.csv.zst", "gpupool/good_crlf.csv",
        "gpupool/good.tar.gz",  "gpupool/good-pax.tar.xz",
        "gpupool/good.zip",
    };
    char got[4096];

    (void)state;
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char path[512], want[4096];
        struct gp_input *in;

        snprintf(path, sizeof(path), DATA "%s", files[i]);
        in = open_path(path);
        slurp(in, got, sizeof(got));
        /* the archives hold the table and a notes.txt, in name order */
        bool archive = strstr(files[i], ".tar") || strstr(files[i], ".zip");

        snprintf(want, sizeof(want), "%s%s", good_lines,
                 archive ? "not a trace|#" : "");
        assert_string_equal(got, want);
        assert_int_equal(gp_input_is_tar(in), archive);
        gp_input_close(in);
    }
}

static void tar_members_come_in_name_order_without_non_regular_ones(void **s)
{
    struct gp_input *in;

    (void)s;
    in = open_path(DATA "itp/raw-traces.tar.gz"); /* packed 02, LICENSE, 01 */
    assert_string_equal(member(in), "LICENSE");
    assert_true(gp_input_is_tar(in));
    assert_string_equal(member(in), "cluster01.csv");
    assert_string_equal(member(in), "cluster02.csv");
    assert_null(member(in));
    assert_null(member(in));
    gp_input_close(in);

    /* a symlink and directories are left out; a GNU long name is kept */
    in = open_path(DATA "gpupool/good.tar.gz");
    assert_string_equal(member(in),
                        "a-directory-name-that-is-long/another-directory-name-"
                        "that-is-long/and-a-third-one-to-pass-100/good.csv");
    assert_string_equal(member(in), "notes.txt");
    assert_null(member(in));
    gp_input_close(in);
}

static void pax_path_records_name_members(void **state)
{
    struct gp_input *in = open_path(DATA "gpupool/good-pax.tar.xz");

    (void)state;
    assert_string_equal(member(in),
                        "a-file-name-so-long-that-neither-the-ustar-name-field-"
                        "nor-the-prefix-can-hold-it-so-pax-records-it.csv");
    assert_string_equal(member(in), "notes.txt");
    assert_null(member(in));
    gp_input_close(in);
}

static void members_can_be_read_partly_and_skipped(void **state)
{
    struct gp_input *in = open_path(DATA "itp/raw-traces.tar.gz");
    struct gp_diag d;
    char *line;
    size_t len;

    (void)state;
    member(in); /* LICENSE: not read at all */
    member(in);
    assert_int_equal(gp_input_getline(in, &line, &len, &d), 1);
    assert_string_equal(line, "job_id,submission_time,duration,num_gpu");
    assert_string_equal(member(in), "cluster02.csv");
    assert_int_equal(gp_input_getline(in, &line, &len, &d), 1);
    assert_int_equal(gp_input_getline(in, &line, &len, &d), 1);
    assert_string_equal(line, "bbbb-1,100,700,8"); /* no final newline */
    assert_string_equal(gp_input_where(in),
                        "raw-traces.tar.gz:cluster02.csv:2");
    assert_int_equal(gp_input_getline(in, &line, &len, &d), 0);
    gp_input_close(in);
}

static void where_names_the_file_and_line(void **state)
{
    static const char text[] = "a\nb\n";
    struct gp_input *in = open_mem(text, sizeof(text) - 1, "dir/x.csv");
    struct gp_diag d;
    char *line;
    size_t len;

    (void)state;
    assert_string_equal(gp_input_name(in), "x.csv");
    assert_string_equal(member(in), "x.csv");
    assert_string_equal(gp_input_member(in), "x.csv");
    gp_input_getline(in, &line, &len, &d);
    gp_input_getline(in, &line, &len, &d);
    assert_string_equal(gp_input_where(in), "x.csv:2");
    assert_int_equal(gp_input_lineno(in), 2);
    gp_input_close(in);
}

static void concatenated_gzip_members_read_as_one_stream(void **state)
{
    size_t len;
    char *gz = test_read_file(DATA "gpupool/good.csv.gz", &len);
    char *two = malloc(2 * len + 16), got[4096], want[4096];
    struct gp_input *in;

    (void)state;
    assert_non_null(two);
    memcpy(two, gz, len);
    memcpy(two + len, gz, len);
    in = open_mem(two, 2 * len, "two.gz");
    slurp(in, got, sizeof(got));
    snprintf(want, sizeof(want), "%.*s%s", (int)strlen(good_lines) - 1,
             good_lines, good_lines);
    assert_string_equal(got, want);
    gp_input_close(in);

    /* zero padding after the stream is fine, other bytes are not */
    memset(two + len, 0, 16);
    in = open_mem(two, len + 16, "padded.gz");
    slurp(in, got, sizeof(got));
    assert_string_equal(got, good_lines);
    gp_input_close(in);
    /* other bytes after the last stream are ignored, as gzip -d does */
    memcpy(two + len, "garbage!", 8);
    in = open_mem(two, len + 8, "garbage.gz");
    slurp(in, got, sizeof(got));
    assert_string_equal(got, good_lines);
    gp_input_close(in);
    free(two);
    free(gz);
}

/* Read a damaged file to its error, which must be GP_EIO naming it. */
static void expect_io_error(const char *path, const char *base,
                            const char *words)
{
    struct gp_input *in = NULL;
    struct gp_diag d = {{0}, {0}};
    const char *m;
    char *line;
    size_t len;
    int rc = gp_input_open_path(&in, path, &d);

    if (rc == GP_OK)
        rc = gp_input_next_member(in, &m, &d);
    while (rc == 1) {
        while ((rc = gp_input_getline(in, &line, &len, &d)) == 1)
            ;
        if (rc == 0)
            rc = gp_input_next_member(in, &m, &d);
    }
    assert_int_equal(rc, GP_EIO);
    assert_string_equal(d.where, base);
    if (!strstr(d.msg, words))
        fail_msg("\"%s\" does not say \"%s\"", d.msg, words);
    gp_input_close(in);
}

static void truncated_streams_are_io_errors_naming_the_file(void **state)
{
    (void)state;
    expect_io_error(DATA "gpupool/truncated.csv.xz", "truncated.csv.xz",
                    "truncated or corrupt xz stream");
    expect_io_error(DATA "gpupool/truncated.csv.gz", "truncated.csv.gz",
                    "truncated or corrupt gzip stream");
    expect_io_error(DATA "gpupool/truncated.tar.gz", "truncated.tar.gz",
                    "truncated or corrupt tar archive (gzip)");
}

static void missing_file_is_an_io_error(void **state)
{
    struct gp_input *in = NULL;
    struct gp_diag d = {{0}, {0}};

    (void)state;
    assert_int_equal(gp_input_open_path(&in, DATA "no-such.csv", &d), GP_EIO);
    assert_null(in);
    assert_non_null(strstr(d.where, "no-such.csv"));
}

static void damaged_zip_and_bzip2_are_io_errors_naming_them(void **state)
{
    static const char bz[] = "BZh91AY&SY more";
    size_t len;
    char *zip = test_read_file(DATA "gpupool/good.zip", &len);
    struct gp_input *in = NULL;
    struct gp_diag d = {{0}, {0}};
    const char *m;
    char *line;
    size_t n;
    int rc;

    (void)state;
    zip[45] ^= 0x55; /* inside the first member's deflated bytes */
    in = open_mem(zip, len, "a.zip");
    while ((rc = gp_input_next_member(in, &m, &d)) == 1)
        while ((rc = gp_input_getline(in, &line, &n, &d)) == 1)
            ;
    assert_int_equal(rc, GP_EIO);
    assert_non_null(strstr(d.where, "a.zip"));
    assert_non_null(strstr(d.msg, "zip archive"));
    gp_input_close(in);
    free(zip);
    in = NULL;
    rc = gp_input_open_mem(&in, bz, sizeof(bz) - 1, "a.bz2", &d);
    if (rc == GP_OK)
        rc = gp_input_next_member(in, &m, &d);
    if (rc == 1)
        while ((rc = gp_input_getline(in, &line, &n, &d)) == 1)
            ;
    assert_int_equal(rc, GP_EIO);
    assert_non_null(strstr(d.msg, "bzip2"));
    gp_input_close(in);
}

/* The first next_member of these bytes fails with `code`, naming the file
 * and saying `words`. */
static void expect_first_member_error(const void *buf, size_t len,
                                      const char *name, int code,
                                      const char *words)
{
    struct gp_input *in = open_mem(buf, len, name);
    struct gp_diag d = {{0}, {0}};
    const char *m;

    assert_int_equal(gp_input_next_member(in, &m, &d), code);
    assert_string_equal(d.where, name);
    if (!strstr(d.msg, words))
        fail_msg("\"%s\" does not say \"%s\"", d.msg, words);
    gp_input_close(in);
}

static void corrupt_tar_header_is_an_io_error(void **state)
{
    unsigned char tar[512 * 6];

    (void)state;
    memset(tar, 0, sizeof(tar));
    tar_header(tar, "a.csv", '0', 3);
    memcpy(tar + 512, "x\ny", 3);
    tar_header(tar + 1024, "b.csv", '0', 3);
    tar[1024 + 10] ^= 1; /* checksum no longer matches */
    expect_first_member_error(tar, sizeof(tar), "bad.tar", GP_EIO,
                              "corrupt tar archive");
}

static void tar_without_end_blocks_is_accepted(void **state)
{
    unsigned char tar[512 * 2];
    struct gp_input *in;
    char got[256];

    (void)state;
    memset(tar, 0, sizeof(tar));
    tar_header(tar, "a.csv", '0', 3);
    memcpy(tar + 512, "x\ny", 3);
    in = open_mem(tar, sizeof(tar), "short.tar");
    slurp(in, got, sizeof(got));
    assert_string_equal(got, "x|y|#");
    gp_input_close(in);
}

/* gzip `len` bytes (a fresh buffer, its size in *out_len). */
static unsigned char *gzip_bytes(const unsigned char *buf, size_t len,
                                 size_t *out_len)
{
    z_stream z;
    size_t cap = len + len / 100 + 1024;
    unsigned char *out = malloc(cap);

    assert_non_null(out);
    memset(&z, 0, sizeof(z));
    assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY),
                     Z_OK);
    z.next_in = (unsigned char *)(uintptr_t)buf;
    z.avail_in = (uInt)len;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    *out_len = cap - z.avail_out;
    deflateEnd(&z);
    return out;
}

/* Regression: a tarball packed out of name order re-decoded from its start
 * for every member (8,000 members: 40 s). Now it is listed, spooled once,
 * and read in name order: linear whatever the packing. */
static void an_archive_out_of_name_order_is_read_in_name_order(void **state)
{
    enum { N = 8000 };
    size_t len = (size_t)N * 1024 + 1024, glen, count = 0;
    unsigned char *tar = calloc(1, len), *gz;
    struct gp_input *in;
    const char *m;
    char prev[64] = "";

    (void)state;
    assert_non_null(tar);
    for (size_t i = 0; i < N; i++) { /* packed in reverse name order */
        char name[64], body[512];
        int n;

        snprintf(name, sizeof(name), "m%05zu.csv", (size_t)N - 1 - i);
        n = snprintf(body, sizeof(body), "line of %s\n", name);
        tar_header(tar + i * 1024, name, '0', (size_t)n);
        memcpy(tar + i * 1024 + 512, body, (size_t)n);
    }
    gz = gzip_bytes(tar, len, &glen);
    in = open_mem(gz, glen, "many.tar.gz");
    while ((m = member(in))) {
        char *line;
        size_t n;
        struct gp_diag d;

        assert_true(strcmp(prev, m) < 0);
        snprintf(prev, sizeof(prev), "%s", m);
        assert_int_equal(gp_input_getline(in, &line, &n, &d), 1);
        assert_non_null(strstr(line, m));
        count++;
    }
    assert_int_equal(count, N);
    gp_input_close(in);
    free(gz);
    free(tar);
    /* how long it takes is bench/bench_parse's to say (tar-reversed) */
}

/* The decoded-bytes cap holds for archives as soon as a header claims
 * more (here one member of 5 GiB). */
static void an_archive_over_4_gib_is_refused_at_its_header(void **state)
{
    unsigned char tar[512 * 4];

    (void)state;
    memset(tar, 0, sizeof(tar));
    tar_header(tar, "huge.csv", '0', UINT64_C(5) << 30);
    expect_first_member_error(tar, sizeof(tar), "huge.tar", GP_ERANGE,
                              "more than 4 GiB decoded");
}

/* ---- lines ------------------------------------------------------------- */

static void line_cap_stops_reading_at_the_cap(void **state)
{
    size_t cap = GP_INPUT_MAX_LINE, len = cap + 64, o = 0;
    char *buf = malloc(2 * len + 64), *line;
    struct gp_diag d = {{0}, {0}};
    struct gp_input *in;
    size_t n;

    (void)state;
    assert_non_null(buf);
    o += (size_t)sprintf(buf, "first\n");
    memset(buf + o, 'x', cap); /* exactly at the cap: fine */
    o += cap;
    buf[o++] = '\n';
    memset(buf + o, 'y', cap + 1); /* one byte over: reading stops */
    o += cap + 1;
    o += (size_t)sprintf(buf + o, "\r\nlast");
    in = open_mem(buf, o, "long.csv");
    member(in);
    assert_int_equal(gp_input_getline(in, &line, &n, &d), 1);
    assert_string_equal(line, "first");
    assert_int_equal(gp_input_getline(in, &line, &n, &d), 1);
    assert_int_equal(n, cap);
    assert_int_equal(gp_input_getline(in, &line, &n, &d), GP_ERANGE);
    assert_string_equal(d.where, "long.csv:3");
    assert_non_null(strstr(d.msg, "longer than 1048576 bytes"));
    /* sticky: the rest of the line is never read */
    memset(&d, 0, sizeof(d));
    assert_int_equal(gp_input_getline(in, &line, &n, &d), GP_ERANGE);
    assert_string_equal(d.where, "long.csv:3");
    gp_input_close(in);

    /* an overlong last line without a newline */
    memset(buf, 'z', cap + 10);
    in = open_mem(buf, cap + 10, "tail.csv");
    member(in);
    assert_int_equal(gp_input_getline(in, &line, &n, &d), GP_ERANGE);
    assert_string_equal(d.where, "tail.csv:1");
    gp_input_close(in);
    free(buf);
}

/* Regression: `gpupool sim --trace /dev/zero` never ended, reading an
 * endless line to drop it. Here the endless line comes down a pipe (zeros
 * would read as an empty tar archive, which ends at once). */
static void an_endless_line_ends_at_the_cap(void **state)
{
    struct gp_input *in;
    struct gp_diag d = {{0}, {0}};
    char path[64], *line;
    size_t n;
    int fds[2], status;
    pid_t pid;

    (void)state;
    assert_int_equal(pipe(fds), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) { /* writes until the reader goes away */
        char buf[4096];

        close(fds[0]);
        memset(buf, 'y', sizeof(buf));
        while (write(fds[1], buf, sizeof(buf)) > 0)
            ;
        _exit(0);
    }
    close(fds[1]);
    snprintf(path, sizeof(path), "/dev/fd/%d", fds[0]);
    in = open_path(path);
    assert_non_null(member(in));
    assert_int_equal(gp_input_getline(in, &line, &n, &d), GP_ERANGE);
    assert_non_null(strstr(d.msg, "longer than"));
    gp_input_close(in);
    close(fds[0]);
    assert_int_equal(waitpid(pid, &status, 0), pid);
}

static void lines_across_buffer_refills_are_whole(void **state)
{
    size_t cap = 4u << 20, o = 0, count = 0;
    char *buf = malloc(cap), *line;
    struct gp_diag d = {{0}, {0}};
    struct gp_input *in;
    size_t n;
    int rc;

    (void)state;
    assert_non_null(buf);
    /* lines of 1..300 bytes, so that many straddle the 64 KiB buffer */
    for (size_t i = 0; o + 400 < cap; i++) {
        size_t k = 1 + (i * 7919) % 300;

        memset(buf + o, 'a' + (int)(i % 26), k);
        o += k;
        buf[o++] = '\n';
    }
    in = open_mem(buf, o, "many.csv");
    member(in);
    while ((rc = gp_input_getline(in, &line, &n, &d)) == 1) {
        size_t k = 1 + (count * 7919) % 300;

        assert_int_equal(n, k);
        assert_int_equal(line[0], 'a' + (int)(count % 26));
        assert_int_equal(line[n - 1], 'a' + (int)(count % 26));
        assert_int_equal(line[n], 0);
        count++;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(gp_input_lineno(in), count);
    gp_input_close(in);
    free(buf);
}

static void empty_input_is_one_empty_member(void **state)
{
    struct gp_input *in = open_mem("", 0, "empty.csv");
    struct gp_diag d;
    const char *buf;
    char *line;
    size_t len;

    (void)state;
    assert_string_equal(member(in), "empty.csv");
    assert_int_equal(gp_input_peek(in, &buf, &len, &d), GP_OK);
    assert_int_equal(len, 0);
    assert_int_equal(gp_input_getline(in, &line, &len, &d), 0);
    assert_null(member(in));
    gp_input_close(in);
}

static void peek_unget_and_rewind_do_not_lose_bytes(void **state)
{
    static const char text[] = "one\r\ntwo\nthree";
    struct gp_input *in = open_mem(text, sizeof(text) - 1, "t.csv");
    struct gp_diag d;
    const char *buf;
    char *line;
    size_t len;
    char got[128];

    (void)state;
    member(in);
    assert_int_equal(gp_input_peek(in, &buf, &len, &d), GP_OK);
    assert_int_equal(len, sizeof(text) - 1);
    assert_memory_equal(buf, text, len);
    assert_int_equal(gp_input_getline(in, &line, &len, &d), 1);
    assert_string_equal(line, "one");
    gp_input_ungetline(in);
    assert_int_equal(gp_input_lineno(in), 0);
    assert_int_equal(gp_input_getline(in, &line, &len, &d), 1);
    assert_string_equal(line, "one");
    assert_int_equal(gp_input_lineno(in), 1);
    assert_int_equal(gp_input_peek(in, &buf, &len, &d), GP_OK);
    assert_memory_equal(buf, "two\nthree", len);
    assert_int_equal(gp_input_rewind(in, &d), GP_OK);
    slurp(in, got, sizeof(got));
    assert_string_equal(got, "one|two|three|#");
    gp_input_close(in);
}

static void raw_reads_see_every_byte_of_a_member(void **state)
{
    struct gp_input *in = open_path(DATA "itp/raw-traces.tar.gz");
    struct gp_diag d;
    char buf[256];
    size_t got, total = 0;

    (void)state;
    member(in);
    member(in); /* cluster01.csv, 79 bytes */
    do {
        assert_int_equal(gp_input_read(in, buf, 10, &got, &d), GP_OK);
        total += got;
    } while (got > 0);
    assert_int_equal(total, 79);
    gp_input_close(in);
}

/* ---- CSV --------------------------------------------------------------- */

static void split_handles_quotes_and_empty_fields(void **state)
{
    static struct gp_csv_row row;
    char line[] = "a,\"b,c\",\"say \"\"hi\"\"\",,\"\"";
    char plain[] = "1,,3,";
    struct gp_diag d;

    (void)state;
    assert_int_equal(gp_csv_split(&row, line, strlen(line), ',', NULL, &d),
                     GP_OK);
    assert_int_equal(row.n, 5);
    assert_string_equal(row.f[0], "a");
    assert_string_equal(row.f[1], "b,c");
    assert_string_equal(row.f[2], "say \"hi\"");
    assert_int_equal(row.len[2], 8);
    assert_string_equal(row.f[3], "");
    assert_string_equal(row.f[4], "");
    assert_int_equal(gp_csv_split(&row, plain, strlen(plain), ',', NULL, &d),
                     GP_OK);
    assert_int_equal(row.n, 4);
    assert_string_equal(row.f[2], "3");
    assert_string_equal(row.f[3], "");
}

static void split_rejects_bad_quotes_nul_and_too_many_fields(void **state)
{
    static struct gp_csv_row row;
    char open_quote[] = "a,\"b";
    char after[] = "\"a\"b,c";
    char nul[] = "a,b\0c";
    char many[GP_CSV_MAX_FIELDS * 2 + 8];
    struct gp_diag d;

    (void)state;
    assert_int_equal(gp_csv_split(&row, open_quote, 4, ',', NULL, &d),
                     GP_EPARSE);
    assert_non_null(strstr(d.msg, "unterminated quote in field 2"));
    assert_int_equal(gp_csv_split(&row, after, 6, ',', NULL, &d), GP_EPARSE);
    assert_non_null(strstr(d.msg, "closing quote"));
    assert_int_equal(gp_csv_split(&row, nul, 5, ',', NULL, &d), GP_EPARSE);
    assert_non_null(strstr(d.msg, "NUL"));
    /* exactly the maximum is fine, one more is not */
    memset(many, ',', GP_CSV_MAX_FIELDS - 1);
    many[GP_CSV_MAX_FIELDS - 1] = 0;
    assert_int_equal(
        gp_csv_split(&row, many, GP_CSV_MAX_FIELDS - 1, ',', NULL, &d), GP_OK);
    assert_int_equal(row.n, GP_CSV_MAX_FIELDS);
    memset(many, ',', GP_CSV_MAX_FIELDS);
    many[GP_CSV_MAX_FIELDS] = 0;
    assert_int_equal(gp_csv_split(&row, many, GP_CSV_MAX_FIELDS, ',', NULL, &d),
                     GP_EPARSE);
}

static const struct gp_csv_col cols[] = {
    {"id", true}, {"gpus", true}, {"duration", true}, {"user", false}};

static int header(const char *text, bool strict, int *idx, struct gp_diag *d)
{
    static struct gp_csv_row row;
    static char line[256];

    snprintf(line, sizeof(line), "%s", text);
    assert_int_equal(gp_csv_split(&row, line, strlen(line), ',', NULL, d),
                     GP_OK);
    return gp_csv_header(&row, cols, 4, strict, idx, NULL, d);
}

static void header_finds_columns_by_name_in_any_order(void **state)
{
    struct gp_diag d;
    int idx[4];

    (void)state;
    assert_int_equal(header("\xef\xbb\xbf"
                            "duration, id ,x,gpus",
                            false, idx, &d),
                     GP_OK);
    assert_int_equal(idx[0], 1);
    assert_int_equal(idx[1], 3);
    assert_int_equal(idx[2], 0);
    assert_int_equal(idx[3], -1);
}

static void header_names_every_missing_column(void **state)
{
    struct gp_diag d;
    int idx[4];

    (void)state;
    assert_int_equal(header("user,gpus", false, idx, &d), GP_EPARSE);
    assert_string_equal(d.msg, "missing required column(s) 'id', 'duration'");
    assert_int_equal(header("id,gpus,duration,gpus", false, idx, &d),
                     GP_EPARSE);
    assert_non_null(strstr(d.msg, "'gpus' appears twice"));
}

static void strict_header_lists_known_columns_for_an_unknown_one(void **state)
{
    struct gp_diag d;
    int idx[4];

    (void)state;
    assert_int_equal(header("id,gpus,duraton,user", true, idx, &d), GP_EPARSE);
    assert_string_equal(d.msg, "unknown column \"duraton\" (known: id, gpus, "
                               "duration, user)");
    assert_int_equal(header("id,gpus,duraton,duration", false, idx, &d), GP_OK);
}

/* ---- values ------------------------------------------------------------ */

static void numbers_reject_garbage_with_the_field_name(void **state)
{
    static const struct {
        const char *text, *says;
    } bad[] = {
        {"abc", "field 'gpus': \"abc\" is not a number"},
        {"", "field 'gpus': is empty"},
        {"  ", "field 'gpus': is empty"},
        {"-3", "field 'gpus': \"-3\" is negative"},
        {"1.5", "field 'gpus': \"1.5\" is not a whole number"},
        {"nan", "field 'gpus': \"nan\" is not a finite number"},
        {"-inf", "field 'gpus': \"-inf\" is not a finite number"},
        {"0x10", "field 'gpus': \"0x10\" is not a number"},
        {"12abc", "field 'gpus': \"12abc\" is not a number"},
        {"1e", "field 'gpus': \"1e\" is not a number"},
        {".", "field 'gpus': \".\" is not a number"},
        {"0", "field 'gpus': \"0\" is out of range (1..1000000)"},
        {"1000001", "field 'gpus': \"1000001\" is out of range (1..1000000)"},
        {"99999999999999999999999", "is out of range"},
        {"1e300", "is out of range"},
    };
    struct gp_diag d;
    uint32_t v = 77;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc =
            gp_csv_u32(NULL, "gpus", bad[i].text, 1, GP_TRACE_MAX_GPUS, &v, &d);

        if (rc != GP_EPARSE || !strstr(d.msg, bad[i].says))
            fail_msg("\"%s\": rc %d, \"%s\"", bad[i].text, rc, d.msg);
        assert_int_equal(v, 77); /* out-parameters only on success */
    }
}

static void numbers_accept_blanks_exponents_and_integral_decimals(void **s)
{
    struct gp_diag d;
    uint32_t v;
    uint64_t u;
    int64_t i;
    double x;

    (void)s;
    assert_int_equal(gp_csv_u32(NULL, "g", " 8 ", 1, 8, &v, &d), GP_OK);
    assert_int_equal(v, 8);
    assert_int_equal(gp_csv_u32(NULL, "g", "8.0", 1, 8, &v, &d), GP_OK);
    assert_int_equal(gp_csv_u32(NULL, "g", "1e3", 1, 1000, &v, &d), GP_OK);
    assert_int_equal(v, 1000);
    assert_int_equal(gp_csv_u32(NULL, "g", "+1", 1, 1000, &v, &d), GP_OK);
    assert_int_equal(
        gp_csv_u64(NULL, "m", "18446744073709551614", 0, UINT64_MAX, &u, &d),
        GP_OK);
    assert_true(u == UINT64_MAX - 1);
    assert_int_equal(gp_csv_i64(NULL, "p", "-42", -100, 100, &i, &d), GP_OK);
    assert_int_equal(i, -42);
    assert_int_equal(gp_csv_i64(NULL, "p", "-101", -100, 100, &i, &d),
                     GP_EPARSE);
    assert_int_equal(gp_csv_double(NULL, "f", "2.5e-1", 0, 1, &x, &d), GP_OK);
    assert_true(x == 0.25);
    assert_int_equal(gp_csv_double(NULL, "f", "-0.5", 0, 1, &x, &d), GP_EPARSE);
    assert_non_null(strstr(d.msg, "negative"));
}

static void seconds_become_microseconds_within_bounds(void **state)
{
    struct gp_diag d;
    int64_t us = -1;

    (void)state;
    assert_int_equal(gp_csv_seconds(NULL, "duration", "600.25", 1,
                                    GP_TRACE_MAX_DURATION_US, &us, &d),
                     GP_OK);
    assert_int_equal(us, 600250000);
    assert_int_equal(gp_csv_seconds(NULL, "duration", "0.000001", 1,
                                    GP_TRACE_MAX_DURATION_US, &us, &d),
                     GP_OK);
    assert_int_equal(us, 1);
    assert_int_equal(gp_csv_seconds(NULL, "duration", "0", 1,
                                    GP_TRACE_MAX_DURATION_US, &us, &d),
                     GP_EPARSE);
    assert_string_equal(d.msg,
                        "field 'duration': \"0\" must be greater than 0");
    assert_int_equal(gp_csv_seconds(NULL, "duration", "0.0000001", 1,
                                    GP_TRACE_MAX_DURATION_US, &us, &d),
                     GP_EPARSE);
    assert_int_equal(gp_csv_seconds(NULL, "duration", "-5", 1,
                                    GP_TRACE_MAX_DURATION_US, &us, &d),
                     GP_EPARSE);
    assert_string_equal(d.msg, "field 'duration': \"-5\" is negative");
    /* 10 years is the most a job may run */
    assert_int_equal(gp_csv_seconds(NULL, "duration", "315576000", 1,
                                    GP_TRACE_MAX_DURATION_US, &us, &d),
                     GP_OK);
    assert_int_equal(gp_csv_seconds(NULL, "duration", "315576001", 1,
                                    GP_TRACE_MAX_DURATION_US, &us, &d),
                     GP_EPARSE);
    assert_non_null(strstr(d.msg, "too large"));
    assert_int_equal(gp_csv_seconds(NULL, "duration", "1e308", 1,
                                    GP_TRACE_MAX_DURATION_US, &us, &d),
                     GP_EPARSE);
    assert_int_equal(gp_csv_seconds(NULL, "duration", "NaN", 1,
                                    GP_TRACE_MAX_DURATION_US, &us, &d),
                     GP_EPARSE);
    assert_non_null(strstr(d.msg, "not a finite number"));
}

static void booleans_take_the_usual_spellings(void **state)
{
    static const char *const yes[] = {"1", "true", "TRUE", "yes", " Yes "};
    static const char *const no[] = {"0", "false", "False", "no", "NO"};
    struct gp_diag d;
    bool b;

    (void)state;
    for (size_t i = 0; i < 5; i++) {
        b = false;
        assert_int_equal(gp_csv_bool(NULL, "c", yes[i], &b, &d), GP_OK);
        assert_true(b);
        assert_int_equal(gp_csv_bool(NULL, "c", no[i], &b, &d), GP_OK);
        assert_false(b);
    }
    assert_int_equal(gp_csv_bool(NULL, "checkpointable", "maybe", &b, &d),
                     GP_EPARSE);
    assert_non_null(strstr(d.msg, "field 'checkpointable'"));
}

static void datetimes_are_checked_and_counted_from_1970(void **state)
{
    static const char *const bad[] = {
        "2017-13-01 00:00:00", "2017-00-10 00:00:00",
        "2017-04-31 00:00:00", "2019-02-29 00:00:00",
        "2100-02-29 00:00:00", "2017-01-01 24:00:00",
        "2017-01-01 00:60:00", "2017-01-01 00:00:60",
        "2017-01-01T00:00:00", "2017-1-01 00:00:00",
        "2017-01-01 00:00:0",  "2017-01-01 00:00:00Z",
        "abcd-ef-gh ij:kl:mn", "",
    };
    int64_t us = 5;

    (void)state;
    assert_int_equal(gp_trace_parse_datetime("1970-01-01 00:00:00", 19, &us),
                     GP_OK);
    assert_int_equal(us, 0);
    assert_int_equal(gp_trace_parse_datetime("2017-10-09 07:01:55", 19, &us),
                     GP_OK);
    assert_int_equal(us, INT64_C(1507532515) * GP_US_PER_S);
    assert_int_equal(gp_trace_parse_datetime("2020-02-29 23:59:59", 19, &us),
                     GP_OK);
    assert_int_equal(us, INT64_C(1583020799) * GP_US_PER_S);
    assert_int_equal(gp_trace_parse_datetime("2000-02-29 00:00:00", 19, &us),
                     GP_OK);
    assert_int_equal(us, INT64_C(951782400) * GP_US_PER_S);
    assert_int_equal(gp_trace_parse_datetime("1969-12-31 23:59:59", 19, &us),
                     GP_OK);
    assert_int_equal(us, -GP_US_PER_S);
    us = 5;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (gp_trace_parse_datetime(bad[i], strlen(bad[i]), &us) != GP_EPARSE)
            fail_msg("accepted \"%s\"", bad[i]);
    assert_int_equal(us, 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plain_compressed_and_archives_give_the_same_lines),
        cmocka_unit_test(
            tar_members_come_in_name_order_without_non_regular_ones),
        cmocka_unit_test(pax_path_records_name_members),
        cmocka_unit_test(members_can_be_read_partly_and_skipped),
        cmocka_unit_test(where_names_the_file_and_line),
        cmocka_unit_test(concatenated_gzip_members_read_as_one_stream),
        cmocka_unit_test(truncated_streams_are_io_errors_naming_the_file),
        cmocka_unit_test(missing_file_is_an_io_error),
        cmocka_unit_test(damaged_zip_and_bzip2_are_io_errors_naming_them),
        cmocka_unit_test(corrupt_tar_header_is_an_io_error),
        cmocka_unit_test(tar_without_end_blocks_is_accepted),
        cmocka_unit_test(an_archive_out_of_name_order_is_read_in_name_order),
        cmocka_unit_test(an_archive_over_4_gib_is_refused_at_its_header),
        cmocka_unit_test(line_cap_stops_reading_at_the_cap),
        cmocka_unit_test(an_endless_line_ends_at_the_cap),
        cmocka_unit_test(lines_across_buffer_refills_are_whole),
        cmocka_unit_test(empty_input_is_one_empty_member),
        cmocka_unit_test(peek_unget_and_rewind_do_not_lose_bytes),
        cmocka_unit_test(raw_reads_see_every_byte_of_a_member),
        cmocka_unit_test(split_handles_quotes_and_empty_fields),
        cmocka_unit_test(split_rejects_bad_quotes_nul_and_too_many_fields),
        cmocka_unit_test(header_finds_columns_by_name_in_any_order),
        cmocka_unit_test(header_names_every_missing_column),
        cmocka_unit_test(strict_header_lists_known_columns_for_an_unknown_one),
        cmocka_unit_test(numbers_reject_garbage_with_the_field_name),
        cmocka_unit_test(numbers_accept_blanks_exponents_and_integral_decimals),
        cmocka_unit_test(seconds_become_microseconds_within_bounds),
        cmocka_unit_test(booleans_take_the_usual_spellings),
        cmocka_unit_test(datetimes_are_checked_and_counted_from_1970),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
