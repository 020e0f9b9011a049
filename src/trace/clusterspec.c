/* clusterspec.c - clusters from a spec string, a preset name or a file.
 *
 * Every form ends in the same few cluster.h calls (add_type, add_node), so
 * a spec never reaches into the cluster's insides. Presets are embedded
 * tables, computed once from the published data and documented with their
 * derivation in docs/cluster.md: nothing is read from disk for them.
 *
 * Key decision: switches are explicit. Where a source names no topology,
 * nodes go into switches of DEFAULT_PER_SWITCH in the order given, and a
 * new part of a sum ("64x8:V100+32x4:K80") starts a new switch, so a switch
 * never mixes the parts of a spec.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include <jansson.h>

#include "gpupool/trace.h"
#include "trace/clusterspec.h"
#include "trace/csv.h"
#include "trace/io.h"

#define DEFAULT_PER_SWITCH 32u
#define MAX_NAME 96

#define SPEC_FORMS                                                             \
    "expected NxG, NxG:TYPE, NxG/S (S nodes per switch; default 32), "         \
    "a sum such as 64x8:V100+32x4:K80, a preset (see `gpupool presets`), "     \
    "or a .json or .csv cluster file"

/* ---- building -------------------------------------------------------- */

/* Where nodes go: named switches, or automatic ones ("sw0", "sw1", ...)
 * of per_switch nodes each, filled in order. */
struct builder {
    struct gp_cluster *c;
    uint32_t per_switch;
    uint32_t sw_next; /* number of the next automatic switch */
    uint32_t sw_fill; /* nodes in the current automatic switch */
    uint64_t nnodes;
    char sw_name[32];
};

static void builder_init(struct builder *b, struct gp_cluster *c,
                         uint32_t per_switch)
{
    memset(b, 0, sizeof(*b));
    b->c = c;
    b->per_switch = per_switch ? per_switch : DEFAULT_PER_SWITCH;
    b->sw_fill = b->per_switch; /* the first node opens sw0 */
}

/* Close the current automatic switch: the next node opens a new one. */
static void builder_break(struct builder *b)
{
    b->sw_fill = b->per_switch;
}

/* Add one node. sw NULL = the current automatic switch. `where` names the
 * place in errors; the cluster's own message is kept. */
static int builder_add(struct builder *b, const char *name, const char *type,
                       uint32_t gpus, uint32_t cpus, uint64_t mem_mib,
                       const char *sw, const char *where, struct gp_diag *diag)
{
    struct gp_node_spec spec = {
        .name = name,
        .type = type,
        .gpus = gpus,
        .cpus = cpus,
        .mem_mib = mem_mib,
        .switch_name = sw,
    };
    struct gp_diag cd = {{0}, {0}};
    int rc;

    if (b->nnodes >= GP_CLUSTER_SPEC_MAX_NODES)
        return gp_diag_set(diag, GP_ERANGE, where,
                           "more than %u nodes in one cluster",
                           GP_CLUSTER_SPEC_MAX_NODES);
    if (!sw) {
        if (b->sw_fill >= b->per_switch) {
            snprintf(b->sw_name, sizeof(b->sw_name), "sw%" PRIu32,
                     b->sw_next++);
            b->sw_fill = 0;
        }
        b->sw_fill++;
        spec.switch_name = b->sw_name;
    }
    rc = gp_cluster_add_node(b->c, &spec, &cd);
    if (rc != GP_OK) /* the cluster's where is the node's name */
        return gp_diag_set(diag, rc, where, "%s%s%s", cd.where,
                           cd.where[0] ? ": " : "",
                           cd.msg[0] ? cd.msg : gp_err_str(rc));
    b->nnodes++;
    return GP_OK;
}

/* count nodes alike; names "<name>-0", "<name>-1", ... when count > 1
 * (name NULL: the cluster's default names). */
static int builder_add_many(struct builder *b, const char *name,
                            const char *type, uint32_t gpus, uint32_t cpus,
                            uint64_t mem_mib, const char *sw, uint32_t count,
                            const char *where, struct gp_diag *diag)
{
    char buf[MAX_NAME + 16];

    for (uint32_t i = 0; i < count; i++) {
        const char *n = name;
        int rc;

        if (name && count > 1) {
            snprintf(buf, sizeof(buf), "%s-%" PRIu32, name, i);
            n = buf;
        }
        rc = builder_add(b, n, type, gpus, cpus, mem_mib, sw, where, diag);
        if (rc != GP_OK)
            return rc;
    }
    return GP_OK;
}

/* ---- presets --------------------------------------------------------- */

/* A run of identical nodes. sw NULL = automatic switches. */
struct group {
    const char *sw;
    const char *type;
    uint32_t nodes;
    uint32_t gpus;
    uint32_t cpus;
    uint32_t mem_mib;
};

/* Philly: the 11 virtual clusters of HeliosArtifact's philly_vc.csv
 * ("vc,node num"), each a switch of 8-GPU servers: 352 nodes, 2,816 GPUs.
 * The VC of a node is its switch: Helios' simulator gives each VC its own
 * nodes, and a switch keeps them together under the topo model. */
static const struct group philly_groups[] = {
    {"6214e9", NULL, 64, 8, 0, 0}, {"7f04ca", NULL, 32, 8, 0, 0},
    {"11cb48", NULL, 16, 8, 0, 0}, {"b436b2", NULL, 64, 8, 0, 0},
    {"ee9e8c", NULL, 64, 8, 0, 0}, {"e13805", NULL, 16, 8, 0, 0},
    {"6c71a0", NULL, 32, 8, 0, 0}, {"2869ce", NULL, 16, 8, 0, 0},
    {"ed69ec", NULL, 8, 8, 0, 0},  {"103959", NULL, 8, 8, 0, 0},
    {"0e4a51", NULL, 32, 8, 0, 0},
};

/* openb: the 1,213 GPU nodes of openb_node_list_gpu_node.csv counted by
 * (model, gpus, cpu_milli / 1000, memory_mib), in that sort order: 6,212
 * GPUs. Switches of 32 nodes are filled in this order (the node CSV itself
 * fills them in file order). */
static const struct group openb_groups[] = {
    {NULL, "A10", 2, 1, 128, 1048576},    {NULL, "G2", 549, 8, 96, 393216},
    {NULL, "G3", 39, 8, 128, 786432},     {NULL, "P100", 3, 1, 8, 61440},
    {NULL, "P100", 2, 2, 8, 61440},       {NULL, "P100", 107, 2, 16, 122880},
    {NULL, "P100", 22, 2, 64, 262144},    {NULL, "T4", 387, 2, 104, 524288},
    {NULL, "T4", 17, 4, 96, 393216},      {NULL, "V100M16", 19, 1, 8, 32768},
    {NULL, "V100M16", 28, 4, 32, 131072}, {NULL, "V100M16", 7, 8, 64, 262144},
    {NULL, "V100M16", 1, 8, 82, 344064},  {NULL, "V100M32", 9, 4, 48, 376832},
    {NULL, "V100M32", 21, 8, 96, 786432},
};

/* PAI 2020: the 1,814 GPU machines of pai_machine_spec.csv (the 83 CPU-only
 * ones left out) counted by (gpu_type, cap_gpu, cap_cpu, cap_mem GB), in
 * that sort order: 6,742 GPUs. Switches of 32 machines in this order. */
static const struct group pai_groups[] = {
    {NULL, "MISC", 280, 8, 96, 512 * 1024},
    {NULL, "P100", 798, 2, 64, 512 * 1024},
    {NULL, "T4", 497, 2, 96, 512 * 1024},
    {NULL, "V100", 45, 8, 96, 384 * 1024},
    {NULL, "V100", 59, 8, 96, 512 * 1024},
    {NULL, "V100M32", 135, 8, 96, 384 * 1024},
};

/* ITP: the raw traces give no cluster sizes. Each cluster gets 8-GPU nodes,
 * nodes = max(ceil(max job GPUs / 8), ceil(avg GPU demand / 0.8 / 8)),
 * avg GPU demand = sum(duration * num_gpu) / last submission_time, from
 * raw-traces.tar.gz (see docs/cluster.md): 193 nodes, 1,544 GPUs in all. */
static const struct group itp_groups[] = {
    {"itp01", NULL, 8, 8, 0, 0},  {"itp02", NULL, 14, 8, 0, 0},
    {"itp03", NULL, 18, 8, 0, 0}, {"itp04", NULL, 78, 8, 0, 0},
    {"itp05", NULL, 2, 8, 0, 0},  {"itp06", NULL, 14, 8, 0, 0},
    {"itp07", NULL, 41, 8, 0, 0}, {"itp08", NULL, 11, 8, 0, 0},
    {"itp09", NULL, 5, 8, 0, 0},  {"itp10", NULL, 2, 8, 0, 0},
};

/* Tiresias' simulator shapes (n32g4.csv, n160g8.csv, n256g8.csv): 1, 5
 * and 8 switches of 32 nodes; memory is given in GB there. */
static const struct group tiresias_n32g4[] = {
    {NULL, NULL, 32, 4, 40, 256 * 1024},
};
static const struct group tiresias_n160g8[] = {
    {NULL, NULL, 160, 8, 128, 256 * 1024},
};
static const struct group tiresias_n256g8[] = {
    {NULL, NULL, 256, 8, 64, 256 * 1024},
};

/* The cluster of the thesis gpupool reproduces: 64 nodes of 8 GPUs. */
static const struct group thesis_groups[] = {
    {NULL, NULL, 64, 8, 0, 0},
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

struct preset {
    const char *name;
    const char *summary;
    const struct group *groups;
    size_t ngroups;
};

#define ITP1(X, i, n)                                                          \
    X("itp" #i,                                                                \
      "Microsoft ITP cluster" #i " alone, sized from its trace: " #n           \
      " 8-GPU nodes",                                                          \
      &itp_groups[1##i - 101], 1)

/* One list drives both the builders and gp_cluster_presets[]. */
/* One preset a line reads better than clang-format's reflow. */
/* clang-format off */
#define PRESET_LIST(X)                                                         \
    X("philly",                                                                \
      "Philly: 11 VCs as switches of 8-GPU nodes; 352 nodes, "                 \
      "2,816 GPUs",                                                            \
      philly_groups, N(philly_groups))                                         \
    X("openb", "Alibaba openb 2023: 1,213 GPU nodes, 6,212 GPUs, 7 types",     \
      openb_groups, N(openb_groups))                                           \
    X("pai", "Alibaba PAI 2020: 1,814 GPU machines, 6,742 GPUs, 5 types",      \
      pai_groups, N(pai_groups))                                               \
    X("itp",                                                                   \
      "Microsoft ITP: 10 clusters sized from their traces, a switch "          \
      "each; 193 8-GPU nodes, 1,544 GPUs",                                     \
      itp_groups, N(itp_groups))                                               \
    ITP1(X, 01, 8)                                                             \
    ITP1(X, 02, 14)                                                            \
    ITP1(X, 03, 18)                                                            \
    ITP1(X, 04, 78)                                                            \
    ITP1(X, 05, 2)                                                             \
    ITP1(X, 06, 14)                                                            \
    ITP1(X, 07, 41)                                                            \
    ITP1(X, 08, 11)                                                            \
    ITP1(X, 09, 5)                                                             \
    ITP1(X, 10, 2)                                                             \
    X("tiresias-n32g4", "Tiresias shape n32g4: 32 nodes x 4 GPUs, 1 switch",   \
      tiresias_n32g4, N(tiresias_n32g4))                                       \
    X("tiresias-n160g8",                                                       \
      "Tiresias shape n160g8: 160 nodes x 8 GPUs, 5 switches",                 \
      tiresias_n160g8, N(tiresias_n160g8))                                     \
    X("tiresias-n256g8",                                                       \
      "Tiresias shape n256g8: 256 nodes x 8 GPUs, 8 switches",                 \
      tiresias_n256g8, N(tiresias_n256g8))                                     \
    X("thesis",                                                                \
      "the thesis cluster: 64 nodes x 8 GPUs (512 GPUs), switches of 32 "      \
      "nodes",                                                                 \
      thesis_groups, N(thesis_groups))
/* clang-format on */

static const struct preset presets[] = {
#define X(name, summary, groups, n) {name, summary, groups, n},
    PRESET_LIST(X)
#undef X
};

const struct gp_cluster_preset_info gp_cluster_presets[] = {
#define X(name, summary, groups, n) {name, summary},
    PRESET_LIST(X)
#undef X
        {NULL, NULL},
};

static int build_preset(const struct preset *p, struct gp_cluster *c,
                        struct gp_diag *diag)
{
    struct builder b;

    builder_init(&b, c, DEFAULT_PER_SWITCH);
    for (size_t i = 0; i < p->ngroups; i++) {
        const struct group *g = &p->groups[i];
        char name[MAX_NAME];
        int rc;

        for (uint32_t k = 0; k < g->nodes; k++) {
            const char *n = NULL;

            if (g->sw) {
                snprintf(name, sizeof(name), "%s-%" PRIu32, g->sw, k);
                n = name;
            }
            rc = builder_add(&b, n, g->type, g->gpus, g->cpus, g->mem_mib,
                             g->sw, p->name, diag);
            if (rc != GP_OK)
                return rc;
        }
    }
    return GP_OK;
}

static const struct preset *find_preset(const char *name)
{
    for (size_t i = 0; i < N(presets); i++)
        if (strcmp(presets[i].name, name) == 0)
            return &presets[i];
    return NULL;
}

/* ---- "NxG:TYPE/S+..." ------------------------------------------------ */

static bool parse_u32(const char **p, uint32_t max, uint32_t *out)
{
    const char *s = *p;
    uint64_t v = 0;

    if (!isdigit((unsigned char)*s))
        return false;
    while (isdigit((unsigned char)*s)) {
        v = v * 10 + (uint64_t)(*s - '0');
        if (v > max)
            return false;
        s++;
    }
    *out = (uint32_t)v;
    *p = s;
    return true;
}

static bool is_type_char(char ch)
{
    return isalnum((unsigned char)ch) || ch == '_' || ch == '-' || ch == '.';
}

static bool looks_like_shape(const char *spec)
{
    return isdigit((unsigned char)spec[0]) && strchr(spec, 'x') &&
           !strchr(spec, ',') && !strstr(spec, ".json") &&
           !strstr(spec, ".csv");
}

static int shape_error(const char *spec, const char *at, const char *what,
                       struct gp_diag *diag)
{
    return gp_diag_set(diag, GP_EINVAL, spec,
                       "bad cluster spec at '%.40s': %s; " SPEC_FORMS,
                       *at ? at : "(end)", what);
}

static int build_shape(const char *spec, struct gp_cluster *c,
                       struct gp_diag *diag)
{
    const char *p = spec;
    struct builder b;

    builder_init(&b, c, DEFAULT_PER_SWITCH);
    for (;;) {
        uint32_t n, g, s = 0;
        char type[64] = "";
        bool have_s = false, have_type = false;
        int rc;

        if (!parse_u32(&p, GP_CLUSTER_SPEC_MAX_NODES, &n) || n == 0)
            return shape_error(spec, p, "N must be 1..100000", diag);
        if (*p++ != 'x')
            return shape_error(spec, p - 1, "expected 'x' after N", diag);
        if (!parse_u32(&p, GP_MAX_NODE_GPUS, &g) || g == 0)
            return shape_error(spec, p, "G must be 1..64", diag);
        while (*p == ':' || *p == '/') {
            if (*p == '/') {
                p++;
                if (have_s || !parse_u32(&p, GP_CLUSTER_SPEC_MAX_NODES, &s) ||
                    s == 0)
                    return shape_error(spec, p,
                                       "S must be given once, 1..100000", diag);
                have_s = true;
            } else {
                size_t len = 0;

                p++;
                while (is_type_char(p[len]))
                    len++;
                if (have_type || len == 0 || len >= sizeof(type))
                    return shape_error(spec, p,
                                       "TYPE must be given once, 1..63 of "
                                       "A-Z a-z 0-9 _ - .",
                                       diag);
                memcpy(type, p, len);
                type[len] = '\0';
                p += len;
                have_type = true;
            }
        }
        if (*p != '+' && *p != '\0')
            return shape_error(spec, p, "unexpected character", diag);
        b.per_switch = have_s ? s : DEFAULT_PER_SWITCH;
        builder_break(&b);
        rc = builder_add_many(&b, NULL, have_type ? type : NULL, g, 0, 0, NULL,
                              n, spec, diag);
        if (rc != GP_OK)
            return rc;
        if (*p == '\0')
            return GP_OK;
        p++;
    }
}

/* ---- JSON ------------------------------------------------------------ */

struct jctx {
    const char *file;
    struct builder b;
    bool typed;     /* "types" given: nodes may use only those */
    char path[128]; /* JSON path of the object being read */
};

static int jerr(const struct jctx *j, const char *key, struct gp_diag *diag,
                const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int jerr(const struct jctx *j, const char *key, struct gp_diag *diag,
                const char *fmt, ...)
{
    char where[sizeof(diag->where)];
    char msg[sizeof(diag->msg)];
    va_list ap;

    if (!j->path[0] && !key)
        snprintf(where, sizeof(where), "%s", j->file);
    else
        snprintf(where, sizeof(where), "%s: %s%s%s", j->file, j->path,
                 key && j->path[0] ? "." : "", key ? key : "");
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return gp_diag_set(diag, GP_EPARSE, where, "%s", msg);
}

/* Every key of obj must be one of `keys` (NULL-terminated). */
static int check_keys(const struct jctx *j, json_t *obj,
                      const char *const *keys, struct gp_diag *diag)
{
    const char *key;
    json_t *val;

    json_object_foreach(obj, key, val)
    {
        size_t i;
        char list[160] = "";

        (void)val;
        for (i = 0; keys[i]; i++)
            if (strcmp(keys[i], key) == 0)
                break;
        if (keys[i])
            continue;
        for (i = 0; keys[i]; i++) {
            strncat(list, i ? ", " : "", sizeof(list) - strlen(list) - 1);
            strncat(list, keys[i], sizeof(list) - strlen(list) - 1);
        }
        return jerr(j, key, diag, "unknown key (expected one of: %s)", list);
    }
    return GP_OK;
}

static int get_uint(const struct jctx *j, json_t *obj, const char *key,
                    bool required, uint64_t lo, uint64_t hi, uint64_t def,
                    uint64_t *out, struct gp_diag *diag)
{
    json_t *v = json_object_get(obj, key);
    json_int_t x;

    if (!v) {
        if (required)
            return jerr(j, key, diag,
                        "missing (an integer %" PRIu64 "..%" PRIu64 ")", lo,
                        hi);
        *out = def;
        return GP_OK;
    }
    if (!json_is_integer(v))
        return jerr(j, key, diag, "must be an integer %" PRIu64 "..%" PRIu64,
                    lo, hi);
    x = json_integer_value(v);
    if (x < 0 || (uint64_t)x < lo || (uint64_t)x > hi)
        return jerr(j, key, diag, "must be %" PRIu64 "..%" PRIu64, lo, hi);
    *out = (uint64_t)x;
    return GP_OK;
}

static int get_name(const struct jctx *j, json_t *obj, const char *key,
                    bool required, const char **out, struct gp_diag *diag)
{
    json_t *v = json_object_get(obj, key);
    const char *s, *bad;
    char why[64];

    if (!v) {
        if (required)
            return jerr(j, key, diag, "missing (a name)");
        *out = NULL;
        return GP_OK;
    }
    if (!json_is_string(v))
        return jerr(j, key, diag, "must be a string");
    s = json_string_value(v);
    if (s[0] == '\0' || strlen(s) >= MAX_NAME ||
        strlen(s) != json_string_length(v))
        return jerr(j, key, diag, "must be 1..%d characters, no NUL",
                    MAX_NAME - 1);
    if ((bad = gp_text_check(s, strlen(s), why, sizeof(why))))
        return jerr(j, key, diag,
                    "%s (control characters and invalid UTF-8 are refused)",
                    bad);
    *out = s;
    return GP_OK;
}

static int json_type_decl(struct jctx *j, struct gp_cluster *c, json_t *t,
                          struct gp_diag *diag)
{
    static const char *const keys[] = {"name", "speed", NULL};
    const char *name;
    double speed = 1.0;
    json_t *v;
    uint8_t id;
    int rc;

    if (!json_is_object(t))
        return jerr(j, NULL, diag, "must be an object {\"name\", \"speed\"}");
    if ((rc = check_keys(j, t, keys, diag)) != GP_OK ||
        (rc = get_name(j, t, "name", true, &name, diag)) != GP_OK)
        return rc;
    if ((v = json_object_get(t, "speed"))) {
        if (!json_is_number(v) || !(json_number_value(v) > 0) ||
            json_number_value(v) > 1e6)
            return jerr(j, "speed", diag,
                        "must be a number > 0 (1.0 = the "
                        "reference GPU)");
        speed = json_number_value(v);
    }
    if (gp_cluster_find_type(c, name, &id) == GP_OK)
        return jerr(j, "name", diag, "type '%s' declared twice", name);
    if (gp_cluster_ntypes(c) >= GP_MAX_GPU_TYPES)
        return jerr(j, NULL, diag, "more than %d GPU types", GP_MAX_GPU_TYPES);
    rc = gp_cluster_add_type(c, name, speed, &id);
    if (rc != GP_OK)
        return jerr(j, NULL, diag, "%s", gp_err_str(rc));
    return GP_OK;
}

/* One node object; sw = its switch from "switches", or NULL for the flat
 * list (where it may carry its own "switch"). */
static int json_node(struct jctx *j, json_t *n, const char *sw,
                     struct gp_diag *diag)
{
    static const char *const keys_in_sw[] = {"name",    "gpus",  "type", "cpus",
                                             "mem_mib", "count", NULL};
    static const char *const keys_flat[] = {
        "name", "gpus", "type", "cpus", "mem_mib", "count", "switch", NULL};
    const char *name, *type, *nsw = sw;
    uint64_t gpus, cpus, mem, count;
    uint8_t id;
    int rc;

    if (!json_is_object(n))
        return jerr(j, NULL, diag, "must be an object (a node)");
    if ((rc = check_keys(j, n, sw ? keys_in_sw : keys_flat, diag)) != GP_OK)
        return rc;
    if ((rc = get_name(j, n, "name", false, &name, diag)) != GP_OK ||
        (rc = get_uint(j, n, "gpus", true, 1, GP_MAX_NODE_GPUS, 0, &gpus,
                       diag)) != GP_OK ||
        (rc = get_name(j, n, "type", false, &type, diag)) != GP_OK ||
        (rc = get_uint(j, n, "cpus", false, 0, 1u << 20, 0, &cpus, diag)) !=
            GP_OK ||
        (rc = get_uint(j, n, "mem_mib", false, 0, UINT64_C(1) << 40, 0, &mem,
                       diag)) != GP_OK ||
        (rc = get_uint(j, n, "count", false, 1, GP_CLUSTER_SPEC_MAX_NODES, 1,
                       &count, diag)) != GP_OK)
        return rc;
    if (!sw && (rc = get_name(j, n, "switch", false, &nsw, diag)) != GP_OK)
        return rc;
    if (j->typed && type && gp_cluster_find_type(j->b.c, type, &id) != GP_OK)
        return jerr(j, "type", diag, "type '%s' is not declared in \"types\"",
                    type);
    if (j->typed && !type)
        return jerr(j, "type", diag,
                    "missing (\"types\" is given, so every node names one)");
    {
        char where[sizeof(diag->where)];

        snprintf(where, sizeof(where), "%s: %s", j->file, j->path);
        return builder_add_many(&j->b, name, type, (uint32_t)gpus,
                                (uint32_t)cpus, mem, nsw, (uint32_t)count,
                                where, diag);
    }
}

static int json_nodes(struct jctx *j, json_t *arr, const char *sw,
                      struct gp_diag *diag)
{
    size_t base = strlen(j->path);
    size_t i;
    json_t *n;

    if (!json_is_array(arr))
        return jerr(j, "nodes", diag, "must be an array of nodes");
    json_array_foreach(arr, i, n)
    {
        int rc;

        snprintf(j->path + base, sizeof(j->path) - base, "%snodes[%zu]",
                 base ? "." : "", i);
        rc = json_node(j, n, sw, diag);
        if (rc != GP_OK)
            return rc;
    }
    j->path[base] = '\0';
    return GP_OK;
}

int gp__cluster_from_json(const void *buf, size_t len, const char *name,
                          struct gp_cluster **out, struct gp_diag *diag)
{
    static const char *const top_keys[] = {"types", "switches", "nodes", NULL};
    static const char *const sw_keys[] = {"name", "nodes", NULL};
    struct gp_cluster *c = NULL;
    struct gp_strtab swnames; /* switch names seen: O(1) duplicate check */
    struct jctx j;
    json_error_t jerror;
    json_t *root, *types = NULL, *sws, *nodes, *v;
    size_t i;
    int rc;

    memset(&j, 0, sizeof(j));
    gp_strtab_init(&swnames);
    j.file = name ? name : "cluster.json";
    root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerror);
    if (!root) {
        char where[sizeof(diag->where)];

        if (jerror.line > 0)
            snprintf(where, sizeof(where), "%s:%d", j.file, jerror.line);
        else
            snprintf(where, sizeof(where), "%s", j.file);
        gp_strtab_fini(&swnames);
        return gp_diag_set(diag, GP_EPARSE, where, "JSON: %s", jerror.text);
    }
    if (!json_is_object(root)) {
        rc = jerr(&j, NULL, diag,
                  "the document must be an object with "
                  "\"switches\" or \"nodes\" (and optionally \"types\")");
        goto fail;
    }
    if ((rc = check_keys(&j, root, top_keys, diag)) != GP_OK)
        goto fail;
    if ((rc = gp_cluster_new(&c)) != GP_OK)
        goto fail;
    builder_init(&j.b, c, DEFAULT_PER_SWITCH);

    if ((types = json_object_get(root, "types"))) {
        if (!json_is_array(types)) {
            rc = jerr(&j, "types", diag, "must be an array");
            goto fail;
        }
        json_array_foreach(types, i, v)
        {
            snprintf(j.path, sizeof(j.path), "types[%zu]", i);
            if ((rc = json_type_decl(&j, c, v, diag)) != GP_OK)
                goto fail;
        }
        j.path[0] = '\0';
        j.typed = true;
    }
    if ((sws = json_object_get(root, "switches"))) {
        if (!json_is_array(sws)) {
            rc = jerr(&j, "switches", diag, "must be an array");
            goto fail;
        }
        json_array_foreach(sws, i, v)
        {
            const char *swname;
            uint32_t swid;
            json_t *sn;

            snprintf(j.path, sizeof(j.path), "switches[%zu]", i);
            if (!json_is_object(v)) {
                rc = jerr(&j, NULL, diag,
                          "must be an object {\"name\", \"nodes\"}");
                goto fail;
            }
            if ((rc = check_keys(&j, v, sw_keys, diag)) != GP_OK ||
                (rc = get_name(&j, v, "name", true, &swname, diag)) != GP_OK)
                goto fail;
            if (gp_strtab_find(&swnames, swname, (size_t)-1)) {
                rc = jerr(&j, "name", diag, "switch '%s' is listed twice",
                          swname);
                goto fail;
            }
            if ((rc = gp_strtab_intern(&swnames, swname, (size_t)-1, &swid)) !=
                GP_OK) {
                rc = jerr(&j, NULL, diag, "out of memory");
                goto fail;
            }
            if (!(sn = json_object_get(v, "nodes"))) {
                rc = jerr(&j, "nodes", diag, "missing (an array of nodes)");
                goto fail;
            }
            if ((rc = json_nodes(&j, sn, swname, diag)) != GP_OK)
                goto fail;
        }
        j.path[0] = '\0';
    }
    if ((nodes = json_object_get(root, "nodes"))) {
        j.path[0] = '\0';
        if ((rc = json_nodes(&j, nodes, NULL, diag)) != GP_OK)
            goto fail;
    }
    if (j.b.nnodes == 0) {
        j.path[0] = '\0';
        rc = jerr(&j, NULL, diag,
                  "no nodes: give \"switches\":[{\"name\", "
                  "\"nodes\":[...]}] or \"nodes\":[...]");
        goto fail;
    }
    gp_strtab_fini(&swnames);
    json_decref(root);
    *out = c;
    return GP_OK;
fail:
    gp_strtab_fini(&swnames);
    json_decref(root);
    gp_cluster_free(c);
    return rc;
}

/* ---- node-list CSVs -------------------------------------------------- */

#define OPENB_HEADER "sn,cpu_milli,memory_mib,gpu,model"
#define TIRESIAS_HEADER                                                        \
    "num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node"

/* openb_node_list_*.csv: one row per node; CPU-only nodes (gpu 0) are
 * left out; switches of 32 nodes in file order. */
static int openb_nodes(struct gp_csv_reader *r, struct builder *b,
                       struct gp_diag *diag)
{
    int rc;

    while ((rc = gp_csv_reader_next(r, diag)) == 1) {
        const struct gp_csv_row *row = &r->row;
        const char *sn = gp_csv_get(row, r->idx[0]);
        const char *model = gp_csv_get(row, r->idx[4]), *bad, *field;
        char why[64];
        uint64_t cpu_milli, mem;
        uint32_t gpus;

        if ((rc = gp_csv_u32(r->in, "gpu", gp_csv_get(row, r->idx[3]), 0,
                             GP_MAX_NODE_GPUS, &gpus, diag)) != GP_OK ||
            (rc = gp_csv_u64(r->in, "cpu_milli", gp_csv_get(row, r->idx[1]), 0,
                             UINT64_C(1) << 30, &cpu_milli, diag)) != GP_OK ||
            (rc = gp_csv_u64(r->in, "memory_mib", gp_csv_get(row, r->idx[2]), 0,
                             UINT64_C(1) << 40, &mem, diag)) != GP_OK)
            return rc;
        if (gpus == 0)
            continue;
        if (strlen(sn) >= MAX_NAME || strlen(model) >= MAX_NAME)
            return gp_csv_field_error(
                r->in, strlen(sn) >= MAX_NAME ? "sn" : "model", diag,
                "longer than %d characters", MAX_NAME - 1);
        field = "sn";
        if (!(bad = gp_text_check(sn, strlen(sn), why, sizeof(why)))) {
            field = "model";
            bad = gp_text_check(model, strlen(model), why, sizeof(why));
        }
        if (bad)
            return gp_csv_field_error(r->in, field, diag,
                                      "%s (control characters and invalid "
                                      "UTF-8 are refused)",
                                      bad);
        rc = builder_add(b, sn[0] ? sn : NULL, model[0] ? model : NULL, gpus,
                         (uint32_t)((cpu_milli + 999) / 1000), mem, NULL,
                         gp_input_where(r->in), diag);
        if (rc != GP_OK)
            return rc;
    }
    return rc;
}

/* Tiresias cluster_spec.csv: each row is num_switch switches of
 * num_node_p_switch nodes; mem_p_node is in GB. */
static int tiresias_nodes(struct gp_csv_reader *r, struct builder *b,
                          struct gp_diag *diag)
{
    int rc;

    while ((rc = gp_csv_reader_next(r, diag)) == 1) {
        const struct gp_csv_row *row = &r->row;
        uint32_t nsw, per, gpus, cpus;
        uint64_t mem_gb;
        char where[sizeof(diag->where)];

        if ((rc = gp_csv_u32(r->in, "num_switch", gp_csv_get(row, r->idx[0]), 1,
                             GP_CLUSTER_SPEC_MAX_NODES, &nsw, diag)) != GP_OK ||
            (rc = gp_csv_u32(r->in, "num_node_p_switch",
                             gp_csv_get(row, r->idx[1]), 1,
                             GP_CLUSTER_SPEC_MAX_NODES, &per, diag)) != GP_OK ||
            (rc =
                 gp_csv_u32(r->in, "num_gpu_p_node", gp_csv_get(row, r->idx[2]),
                            1, GP_MAX_NODE_GPUS, &gpus, diag)) != GP_OK ||
            (rc =
                 gp_csv_u32(r->in, "num_cpu_p_node", gp_csv_get(row, r->idx[3]),
                            0, 1u << 20, &cpus, diag)) != GP_OK ||
            (rc = gp_csv_u64(r->in, "mem_p_node", gp_csv_get(row, r->idx[4]), 0,
                             UINT64_C(1) << 30, &mem_gb, diag)) != GP_OK)
            return rc;
        if ((uint64_t)nsw * per > GP_CLUSTER_SPEC_MAX_NODES)
            return gp_csv_field_error(r->in, "num_switch", diag,
                                      "%" PRIu32 " x %" PRIu32
                                      " nodes is more than %u",
                                      nsw, per, GP_CLUSTER_SPEC_MAX_NODES);
        snprintf(where, sizeof(where), "%s", gp_input_where(r->in));
        b->per_switch = per;
        builder_break(b);
        rc = builder_add_many(b, NULL, NULL, gpus, cpus, mem_gb * 1024, NULL,
                              nsw * per, where, diag);
        if (rc != GP_OK)
            return rc;
    }
    return rc;
}

static int csv_cluster(struct gp_input *in, struct gp_cluster *c, bool openb,
                       struct gp_diag *diag)
{
    static const struct gp_csv_col openb_cols[] = {
        {"sn", true},  {"cpu_milli", true}, {"memory_mib", true},
        {"gpu", true}, {"model", true},
    };
    static const struct gp_csv_col tiresias_cols[] = {
        {"num_switch", true},     {"num_node_p_switch", true},
        {"num_gpu_p_node", true}, {"num_cpu_p_node", true},
        {"mem_p_node", true},
    };
    struct gp_csv_reader r;
    struct builder b;
    int rc;

    rc = gp_csv_reader_open(&r, in, openb ? openb_cols : tiresias_cols,
                            openb ? N(openb_cols) : N(tiresias_cols), true,
                            NULL, diag);
    if (rc != GP_OK)
        return rc;
    builder_init(&b, c, DEFAULT_PER_SWITCH);
    rc = openb ? openb_nodes(&r, &b, diag) : tiresias_nodes(&r, &b, diag);
    if (rc < 0)
        return rc;
    if (b.nnodes == 0)
        return gp_diag_set(diag, GP_EPARSE, gp_input_name(in),
                           "no GPU nodes in the file");
    return GP_OK;
}

/* ---- dispatch -------------------------------------------------------- */

static bool starts_with_line(const char *buf, size_t len, const char *hdr)
{
    size_t n = strlen(hdr);

    if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0) {
        buf += 3;
        len -= 3;
    }
    return len >= n && memcmp(buf, hdr, n) == 0 &&
           (len == n || buf[n] == '\n' || buf[n] == '\r');
}

int gp__cluster_from_mem(const void *buf, size_t len, const char *name,
                         struct gp_cluster **out, struct gp_diag *diag)
{
    const char *s = buf;
    struct gp_input *in = NULL;
    struct gp_cluster *c = NULL;
    const char *member;
    bool openb;
    size_t i = 0;
    int rc;

    if (!name)
        name = "cluster";
    while (i < len && isspace((unsigned char)s[i]))
        i++;
    if (i < len && s[i] == '{')
        return gp__cluster_from_json(buf, len, name, out, diag);
    if (starts_with_line(s, len, OPENB_HEADER))
        openb = true;
    else if (starts_with_line(s, len, TIRESIAS_HEADER))
        openb = false;
    else
        return gp_diag_set(diag, GP_EPARSE, name,
                           "not a cluster file: expected a JSON object, an "
                           "openb node list (header '" OPENB_HEADER "') or a "
                           "Tiresias cluster spec (header '" TIRESIAS_HEADER
                           "')");
    if ((rc = gp_input_open_mem(&in, buf, len, name, diag)) != GP_OK)
        return rc;
    if ((rc = gp_input_next_member(in, &member, diag)) < 0)
        goto fail;
    if ((rc = gp_cluster_new(&c)) != GP_OK)
        goto fail;
    if ((rc = csv_cluster(in, c, openb, diag)) != GP_OK)
        goto fail;
    gp_input_close(in);
    *out = c;
    return GP_OK;
fail:
    gp_input_close(in);
    gp_cluster_free(c);
    return rc;
}

/* The whole (decompressed) first member of a file, capped. */
static int slurp(const char *path, char **buf, size_t *len,
                 struct gp_diag *diag)
{
    struct gp_input *in = NULL;
    const char *member;
    char *b = NULL;
    size_t n = 0, cap = 0;
    int rc;

    if ((rc = gp_input_open_path(&in, path, diag)) != GP_OK)
        return rc;
    if ((rc = gp_input_next_member(in, &member, diag)) < 0)
        goto fail;
    if (rc == 0) {
        rc = gp_diag_set(diag, GP_EPARSE, path, "empty archive");
        goto fail;
    }
    for (;;) {
        size_t got;

        if (cap - n < 65536) {
            char *nb;

            if (cap >= GP_CLUSTER_FILE_MAX) {
                rc = gp_diag_set(diag, GP_EPARSE, path,
                                 "larger than %u MiB: not a cluster file",
                                 GP_CLUSTER_FILE_MAX >> 20);
                goto fail;
            }
            cap = cap ? cap * 2 : 65536 * 2;
            if (!(nb = realloc(b, cap))) {
                rc = gp_diag_set(diag, GP_ENOMEM, path, "out of memory");
                goto fail;
            }
            b = nb;
        }
        if ((rc = gp_input_read(in, b + n, cap - n, &got, diag)) < 0)
            goto fail;
        if (got == 0)
            break;
        n += got;
    }
    gp_input_close(in);
    *buf = b;
    *len = n;
    return GP_OK;
fail:
    gp_input_close(in);
    free(b);
    return rc;
}

int gp_cluster_from_spec(const char *spec, struct gp_cluster **out,
                         struct gp_diag *diag)
{
    const struct preset *p;
    struct gp_cluster *c = NULL;
    struct stat st;
    char *buf = NULL;
    size_t len = 0;
    int rc;

    if (!spec || !*spec)
        return gp_diag_set(diag, GP_EINVAL, "cluster",
                           "empty cluster spec; " SPEC_FORMS);
    if ((p = find_preset(spec)) || looks_like_shape(spec)) {
        if ((rc = gp_cluster_new(&c)) != GP_OK)
            return gp_diag_set(diag, rc, spec, "%s", gp_err_str(rc));
        rc = p ? build_preset(p, c, diag) : build_shape(spec, c, diag);
        if (rc != GP_OK) {
            gp_cluster_free(c);
            return rc;
        }
        *out = c;
        return GP_OK;
    }
    if (stat(spec, &st) != 0 && !strchr(spec, '/') && !strchr(spec, '.')) {
        char list[256] = "";

        for (size_t i = 0; i < N(presets); i++) {
            strncat(list, i ? ", " : "", sizeof(list) - strlen(list) - 1);
            strncat(list, presets[i].name, sizeof(list) - strlen(list) - 1);
        }
        return gp_diag_set(diag, GP_EINVAL, spec,
                           "unknown cluster preset (presets: %s); or give "
                           "NxG, NxG:TYPE, NxG/S, a sum such as "
                           "64x8:V100+32x4:K80, or a .json/.csv file",
                           list);
    }
    if ((rc = slurp(spec, &buf, &len, diag)) != GP_OK)
        return rc;
    rc = gp__cluster_from_mem(buf, len, spec, out, diag);
    free(buf);
    return rc;
}
