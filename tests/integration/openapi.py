#!/usr/bin/env python3
"""openapi.py GPUPOOL SRCDIR - docs/openapi.json kept true.

1. The file: OpenAPI 3.0.x; every $ref resolves; every operation has an
   operationId (unique) and responses; path parameters match the
   templates; schemas use only the keywords the validator below knows.
2. The source: the routes src/daemon/api.c serves are the file's paths and
   no others; the fields, types and limits of src/daemon/decode.c's
   tables are the request schemas'; the list's query arguments, the job
   states (src/core/job.c) and the error names (err.h and the literals of
   api.c, http.c, serve.c) are the file's.
3. A real `gpupool serve` (4 fake GPUs, a temporary store, its Unix socket
   and a loopback TCP listener with a token file): every operation of the
   file is called and each reply is checked against the file - its status
   is listed for the operation, its content type too, and its JSON fits
   the schema. Every limit a request schema states is tried at the bound
   (taken) and past it (400 naming the field), and the requests sent are
   checked against the request schemas both ways. Errors: unknown field,
   unknown job, no token (401), not an admin (403), ended job (409), a
   body over the cap (413), a job that can never fit (422).

Exit 0: pass; 1: fail; 77: skipped (no gpupool given: the file and the
source were checked, the daemon was not).
"""
import http.client
import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch",
                "trace")
SENTINEL = "zz_unknown"  # a field no request schema has

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, flush=True)


# ---- a small validator for the OpenAPI 3.0 schema subset ----------------

ANNOTATIONS = {"description", "title", "format", "example", "default",
               "deprecated", "readOnly", "writeOnly", "externalDocs"}
KEYWORDS = {"$ref", "type", "nullable", "enum", "required", "properties",
            "additionalProperties", "items", "minItems", "maxItems",
            "uniqueItems", "minLength", "maxLength", "pattern", "minimum",
            "maximum", "exclusiveMinimum", "exclusiveMaximum",
            "minProperties", "maxProperties", "oneOf", "anyOf", "allOf"}
TYPES = {"string", "integer", "number", "boolean", "array", "object"}


def pointer(doc, ref):
    """The object a local $ref names, or None."""
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return None
    node = doc
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def deref(doc, node):
    seen = 0
    while isinstance(node, dict) and "$ref" in node:
        node = pointer(doc, node["$ref"])
        seen += 1
        if seen > 20:
            return None
    return node


def type_ok(t, v):
    if t == "integer":
        return isinstance(v, int) and not isinstance(v, bool)
    if t == "number":
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    if t == "string":
        return isinstance(v, str)
    if t == "boolean":
        return isinstance(v, bool)
    if t == "array":
        return isinstance(v, list)
    if t == "object":
        return isinstance(v, dict)
    return False


def same(a, b):
    """JSON equality: 1 is not true, 1 is 1.0."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    return a == b


def validate(doc, schema, v, where="$"):
    """A list of what in v does not fit schema (empty: it fits)."""
    out = []
    schema = deref(doc, schema)
    if schema is None:
        return ["%s: a $ref that does not resolve" % where]
    if v is None:
        if schema.get("nullable") or not ({"type", "enum"} & set(schema)):
            return out
        return ["%s: null, expected %s" % (where, schema.get("type", "enum"))]
    t = schema.get("type")
    if t and not type_ok(t, v):
        return ["%s: %s, expected %s" % (where, json.dumps(v)[:60], t)]
    if "enum" in schema and not any(same(v, e) for e in schema["enum"]):
        out.append("%s: %s is not one of %s" % (where, json.dumps(v)[:60],
                                                 schema["enum"]))
    if isinstance(v, str):
        if len(v) < schema.get("minLength", 0):
            out.append("%s: shorter than %d" % (where, schema["minLength"]))
        if "maxLength" in schema and len(v) > schema["maxLength"]:
            out.append("%s: longer than %d" % (where, schema["maxLength"]))
        if "pattern" in schema and not re.search(schema["pattern"], v):
            out.append("%s: %s does not match %s" %
                       (where, json.dumps(v)[:60], schema["pattern"]))
    if type_ok("number", v):
        lo, hi = schema.get("minimum"), schema.get("maximum")
        if lo is not None and (v < lo or (schema.get("exclusiveMinimum")
                                          and v == lo)):
            out.append("%s: %s below the minimum %s" % (where, v, lo))
        if hi is not None and (v > hi or (schema.get("exclusiveMaximum")
                                          and v == hi)):
            out.append("%s: %s above the maximum %s" % (where, v, hi))
    if isinstance(v, list):
        if len(v) < schema.get("minItems", 0):
            out.append("%s: fewer than %d items" % (where, schema["minItems"]))
        if "maxItems" in schema and len(v) > schema["maxItems"]:
            out.append("%s: more than %d items" % (where, schema["maxItems"]))
        if schema.get("uniqueItems"):
            texts = [json.dumps(x, sort_keys=True) for x in v]
            if len(set(texts)) != len(texts):
                out.append("%s: items not unique" % where)
        if "items" in schema:
            for i, x in enumerate(v):
                out += validate(doc, schema["items"], x, "%s[%d]" % (where, i))
    if isinstance(v, dict):
        props = schema.get("properties", {})
        for k in schema.get("required", []):
            if k not in v:
                out.append("%s: %s is missing" % (where, k))
        if len(v) < schema.get("minProperties", 0):
            out.append("%s: fewer than %d fields" %
                       (where, schema["minProperties"]))
        if "maxProperties" in schema and len(v) > schema["maxProperties"]:
            out.append("%s: more than %d fields" %
                       (where, schema["maxProperties"]))
        extra = schema.get("additionalProperties", True)
        for k, x in v.items():
            if k in props:
                out += validate(doc, props[k], x, "%s.%s" % (where, k))
            elif extra is False:
                out.append("%s.%s: a field the schema does not have" %
                           (where, k))
            elif isinstance(extra, dict):
                out += validate(doc, extra, x, "%s.%s" % (where, k))
    for sub in schema.get("allOf", []):
        out += validate(doc, sub, v, where)
    if "anyOf" in schema:
        if all(validate(doc, sub, v, where) for sub in schema["anyOf"]):
            out.append("%s: fits none of anyOf" % where)
    if "oneOf" in schema:
        n = sum(1 for sub in schema["oneOf"]
                if not validate(doc, sub, v, where))
        if n != 1:
            errs = [validate(doc, sub, v, where) for sub in schema["oneOf"]]
            out.append("%s: fits %d of oneOf (exactly one wanted): %s" %
                       (where, n, "; ".join(e[0] for e in errs if e)))
    return out


# ---- 1. the file's structure --------------------------------------------


def operations(doc):
    """(path, method, operation) for every operation of the file."""
    for path, item in doc.get("paths", {}).items():
        for m in HTTP_METHODS:
            if m in item:
                yield path, m, item[m]


def check_schema_keywords(doc, schema, where):
    """Only keywords the validator knows, types of OpenAPI 3.0, required
    fields that exist where no others may."""
    if not isinstance(schema, dict):
        fail("%s: a schema that is not an object" % where)
        return
    if "$ref" in schema:
        if set(schema) - {"$ref"}:
            fail("%s: $ref with siblings (ignored in OpenAPI 3.0)" % where)
        return
    for k in schema:
        if k not in KEYWORDS and k not in ANNOTATIONS:
            fail("%s: keyword %s is not checked by this test" % (where, k))
    if "type" in schema and schema["type"] not in TYPES:
        fail("%s: type %r is not an OpenAPI 3.0 type" %
             (where, schema["type"]))
    props = schema.get("properties", {})
    if schema.get("additionalProperties") is False:
        for r in schema.get("required", []):
            if r not in props:
                fail("%s: required %s is not among its properties" %
                     (where, r))
    for k, sub in props.items():
        check_schema_keywords(doc, sub, "%s.%s" % (where, k))
    for k in ("items", "additionalProperties"):
        if isinstance(schema.get(k), dict):
            check_schema_keywords(doc, schema[k], "%s.%s" % (where, k))
    for k in ("allOf", "anyOf", "oneOf"):
        for i, sub in enumerate(schema.get(k, [])):
            check_schema_keywords(doc, sub, "%s.%s[%d]" % (where, k, i))


def check_structure(doc):
    if not str(doc.get("openapi", "")).startswith("3.0."):
        fail("openapi is %r, expected 3.0.x" % doc.get("openapi"))
    for k in ("title", "version"):
        if not doc.get("info", {}).get(k):
            fail("info.%s is missing" % k)

    def walk(node, where):
        if isinstance(node, dict):
            if "$ref" in node and pointer(doc, node["$ref"]) is None:
                fail("%s: $ref %s does not resolve" % (where, node["$ref"]))
            for k, v in node.items():
                walk(v, where + "/" + k)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, "%s/%d" % (where, i))
    walk(doc, "#")

    for name, s in doc.get("components", {}).get("schemas", {}).items():
        check_schema_keywords(doc, s, "schemas." + name)
    seen = {}
    for path, m, op in operations(doc):
        where = "%s %s" % (m.upper(), path)
        oid = op.get("operationId")
        if not oid:
            fail(where + ": no operationId")
        elif oid in seen:
            fail("%s: operationId %s is also %s's" % (where, oid, seen[oid]))
        else:
            seen[oid] = where
        if not op.get("responses"):
            fail(where + ": no responses")
        for code, resp in op.get("responses", {}).items():
            if not re.fullmatch(r"[1-5][0-9][0-9]|[1-5]XX|default", code):
                fail("%s: response %r is not a status" % (where, code))
            resp = deref(doc, resp) or {}
            if not resp.get("description"):
                fail("%s %s: no description" % (where, code))
            for mt, media in resp.get("content", {}).items():
                check_schema_keywords(doc, media.get("schema", {}),
                                      "%s %s %s" % (where, code, mt))
        body = deref(doc, op.get("requestBody"))
        for mt, media in (body or {}).get("content", {}).items():
            check_schema_keywords(doc, media.get("schema", {}),
                                  "%s body %s" % (where, mt))
        params = [deref(doc, p) or {} for p in
                  doc["paths"][path].get("parameters", []) +
                  op.get("parameters", [])]
        in_path = {p.get("name") for p in params if p.get("in") == "path"}
        templ = set(re.findall(r"\{([^}]+)\}", path))
        if in_path != templ:
            fail("%s: path parameters %s, the template has %s" %
                 (where, sorted(in_path), sorted(templ)))
        for p in params:
            if p.get("in") == "path" and not p.get("required"):
                fail("%s: path parameter %s is not required" %
                     (where, p.get("name")))
            if "schema" in p:
                check_schema_keywords(doc, p["schema"], "%s parameter %s" %
                                      (where, p.get("name")))
    return seen


# ---- 2. the file against the source -------------------------------------


def read(src, rel):
    with open(os.path.join(src, rel), encoding="utf-8") as f:
        return f.read()


def c_strings(text):
    """The C string literals of text, adjacent ones joined."""
    return "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', text))


def defines(src, files):
    out = {}
    for rel in files:
        for name, val in re.findall(r"^#define\s+(\w+)\s+([^\n]*)$",
                                    read(src, rel), re.M):
            val = re.sub(r"/\*.*?\*/", "", val).strip()
            if val:
                out[name] = val
    return out


def c_eval(expr, defs):
    """A constant expression of decode.c's tables, as a number."""
    for _ in range(10):
        expr = re.sub(r"\b([A-Z_][A-Z0-9_]*)\b",
                      lambda m: "(%s)" % defs.get(m.group(1), m.group(1)),
                      expr)
    expr = re.sub(r"(\d)(?:[uU]?[lL]{1,2}|[uU])\b", r"\1", expr)
    if not re.fullmatch(r"[0-9eE.+\-*/<>() ]+", expr):
        raise ValueError("cannot evaluate %r" % expr)
    return eval(expr, {"__builtins__": {}})  # digits and operators only


def field_table(text, name, defs):
    m = re.search(r"static const struct field %s\[\] = \{(.*?)\n\};" % name,
                  text, re.S)
    if not m:
        fail("decode.c: no table %s" % name)
        return {}
    body = re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S)
    rows = {}
    for fname, kind, lo, hi in re.findall(
            r'\{"(\w+)",\s*(K_\w+),\s*([^,{}]+),\s*([^,{}]+)\}', body):
        rows[fname] = (kind, c_eval(lo, defs), c_eval(hi, defs))
    return rows


def known_list(text):
    """"known: a, b, c" as a set."""
    text = text.strip()
    if not text.startswith("known: "):
        fail("decode.c: a 'known:' list that reads %r" % text[:40])
        return set()
    return set(x.strip() for x in text[len("known: "):].split(","))


def check_field(where, kind, lo, hi, s, exclusive):
    got = {k: s.get(k) for k in ("type", "minimum", "maximum", "minLength",
                                 "maxLength", "minItems", "maxItems",
                                 "maxProperties")}
    want = {"K_STRING": {"type": "string", "minLength": lo, "maxLength": hi},
            "K_NAME": {"type": "string", "minLength": 1, "maxLength": hi},
            "K_INTEGER": {"type": "integer", "minimum": lo, "maximum": hi},
            "K_NUMBER": {"type": "number", "minimum": lo, "maximum": hi},
            "K_BOOL": {"type": "boolean"},
            "K_ARGS": {"type": "array", "minItems": lo, "maxItems": hi},
            "K_ENV": {"type": "object", "maxProperties": hi}}.get(kind)
    if want is None:
        fail("%s: decode.c kind %s is not known to this test" % (where, kind))
        return
    for k, v in want.items():
        g = got[k]
        if g is None and k in ("minLength", "minItems") and v == 0:
            continue
        if g is None or (k != "type" and float(g) != float(v)) or \
                (k == "type" and g != v):
            fail("%s: decode.c says %s %s, the file %s" % (where, k, v, g))
    if kind == "K_NUMBER" and bool(s.get("exclusiveMinimum")) != exclusive:
        fail("%s: exclusiveMinimum should be %s (decode.c)" %
             (where, exclusive))
    if kind == "K_ARGS" and (s.get("items") or {}).get("type", "string") != \
            "string" and "$ref" not in (s.get("items") or {}):
        fail("%s: items should be strings" % where)
    if kind == "K_ENV" and (s.get("additionalProperties") or {}).get(
            "type") != "string":
        fail("%s: values should be strings" % where)


def check_source(doc, src):
    schemas = doc["components"]["schemas"]
    api = read(src, "src/daemon/api.c")
    dec = read(src, "src/daemon/decode.c")
    defs = defines(src, ["src/daemon/decode.h", "src/daemon/decode.c",
                         "include/gpupool/cluster.h", "src/trace/tenants.h",
                         "src/daemon/api.c", "src/daemon/http.h"])

    # routes: strcmp(p, "/v1/x") exact, strncmp(p, "/v1/x/", n) a prefix
    # with a name or id after it; job_path's rest ("events", ...)
    served = set()
    for lit in re.findall(r'strcmp\(\s*p\s*,\s*"(/[^"]*)"\s*\)', api):
        served.add(lit)
    prefixes = re.findall(r'strncmp\(\s*(?:p|path)\s*,\s*"(/[^"]*/)"', api)
    rests = set(re.findall(r'strcmp\(\s*rest\s*,\s*"([^"]+)"\s*\)', api))
    for pre in prefixes:
        served.add(pre + "{}")
        if pre == "/v1/jobs/":
            served |= {pre + "{}/" + r for r in rests}
    if not served or "/v1/jobs/" not in prefixes:
        fail("api.c: could not read its routes (the dispatcher changed?)")
    in_file = {re.sub(r"\{[^}]+\}", "{}", p) for p in doc["paths"]}
    for r in sorted(served - in_file):
        fail("api.c serves %s; the file does not have it" % r)
    for r in sorted(in_file - served):
        fail("the file has %s; api.c does not serve it" % r)

    # request fields: decode.c's tables and "known:" lists
    jobs = field_table(dec, "job_fields", defs)
    tens = field_table(dec, "tenant_fields", defs)
    m = re.search(r"static const char job_known\[\] =(.*?);", dec, re.S)
    job_known = known_list(c_strings(m.group(1))) if m else set()
    m = re.search(r"const char \*known = create \?(.*?):(\s*\".*?);", dec,
                  re.S)
    create_known = known_list(c_strings(m.group(1))) if m else set()
    patch_known = known_list(c_strings(m.group(2))) if m else set()
    exclusive = set(re.findall(
        r'strcmp\(fd->name, "(\w+)"\) == 0 &&\s*json_number_value\(v\) <= 0',
        dec))
    for what, table, known, sname in (
            ("job", jobs, job_known, "JobSpec"),
            ("tenant (create)", tens, create_known, "TenantCreate"),
            ("tenant (change)", {k: v for k, v in tens.items()
                                 if k in patch_known}, patch_known,
             "TenantPatch")):
        s = schemas.get(sname, {})
        props = s.get("properties", {})
        if set(table) != known:
            fail("decode.c: the %s table %s and its known list %s differ" %
                 (what, sorted(table), sorted(known)))
        for f in sorted(set(table) - set(props)):
            fail("decode.c takes %s.%s; schema %s does not have it" %
                 (what, f, sname))
        for f in sorted(set(props) - set(table)):
            fail("schema %s has %s; decode.c does not take it" % (sname, f))
        if s.get("additionalProperties") is not False:
            fail("schema %s: additionalProperties should be false "
                 "(decode.c refuses unknown fields)" % sname)
        for f, (kind, lo, hi) in table.items():
            if f in props:
                check_field("%s.%s" % (sname, f), kind, lo, hi,
                            deref(doc, props[f]), f in exclusive)
    if schemas.get("JobSpec", {}).get("required") != ["command"]:
        fail("JobSpec: required should be [command] (decode.c)")
    if schemas.get("TenantCreate", {}).get("required") != ["name"]:
        fail("TenantCreate: required should be [name] (decode.c)")
    if schemas.get("TenantPatch", {}).get("minProperties") != 1:
        fail("TenantPatch: minProperties should be 1 (a PATCH must change "
             "something)")
    batch = schemas.get("JobBatch", {}).get("properties", {}).get("jobs", {})
    if batch.get("maxItems") != c_eval("GP_API_MAX_BATCH", defs):
        fail("JobBatch.jobs.maxItems is not GP_API_MAX_BATCH")
    if schemas.get("PolicyOptions", {}).get("maxProperties") != \
            c_eval("GP_API_MAX_OPTIONS", defs):
        fail("PolicyOptions.maxProperties is not GP_API_MAX_OPTIONS")

    # the list's query arguments and its limit
    list_op = doc["paths"].get("/v1/jobs", {}).get("get", {})
    qs = {p["name"]: p for p in (deref(doc, x) for x in
                                 list_op.get("parameters", []))
          if p.get("in") == "query"}
    args = set(re.findall(r'gp_http_arg\(\s*r\s*,\s*"(\w+)"\s*\)', api))
    # yes/no arguments are read through flag_arg(r, "name", ...)
    args |= set(re.findall(r'flag_arg\(\s*r\s*,\s*"(\w+)"', api))
    if set(qs) != args:
        fail("query arguments: api.c reads %s, the file has %s" %
             (sorted(args), sorted(qs)))
    lim = (qs.get("limit") or {}).get("schema", {})
    if lim.get("maximum") != c_eval("MAX_LIST", defs):
        fail("listJobs limit: maximum is not MAX_LIST")

    # job states and error names
    m = re.search(r"state_names\[\] = \{(.*?)\};", read(src, "src/core/job.c"),
                  re.S)
    states = re.findall(r'"(\w+)"', m.group(1)) if m else []
    if states != schemas.get("JobState", {}).get("enum"):
        fail("JobState: src/core/job.c has %s, the file %s" %
             (states, schemas.get("JobState", {}).get("enum")))
    names = set(re.findall(r"X\(([A-Z]+),",
                           read(src, "include/gpupool/err.h")))
    names |= set(re.findall(r'error\(\s*status\s*,\s*[^,]+,\s*"([A-Z]+)"',
                            api))
    http_c = read(src, "src/daemon/http.c")
    serve_c = read(src, "src/daemon/serve.c")
    names |= set(re.findall(r'respond_error\(c,\s*\d+,\s*"([A-Z]+)"', http_c))
    names |= set(re.findall(r'\\"error\\":\\"([A-Z]+)\\"', http_c + serve_c))
    names |= set(re.findall(r'"error",\s*"([A-Z]+)"', serve_c))
    enum = set(schemas.get("Error", {}).get("properties", {})
               .get("error", {}).get("enum", []))
    for n in sorted(names - enum):
        fail("error name %s is emitted; Error.error's enum lacks it" % n)
    for n in sorted(enum - names):
        fail("Error.error's enum has %s; nothing emits it" % n)


# ---- 3. a live daemon ---------------------------------------------------


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout):
        super().__init__("localhost", timeout=timeout)
        self.unix_path = path

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        s.connect(self.unix_path)
        self.sock = s


class Live:
    def __init__(self, doc, sock, port):
        self.doc = doc
        self.sock = sock
        self.port = port
        self.covered = set()
        self.requests = 0
        self.routes = []
        for path, m, op in operations(doc):
            rx = "^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(path)) + "$"
            self.routes.append((re.compile(rx), m.upper(), op, path))

    def raw(self, method, path, body=None, token=None, tcp=False):
        """(status, content type, bytes) of one request."""
        if tcp:
            c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        else:
            c = UnixConnection(self.sock, 30)
        headers = {}
        if body is not None:
            if not isinstance(body, bytes):
                body = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if token:
            headers["Authorization"] = "Bearer " + token
        try:
            c.request(method, path, body=body, headers=headers)
            r = c.getresponse()
            return r.status, r.getheader("Content-Type", ""), r.read()
        finally:
            c.close()

    def operation(self, method, path):
        bare = path.split("?")[0]
        for rx, m, op, templ in self.routes:
            if m == method and rx.match(bare):
                return op, templ
        return None, None

    def call(self, method, path, body=None, want=None, valid=None,
             token=None, tcp=False):
        """One request, its reply checked against the file. want: the
        statuses expected; valid: whether the file's request schema must
        take (True) or refuse (False) the body. Returns (status, JSON)."""
        label = "%s %s%s" % (method, path, " (TCP)" if tcp else "")
        op, templ = self.operation(method, path)
        if op is None:
            fail("%s: no operation of the file matches" % label)
            return None, None
        rb = deref(self.doc, op.get("requestBody"))
        if rb and body is not None and valid is not None and \
                not isinstance(body, bytes):
            errs = validate(self.doc, rb["content"]["application/json"]
                            ["schema"], body, "body")
            if valid and errs:
                fail("%s: the file's request schema refuses a body the "
                     "server must take: %s" % (label, errs[0]))
            if not valid and not errs:
                fail("%s: the file's request schema takes a body the "
                     "server must refuse: %s" % (label,
                                                  json.dumps(body)[:120]))
        status, ctype, data = self.raw(method, path, body, token, tcp)
        self.requests += 1
        self.covered.add(op["operationId"])
        resp = op["responses"].get(str(status))
        if resp is None:
            fail("%s: status %d is not among %s's responses %s (%s)" %
                 (label, status, op["operationId"], sorted(op["responses"]),
                  data[:200]))
            return status, None
        if want is not None and status not in want:
            fail("%s: status %d, expected %s: %s" % (label, status,
                                                     sorted(want), data[:300]))
        resp = deref(self.doc, resp)
        content = resp.get("content", {})
        media = {k.split(";")[0].strip(): v for k, v in content.items()}
        mt = ctype.split(";")[0].strip()
        if mt not in media:
            fail("%s: content type %r, the file has %s" %
                 (label, ctype, sorted(content)))
            return status, None
        if mt != "application/json":
            return status, data.decode("utf-8", "replace")
        try:
            value = json.loads(data)
        except ValueError as e:
            fail("%s: not JSON (%s): %s" % (label, e, data[:200]))
            return status, None
        errs = validate(self.doc, media[mt].get("schema", {}), value)
        for e in errs[:10]:
            fail("%s -> %d: %s" % (label, status, e))
        if status in (404, 405) and isinstance(value, dict) and (
                str(value.get("message", "")).startswith("no route") or
                ": use " in str(value.get("message", ""))):
            fail("%s: the file has it (%s) but the daemon does not serve "
                 "it: %s" % (label, templ, value.get("message")))
        return status, value


def sample_string(s, n):
    """A string of n characters that fits s's pattern, if one of these
    does."""
    for cand in ("a" * n, "/" + "a" * (n - 1), "u" + "1" * (n - 1)):
        if len(cand) == n and ("pattern" not in s or
                               re.search(s["pattern"], cand)):
            return cand
    return "a" * n


def probes(doc, s):
    """For one property schema: (values it takes, values it refuses),
    from its bounds and its type."""
    t = s.get("type")
    good, bad = [], []
    if t == "integer":
        if "minimum" in s:
            good.append(s["minimum"])
            bad.append(s["minimum"] - 1)
        if "maximum" in s:
            good.append(s["maximum"])
            bad.append(s["maximum"] + 1)
        bad += ["1", 1.5]
    elif t == "number":
        if "minimum" in s:
            if s.get("exclusiveMinimum"):
                good.append(s["minimum"] + 0.5)
                bad.append(s["minimum"])
            else:
                good.append(s["minimum"])
            bad.append(s["minimum"] - 1)
        if "maximum" in s:
            good.append(s["maximum"])
            bad.append(s["maximum"] + 1)
        bad += ["1", True]
    elif t == "string":
        lo, hi = s.get("minLength", 0), s.get("maxLength")
        good.append(sample_string(s, max(lo, 1)))
        if lo > 0:
            bad.append("")
        else:
            good.append("")
        if hi is not None:
            good.append(sample_string(s, hi))
            bad.append(sample_string(s, hi + 1))
        for c in ("a", "a\u0001", "/a\u0001", "\u007f"):
            if validate(doc, s, c) and len(c) >= lo:
                bad.append(c)
        bad.append(1)
    elif t == "boolean":
        good += [True, False]
        bad += ["true", 1]
    elif t == "array":
        items = deref(doc, s.get("items", {})) or {}
        lo, hi = s.get("minItems", 0), s.get("maxItems")

        def arr(n):
            if s.get("uniqueItems"):
                return ["u%d" % i for i in range(n)]
            return [sample_string(items, 1)] * n
        good.append(arr(max(lo, 1)))
        if lo > 0:
            bad.append([])
        if hi is not None:
            good.append(arr(hi))
            bad.append(arr(hi + 1))
        if s.get("uniqueItems"):
            bad.append(["u1", "u1"])
        bad += ["x", [1]]
    elif t == "object":
        hi = s.get("maxProperties")
        good.append({"V": "x"})
        if hi is not None:
            good.append({"V%d" % i: "x" for i in range(hi)})
            bad.append({"V%d" % i: "x" for i in range(hi + 1)})
        bad += [[], {"V": 1}]
    return good, bad


def check_limits(live, method, path, schema_name, base):
    """Every property of a request schema at its bounds (the decoder takes
    it: the unknown field after it is what it names) and past them (400
    naming the property)."""
    doc = live.doc
    s = doc["components"]["schemas"][schema_name]
    for name, ps in s["properties"].items():
        ps = deref(doc, ps)
        good, bad = probes(doc, ps)
        for v in good:
            body = dict(base)
            body.pop(name, None)
            body[name] = v
            body[SENTINEL] = 1
            if validate(doc, ps, v):
                fail("%s.%s: the test's own good value %s does not fit" %
                     (schema_name, name, json.dumps(v)[:60]))
            st, r = live.call(method, path, body, {400}, valid=False)
            if isinstance(r, dict) and r.get("field") != SENTINEL:
                fail("%s %s: %s = %s at its bound is refused: %s" %
                     (method, path, name, json.dumps(v)[:60],
                      r.get("message")))
        for v in bad:
            body = dict(base)
            body.pop(name, None)
            body[name] = v
            st, r = live.call(method, path, body, {400}, valid=False)
            if isinstance(r, dict) and st == 400 and not (
                    r.get("field") == name or
                    str(r.get("field", "")).startswith(name + "[")):
                fail("%s %s: %s = %s: refused naming %r, not %s" %
                     (method, path, name, json.dumps(v)[:60],
                      r.get("field"), name))
    st, r = live.call(method, path, dict(base, **{SENTINEL: 1}), {400},
                      valid=False)
    if isinstance(r, dict) and r.get("field") != SENTINEL:
        fail("%s %s: an unknown field is refused naming %r" %
             (method, path, r.get("field")))


def wait_job(live, jid, states, seconds=30):
    end = time.time() + seconds
    state = None
    while time.time() < end:
        st, j = live.call("GET", "/v1/jobs/%d" % jid, want={200})
        state = j.get("state") if isinstance(j, dict) else None
        if state in states:
            return j
        time.sleep(0.1)
    fail("job %d is %s, expected one of %s" % (jid, state, sorted(states)))
    return None


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def run_live(doc, exe, tmp, held):
    sock = os.path.join(tmp, "gp.sock")
    port = free_port()
    tokens = os.path.join(tmp, "tokens")
    fd = os.open(tokens, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.close(fd)
    # a token of another user, not an admin, for the 403s
    other = None
    for name in ("nobody", "daemon", "bin"):
        try:
            pw = pwd.getpwnam(name)
        except KeyError:
            continue
        if pw.pw_uid in (0, os.geteuid()):
            continue
        r = subprocess.run([exe, "token", "new", name, "--json"],
                           capture_output=True, text=True)
        if r.returncode == 0:
            t = json.loads(r.stdout)
            other = t["token"]
            with open(tokens, "a") as f:
                f.write(t["line"] + "\n")
            break
    if other is None:
        print("note: no other user to make a token for; the 403s are not "
              "tried")
    log = open(os.path.join(tmp, "daemon.log"), "w")
    proc = subprocess.Popen(
        [exe, "serve", "--set", "server.state_dir=" + tmp,
         "--set", "server.socket=" + sock, "--set", "backend.gpus=4",
         "--set", "monitor.period=1s", "--set", "backend.kill_after=2s",
         "--set", "server.listen=127.0.0.1:%d" % port,
         "--set", "server.tls=off", "--set", "server.tokens_file=" + tokens],
        stdout=log, stderr=subprocess.STDOUT, cwd=tmp)
    held.append(proc)
    try:
        live = Live(doc, sock, port)
        for _ in range(300):
            if proc.poll() is not None:
                break
            try:
                if live.raw("GET", "/v1/health")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.1)
        else:
            proc.poll()
        if proc.returncode is not None or not os.path.exists(sock):
            fail("the daemon did not come up")
            return
        try:
            live_checks(live, tmp, other)
        except (OSError, http.client.HTTPException) as e:
            fail("the daemon stopped answering: %r" % e)
            return
        # a clean stop
        proc.send_signal(signal.SIGTERM)
        try:
            rc = proc.wait(20)
            if rc != 0:
                fail("SIGTERM: the daemon exited %d" % rc)
        except subprocess.TimeoutExpired:
            fail("SIGTERM: the daemon did not stop in 20 s")
    finally:
        log.close()
        if failures:
            with open(os.path.join(tmp, "daemon.log")) as f:
                print("--- daemon log (last lines)")
                print("".join(f.readlines()[-30:]))


def live_checks(live, tmp, other):
    doc = live.doc
    call = live.call

    call("GET", "/v1/health", want={200})
    call("GET", "/v1/health", want={200}, tcp=True)

    # submit one, its retry by client_id, and see it end
    spec = {"command": ["true"], "name": "openapi-true", "cwd": tmp,
            "env": {"OPENAPI_TEST": "1"}, "tenant": "default", "gpus": 1,
            "priority": 5, "checkpointable": False, "time_limit_s": 60.5,
            "slo_s": 3600, "client_id": "openapi-1"}
    st, j = call("POST", "/v1/jobs", spec, {201}, valid=True)
    if not isinstance(j, dict) or "id" not in j:
        fail("submit: no job in the answer; the live checks stop here")
        return
    if j.get("slo_s") != 3600:
        fail("submit: slo_s %r in the answer, expected 3600" % j.get("slo_s"))
    call("POST", "/v1/jobs", dict(spec, slo_s=-1, client_id="openapi-bad"),
         {400})
    done = j["id"]
    st, again = call("POST", "/v1/jobs", spec, {200}, valid=True)
    if isinstance(again, dict) and again.get("id") != done:
        fail("submit with the same client_id made job %s, not %s again" %
             (again.get("id"), done))
    wait_job(live, done, {"completed"})
    call("GET", "/v1/jobs/%d/events" % done, want={200})
    call("GET", "/v1/jobs/%d/why" % done, want={200})

    # a batch of two that cannot both run on 4 GPUs: one runs, one waits
    batch = {"jobs": [
        {"command": ["sleep", "29"], "gpus": 4, "cwd": tmp},
        {"command": ["sleep", "29"], "gpus": 1, "cwd": tmp,
         "checkpointable": True}]}
    st, b = call("POST", "/v1/jobs", batch, {201}, valid=True)
    ids = [x["id"] for x in (b or {}).get("jobs", []) if "id" in x]
    if len(ids) != 2:
        fail("batch: %d jobs in the answer, expected 2" % len(ids))
        return
    running = waiting = None
    end = time.time() + 30
    while time.time() < end and running is None:
        jobs = {}
        for jid in ids:
            st, j = call("GET", "/v1/jobs/%d" % jid, want={200})
            jobs[jid] = j if isinstance(j, dict) else {}
        for jid in ids:
            other_id = ids[1 - ids.index(jid)]
            if jobs[jid].get("state") == "running" and \
                    jobs[other_id].get("state") == "pending":
                running, waiting = jid, other_id
        time.sleep(0.1)
    if running is None:
        fail("batch: never one job running and the other waiting")
        return
    st, w = call("GET", "/v1/jobs/%d/why" % waiting, want={200})
    if isinstance(w, dict) and "position" not in w:
        fail("why of a waiting job: no position")
    call("GET", "/v1/jobs/%d/why" % running, want={200})

    # lists and their filters
    call("GET", "/v1/jobs", want={200})
    st, page = call("GET", "/v1/jobs?all=1&limit=1", want={200})
    if isinstance(page, dict):
        if "next_after" not in page:
            fail("a full page (limit=1) has no next_after")
        else:
            call("GET", "/v1/jobs?all=1&limit=1&after=%d" %
                 page["next_after"], want={200})
    call("GET", "/v1/jobs?ended=1", want={200})
    call("GET", "/v1/jobs?state=completed&tenant=default", want={200})
    call("GET", "/v1/jobs?state=pending&user=nobody-at-all", want={200})
    call("GET", "/v1/jobs?limit=0", want={400})
    call("GET", "/v1/jobs?after=x", want={400})
    st, r = call("GET", "/v1/jobs?" + "&".join("a%d=1" % i for i in range(40)),
                 want={400})
    if isinstance(r, dict) and r.get("field") != "query":
        fail("too many query arguments: refused naming %r" % r.get("field"))

    # the cluster
    call("GET", "/v1/tenants", want={200})
    call("GET", "/v1/ledger", want={200})
    for _ in range(50):  # the monitor's first sample: every field shown
        st, n = call("GET", "/v1/nodes", want={200})
        gpus = ((n or {}).get("nodes") or [{}])[0].get("gpus") or [{}]
        if "sampled" in gpus[0]:
            break
        time.sleep(0.1)
    call("GET", "/v1/policy", want={200})
    st, text = call("GET", "/metrics", want={200})
    if isinstance(text, str) and "gpupool_up 1" not in text:
        fail("/metrics: no gpupool_up 1")

    # admins: tenants and the policy's options
    tenant = {"name": "openapi-t", "weight": 2.5, "guarantee": 1, "cap": 2,
              "lend_limit": 1, "users": ["*"]}
    call("POST", "/v1/tenants", tenant, {201}, valid=True)
    call("POST", "/v1/tenants", tenant, {409}, valid=True)
    call("PATCH", "/v1/tenants/openapi-t", {"guarantee": 2, "users": ["root"]},
         {200}, valid=True)
    call("PATCH", "/v1/tenants/openapi-none", {"weight": 1}, {404},
         valid=True)
    call("PATCH", "/v1/tenants/openapi-t", {"name": "x"}, {400}, valid=False)
    call("PATCH", "/v1/tenants/openapi-t", {}, {400}, valid=False)
    call("POST", "/v1/tenants", {"name": "openapi-u", "guarantee": 1,
                                 "cap": 0, "lend_limit": 2}, {400},
         valid=True)  # a rule between fields: the schema cannot say it
    call("PUT", "/v1/policy/options", {"lifo": "0"}, {200, 409}, valid=True)
    call("PUT", "/v1/policy/options", {"lifo": "9"}, {400}, valid=True)
    call("PUT", "/v1/policy/options", {"lifo": ["0"]}, {400}, valid=False)
    call("PUT", "/v1/policy/options", {"lifo": "x" * 1025}, {400},
         valid=False)
    call("PUT", "/v1/policy/options",
         {"k%d" % i: "1" for i in range(65)}, {400}, valid=False)
    call("PUT", "/v1/policy/options", {"Bad Key": "1"}, {400})
    call("PUT", "/v1/policy/options", b"{", {400})

    # every bound of every request schema, against the decoder
    check_limits(live, "POST", "/v1/jobs", "JobSpec", {"command": ["true"]})
    check_limits(live, "POST", "/v1/tenants", "TenantCreate",
                 {"name": "openapi-probe"})
    check_limits(live, "PATCH", "/v1/tenants/openapi-t", "TenantPatch", {})
    for body, field in (({}, "command"), ([], "body"), (b"{", "body"),
                        ({"jobs": []}, "jobs"),
                        ({"jobs": [{"command": ["true"]}], "x": 1}, "jobs"),
                        ({"jobs": [{"command": ["true"]}] * 1001}, "jobs"),
                        ({"jobs": [{"command": ["true"]},
                                   {"command": ["true"], "gpus": 65}]},
                         "jobs[1].gpus")):
        st, r = call("POST", "/v1/jobs", body, {400},
                     valid=None if isinstance(body, bytes) else False)
        if isinstance(r, dict) and r.get("field") != field:
            fail("POST /v1/jobs %s: refused naming %r, not %s" %
                 (json.dumps(body)[:60] if not isinstance(body, bytes)
                  else body, r.get("field"), field))
    st, r = call("POST", "/v1/tenants", {"weight": 1}, {400}, valid=False)
    if isinstance(r, dict) and r.get("field") != "name":
        fail("POST /v1/tenants without name: refused naming %r" %
             r.get("field"))

    # errors
    st, r = call("POST", "/v1/jobs", {"command": ["true"], "bogus": 1}, {400},
                 valid=False)
    if isinstance(r, dict) and r.get("field") != "bogus":
        fail("unknown field: refused naming %r, not bogus" % r.get("field"))
    call("GET", "/v1/jobs/999999", want={404})
    call("GET", "/v1/jobs/999999/events", want={404})
    call("GET", "/v1/jobs/999999/why", want={404})
    call("POST", "/v1/jobs", {"command": ["true"], "gpus": 64}, {422},
         valid=True)
    call("POST", "/v1/jobs/%d/cancel" % done, want={409})
    call("DELETE", "/v1/jobs/999999", want={404})
    call("POST", "/v1/jobs", b" " * (1024 * 1024 + 16) + b"{}", {413})
    call("GET", "/v1/jobs", want={401}, tcp=True)
    call("GET", "/v1/jobs", want={401}, tcp=True, token="not-a-token")
    call("GET", "/metrics", want={401}, tcp=True)
    if other:
        call("GET", "/v1/jobs", want={200}, tcp=True, token=other)
        call("POST", "/v1/tenants", {"name": "openapi-v"}, {403}, tcp=True,
             token=other, valid=True)
        call("PATCH", "/v1/tenants/openapi-t", {"weight": 1}, {403},
             tcp=True, token=other, valid=True)
        call("PUT", "/v1/policy/options", {"lifo": "0"}, {403}, tcp=True,
             token=other, valid=True)
        call("POST", "/v1/jobs/%d/cancel" % running, want={403}, tcp=True,
             token=other)

    # cancel: the waiting one at once, the running one by SIGTERM
    st, r = call("DELETE", "/v1/jobs/%d" % waiting, want={200})
    if isinstance(r, dict) and r.get("state") != "cancelled":
        fail("a waiting job cancelled is %s, not cancelled at once" %
             r.get("state"))
    call("POST", "/v1/jobs/%d/cancel" % running, want={200})
    wait_job(live, waiting, {"cancelled"})
    wait_job(live, running, {"cancelled"})
    call("GET", "/v1/jobs/%d" % running, want={200})

    missing = {op["operationId"] for _, _, op in operations(doc)} - \
        live.covered
    for oid in sorted(missing):
        fail("operation %s was not called live (add it to this test)" % oid)
    print("live: %d requests, %d operations of %d" %
          (live.requests, len(live.covered & {op["operationId"] for _, _, op
                                              in operations(doc)}),
           len(list(operations(doc)))), flush=True)


def left_in(tmp):
    """The processes working in tmp or holding a file of it open: the
    daemon, the jobs, their supervisors."""
    def inside(link):
        return link == tmp or link.startswith(tmp + "/")
    found = []
    for p in os.listdir("/proc"):
        if not p.isdigit() or int(p) == os.getpid():
            continue
        try:
            links = [os.readlink("/proc/%s/cwd" % p)]
            fds = "/proc/%s/fd" % p
            links += [os.readlink(os.path.join(fds, fd))
                      for fd in os.listdir(fds)]
        except OSError:
            continue
        if any(inside(x) for x in links):
            found.append(int(p))
    return found


def kill_left_in(tmp):
    """Jobs outlive the daemon by design: kill what this test started."""
    for _ in range(30):
        pids = left_in(tmp)
        if not pids:
            return
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.1)


def main():
    src = sys.argv[2] if len(sys.argv) > 2 else \
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    exe = sys.argv[1] if len(sys.argv) > 1 else None
    try:
        with open(os.path.join(src, "docs", "openapi.json")) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print("FAIL: docs/openapi.json: %s" % e)
        return 1
    check_structure(doc)
    if failures:
        return 1
    check_source(doc, src)
    print("%s: the file and the source: %d failures" %
          ("ok" if not failures else "FAIL", len(failures)), flush=True)
    if not exe:
        print("skip: no gpupool given; the daemon was not tried")
        return 1 if failures else 77
    if not os.access(exe, os.X_OK):
        print("FAIL: %s is not an executable" % exe)
        return 1
    exe = os.path.abspath(exe)
    # meson's timeout sends SIGTERM: clean up on the way out all the same
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    tmp = os.path.realpath(tempfile.mkdtemp(prefix="gpupool-openapi."))
    held = []
    try:
        run_live(doc, exe, tmp, held)
    finally:
        for proc in held:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        kill_left_in(tmp)
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("%d failures" % len(failures))
        return 1
    print("ok: openapi")
    return 0


if __name__ == "__main__":
    sys.exit(main())
