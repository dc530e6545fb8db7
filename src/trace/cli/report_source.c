/* report_source: the source view's data (report_source.h says what and
 * why). The page draws it (report_assets/report.js, sourceView). */
#include "report_source.h"
#include "json.h"
#include "rundir.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum {
  MAX_MANIFEST_BYTES = 256 << 20,
  MAX_LISTED_FILES = 2000, /* files with time beyond these are counted, not listed */
};

/* ---- text ---- */

/* The whole file, up to max bytes: 0, or -1 with errno (EFBIG: larger). */
static int read_all(const char *path, size_t max, Buf *out) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  char chunk[65536];
  size_t got;
  while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
    if (out->len + got > max) {
      fclose(f);
      errno = EFBIG;
      return -1;
    }
    buf_add(out, chunk, got);
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    errno = EIO;
    return -1;
  }
  if (!out->s) buf_puts(out, ""); /* an empty file: still text */
  return 0;
}

static int count_lines(const Buf *t) {
  int n = 0;
  for (size_t i = 0; i < t->len; i++) n += t->s[i] == '\n';
  return n + (t->len && t->s[t->len - 1] != '\n');
}

/* "1:5" of the byte at pos in text */
static void line_col(const char *text, size_t pos, Buf *out) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < pos; i++)
    if (text[i] == '\n') line++, col = 1;
    else col++;
  buf_printf(out, "%zu:%zu", line, col);
}

/* A manifest path that stays inside the tree: relative, no "..". */
static bool safe_rel(const char *p) {
  if (!*p || *p == '/') return false;
  for (const char *c = p; *c;) {
    const char *e = strchr(c, '/');
    size_t n = e ? (size_t)(e - c) : strlen(c);
    if (n == 2 && c[0] == '.' && c[1] == '.') return false;
    if (!e) break;
    c = e + 1;
  }
  return true;
}

/* ---- the manifest's files, with the trace's times ---- */

typedef struct {
  const char *name, *kind;
  int l0, l1, o0, o1;   /* original lines, shadow lines */
  const RangeRow *row;  /* NULL: the name is not in the traces */
  int shared;           /* other ranges (anywhere) with the same name */
} SrcRange;

typedef struct {
  const char *rel;
  VEC(SrcRange) r;
  int64_t time;         /* time whose innermost instrumented range is one of its */
  bool timed;           /* a range of it ran */
  int max_l1, max_o1;
} SrcFile;

static int cmp_file(const void *a, const void *b) {
  const SrcFile *x = a, *y = b;
  if (x->time != y->time) return x->time > y->time ? -1 : 1;
  return strcmp(x->rel, y->rel);
}

static int jint(const cJSON *arr, int i) {
  const cJSON *v = cJSON_GetArrayItem(arr, i);
  return cJSON_IsNumber(v) && v->valuedouble >= 1 && v->valuedouble < 1e9 ? v->valueint : 0;
}

static const char *jstr(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Per file, the time whose innermost instrumented range is one of its
 * ranges: on each thread the ranges whose names the manifest has are
 * nested with a stack (as the summary nests them, other events ignored),
 * and each gets its duration less its instrumented children's, which goes
 * to its name's file (to each, for a name several files have). A file's
 * figures add up to the instrumented time, nothing counted twice: main()
 * in train.py holds only what it did outside Attention.forward when that
 * is in model/attn.py. Start/end ranges, outside the nesting, count whole. */
typedef struct {
  int64_t end, own;
  uint32_t name;
} Open;

static void add_time(SrcFile *f, const int64_t *head, const int64_t *next, const size_t *file_of, uint32_t name,
                     int64_t t) {
  for (int64_t c = head[name]; c >= 0; c = next[c]) f[file_of[c]].time += t;
}

static void file_times(const Model *m, SrcFile *f, size_t nf) {
  size_t nn = intern_count(&m->names);
  /* name id -> files: a chain through next[] (one entry per (name, file)) */
  int64_t *head = xmalloc((nn ? nn : 1) * sizeof *head);
  memset(head, 0xff, (nn ? nn : 1) * sizeof *head);
  VEC(int64_t) next = {0};
  VEC(size_t) file_of = {0};
  for (size_t i = 0; i < nf; i++)
    for (size_t k = 0; k < f[i].r.n; k++) {
      int64_t id = intern_find(&m->names, f[i].r.v[k].name, strlen(f[i].r.v[k].name));
      if (id < 0) continue;
      bool dup = false;
      for (int64_t c = head[id]; c >= 0 && !dup; c = next.v[c]) dup = file_of.v[c] == i;
      if (dup) continue;
      vec_push(&next, head[id]);
      vec_push(&file_of, i);
      head[id] = (int64_t)file_of.n - 1;
    }
  VEC(Open) st = {0};
  for (size_t ti = 0; ti < m->traces.n; ti++) {
    const Trace *t = m->traces.v[ti];
    VEC(uint32_t) idx = {0};
    for (size_t i = 0; i < t->ev.n; i++)
      if (kind_is_cpu_range(t->ev.v[i].kind) && head[t->ev.v[i].name] >= 0) vec_push(&idx, (uint32_t)i);
    trace_sort_by_thread(t, idx.v, idx.n);
    st.n = 0;
    for (size_t k = 0; k <= idx.n; k++) {
      const Ev *e = k < idx.n ? &t->ev.v[idx.v[k]] : NULL;
      if (e && (e->flags & EV_ASYNC)) {
        add_time(f, head, next.v, file_of.v, e->name, e->dur);
        continue;
      }
      bool new_thread = !e || (k > 0 && t->ev.v[idx.v[k - 1]].thread != e->thread);
      while (st.n && (new_thread || st.v[st.n - 1].end <= e->ts)) {
        Open o = st.v[--st.n];
        add_time(f, head, next.v, file_of.v, o.name, o.own);
      }
      if (!e) break;
      int64_t end = e->ts + e->dur;
      if (st.n && end > st.v[st.n - 1].end) end = st.v[st.n - 1].end;
      if (st.n) st.v[st.n - 1].own -= end - e->ts;
      Open o = {end, end - e->ts, e->name};
      vec_push(&st, o);
    }
    vec_free(&idx);
  }
  vec_free(&st);
  free(head);
  vec_free(&next);
  vec_free(&file_of);
}

/* ---- the page's data ---- */

static void note(Buf *notes, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(Buf *notes, const char *fmt, ...) {
  Buf t = {0};
  va_list ap;
  va_start(ap, fmt);
  buf_vprintf(&t, fmt, ap);
  va_end(ap);
  if (notes->len) buf_putc(notes, ',');
  json_script_strn(notes, t.s, t.len);
  buf_free(&t);
}

static void range_json(Buf *b, const SrcRange *r, bool orig, bool first) {
  buf_puts(b, first ? "[" : ",[");
  json_script_str(b, r->name);
  buf_putc(b, ',');
  json_script_str(b, r->kind);
  const RangeRow *w = r->row;
  buf_printf(b, ",%d,%d,%llu,%lld,%lld,%lld,%d]", orig ? r->l0 : r->o0, orig ? r->l1 : r->o1,
             (unsigned long long)(w ? w->count : 0), (long long)(w ? w->incl : 0), (long long)(w ? w->excl : 0),
             (long long)(w ? w->gpu : 0), r->shared);
}

typedef VEC(SrcFile) SrcFiles;

/* The manifest's "files" array (man holds the document; text its bytes),
 * or NULL with the reason warned and noted. */
static const cJSON *manifest_files(const char *mpath, Buf *text, cJSON **man, Buf *notes) {
  if (read_all(mpath, MAX_MANIFEST_BYTES, text) < 0) {
    const char *why = strerror(errno);
    nct_warning("report: no source view: %s: %s", mpath, why);
    note(notes, "No source view: %s could not be read (%s). `nctrace report --shadow DIR` reads the manifest of "
                "another copy of the shadow tree.", mpath, why);
    return NULL;
  }
  const char *end = NULL;
  *man = cJSON_ParseWithLengthOpts(text->s, text->len, &end, 0);
  const cJSON *files = cJSON_GetObjectItemCaseSensitive(*man, "files");
  if (*man && cJSON_IsArray(files)) return files;
  Buf where = {0};
  if (!*man) line_col(text->s, end && end >= text->s && end <= text->s + text->len ? (size_t)(end - text->s) : 0, &where);
  nct_warning("report: no source view: %s%s%s: %s", mpath, *man ? "" : ":", *man ? "" : where.s,
              *man ? "no \"files\" array" : "not valid JSON");
  note(notes, "No source view: %s%s%s is not a manifest ncrewrite wrote (%s).", mpath, *man ? "" : ":",
       *man ? "" : where.s, *man ? "no \"files\" array" : "not valid JSON");
  buf_free(&where);
  return NULL;
}

/* Names shared by several ranges: their time is the name's, not the place's. */
static void mark_shared(SrcFile *fs, size_t n) {
  Intern seen = {0};
  VEC(int) uses = {0};
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < fs[i].r.n; k++) {
      uint32_t id = intern(&seen, fs[i].r.v[k].name, strlen(fs[i].r.v[k].name));
      if (id == uses.n) vec_push(&uses, 0);
      uses.v[id]++;
    }
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < fs[i].r.n; k++) {
      SrcRange *x = &fs[i].r.v[k];
      x->shared = uses.v[intern_find(&seen, x->name, strlen(x->name))] - 1;
    }
  intern_free(&seen);
  vec_free(&uses);
}

/* The manifest's files with ranges, each range with its row in the
 * summary; files whose path leaves the tree are left out (noted). Returns
 * the number of ranges. */
static size_t collect_files(const Model *m, const Summary *s, const cJSON *files, SrcFiles *fs, Buf *notes) {
  int64_t *row_of = xmalloc((intern_count(&m->names) + 1) * sizeof *row_of);
  memset(row_of, 0xff, (intern_count(&m->names) + 1) * sizeof *row_of);
  for (size_t i = 0; i < s->ranges.n; i++)
    if (s->ranges.v[i].merged <= 1) row_of[s->ranges.v[i].name] = (int64_t)i;
  size_t unsafe = 0, nranges = 0;
  const cJSON *f;
  cJSON_ArrayForEach(f, files) {
    const char *rel = jstr(f, "path");
    const cJSON *ranges = cJSON_GetObjectItemCaseSensitive(f, "ranges"), *r;
    if (!rel || !cJSON_IsArray(ranges) || !cJSON_GetArraySize(ranges)) continue;
    if (!safe_rel(rel)) {
      unsafe++;
      continue;
    }
    SrcFile sf = {rel, {0}, 0, false, 0, 0};
    cJSON_ArrayForEach(r, ranges) {
      const char *nm = jstr(r, "name");
      const cJSON *ln = cJSON_GetObjectItemCaseSensitive(r, "lines"), *ol = cJSON_GetObjectItemCaseSensitive(r, "out_lines");
      SrcRange x = {nm, jstr(r, "kind"), jint(ln, 0), jint(ln, 1), jint(ol, 0), jint(ol, 1), NULL, 0};
      if (!nm || !x.l0 || x.l1 < x.l0 || !x.o0 || x.o1 < x.o0) continue;
      if (!x.kind) x.kind = "";
      int64_t id = intern_find(&m->names, nm, strlen(nm));
      if (id >= 0 && row_of[id] >= 0) x.row = &s->ranges.v[row_of[id]];
      if (x.row && x.row->count) sf.timed = true;
      if (x.l1 > sf.max_l1) sf.max_l1 = x.l1;
      if (x.o1 > sf.max_o1) sf.max_o1 = x.o1;
      vec_push(&sf.r, x);
    }
    nranges += sf.r.n;
    if (sf.r.n) vec_push(fs, sf);
    else vec_free(&sf.r);
  }
  free(row_of);
  if (unsafe) note(notes, "%zu file(s) of the manifest have a path outside the tree (absolute, or with ..): left out.", unsafe);
  mark_shared(fs->v, fs->n);
  return nranges;
}

/* Where the page's files come from: the source tree (origin, NULL if the
 * manifest does not name it), else the shadow tree (dir); a source file
 * newer than the manifest (mtime, ns) is not taken. */
typedef struct {
  const char *origin, *dir;
  int64_t mtime;
} SrcWhere;

/* A file's text into src: the original, else the shadow copy. Returns
 * whether it was read; *orig says which copy (path names it, why says what
 * failed); *capped when it would pass room (its *size then counts against
 * the cap). */
static bool file_text(const SrcWhere *w, const SrcFile *x, size_t room, Buf *src, Buf *path, Buf *why, bool *orig,
                      bool *capped, size_t *size) {
  bool have = false;
  *orig = false;
  *capped = false;
  *size = 0;
  why->len = 0;
  if (why->s) why->s[0] = 0;
  struct stat st;
  if (w->origin) {
    path->len = 0;
    buf_printf(path, "%s/%s", w->origin, x->rel);
    if (stat(path->s, &st) < 0) buf_printf(why, "%s: %s", path->s, strerror(errno));
    else if (!S_ISREG(st.st_mode)) buf_printf(why, "%s: not a regular file", path->s);
    else if (w->mtime && (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec > w->mtime)
      buf_printf(why, "%s changed after the shadow tree was made", path->s);
    else *orig = true;
  }
  for (int pass = *orig ? 0 : 1; pass < 2 && !have && !*capped; pass++) {
    path->len = 0;
    buf_printf(path, "%s/%s", pass ? w->dir : w->origin, x->rel);
    *orig = pass == 0;
    const char *sep = why->len ? "; " : "";
    if (stat(path->s, &st) < 0) {
      buf_printf(why, "%s%s: %s", sep, path->s, strerror(errno));
      continue;
    }
    if (!S_ISREG(st.st_mode)) {
      buf_printf(why, "%s%s: not a regular file", sep, path->s);
      continue;
    }
    *size = (size_t)st.st_size;
    src->len = 0;
    if (*size > room || read_all(path->s, room, src) < 0) {
      if (*size > room || errno == EFBIG) *capped = true; /* listed without its text */
      else buf_printf(why, "%s%s: %s", sep, path->s, strerror(errno));
      continue;
    }
    if (count_lines(src) < (*orig ? x->max_l1 : x->max_o1)) {
      buf_printf(why, "%s%s has fewer lines than the manifest's ranges", sep, path->s);
      continue;
    }
    have = true;
  }
  if (!have && !*capped) { /* neither could be read: numbered as the original would be */
    *orig = w->origin != NULL;
    path->len = 0;
    buf_printf(path, "%s/%s", *orig ? w->origin : w->dir, x->rel);
  }
  return have;
}

/* The "files" array (files that ran, the most time first, their text up to
 * max_bytes in all) and its counters. */
static void embed_files(Buf *b, const SrcWhere *w, SrcFile *fs, size_t n, size_t nranges, size_t max_bytes) {
  size_t used = 0, left_files = 0, left_bytes = 0, listed = 0, unlisted = 0, untimed = 0, untimed_ranges = 0;
  Buf src = {0}, path = {0}, why = {0};
  for (size_t i = 0; i < n; i++) {
    SrcFile *x = &fs[i];
    if (!x->timed) {
      untimed++;
      untimed_ranges += x->r.n;
      continue;
    }
    if (listed == MAX_LISTED_FILES) {
      unlisted++;
      continue;
    }
    bool orig, capped;
    size_t size;
    bool have = file_text(w, x, max_bytes - used, &src, &path, &why, &orig, &capped, &size);
    if (capped) left_files++, left_bytes += size;
    buf_puts(b, listed ? ",{\"path\":" : "{\"path\":");
    json_script_str(b, x->rel);
    buf_puts(b, ",\"file\":");
    json_script_str(b, path.s);
    buf_printf(b, ",\"from\":\"%s\",\"capped\":%s,\"why\":", orig ? "source" : "shadow", capped ? "true" : "false");
    json_script_str(b, why.len ? why.s : NULL);
    buf_printf(b, ",\"time\":%lld,\"text\":", (long long)x->time);
    if (have) {
      json_script_strn(b, src.s, src.len);
      used += src.len;
    } else buf_puts(b, "null");
    buf_puts(b, ",\"ranges\":[");
    bool first = true;
    for (size_t k = 0; k < x->r.n; k++)
      if (have || (x->r.v[k].row && x->r.v[k].row->count)) {
        range_json(b, &x->r.v[k], orig, first);
        first = false;
      }
    buf_puts(b, "]}");
    listed++;
  }
  buf_printf(b, "],\"embedded\":%zu,\"left_out\":{\"files\":%zu,\"bytes\":%zu},\"unlisted\":%zu,"
             "\"untimed_files\":%zu,\"untimed_ranges\":%zu,\"manifest_ranges\":%zu",
             used, left_files, left_bytes, unlisted, untimed, untimed_ranges, nranges);
  buf_free(&src);
  buf_free(&path);
  buf_free(&why);
}

bool source_json(const Model *m, const Summary *s, const char *shadow_opt, const char *env_text, size_t max_bytes,
                 Buf *b) {
  /* which shadow tree, and the manifest hash the run saw */
  cJSON *env = env_text ? cJSON_Parse(env_text) : NULL;
  const cJSON *sh = cJSON_GetObjectItemCaseSensitive(env, "shadow");
  const char *env_dir = jstr(sh, "dir"), *env_hash = jstr(sh, "manifest");
  const char *dir = shadow_opt ? shadow_opt : env_dir;
  if (!dir || !*dir) {
    cJSON_Delete(env);
    return false;
  }
  Buf notes = {0}, mpath = {0}, text = {0};
  buf_printf(&mpath, "%s/.ncrewrite/manifest.json", dir);
  buf_puts(b, "\"source\":{\"shadow\":");
  json_script_str(b, dir);
  buf_puts(b, ",\"via\":");
  json_script_str(b, shadow_opt ? "--shadow" : NC_RUN_ENV);
  buf_puts(b, ",\"manifest\":");
  json_script_str(b, mpath.s);
  cJSON *man = NULL;
  const cJSON *files = manifest_files(mpath.s, &text, &man, &notes);
  buf_printf(b, ",\"ok\":%s", files ? "true" : "false");
  if (files) {
    char now[17];
    snprintf(now, sizeof now, "%016llx", (unsigned long long)fnv1a64(text.s, text.len));
    if (env_hash && strcmp(env_hash, now))
      note(&notes, "The shadow tree's manifest is not the one this run was made from (hash %s, the run's %s): "
                   "ncrewrite ran again since, so lines may have moved.", now, env_hash);
    struct stat mst;
    SrcWhere w = {jstr(man, "source"), dir,
                  stat(mpath.s, &mst) == 0 ? (int64_t)mst.st_mtim.tv_sec * 1000000000 + mst.st_mtim.tv_nsec : 0};
    if (w.origin && !*w.origin) w.origin = NULL;
    buf_puts(b, ",\"origin\":");
    json_script_str(b, w.origin);
    if (!w.origin)
      note(&notes, "The manifest does not name the source tree (it was written by an ncrewrite older than this "
                   "nctrace): the shadow tree's copies are shown, with their own line numbers.");
    SrcFiles fs = {0};
    size_t nranges = collect_files(m, s, files, &fs, &notes);
    file_times(m, fs.v, fs.n);
    qsort(fs.v, fs.n, sizeof *fs.v, cmp_file);
    buf_printf(b, ",\"gpu\":%s,\"cap\":%zu,\"files\":[", s->kernel_count > 0 ? "true" : "false", max_bytes);
    embed_files(b, &w, fs.v, fs.n, nranges, max_bytes);
    for (size_t i = 0; i < fs.n; i++) vec_free(&fs.v[i].r);
    vec_free(&fs);
  }
  buf_puts(b, ",\"notes\":[");
  if (notes.len) buf_add(b, notes.s, notes.len);
  buf_puts(b, "]}");
  cJSON_Delete(man);
  cJSON_Delete(env);
  buf_free(&notes);
  buf_free(&mpath);
  buf_free(&text);
  return true;
}

/* ---- what the trace cannot see (summary and report) ---- */

char *source_env_read(const char *first, Buf *path_out) {
  struct stat st;
  Buf path = {0}, t = {0};
  if (stat(first, &st) == 0 && S_ISDIR(st.st_mode)) buf_puts(&path, first);
  else {
    const char *sl = strrchr(first, '/');
    if (sl) buf_add(&path, first, (size_t)(sl - first));
    else buf_putc(&path, '.');
  }
  buf_puts(&path, "/" NC_RUN_ENV);
  int rc = read_all(path.s, SOURCE_MAX_ENV_BYTES, &t);
  if (path_out) buf_puts(path_out, path.s);
  buf_free(&path);
  if (rc < 0 || !t.len) {
    buf_free(&t);
    return NULL;
  }
  return buf_steal(&t);
}

static int cmp_excl_desc(const void *pa, const void *pb) {
  const RangeRow *a = *(const RangeRow *const *)pa, *b = *(const RangeRow *const *)pb;
  return a->excl > b->excl ? -1 : a->excl < b->excl;
}

void source_unranged(const Model *m, Summary *s, const char *shadow_opt, const char *env_text) {
  cJSON *env = env_text ? cJSON_Parse(env_text) : NULL;
  const char *dir = shadow_opt ? shadow_opt : jstr(cJSON_GetObjectItemCaseSensitive(env, "shadow"), "dir");
  Buf mpath = {0}, text = {0};
  cJSON *man = NULL;
  if (!dir || !*dir) goto done;
  buf_printf(&mpath, "%s/.ncrewrite/manifest.json", dir);
  if (read_all(mpath.s, MAX_MANIFEST_BYTES, &text) < 0) goto done;
  man = cJSON_ParseWithLength(text.s, text.len);
  const cJSON *files = cJSON_GetObjectItemCaseSensitive(man, "files"), *f, *r, *c;
  if (!cJSON_IsArray(files)) goto done;
  /* the rows with the most exclusive time, and each one's list */
  VEC(const RangeRow *) top = {0};
  for (size_t i = 0; i < s->ranges.n; i++)
    if (s->ranges.v[i].excl > 0 && s->ranges.v[i].merged <= 1) vec_push(&top, &s->ranges.v[i]);
  if (top.n) qsort(top.v, top.n, sizeof *top.v, cmp_excl_desc);
  if (top.n > UNRANGED_ROWS) top.n = UNRANGED_ROWS;
  for (size_t i = 0; i < top.n; i++) {
    const char *name = intern_str(&m->names, top.v[i]->name);
    Buf calls = {0};
    bool found = false;
    cJSON_ArrayForEach(f, files) {
      cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(f, "ranges")) {
        const char *nm = jstr(r, "name");
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(r, "unranged_calls");
        if (!nm || strcmp(nm, name) || !cJSON_IsArray(list)) continue;
        found = true;
        cJSON_ArrayForEach(c, list) {
          if (!cJSON_IsString(c)) continue;
          const char *callee = c->valuestring;
          /* a function with a range of its own in the traces is seen */
          int64_t id = intern_find(&m->names, callee, strlen(callee));
          bool ranged = false;
          for (size_t k = 0; id >= 0 && k < s->ranges.n && !ranged; k++) ranged = s->ranges.v[k].name == (uint32_t)id;
          if (ranged) continue;
          buf_printf(&calls, "%s%s", calls.len ? ", " : "", callee);
        }
        break;
      }
      if (found) break;
    }
    if (calls.len) {
      UnrangedRow u = {top.v[i]->name, top.v[i]->excl, buf_steal(&calls)};
      vec_push(&s->unranged, u);
    }
    buf_free(&calls);
  }
  vec_free(&top);
done:
  cJSON_Delete(man);
  cJSON_Delete(env);
  buf_free(&mpath);
  buf_free(&text);
}
