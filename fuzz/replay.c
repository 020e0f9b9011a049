/* replay.c - feed every file of the given corpus folders (or files) to a
 * libFuzzer entry point, so the corpus runs as an ordinary test in every
 * build, sanitizers included. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf;
    long len;

    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return -1;
    }
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc(len > 0 ? (size_t)len : 1);
    if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        free(buf);
        fclose(f);
        return -1;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, (size_t)len);
    free(buf);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    size_t n = 0;

    for (int i = 1; i < argc; i++) {
        struct stat st;
        DIR *d;
        struct dirent *e;
        char **names = NULL;
        size_t nn = 0, cap = 0;

        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: no such corpus %s\n", argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (run_file(argv[i]) != 0)
                return 1;
            n++;
            continue;
        }
        if (!(d = opendir(argv[i])))
            return 1;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue;
            if (nn == cap) {
                cap = cap ? cap * 2 : 64;
                names = realloc(names, cap * sizeof(*names));
                if (!names)
                    return 1;
            }
            names[nn] = malloc(strlen(argv[i]) + strlen(e->d_name) + 2);
            if (!names[nn])
                return 1;
            sprintf(names[nn], "%s/%s", argv[i], e->d_name);
            nn++;
        }
        closedir(d);
        qsort(names, nn, sizeof(*names), cmp_str);
        for (size_t k = 0; k < nn; k++) {
            if (run_file(names[k]) != 0)
                return 1;
            free(names[k]);
            n++;
        }
        free(names);
    }
    if (n == 0) {
        fprintf(stderr, "replay: empty corpus\n");
        return 1;
    }
    printf("replayed %zu inputs\n", n);
    return 0;
}
