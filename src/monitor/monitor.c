/* monitor.c - choosing a backend, the calls every backend shares, the GPU
 * type rule and the Prometheus page of the GPUs.
 *
 * Auto mode prefers the truth: NVML when it loads and sees GPUs. Anything
 * short of that (no library, no driver, no GPUs, a library too old) opens
 * the configured fake GPUs instead and keeps the reason, because a CPU host
 * with the driver package installed is normal and must still start.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "monitor/monitor_priv.h"
#include "monitor/prom.h"

struct gp_monitor {
    const struct gp_monitor_ops *ops;
    void *priv;
    const struct gp_env *env;
    unsigned ngpus;
    char fallback[sizeof(((struct gp_diag *)0)->where) +
                  sizeof(((struct gp_diag *)0)->msg) + 2];
};

void gp__monitor_sample_unknown(struct gp_gpu_sample *s)
{
    s->err = GP_OK;
    s->util_pct = -1;
    s->mem_used_mib = -1;
    s->mem_total_mib = -1;
    s->temp_c = -1;
    s->power_w = NAN;
    s->nprocs = -1;
    s->npids = 0;
    memset(s->pids, 0, sizeof(s->pids));
}

static bool valid_type(const char *t)
{
    size_t n = strlen(t);

    if (n == 0 || n >= GP_GPU_TYPE_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = t[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  (i > 0 && (c == '_' || c == '-'));

        if (!ok)
            return false;
    }
    return true;
}

static int check_options(const struct gp_monitor_options *o,
                         struct gp_diag *diag)
{
    if ((unsigned)o->mode > GP_MONITOR_FAKE)
        return gp_diag_set(diag, GP_EINVAL, "monitor.nvml",
                           "unknown monitor mode %d", (int)o->mode);
    if (o->fake_gpus > GP_MONITOR_MAX_GPUS)
        return gp_diag_set(diag, GP_ERANGE, "backend.gpus",
                           "%u fake GPUs; at most %d", o->fake_gpus,
                           GP_MONITOR_MAX_GPUS);
    if (o->fake_type && !valid_type(o->fake_type))
        return gp_diag_set(diag, GP_EINVAL, "monitor.fake_type",
                           "\"%s\" is not a GPU type: [a-z0-9][a-z0-9_-]*, "
                           "at most %d characters",
                           o->fake_type, GP_GPU_TYPE_MAX - 1);
    if (o->fake_mem_mib < 0)
        return gp_diag_set(diag, GP_EINVAL, "monitor.fake_mem_mib",
                           "%lld MiB is negative", (long long)o->fake_mem_mib);
    if (o->nvml_path && !*o->nvml_path)
        return gp_diag_set(diag, GP_EINVAL, "monitor.nvml_path",
                           "empty path (leave it unset for %s)",
                           GP_MONITOR_NVML_DEFAULT);
    return GP_OK;
}

int gp_monitor_open(struct gp_monitor **out, const struct gp_monitor_options *o,
                    struct gp_diag *diag)
{
    static const struct gp_monitor_options defaults = {0};
    struct gp_monitor *mon = NULL;
    struct gp_diag why = {0};
    char msg[sizeof(mon->fallback)];
    int rc;

    if (!out)
        return gp_diag_set(diag, GP_EINVAL, "monitor",
                           "no place to put the monitor");
    if (!o)
        o = &defaults;
    if ((rc = check_options(o, diag)) != GP_OK)
        return rc;
    if (!(mon = gp_env_calloc(o->env, 1, sizeof(*mon))))
        return gp_diag_set(diag, GP_ENOMEM, "monitor", "out of memory");
    mon->env = o->env;
    switch (o->mode) {
    case GP_MONITOR_FAKE:
        mon->ops = &gp_monitor_fake;
        rc = mon->ops->open(&mon->priv, o, diag);
        break;
    case GP_MONITOR_NVML:
        mon->ops = &gp_monitor_nvml;
        rc = mon->ops->open(&mon->priv, o, diag);
        break;
    case GP_MONITOR_AUTO:
        mon->ops = &gp_monitor_nvml;
        rc = mon->ops->open(&mon->priv, o, &why);
        if (rc == GP_OK || rc == GP_ENOMEM) {
            if (rc == GP_ENOMEM && diag)
                *diag = why;
            break;
        }
        gp_diag_format(&why, rc, msg, sizeof(msg));
        snprintf(mon->fallback, sizeof(mon->fallback), "%s", msg);
        /* No library is the normal CPU host; anything else deserves a
         * look, since real GPUs may be going unused. */
        gp_logf(o->env, rc == GP_ENOENT ? GP_LOG_INFO : GP_LOG_WARN,
                "msg=\"NVML not used, running fake GPUs\" gpus=%u "
                "reason=\"%s\"",
                o->fake_gpus, msg);
        mon->ops = &gp_monitor_fake;
        rc = mon->ops->open(&mon->priv, o, diag);
        break;
    }
    if (rc != GP_OK)
        goto fail;
    mon->ngpus = mon->ops->ngpus(mon->priv);
    gp_logf(o->env, GP_LOG_INFO, "msg=\"GPU monitor open\" backend=%s gpus=%u",
            mon->ops->name, mon->ngpus);
    *out = mon;
    return GP_OK;
fail:
    gp_env_free(o->env, mon);
    return rc;
}

void gp_monitor_close(struct gp_monitor **monp)
{
    struct gp_monitor *mon;

    if (!monp || !(mon = *monp))
        return;
    mon->ops->close(mon->priv);
    gp_env_free(mon->env, mon);
    *monp = NULL;
}

const char *gp_monitor_backend(const struct gp_monitor *mon)
{
    return mon->ops->name;
}

bool gp_monitor_is_fake(const struct gp_monitor *mon)
{
    return mon->ops == &gp_monitor_fake;
}

const char *gp_monitor_fallback_reason(const struct gp_monitor *mon)
{
    return mon->fallback;
}

unsigned gp_monitor_ngpus(const struct gp_monitor *mon)
{
    return mon->ngpus;
}

int gp_monitor_gpu_info(const struct gp_monitor *mon, unsigned i,
                        struct gp_gpu_info *info)
{
    if (!info)
        return GP_EINVAL;
    if (i >= mon->ngpus)
        return GP_ERANGE;
    return mon->ops->info(mon->priv, i, info);
}

int gp_monitor_sample(struct gp_monitor *mon, int64_t now_us,
                      struct gp_gpu_sample *out, size_t n)
{
    size_t count = n < mon->ngpus ? n : mon->ngpus;

    if (!out && n > 0)
        return GP_EINVAL;
    for (size_t i = 0; i < count; i++) {
        int rc;

        gp__monitor_sample_unknown(&out[i]);
        out[i].gpu = (unsigned)i;
        out[i].t_us = now_us;
        if ((rc = mon->ops->sample(mon->priv, (unsigned)i, &out[i])) != GP_OK)
            return rc;
    }
    return GP_OK;
}

int gp_monitor_fake_set_busy(struct gp_monitor *mon, unsigned gpu, bool busy)
{
    if (!gp_monitor_is_fake(mon))
        return GP_ESTATE;
    if (gpu >= mon->ngpus)
        return GP_ERANGE;
    gp__monitor_fake_set_busy(mon->priv, gpu, busy);
    return GP_OK;
}

int gp_monitor_mode_parse(const char *s, enum gp_monitor_mode *mode,
                          struct gp_diag *diag)
{
    static const struct {
        const char *name;
        enum gp_monitor_mode mode;
    } names[] = {
        {"auto", GP_MONITOR_AUTO},
        {"on", GP_MONITOR_NVML},
        {"off", GP_MONITOR_FAKE},
    };

    for (size_t i = 0; s && i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcmp(s, names[i].name) == 0) {
            *mode = names[i].mode;
            return GP_OK;
        }
    }
    return gp_diag_set(diag, GP_EINVAL, "monitor.nvml",
                       "\"%s\" is not auto, on or off", s ? s : "(null)");
}

/* ---- the GPU type rule (documented in monitor.h) ----------------------- */

#define WORD_MAX 64

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_letter(char c)
{
    c = lower(c);
    return c >= 'a' && c <= 'z';
}

static bool is_sep(char c)
{
    return c == ' ' || c == '-' || c == '_' || c == '\t';
}

/* The next word of *s, lowercased, into w (cut to WORD_MAX - 1); false at
 * the end of the string. */
static bool next_word(const char **s, char w[WORD_MAX])
{
    const char *p = *s;
    size_t n = 0;

    while (*p && is_sep(*p))
        p++;
    if (!*p)
        return false;
    for (; *p && !is_sep(*p); p++)
        if (n < WORD_MAX - 1)
            w[n++] = lower(*p);
    w[n] = '\0';
    *s = p;
    return true;
}

static bool is_brand(const char *w)
{
    return strcmp(w, "nvidia") == 0 || strcmp(w, "tesla") == 0 ||
           strcmp(w, "quadro") == 0 || strcmp(w, "geforce") == 0;
}

static bool has_letter_and_digit(const char *w)
{
    bool letter = false, digit = false;

    for (; *w; w++) {
        letter |= is_letter(*w);
        digit |= is_digit(*w);
    }
    return letter && digit;
}

/* out = a then b, keeping [a-z0-9], cut to len - 1. */
static void put_type(char *out, size_t len, const char *a, const char *b)
{
    size_t n = 0;

    for (const char *p = a; *p && n + 1 < len; p++)
        if (is_letter(*p) || is_digit(*p))
            out[n++] = *p;
    for (const char *p = b; *p && n + 1 < len; p++)
        if (is_letter(*p) || is_digit(*p))
            out[n++] = *p;
    out[n] = '\0';
}

void gp_monitor_gpu_type(const char *name, char *out, size_t len)
{
    char w[WORD_MAX], next[WORD_MAX] = "", first[WORD_MAX] = "";
    const char *s = name ? name : "";
    bool have = next_word(&s, w);

    if (len == 0)
        return;
    while (have) {
        const char *after = s;
        bool more = next_word(&after, next);

        if (is_brand(w)) {
            /* skip */
        } else if ((strcmp(w, "rtx") == 0 || strcmp(w, "gtx") == 0) && more &&
                   is_digit(next[0])) {
            put_type(out, len, w, next);
            return;
        } else if (has_letter_and_digit(w)) {
            put_type(out, len, w, "");
            if (out[0])
                return;
        } else if (!first[0]) {
            put_type(first, sizeof(first), w, "");
        }
        s = after;
        memcpy(w, next, sizeof(w));
        have = more;
    }
    put_type(out, len, first[0] ? first : "unknown", "");
}

/* ---- Prometheus ---------------------------------------------------------- */

static const char *mig_name(enum gp_mig_mode m)
{
    return m == GP_MIG_ON ? "on" : m == GP_MIG_OFF ? "off" : "na";
}

enum field { F_UP, F_UTIL, F_MEM_USED, F_MEM_TOTAL, F_TEMP, F_POWER, F_PROCS };

static const struct {
    const char *name, *help;
} families[] = {
    [F_UP] = {"gpupool_gpu_up",
              "1 when the GPU answered its last sample, 0 when it is lost"},
    [F_UTIL] = {"gpupool_gpu_utilization_ratio",
                "Share of the last sample period a kernel ran (0..1)"},
    [F_MEM_USED] = {"gpupool_gpu_memory_used_bytes",
                    "Device memory in use, to the MiB"},
    [F_MEM_TOTAL] = {"gpupool_gpu_memory_total_bytes",
                     "Device memory, to the MiB"},
    [F_TEMP] = {"gpupool_gpu_temperature_celsius", "GPU die temperature"},
    [F_POWER] = {"gpupool_gpu_power_watts", "Board power draw"},
    [F_PROCS] = {"gpupool_gpu_processes", "Compute processes on the GPU"},
};

/* The value of field f in s; false when unknown. */
static bool field_value(const struct gp_gpu_sample *s, enum field f, double *v)
{
    switch (f) {
    case F_UP:
        *v = s->err == GP_OK ? 1 : 0;
        return true;
    case F_UTIL:
        *v = s->util_pct / 100.0;
        return s->util_pct >= 0;
    case F_MEM_USED:
        *v = (double)s->mem_used_mib * 1048576.0;
        return s->mem_used_mib >= 0;
    case F_MEM_TOTAL:
        *v = (double)s->mem_total_mib * 1048576.0;
        return s->mem_total_mib >= 0;
    case F_TEMP:
        *v = s->temp_c;
        return s->temp_c >= 0;
    case F_POWER:
        *v = s->power_w;
        return !isnan(s->power_w);
    case F_PROCS:
        *v = s->nprocs;
        return s->nprocs >= 0;
    }
    return false;
}

int gp_monitor_prom_write(struct gp_prom_buf *b,
                          const struct gp_gpu_info *infos,
                          const struct gp_gpu_sample *samples, size_t n)
{
    char idx[16];
    int rc;

    if ((rc = gp_prom_error(b, NULL)) != GP_OK)
        return rc;
    if (n && (!infos || !samples))
        return GP_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (samples[i].gpu != infos[i].index)
            return GP_EINVAL;
    gp_prom_family(b, "gpupool_gpu_info",
                   "GPUs of this host: model, scheduling type, MIG mode",
                   GP_PROM_GAUGE);
    for (size_t i = 0; i < n; i++) {
        const char *const labels[][2] = {
            {"gpu", idx},
            {"uuid", infos[i].uuid},
            {"type", infos[i].type},
            {"name", infos[i].name},
            {"mig", mig_name(infos[i].mig)},
        };

        snprintf(idx, sizeof(idx), "%u", infos[i].index);
        gp_prom_sample(b, "gpupool_gpu_info", labels, 5, 1);
    }
    for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++) {
        gp_prom_family(b, families[f].name, families[f].help, GP_PROM_GAUGE);
        for (size_t i = 0; i < n; i++) {
            const char *const labels[][2] = {
                {"gpu", idx},
                {"uuid", infos[i].uuid},
                {"type", infos[i].type},
            };
            double v;

            if (!field_value(&samples[i], (enum field)f, &v))
                continue;
            snprintf(idx, sizeof(idx), "%u", infos[i].index);
            gp_prom_sample(b, families[f].name, labels, 3, v);
        }
    }
    return gp_prom_error(b, NULL);
}
