/* prom.c - the Prometheus text exposition format 0.0.4, written into a
 * growable buffer with a cap.
 *
 * Each call builds its lines at the end of the buffer and rolls the length
 * back if anything fails, so the text is always whole lines; the first
 * error sticks (see prom.h for why).
 */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "monitor/prom.h"

#define INIT_ALLOC 4096

static const char *const type_names[] = {
    [GP_PROM_COUNTER] = "counter",
    [GP_PROM_GAUGE] = "gauge",
    [GP_PROM_UNTYPED] = "untyped",
};

void gp_prom_init(struct gp_prom_buf *b, size_t max_bytes,
                  const struct gp_env *env)
{
    memset(b, 0, sizeof(*b));
    if (max_bytes == 0 || max_bytes > GP_PROM_MAX_DEFAULT)
        max_bytes = GP_PROM_MAX_DEFAULT;
    b->max = max_bytes;
    b->env = env;
}

static void forget_families(struct gp_prom_buf *b)
{
    for (size_t i = 0; i < b->nfamilies; i++)
        gp_env_free(b->env, b->families[i]);
    b->nfamilies = 0;
}

void gp_prom_fini(struct gp_prom_buf *b)
{
    if (!b)
        return;
    forget_families(b);
    gp_env_free(b->env, b->families);
    gp_env_free(b->env, b->text);
    b->families = NULL;
    b->families_alloc = 0;
    b->text = NULL;
    b->len = b->alloc = 0;
}

void gp_prom_reset(struct gp_prom_buf *b)
{
    forget_families(b);
    b->len = 0;
    if (b->text)
        b->text[0] = '\0';
    b->err = GP_OK;
    memset(&b->diag, 0, sizeof(b->diag));
}

int gp_prom_error(const struct gp_prom_buf *b, struct gp_diag *diag)
{
    if (b->err != GP_OK && diag)
        *diag = b->diag;
    return b->err;
}

const char *gp_prom_text(const struct gp_prom_buf *b, size_t *len)
{
    if (len)
        *len = b->len;
    return b->text ? b->text : "";
}

/* Record the first error; the caller rolls its partial line back. */
static int fail(struct gp_prom_buf *b, int err, const char *where,
                const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int fail(struct gp_prom_buf *b, int err, const char *where,
                const char *fmt, ...)
{
    va_list ap;

    b->err = err;
    snprintf(b->diag.where, sizeof(b->diag.where), "%s", where);
    va_start(ap, fmt);
    vsnprintf(b->diag.msg, sizeof(b->diag.msg), fmt, ap);
    va_end(ap);
    return err;
}

/* Room for n more bytes plus the NUL, within the cap. */
static int reserve(struct gp_prom_buf *b, size_t n, const char *where)
{
    size_t need, alloc;
    char *p;

    if (n > b->max || b->len > b->max - n)
        return fail(b, GP_ERANGE, where, "metrics text exceeds %zu bytes",
                    b->max);
    need = b->len + n + 1;
    if (need <= b->alloc)
        return GP_OK;
    alloc = b->alloc ? b->alloc : INIT_ALLOC;
    while (alloc < need)
        alloc *= 2; /* need <= max + 1 <= 16 MiB + 1: no overflow */
    p = gp_env_realloc(b->env, b->text, alloc);
    if (!p)
        return fail(b, GP_ENOMEM, where, "out of memory for %zu bytes", alloc);
    b->text = p;
    b->alloc = alloc;
    return GP_OK;
}

static int put(struct gp_prom_buf *b, const char *s, size_t n,
               const char *where)
{
    int rc = reserve(b, n, where);

    if (rc != GP_OK)
        return rc;
    memcpy(b->text + b->len, s, n);
    b->len += n;
    b->text[b->len] = '\0';
    return GP_OK;
}

static int puts_(struct gp_prom_buf *b, const char *s, const char *where)
{
    return put(b, s, strlen(s), where);
}

/* Write s escaped: backslash and newline always, '"' in label values. */
static int put_escaped(struct gp_prom_buf *b, const char *s, bool quote,
                       const char *where)
{
    int rc = GP_OK;
    size_t run = 0;

    for (const char *p = s;; p++) {
        const char *esc = NULL;

        if (*p == '\\')
            esc = "\\\\";
        else if (*p == '\n')
            esc = "\\n";
        else if (*p == '"' && quote)
            esc = "\\\"";
        else if (*p != '\0') {
            run++;
            continue;
        }
        if (run && (rc = put(b, p - run, run, where)) != GP_OK)
            return rc;
        run = 0;
        if (!esc)
            return GP_OK;
        if ((rc = put(b, esc, 2, where)) != GP_OK)
            return rc;
    }
}

static bool is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* [a-zA-Z_:][a-zA-Z0-9_:]* for metrics; labels have no ':'. */
static bool valid_name(const char *s, bool colon)
{
    if (!s || !*s || is_digit(*s))
        return false;
    for (; *s; s++)
        if (!is_alpha(*s) && !is_digit(*s) && *s != '_' &&
            !(colon && *s == ':'))
            return false;
    return true;
}

/* Well-formed UTF-8: no overlong forms, surrogates or values past
 * U+10FFFF (the scraper's parser refuses them). */
static bool valid_utf8(const char *str)
{
    const unsigned char *s = (const unsigned char *)str;

    while (*s) {
        unsigned c = *s++, n, min, cp;

        if (c < 0x80)
            continue;
        if (c >= 0xc2 && c <= 0xdf)
            n = 1, min = 0x80, cp = c & 0x1f;
        else if (c >= 0xe0 && c <= 0xef)
            n = 2, min = 0x800, cp = c & 0x0f;
        else if (c >= 0xf0 && c <= 0xf4)
            n = 3, min = 0x10000, cp = c & 0x07;
        else
            return false;
        for (unsigned i = 0; i < n; i++, s++) {
            if ((*s & 0xc0) != 0x80)
                return false; /* also stops at the NUL */
            cp = (cp << 6) | (*s & 0x3fu);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return false;
    }
    return true;
}

static bool family_seen(const struct gp_prom_buf *b, const char *name)
{
    for (size_t i = 0; i < b->nfamilies; i++)
        if (strcmp(b->families[i], name) == 0)
            return true;
    return false;
}

static int remember_family(struct gp_prom_buf *b, const char *name,
                           const char *where)
{
    size_t n = strlen(name) + 1;
    char *copy;

    if (b->nfamilies == b->families_alloc) {
        size_t alloc = b->families_alloc ? b->families_alloc * 2 : 16;
        char **p = gp_env_realloc(b->env, b->families, alloc * sizeof(*p));

        if (!p)
            return fail(b, GP_ENOMEM, where, "out of memory");
        b->families = p;
        b->families_alloc = alloc;
    }
    if (!(copy = gp_env_alloc(b->env, n)))
        return fail(b, GP_ENOMEM, where, "out of memory");
    memcpy(copy, name, n);
    b->families[b->nfamilies++] = copy;
    return GP_OK;
}

int gp_prom_family(struct gp_prom_buf *b, const char *name, const char *help,
                   enum gp_prom_type type)
{
    const char *where = "metrics";
    size_t mark = b->len;
    int rc;

    if (b->err != GP_OK)
        return b->err;
    if (!valid_name(name, true))
        return fail(b, GP_EINVAL, where,
                    "metric name \"%s\" is not [a-zA-Z_:][a-zA-Z0-9_:]*",
                    name ? name : "(null)");
    where = name;
    if ((unsigned)type > GP_PROM_UNTYPED)
        return fail(b, GP_EINVAL, where, "unknown metric type %d", (int)type);
    if (help && !valid_utf8(help))
        return fail(b, GP_EINVAL, where, "help text is not valid UTF-8");
    if (family_seen(b, name))
        return fail(b, GP_EEXIST, where,
                    "metric family declared twice on one page");
    if (help) {
        if ((rc = puts_(b, "# HELP ", where)) != GP_OK ||
            (rc = puts_(b, name, where)) != GP_OK ||
            (rc = puts_(b, " ", where)) != GP_OK ||
            (rc = put_escaped(b, help, false, where)) != GP_OK ||
            (rc = puts_(b, "\n", where)) != GP_OK)
            goto fail;
    }
    if ((rc = puts_(b, "# TYPE ", where)) != GP_OK ||
        (rc = puts_(b, name, where)) != GP_OK ||
        (rc = puts_(b, " ", where)) != GP_OK ||
        (rc = puts_(b, type_names[type], where)) != GP_OK ||
        (rc = puts_(b, "\n", where)) != GP_OK ||
        (rc = remember_family(b, name, where)) != GP_OK)
        goto fail;
    b->type = type;
    return GP_OK;
fail:
    b->len = mark;
    if (b->text)
        b->text[mark] = '\0';
    return rc;
}

/* The shortest of %.15g..%.17g that reads back as v (Go's 'g', -1 gives
 * the same digits for the values metrics carry). */
static void format_value(double v, char *out, size_t len)
{
    if (isnan(v)) {
        snprintf(out, len, "NaN");
        return;
    }
    if (isinf(v)) {
        snprintf(out, len, "%s", v > 0 ? "+Inf" : "-Inf");
        return;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(out, len, "%.*g", prec, v);
        if (strtod(out, NULL) == v)
            return;
    }
}

static int check_labels(struct gp_prom_buf *b, const char *const labels[][2],
                        size_t nlabels, const char *where)
{
    if (nlabels && !labels)
        return fail(b, GP_EINVAL, where, "%zu labels but no label array",
                    nlabels);
    for (size_t i = 0; i < nlabels; i++) {
        const char *k = labels[i][0], *v = labels[i][1];

        if (!valid_name(k, false))
            return fail(b, GP_EINVAL, where,
                        "label name \"%s\" is not [a-zA-Z_][a-zA-Z0-9_]*",
                        k ? k : "(null)");
        if (k[0] == '_' && k[1] == '_')
            return fail(b, GP_EINVAL, where,
                        "label name \"%s\": names starting with __ are "
                        "reserved",
                        k);
        if (!v)
            return fail(b, GP_EINVAL, where, "label %s has no value", k);
        if (!valid_utf8(v))
            return fail(b, GP_EINVAL, where,
                        "label %s: value is not valid UTF-8", k);
        for (size_t j = 0; j < i; j++)
            if (strcmp(labels[j][0], k) == 0)
                return fail(b, GP_EINVAL, where, "label %s given twice", k);
    }
    return GP_OK;
}

int gp_prom_sample(struct gp_prom_buf *b, const char *name,
                   const char *const labels[][2], size_t nlabels, double value)
{
    const char *where = name ? name : "metrics";
    const char *family;
    size_t mark = b->len;
    char num[40];
    int rc;

    if (b->err != GP_OK)
        return b->err;
    if (!valid_name(name, true))
        return fail(b, GP_EINVAL, "metrics",
                    "metric name \"%s\" is not [a-zA-Z_:][a-zA-Z0-9_:]*",
                    name ? name : "(null)");
    if (b->nfamilies == 0)
        return fail(b, GP_ESTATE, where,
                    "sample before its family (gp_prom_family)");
    family = b->families[b->nfamilies - 1];
    if (strcmp(family, name) != 0)
        return fail(b, GP_ESTATE, where,
                    "sample outside its family: the current family is %s",
                    family);
    if ((rc = check_labels(b, labels, nlabels, where)) != GP_OK)
        return rc;
    if (b->type == GP_PROM_COUNTER && (isnan(value) || value < 0))
        return fail(b, GP_EINVAL, where, "a counter cannot be negative or NaN");
    format_value(value, num, sizeof(num));
    if ((rc = puts_(b, name, where)) != GP_OK)
        goto fail;
    for (size_t i = 0; i < nlabels; i++) {
        if ((rc = puts_(b, i ? "," : "{", where)) != GP_OK ||
            (rc = puts_(b, labels[i][0], where)) != GP_OK ||
            (rc = puts_(b, "=\"", where)) != GP_OK ||
            (rc = put_escaped(b, labels[i][1], true, where)) != GP_OK ||
            (rc = puts_(b, "\"", where)) != GP_OK)
            goto fail;
    }
    if ((nlabels && (rc = puts_(b, "}", where)) != GP_OK) ||
        (rc = puts_(b, " ", where)) != GP_OK ||
        (rc = puts_(b, num, where)) != GP_OK ||
        (rc = puts_(b, "\n", where)) != GP_OK)
        goto fail;
    return GP_OK;
fail:
    b->len = mark;
    if (b->text)
        b->text[mark] = '\0';
    return rc;
}
