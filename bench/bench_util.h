/* bench_util.h - small helpers shared by the newer benches: a clock, memory
 * readings, option parsing and running a case in a child.
 *
 * Header-only (static functions) so that each bench stays one file plus
 * this one and meson needs no helper library for the bench folder.
 */
#ifndef GPUPOOL_BENCH_UTIL_H
#define GPUPOOL_BENCH_UTIL_H

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/resource.h>
#include <sys/vfs.h>
#include <sys/wait.h>

/* The file system under dir, by name: what a durable write costs there
 * depends on it. */
static inline const char *bench_fs_name(const char *dir)
{
    struct statfs s;

    if (statfs(dir, &s) != 0)
        return "?";
    switch ((unsigned long)s.f_type) {
    case 0xEF53:
        return "ext4";
    case 0x01021994:
        return "tmpfs (fsync is free: FULL means nothing here)";
    case 0x58465342:
        return "xfs";
    case 0x9123683E:
        return "btrfs";
    case 0x794c7630:
        return "overlayfs";
    default:
        return "other";
    }
}

/* Seconds on CLOCK_MONOTONIC. */
static inline double bench_now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* For qsort: doubles in increasing order. */
static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* q-quantile of v[0..n) (sorted in place), nearest rank; NAN when n = 0. */
static inline double bench_quantile(double *v, size_t n, double q)
{
    size_t i;

    if (n == 0)
        return NAN;
    qsort(v, n, sizeof(*v), bench_cmp_double);
    i = (size_t)ceil(q * (double)n);
    return v[i > 0 ? i - 1 : 0];
}

/* Resident memory now (bytes): /proc/self/statm's second field, so a
 * reading can go down as well as up, unlike ru_maxrss. 0 if unreadable. */
static inline double bench_rss_bytes(void)
{
    unsigned long size, resident;
    FILE *f = fopen("/proc/self/statm", "r");
    int n;

    if (!f)
        return 0;
    n = fscanf(f, "%lu %lu", &size, &resident);
    fclose(f);
    return n == 2 ? (double)resident * (double)sysconf(_SC_PAGESIZE) : 0;
}

/* The process's peak resident memory (bytes). */
static inline double bench_maxrss_bytes(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss * 1024.0; /* Linux: KiB */
}

/* An unsigned option in [lo, hi]; prints why and returns -1 otherwise. */
static inline int bench_parse_u64(const char *prog, const char *opt,
                                  const char *s, uint64_t lo, uint64_t hi,
                                  uint64_t *out)
{
    char *end;
    unsigned long long x;

    errno = 0;
    x = strtoull(s, &end, 10);
    if (end == s || *end || errno || s[0] == '-' || x < lo || x > hi) {
        fprintf(stderr,
                "%s: %s: expected an integer in [%llu, %llu], got '%s'\n", prog,
                opt, (unsigned long long)lo, (unsigned long long)hi, s);
        return -1;
    }
    *out = x;
    return 0;
}

/* Run fn(arg, out) in a forked child and copy its `size` bytes of `out`
 * back. ru_maxrss is a per-process high-water mark: a case run after
 * another in the same process would inherit its peak. Returns 0, or -1 if
 * the child died or sent less (out is then left as it was). */
static inline int bench_in_child(void (*fn)(void *arg, void *out), void *arg,
                                 void *out, size_t size)
{
    int fds[2], status = 0;
    size_t got = 0;
    char *buf;
    pid_t pid;

    if (!(buf = malloc(size)))
        return -1;
    fflush(stdout); /* or the child would print the parent's buffer again */
    fflush(stderr);
    if (pipe(fds) != 0 || (pid = fork()) < 0) {
        free(buf);
        return -1;
    }
    if (pid == 0) {
        const char *p = out;
        size_t left = size;

        close(fds[0]);
        fn(arg, out);
        fflush(stdout);
        while (left > 0) {
            ssize_t n = write(fds[1], p, left);

            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                _exit(1);
            p += n;
            left -= (size_t)n;
        }
        _exit(0);
    }
    close(fds[1]);
    while (got < size) {
        ssize_t n = read(fds[0], buf + got, size - got);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fds[0]);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (got == size)
        memcpy(out, buf, size);
    else if (WIFSIGNALED(status))
        fprintf(stderr, "child killed by signal %d%s\n", WTERMSIG(status),
                WTERMSIG(status) == SIGKILL ? " (out of memory?)" : "");
    free(buf);
    return got == size ? 0 : -1;
}

#endif
