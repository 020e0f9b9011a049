/* tenants.c - tenant definitions from JSON:
 *
 *   {"tenants": [{"name": "vision", "weight": 2, "guarantee": 64,
 *                 "guarantee_by_type": {"V100": 32, "K80": 32},
 *                 "cap": 128, "lend_limit": 8, "parent": "research",
 *                 "users": ["ann", "bob"]}]}
 *
 * "users" is for the daemon (who may act in the tenant); the simulator
 * ignores it. Unknown keys are errors (typos must not pass silently). A parent
 * must be defined before its children, so a tenant's depth is its parent's plus
 * one and is known when it is read: nesting is capped there (a 100,000-deep
 * chain is refused at level 33, before anything recurses over it). Names
 * are hashed (a gp_strtab whose ids are the tenants' indexes), so the
 * duplicate and parent checks cost O(1) a tenant. GPU type names are checked
 * against the cluster by the core. Validation that needs the whole set (cap
 * below guarantee, parents) is repeated by the core when it takes them.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/csv.h"
#include "trace/tenants.h"

void gp_tenant_list_init(struct gp_tenant_list *l)
{
    memset(l, 0, sizeof(*l));
    gp_strtab_init(&l->strs);
}

void gp_tenant_list_fini(struct gp_tenant_list *l)
{
    for (size_t i = 0; l->t && i <= l->n; i++)
        free((void *)(uintptr_t)l->t[i].by_type);
    for (size_t i = 0; l->users && i <= l->n; i++)
        free(l->users[i].names);
    free(l->t);
    free(l->users);
    gp_strtab_fini(&l->strs);
    memset(l, 0, sizeof(*l));
}

static int get_gpus(json_t *v, const char *where, const char *key,
                    uint32_t *out, struct gp_diag *diag)
{
    json_int_t x;

    if (!json_is_integer(v))
        return gp_diag_set(diag, GP_EPARSE, where,
                           "%s: expected a whole number of GPUs", key);
    x = json_integer_value(v);
    if (x < 0 || x > 10000000)
        return gp_diag_set(diag, GP_ERANGE, where,
                           "%s: %lld GPUs is out of range (0..10000000)", key,
                           (long long)x);
    *out = (uint32_t)x;
    return GP_OK;
}

/* A name, a parent or a GPU type: 1..GP_TENANT_NAME_MAX bytes of
 * printable UTF-8 (len = its length in the JSON, NULs included). */
static int check_name(const char *where, const char *key, const char *s,
                      size_t len, struct gp_diag *diag)
{
    char why[64];
    const char *bad;

    if (len == 0)
        return gp_diag_set(diag, GP_EPARSE, where,
                           "%s: expected a non-empty string", key);
    if (len > GP_TENANT_NAME_MAX)
        return gp_diag_set(diag, GP_ERANGE, where, "%s: longer than %u bytes",
                           key, GP_TENANT_NAME_MAX);
    if (strlen(s) != len)
        return gp_diag_set(diag, GP_EPARSE, where, "%s: contains a NUL", key);
    if ((bad = gp_text_check(s, len, why, sizeof(why))))
        return gp_diag_set(diag, GP_EPARSE, where,
                           "%s: %s (control characters and invalid UTF-8 "
                           "are refused)",
                           key, bad);
    return GP_OK;
}

static int keep(struct gp_tenant_list *l, const char *s, const char **out)
{
    uint32_t id;
    int rc = gp_strtab_intern(&l->strs, s, (size_t)-1, &id);

    if (rc == GP_OK)
        *out = gp_strtab_get(&l->strs, id);
    return rc;
}

const char *gp_tenant_user_check(const char *s, size_t len)
{
    if (len == 0)
        return "an empty name";
    if (strlen(s) != len)
        return "a NUL in the name";
    if (len == 1 && s[0] == '*')
        return NULL;
    if (len > GP_USER_NAME_MAX)
        return "longer than 63 bytes";
    if (strncmp(s, "uid:", 4) == 0 && len > 4) {
        for (size_t i = 4; i < len; i++)
            if (s[i] < '0' || s[i] > '9')
                return "uid:N takes digits only";
        return NULL;
    }
    if (s[0] == '-')
        return "a name cannot start with '-'";
    for (size_t i = 0; i < len; i++) {
        char c = s[i];

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-' ||
              (c == '$' && i == len - 1)))
            return "a user name is letters, digits, '_', '.', '-' (and a "
                   "final '$')";
    }
    return NULL;
}

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (const char *const *)a;
    uintptr_t y = (uintptr_t) * (const char *const *)b;

    return x < y ? -1 : x > y;
}

/* "users": ["ann", "bob"] or ["*"]. Names are interned, so the same name
 * twice is the same pointer: sorting the pointers finds repeats. */
static int parse_users(struct gp_tenant_list *l, json_t *v, const char *where,
                       struct gp_tenant_users *u, struct gp_diag *diag)
{
    const char **sorted;
    size_t i;
    json_t *e;
    int rc;

    if (!json_is_array(v))
        return gp_diag_set(diag, GP_EPARSE, where,
                           "users: expected an array of user names (\"*\" "
                           "= everyone)");
    if (json_array_size(v) > GP_TENANT_USERS_MAX)
        return gp_diag_set(diag, GP_ERANGE, where, "users: more than %u",
                           GP_TENANT_USERS_MAX);
    u->listed = true;
    if (!(u->names = calloc(json_array_size(v) + 1, sizeof(*u->names))))
        return gp_diag_set(diag, GP_ENOMEM, where, "out of memory");
    json_array_foreach(v, i, e)
    {
        const char *why, *name;

        if (!json_is_string(e))
            return gp_diag_set(diag, GP_EPARSE, where,
                               "users[%zu]: expected a user name", i);
        if ((why = gp_tenant_user_check(json_string_value(e),
                                        json_string_length(e))))
            return gp_diag_set(diag, GP_EPARSE, where, "users[%zu]: %s", i,
                               why);
        if (strcmp(json_string_value(e), "*") == 0) {
            u->everyone = true;
            continue;
        }
        if ((rc = keep(l, json_string_value(e), &name)) != GP_OK)
            return gp_diag_set(diag, rc, where, "out of memory");
        u->names[u->n++] = name;
    }
    if (u->n < 2)
        return GP_OK;
    if (!(sorted = malloc(u->n * sizeof(*sorted))))
        return gp_diag_set(diag, GP_ENOMEM, where, "out of memory");
    memcpy(sorted, u->names, u->n * sizeof(*sorted));
    qsort(sorted, u->n, sizeof(*sorted), cmp_ptr);
    for (i = 1; i < u->n; i++)
        if (sorted[i] == sorted[i - 1]) {
            rc = gp_diag_set(diag, GP_EINVAL, where,
                             "users: '%s' is listed twice", sorted[i]);
            free(sorted);
            return rc;
        }
    free(sorted);
    return GP_OK;
}

static int parse_one(struct gp_tenant_list *l, json_t *o, const char *file,
                     size_t idx, struct gp_tenant_spec *t,
                     struct gp_tenant_users *u, struct gp_diag *diag)
{
    char where[160];
    const char *key;
    json_t *v;
    uint64_t by_type = 0;
    bool have_total = false, have_by_type = false;
    int rc;

    snprintf(where, sizeof(where), "%s: tenants[%zu]", file, idx);
    if (!json_is_object(o))
        return gp_diag_set(diag, GP_EPARSE, where, "expected an object");
    memset(t, 0, sizeof(*t));
    memset(u, 0, sizeof(*u));
    json_object_foreach(o, key, v)
    {
        if (strcmp(key, "name") == 0 || strcmp(key, "parent") == 0) {
            if (!json_is_string(v))
                return gp_diag_set(diag, GP_EPARSE, where,
                                   "%s: expected a non-empty string", key);
            if ((rc = check_name(where, key, json_string_value(v),
                                 json_string_length(v), diag)))
                return rc;
            rc = keep(l, json_string_value(v),
                      key[0] == 'n' ? &t->name : &t->parent);
            if (rc != GP_OK)
                return gp_diag_set(diag, rc, where, "out of memory");
        } else if (strcmp(key, "weight") == 0) {
            if (!json_is_number(v) || json_number_value(v) <= 0 ||
                json_number_value(v) > 1e6)
                return gp_diag_set(diag, GP_ERANGE, where,
                                   "weight: expected a number in (0, 1e6]");
            t->weight = json_number_value(v);
        } else if (strcmp(key, "guarantee") == 0) {
            if ((rc = get_gpus(v, where, key, &t->guarantee, diag)))
                return rc;
            have_total = true;
        } else if (strcmp(key, "cap") == 0) {
            if ((rc = get_gpus(v, where, key, &t->cap, diag)))
                return rc;
        } else if (strcmp(key, "lend_limit") == 0) {
            if ((rc = get_gpus(v, where, key, &t->lend_limit, diag)))
                return rc;
        } else if (strcmp(key, "guarantee_by_type") == 0) {
            const char *type;
            json_t *g;
            struct gp_type_guarantee *parts;

            if (!json_is_object(v) || json_object_size(v) == 0)
                return gp_diag_set(diag, GP_EPARSE, where,
                                   "guarantee_by_type: expected an object "
                                   "of GPU type -> GPUs");
            if (json_object_size(v) > GP_MAX_GPU_TYPES)
                return gp_diag_set(diag, GP_ERANGE, where,
                                   "guarantee_by_type: more than %d types",
                                   GP_MAX_GPU_TYPES);
            parts = calloc(json_object_size(v), sizeof(*parts));
            if (!parts)
                return gp_diag_set(diag, GP_ENOMEM, where, "out of memory");
            t->by_type = parts;
            json_object_foreach(v, type, g)
            {
                struct gp_type_guarantee *part = &parts[t->nby_type];
                char k[96];

                if ((rc = check_name(where, "guarantee_by_type", type,
                                     strlen(type), diag)))
                    return rc;
                snprintf(k, sizeof(k), "guarantee_by_type.%.64s", type);
                if ((rc = get_gpus(g, where, k, &part->gpus, diag)))
                    return rc;
                if ((rc = keep(l, type, &part->type)) != GP_OK)
                    return gp_diag_set(diag, rc, where, "out of memory");
                by_type += part->gpus;
                t->nby_type++;
            }
            have_by_type = true;
        } else if (strcmp(key, "users") == 0) {
            if ((rc = parse_users(l, v, where, u, diag)) != GP_OK)
                return rc;
        } else {
            return gp_diag_set(diag, GP_EPARSE, where,
                               "unknown key '%s' (known: name, weight, "
                               "guarantee, guarantee_by_type, cap, "
                               "lend_limit, parent, users)",
                               key);
        }
    }
    if (!t->name)
        return gp_diag_set(diag, GP_EPARSE, where, "name: missing");
    if (have_by_type) {
        if (by_type > 10000000)
            return gp_diag_set(diag, GP_ERANGE, where,
                               "guarantee_by_type: too many GPUs");
        if (have_total && t->guarantee != by_type)
            return gp_diag_set(diag, GP_EINVAL, where,
                               "guarantee %u differs from the sum of "
                               "guarantee_by_type (%llu)",
                               t->guarantee, (unsigned long long)by_type);
        t->guarantee = (uint32_t)by_type;
    }
    if (t->cap && t->cap < t->guarantee)
        return gp_diag_set(diag, GP_EINVAL, where,
                           "cap %u is below the guarantee %u", t->cap,
                           t->guarantee);
    if (t->lend_limit > t->guarantee)
        return gp_diag_set(diag, GP_EINVAL, where,
                           "lend_limit %u is above the guarantee %u",
                           t->lend_limit, t->guarantee);
    return GP_OK;
}

int gp_tenants_parse(struct gp_tenant_list *l, const char *buf, size_t len,
                     const char *name, struct gp_diag *diag)
{
    json_error_t jerr;
    json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
    json_t *arr;
    const char *key;
    json_t *v;
    char where[160];
    struct gp_strtab names; /* tenant names; id k = tenant k - 1 */
    uint32_t *depth = NULL; /* by tenant; roots are 1 */
    int rc = GP_OK;

    if (!root) {
        snprintf(where, sizeof(where), "%s:%d", name, jerr.line);
        return gp_diag_set(diag, GP_EPARSE, where, "%s", jerr.text);
    }
    gp_strtab_init(&names);
    if (!json_is_object(root)) {
        rc = gp_diag_set(diag, GP_EPARSE, name,
                         "expected an object with a \"tenants\" array");
        goto out;
    }
    json_object_foreach(root, key, v)
    {
        if (strcmp(key, "tenants") != 0) {
            rc = gp_diag_set(diag, GP_EPARSE, name,
                             "unknown key '%s' (known: tenants)", key);
            goto out;
        }
    }
    arr = json_object_get(root, "tenants");
    if (!json_is_array(arr)) {
        rc = gp_diag_set(diag, GP_EPARSE, name, "tenants: expected an array");
        goto out;
    }
    if (json_array_size(arr) > GP_TENANTS_MAX) {
        rc = gp_diag_set(diag, GP_ERANGE, name, "tenants: more than %u",
                         GP_TENANTS_MAX);
        goto out;
    }
    l->t = calloc(json_array_size(arr) + 1, sizeof(*l->t));
    l->users = calloc(json_array_size(arr) + 1, sizeof(*l->users));
    depth = calloc(json_array_size(arr) + 1, sizeof(*depth));
    if (!l->t || !l->users || !depth) {
        rc = gp_diag_set(diag, GP_ENOMEM, name, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < json_array_size(arr); i++) {
        struct gp_tenant_spec *t = &l->t[l->n];
        uint32_t id, parent = 0;

        if ((rc = parse_one(l, json_array_get(arr, i), name, i, t,
                            &l->users[l->n], diag)))
            goto out;
        /* names get ids 1, 2, ... in order: id k is tenant k - 1 */
        if (gp_strtab_find(&names, t->name, (size_t)-1)) {
            snprintf(where, sizeof(where), "%s: tenants[%zu]", name, i);
            rc = gp_diag_set(diag, GP_EEXIST, where,
                             "tenant '%s' is defined twice", t->name);
            goto out;
        }
        if (t->parent) {
            bool typed = t->nby_type > 0;

            parent = gp_strtab_find(&names, t->parent, (size_t)-1);
            if (parent)
                typed |= l->t[parent - 1].nby_type > 0;
            if (parent && typed) {
                snprintf(where, sizeof(where), "%s: tenants[%zu]", name, i);
                rc = gp_diag_set(diag, GP_EINVAL, where,
                                 "guarantee_by_type is only for tenants "
                                 "without parent or children");
                goto out;
            }
            if (!parent) {
                snprintf(where, sizeof(where), "%s: tenants[%zu].parent", name,
                         i);
                rc = gp_diag_set(diag, GP_ENOENT, where,
                                 "parent '%s' is not defined before it",
                                 t->parent);
                goto out;
            }
        }
        depth[l->n] = parent ? depth[parent - 1] + 1 : 1;
        if (depth[l->n] > (unsigned)GP_TENANT_MAX_DEPTH) {
            snprintf(where, sizeof(where), "%s: tenants[%zu].parent", name, i);
            rc = gp_diag_set(diag, GP_ERANGE, where,
                             "tenant '%s' nests deeper than %u levels", t->name,
                             (unsigned)GP_TENANT_MAX_DEPTH);
            goto out;
        }
        if ((rc = gp_strtab_intern(&names, t->name, (size_t)-1, &id))) {
            rc = gp_diag_set(diag, rc, name, "out of memory");
            goto out;
        }
        l->n++;
    }
out:
    free(depth);
    gp_strtab_fini(&names);
    json_decref(root);
    return rc;
}

int gp_tenants_load(struct gp_tenant_list *l, const char *path,
                    struct gp_diag *diag)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0;
    const char *base = strrchr(path, '/');
    int rc;

    base = base ? base + 1 : path;
    if (!f)
        return gp_diag_set(diag, GP_EIO, path, "cannot open: %s",
                           strerror(errno));
    for (;;) {
        size_t got;

        if (len == cap) { /* one byte past the cap tells it is too long */
            size_t ncap = cap ? cap * 2 : 65536;
            char *p;

            if (ncap > GP_TENANTS_FILE_MAX + 1)
                ncap = GP_TENANTS_FILE_MAX + 1;
            if (!(p = realloc(buf, ncap))) {
                rc = gp_diag_set(diag, GP_ENOMEM, base, "out of memory");
                goto fail;
            }
            buf = p;
            cap = ncap;
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (len > GP_TENANTS_FILE_MAX) {
            rc = gp_diag_set(diag, GP_ERANGE, base,
                             "larger than %u MiB: over the cap of a tenants "
                             "file",
                             GP_TENANTS_FILE_MAX >> 20);
            goto fail;
        }
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        rc = gp_diag_set(diag, GP_EIO, base, "read error");
        goto fail;
    }
    fclose(f);
    rc = gp_tenants_parse(l, buf, len, base, diag);
    free(buf);
    return rc;
fail:
    free(buf);
    fclose(f);
    return rc;
}
