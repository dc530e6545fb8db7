/* ncrun: run a command with the ncrt collector attached.
 *
 *   ncrun [options] -- cmd args...
 *
 * Creates one run directory (<output>/<name>-<date>-<time>), writes its
 * provenance there (env.json: host, GPU, driver/CUDA/CUPTI versions, the
 * relevant environment, the command line, the options; a copy of the rules
 * file when given), points NVTX_INJECTION64_PATH and CUDA_INJECTION64_PATH
 * at libncrt, puts the ncrt Python module (and a rewritten shadow tree) on
 * PYTHONPATH, runs the command and exits with its status. Every process of
 * the command (torchrun / mpirun ranks, forks) writes
 * <name>-rank<R>.pt.trace.json.gz into the same run directory; ncrun lists them
 * at the end. Its own messages go to stderr, prefixed "ncrun:". */
#define _GNU_SOURCE
#include <cjson/cJSON.h>

#include "ncbase.h"
#include "ncrt_protocol.h"
#include "ncrun.h"
#include "hostid.h"
#include "rundir.h"
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


#define say ncrun_say
#define exists ncrun_exists
#define mkdirs ncrun_mkdirs



/* FNV-1a 64 of a file's bytes as 16 hex digits (env.json's hashes) */
static void file_hash(const char *text, size_t len, char hex[17]) {
  snprintf(hex, 17, "%016llx", (unsigned long long)fnv1a64(text ? text : "", len));
}

/* libncrt.so and the Python module are found from this executable's own
 * directory: beside it in the build tree (<build>/ncrt/), or at the paths
 * the install rules give relative to bin/ (NCRUN_REL_LIB, NCRUN_REL_PY:
 * ../lib and ../lib/ncrewrite/python), so an installed prefix can move. */
#ifndef NCRUN_REL_LIB
#define NCRUN_REL_LIB "../lib"
#endif
#ifndef NCRUN_REL_PY
#define NCRUN_REL_PY "../lib/ncrewrite/python"
#endif
static void find_runtime(char *lib, char *pydir, size_t n) {
  char exe[PATH_MAX];
  ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[k > 0 ? k : 0] = 0;
  char *dir = dirname(exe);
  snprintf(lib, n, "%s/libncrt.so", dir);
  snprintf(pydir, n, "%s/python", dir);
  if (!exists(lib)) {
    snprintf(lib, n, "%s/" NCRUN_REL_LIB "/libncrt.so", dir);
    snprintf(pydir, n, "%s/" NCRUN_REL_PY, dir);
  }
  char real[PATH_MAX];
  if (realpath(lib, real)) snprintf(lib, n, "%s", real);
  if (realpath(pydir, real)) snprintf(pydir, n, "%s", real);
}

static const char *find_cupti(void) {
  static const char *const c[] = {"/usr/local/cuda/lib64/libcupti.so.13",
                                  "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
                                  "/usr/local/cuda/lib/libcupti.so.13",
                                  "/usr/local/cuda-13.0/lib/libcupti.so.13",
                                  "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.13",
                                  "/usr/lib/x86_64-linux-gnu/libcupti.so.13",
                                  NULL};
  for (int i = 0; c[i]; i++)
    if (exists(c[i])) return c[i];
  return NULL;
}

static void prepend(const char *var, const char *dir) {
  const char *old = getenv(var);
  if (!old || !*old) {
    setenv(var, dir, 1);
    return;
  }
  size_t n = strlen(dir) + strlen(old) + 2;
  char *v = malloc(n);
  if (!v) return;
  snprintf(v, n, "%s:%s", dir, old);
  setenv(var, v, 1);
  free(v);
}


/* A -m module that launches another program (whose name the trace takes) */
static int launcher_module(const char *m) {
  static const char *const mods[] = {"torch.distributed.run", "torch.distributed.launch", "deepspeed.launcher.runner",
                                     "accelerate.commands.launch", NULL};
  for (int k = 0; mods[k]; k++)
    if (!strcmp(m, mods[k])) return 1;
  return 0;
}

/* The trace's name: the script (x.py, -m module) or the program; behind a
 * launcher (mpirun -np 4 ./solver, srun -n 2 ./a.out, python -m
 * torch.distributed.run) the program it launches, not the launcher; after a
 * `--` (a launcher's own: `launch.py -- python train.py`) what follows it;
 * in `sh -c '...'` the command the shell runs. `python -m pkg` -> pkg,
 * `python x/train.py` -> train, `torchrun ... train.py` -> train,
 * `./a.out` -> a.out. */
static void default_name(char **argv, char *out, size_t n) {
  /* sh -c 'python3 train.py ...': the words of the command */
  const char *sh = strrchr(argv[0], '/');
  sh = sh ? sh + 1 : argv[0];
  if ((!strcmp(sh, "sh") || !strcmp(sh, "bash") || !strcmp(sh, "dash") || !strcmp(sh, "zsh")) && argv[1] &&
      !strcmp(argv[1], "-c") && argv[2]) {
    char *copy = strdup(argv[2]), *words[64], *save = NULL;
    int k = 0;
    for (char *w = copy ? strtok_r(copy, " \t;&|()", &save) : NULL; w && k < 63; w = strtok_r(NULL, " \t;&|()", &save))
      if ((!strchr(w, '=') && strcmp(w, "exec")) || k) words[k++] = w; /* VAR=x or exec before the command */
    words[k] = NULL;
    /* `sh -c '"$0" args' prog ...`: the command is the shell's $0, the
     * argument after the script */
    if (k && (words[0][0] == '$' || (words[0][0] == '"' && words[0][1] == '$')) && argv[3]) {
      free(copy);
      default_name(argv + 3, out, n);
      return;
    }
    if (k) {
      default_name(words, out, n);
      free(copy);
      return;
    }
    free(copy);
  }
  /* launcher args -- program args: the program */
  for (int i = 1; argv[i]; i++)
    if (!strcmp(argv[i], "--") && argv[i + 1] && argv[i + 1][0] != '-') {
      char path[PATH_MAX];
      size_t l = strlen(argv[i + 1]);
      if ((l > 3 && !strcmp(argv[i + 1] + l - 3, ".py")) || ncrun_resolve_cmd(argv[i + 1], path, sizeof path)) {
        default_name(argv + i + 1, out, n);
        return;
      }
    }
  static const char *const launchers[] = {"mpirun", "mpiexec", "orterun", "prterun", "srun", "jsrun", "aprun",
                                          "torchrun", "horovodrun", "deepspeed", "numactl", "taskset",
                                          "nsys", "env", "time", "nice", "stdbuf", NULL};
  const char *pick = argv[0];
  const char *b0 = strrchr(argv[0], '/');
  b0 = b0 ? b0 + 1 : argv[0];
  int launcher = 0;
  for (int k = 0; launchers[k] && !launcher; k++) launcher = !strcmp(b0, launchers[k]);
  for (int i = 1; !launcher && argv[i]; i++) /* python -m torch.distributed.run ... */
    if (!strcmp(argv[i], "-m") && argv[i + 1] && launcher_module(argv[i + 1])) launcher = i + 2;
  for (int i = launcher; launcher && argv[i]; i++) {
    const char *a = argv[i];
    /* an option's value that is a program name (mpirun --hostfile h) is
     * skipped only when it does not run: good enough for the usual forms */
    char path[PATH_MAX];
    if (a[0] == '-' || strchr(a, '=') || !ncrun_resolve_cmd(a, path, sizeof path)) continue;
    pick = a;
    break;
  }
  for (int i = 0; argv[i]; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-m") && argv[i + 1] && !launcher_module(argv[i + 1])) {
      pick = argv[i + 1];
      break;
    }
    size_t l = strlen(a);
    if (l > 3 && !strcmp(a + l - 3, ".py")) {
      pick = a;
      break;
    }
  }
  const char *b = strrchr(pick, '/');
  snprintf(out, n, "%s", b ? b + 1 : pick);
  size_t l = strlen(out);
  if (l > 3 && !strcmp(out + l - 3, ".py")) out[l - 3] = 0;
}

static void add_file_string(cJSON *o, const char *key, const char *path) {
  char *s = ncrun_read_file(path, NULL);
  if (!s) return;
  s[strcspn(s, "\n")] = 0;
  cJSON_AddStringToObject(o, key, s);
  free(s);
}

/* What the run was made from, for drill and prune to refuse a stale trace:
 * the shadow tree's manifest (FNV-1a 64 of its bytes, the same hash drill
 * computes) and the digest of the rules it was written with. */
static void add_shadow_info(cJSON *root, const char *shadow) {
  char path[PATH_MAX + 32], real[PATH_MAX];
  if (!shadow || !realpath(shadow, real)) return;
  snprintf(path, sizeof path, "%s/.ncrewrite/manifest.json", real);
  size_t len;
  char *all = ncrun_read_file(path, &len);
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "dir", real);
  if (all) {
    char hex[17];
    file_hash(all, len, hex);
    cJSON_AddStringToObject(o, "manifest", hex);
    cJSON *m = cJSON_Parse(all);
    cJSON *rd = m ? cJSON_GetObjectItem(m, "rules_digest") : NULL;
    if (cJSON_IsString(rd)) cJSON_AddStringToObject(o, "rules_digest", rd->valuestring);
    cJSON_Delete(m);
    free(all);
  }
  cJSON_AddItemToObject(root, "shadow", o);
}

/* env.json: the run's provenance. Built once before the first stage, kept
 * in memory and written again after every stage (the stages array: argv,
 * status, seconds), so a run that dies midway still says what ran. */
static cJSON *env_json(char **argv, cJSON *opts, const char *lib, const char *cupti, const char *shadow,
                       const char *backend) {
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "backend", backend);
  struct utsname u;
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  cJSON_AddStringToObject(root, "host", host);
  /* which ncrun this is among those sharing the run directory (several
   * nodes, containers): its host (hostid.h) and pid */
  NcHost h;
  nc_host_read(&h);
  char inv[64];
  snprintf(inv, sizeof inv, "%s-%d", h.id, (int)getpid());
  cJSON_AddStringToObject(root, "invocation", inv);
  cJSON_AddStringToObject(root, "host_id", h.id);
  cJSON_AddStringToObject(root, "boot_id", h.boot_id);
  cJSON_AddNumberToObject(root, "pid_ns", (double)h.pid_ns);
  if (uname(&u) == 0) {
    char k[600];
    snprintf(k, sizeof k, "%s %s %s", u.sysname, u.release, u.machine);
    cJSON_AddStringToObject(root, "kernel", k);
  }
  time_t now = time(NULL);
  char ts[64];
  strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S%z", localtime(&now));
  cJSON_AddStringToObject(root, "started", ts);
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof cwd)) cJSON_AddStringToObject(root, "cwd", cwd);
  cJSON *cmd = cJSON_AddArrayToObject(root, "command");
  for (int i = 0; argv[i]; i++) cJSON_AddItemToArray(cmd, cJSON_CreateString(argv[i]));
  cJSON_AddItemToObject(root, "options", opts);
  add_shadow_info(root, shadow);
  cJSON_AddStringToObject(root, "libncrt", lib);

  cJSON *gpu = cJSON_AddObjectToObject(root, "gpu");
  add_file_string(gpu, "driver", "/proc/driver/nvidia/version");
  cJSON *devs = cJSON_AddArrayToObject(gpu, "devices");
  DIR *d = opendir("/proc/driver/nvidia/gpus");
  if (d) {
    struct dirent *e;
    while ((e = readdir(d)))
      if (e->d_name[0] != '.') {
        char p[PATH_MAX];
        snprintf(p, sizeof p, "/proc/driver/nvidia/gpus/%s/information", e->d_name);
        char *info = ncrun_read_file(p, NULL);
        if (info) {
          cJSON_AddItemToArray(devs, cJSON_CreateString(info));
          free(info);
        }
      }
    closedir(d);
  }
  char *cv = ncrun_read_file("/usr/local/cuda/version.json", NULL);
  if (cv) {
    cJSON *j = cJSON_Parse(cv);
    cJSON *c = j ? cJSON_GetObjectItem(j, "cuda") : NULL;
    cJSON *v = c ? cJSON_GetObjectItem(c, "version") : NULL;
    if (cJSON_IsString(v)) cJSON_AddStringToObject(gpu, "cuda_toolkit", v->valuestring);
    cJSON *cu = j ? cJSON_GetObjectItem(j, "cuda_cupti") : NULL;
    v = cu ? cJSON_GetObjectItem(cu, "version") : NULL;
    if (cJSON_IsString(v)) cJSON_AddStringToObject(gpu, "cupti", v->valuestring);
    cJSON_Delete(j);
    free(cv);
  }
  cJSON_AddStringToObject(gpu, "cupti_library", cupti ? cupti : "not found");
  cJSON_AddStringToObject(gpu, "note", "the CUPTI API version in use is in each trace (ncrt.cupti_version)");

  static const char *const prefixes[] = {"NCRT_", "NVTX_", "CUDA_", "NCCL_", "RANK", "LOCAL_RANK", "WORLD_SIZE",
                                         "LOCAL_WORLD_SIZE", "MASTER_", "SLURM_", "OMPI_", "PMI_", "TORCH",
                                         "PYTHONPATH", "LD_LIBRARY_PATH", "PATH", "OMP_NUM_THREADS", NULL};
  cJSON *env = cJSON_AddObjectToObject(root, "env");
  extern char **environ;
  for (char **e = environ; *e; e++)
    for (int i = 0; prefixes[i]; i++)
      if (!strncmp(*e, prefixes[i], strlen(prefixes[i]))) {
        char *eq = strchr(*e, '=');
        if (!eq) break;
        char key[256];
        snprintf(key, sizeof key, "%.*s", (int)(eq - *e), *e);
        cJSON_AddStringToObject(env, key, eq + 1);
        break;
      }
  cJSON_AddObjectToObject(root, "tools");
  cJSON_AddArrayToObject(root, "stages");
  return root;
}

/* env.json keeps every ncrun that ran in the run directory (the nodes of a
 * job, each under its own ncrun, sharing one directory): the top level is
 * the first one's, "invocations" holds each one's whole record, this one's
 * replaced when it writes again. Writers take turns on a lock of the
 * directory (where the filesystem has none, as some network ones, the
 * last writer of two at once wins). */
static cJSON *env_merge(const char *path, cJSON *env) {
  const cJSON *me = cJSON_GetObjectItem(env, "invocation");
  char *text = ncrun_read_file(path, NULL);
  cJSON *old = text ? cJSON_Parse(text) : NULL;
  free(text);
  cJSON *out = old && cJSON_IsObject(old) ? old : NULL;
  if (!out) {
    cJSON_Delete(old);
    out = cJSON_CreateObject();
  }
  const cJSON *top = cJSON_GetObjectItem(out, "invocation");
  cJSON *invs = cJSON_DetachItemFromObject(out, "invocations");
  if (!cJSON_IsArray(invs)) {
    cJSON_Delete(invs);
    invs = cJSON_CreateArray();
  }
  if (!top || (cJSON_IsString(top) && cJSON_IsString(me) && !strcmp(top->valuestring, me->valuestring))) {
    cJSON_Delete(out); /* the first writer, or this one again: its own record on top */
    out = cJSON_Duplicate(env, 1);
  }
  cJSON *mine = cJSON_Duplicate(env, 1);
  int i = 0, found = 0;
  for (cJSON *it = invs->child; it && !found; it = it->next, i++) {
    const cJSON *id = cJSON_GetObjectItem(it, "invocation");
    if (cJSON_IsString(id) && cJSON_IsString(me) && !strcmp(id->valuestring, me->valuestring)) found = 1;
  }
  if (found) cJSON_ReplaceItemInArray(invs, i - 1, mine);
  else cJSON_AddItemToArray(invs, mine);
  cJSON_AddItemToObject(out, "invocations", invs);
  return out;
}

void ncrun_save_env(const char *dir, cJSON *env) {
  char path[PATH_MAX + 16], tmp[PATH_MAX + 80];
  snprintf(path, sizeof path, "%s/" NC_RUN_ENV, dir);
  const cJSON *me = cJSON_GetObjectItem(env, "invocation");
  snprintf(tmp, sizeof tmp, "%s/." NC_RUN_ENV ".tmp%s", dir, cJSON_IsString(me) ? me->valuestring : "");
  int lk = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (lk >= 0 && flock(lk, LOCK_EX) != 0) {
    close(lk);
    lk = -1;
  }
  cJSON *all = env_merge(path, env);
  char *text = all ? cJSON_Print(all) : NULL;
  cJSON_Delete(all);
  FILE *f = fopen(tmp, "w");
  int ok = f && text && fputs(text, f) >= 0 && fputc('\n', f) != EOF;
  if (f && fclose(f) != 0) ok = 0;
  if (!ok || rename(tmp, path) != 0) {
    say("cannot write %s: %s", path, strerror(errno));
    unlink(tmp);
  }
  free(text);
  if (lk >= 0) close(lk); /* and its lock */
}

/* The rules file's FNV-1a 64 (the hash the manifest uses), for env.json. */
static void add_rules_info(cJSON *env, const char *rules) {
  size_t len;
  char *all = rules ? ncrun_read_file(rules, &len) : NULL;
  if (!all) return;
  char real[PATH_MAX], hex[17];
  file_hash(all, len, hex);
  cJSON *o = cJSON_AddObjectToObject(env, "rules");
  cJSON_AddStringToObject(o, "file", realpath(rules, real) ? real : rules);
  cJSON_AddStringToObject(o, "fnv1a64", hex);
  free(all);
}

static void copy_file(const char *from, const char *dir) {
  char *b = xstrdup(from), path[2 * PATH_MAX];
  snprintf(path, sizeof path, "%s/%s", dir, basename(b));
  free(b);
  FILE *in = fopen(from, "rb"), *out = in ? fopen(path, "wb") : NULL;
  if (!in || !out) {
    say("cannot copy %s into the run directory: %s", from, strerror(errno));
    if (in) fclose(in);
    return;
  }
  /* a copy that is not whole (a full disk) is removed: the run directory
   * has the rules or says it has not */
  char buf[65536];
  size_t n;
  int err = 0;
  while (!err && (n = fread(buf, 1, sizeof buf, in)) > 0)
    if (fwrite(buf, 1, n, out) != n) err = errno ? errno : EIO;
  if (!err && ferror(in)) err = errno ? errno : EIO;
  fclose(in);
  if (fclose(out) != 0 && !err) err = errno ? errno : EIO;
  if (err) {
    say("cannot copy %s into the run directory: %s", from, strerror(err));
    unlink(path);
  }
}

/* ---- Can the program's Python import ncrt? ----
 *
 * When the command is a Python interpreter (python, python3, python3.X, or
 * a script whose #! line names one), that interpreter is run once before
 * the program, with the environment the program gets (PYTHONPATH and the
 * interpreter's -I/-E/-s/-S flags; no collector attached), to import ncrt.
 * If it cannot, one warning says which interpreter, its version and why,
 * and the program runs anyway: otherwise the user learns only "no trace was
 * written" afterwards, or a trace without the Python ranges. */

static const char py_check_src[] =
    "import sys, os\n"
    "d = sys.argv[1]\n"
    "impl = getattr(getattr(sys, 'implementation', None), 'name', 'python')\n"
    "impl = {'cpython': 'CPython', 'pypy': 'PyPy'}.get(impl, impl)\n"
    "v = '%s, %s %d.%d.%d' % ((sys.executable, impl) + tuple(sys.version_info[:3]))\n"
    "sys.stdout.write('\\n@@ncrun-version ' + v + '\\n')\n"
    "sys.stdout.flush()\n"
    "try:\n"
    "    import ncrt\n"
    "    sys.stdout.write('@@ncrun-result ok\\n')\n"
    "except Exception as e:\n"
    "    import re\n"
    "    try:\n"
    "        import sysconfig\n"
    "        suf = sysconfig.get_config_var('EXT_SUFFIX')\n"
    "    except Exception:\n"
    "        suf = None\n"
    "    have = sorted(os.listdir(d)) if os.path.isdir(d) else []\n"
    "    built = sorted(set((int(m.group(1)), int(m.group(2))) for m in\n"
    "                       (re.match(r'ncrt\\.cpython-(\\d)(\\d+)', f) for f in have) if m))\n"
    "    if sys.flags.ignore_environment:\n"
    "        why = 'it ignores PYTHONPATH (-I or -E), where ncrun puts ncrt (%s)' % d\n"
    "    elif isinstance(e, ImportError) and getattr(e, 'name', None) == 'ncrt' and suf \\\n"
    "            and not os.path.exists(os.path.join(d, 'ncrt' + suf)):\n"
    "        why = 'ncrt has no build for %s %d.%d (looked in %s for ncrt%s; built for: %s)' % (\n"
    "            impl, sys.version_info[0], sys.version_info[1], d, suf,\n"
    "            ', '.join('%d.%d' % b for b in built) or 'none')\n"
    "    else:\n"
    "        why = '%s: %s' % (type(e).__name__, e)\n"
    "    sys.stdout.write('@@ncrun-result ' + why.replace('\\n', ' ') + '\\n')\n";

static int python_name(const char *path) {
  const char *b = strrchr(path, '/');
  b = b ? b + 1 : path;
  if (strncmp(b, "python", 6)) return 0;
  return b[6 + strspn(b + 6, "0123456789.")] == 0;
}


/* Collect the interpreter flags that change what it imports (-I -E -s -S)
 * from a Python command line's options, up to the script, -c or -m. */
static void py_flags(char **args, char *flags, size_t n) {
  size_t k = 0;
  for (; *args && (*args)[0] == '-' && (*args)[1] && strcmp(*args, "--") && strcmp(*args, "-"); args++) {
    if ((*args)[1] == '-') continue; /* --long options take no value worth following */
    for (const char *p = *args + 1; *p; p++) {
      if (strchr("IEsS", *p)) {
        if (k + 1 < n && !memchr(flags, *p, k)) flags[k++] = *p;
      } else if (*p == 'c' || *p == 'm') {
        flags[k] = 0;
        return;
      } else if (*p == 'W' || *p == 'X') { /* these take a value */
        if (!p[1] && args[1]) args++;
        break;
      }
    }
  }
  flags[k] = 0;
}

/* --shadow puts the instrumented tree first on PYTHONPATH, but Python puts
 * the script's directory (or, for -m and -c, the current one) ahead of
 * PYTHONPATH: run from inside the source tree, the originals are imported
 * and nothing is recorded. Say so before the run when that directory holds
 * a module or package the shadow tree has. */
static void check_shadow(char **cmd, const char *shadow) {
  if (!python_name(cmd[0])) return;
  char first[PATH_MAX] = "", why_dir[64] = "the current directory", script_name[PATH_MAX] = "", top[256] = "";
  int k = 1;
  for (; cmd[k]; k++) {
    const char *a = cmd[k];
    if (!strcmp(a, "-m") || !strcmp(a, "-c") || (a[0] == '-' && strpbrk(a + 1, "cm") && a[1] != '-' &&
                                                 strcspn(a + 1, "cm") < strcspn(a + 1, "WX"))) {
      if (!getcwd(first, sizeof first)) return;
      if (!strcmp(a, "-m") && cmd[k + 1]) snprintf(top, sizeof top, "%.*s", (int)strcspn(cmd[k + 1], "."), cmd[k + 1]);
      break;
    }
    if ((!strcmp(a, "-W") || !strcmp(a, "-X")) && cmd[k + 1]) {
      k++;
      continue;
    }
    if (a[0] == '-') {
      if (strchr(a, 'I') || strchr(a, 'P')) return; /* -I, -P: no such directory on sys.path */
      continue;
    }
    char real[PATH_MAX];
    if (!realpath(a, real)) return;
    const char *base = strrchr(real, '/');
    snprintf(script_name, sizeof script_name, "%s", base ? base + 1 : real);
    snprintf(first, sizeof first, "%s", dirname(real));
    snprintf(why_dir, sizeof why_dir, "the script's directory");
    break;
  }
  if (!first[0]) return;
  char rs[PATH_MAX], rf[PATH_MAX];
  if (!realpath(shadow, rs) || !realpath(first, rf) || !strcmp(rs, rf)) return;
  DIR *d = top[0] ? NULL : opendir(rs); /* -m pkg.mod: pkg is the one that counts */
  struct dirent *e, one;
  if (top[0]) snprintf(one.d_name, sizeof one.d_name, "%s", top);
  for (int first_pass = 1; top[0] ? first_pass : (d && (e = readdir(d))) != 0; first_pass = 0) {
    if (top[0]) e = &one;
    if (e->d_name[0] == '.' || !strcmp(e->d_name, "__pycache__") || !strcmp(e->d_name, script_name)) continue;
    size_t l = strlen(e->d_name);
    char in_shadow[2 * PATH_MAX], in_first[2 * PATH_MAX];
    snprintf(in_shadow, sizeof in_shadow, "%s/%s", rs, e->d_name);
    snprintf(in_first, sizeof in_first, "%s/%s", rf, e->d_name);
    struct stat st;
    int module = (l > 3 && !strcmp(e->d_name + l - 3, ".py")) ||
                 (stat(in_shadow, &st) == 0 && S_ISDIR(st.st_mode));
    if (!module || !exists(in_first)) continue;
    say("%s will be imported, not the instrumented %s: Python puts %s (%s) ahead of --shadow on sys.path, "
        "so nothing there is recorded; run from another directory, or run the shadow's copy of the script",
        in_first, in_shadow, rf, why_dir);
    break;
  }
  if (d) closedir(d);
}

static void check_python(char **cmd, const char *pydir) {
  char interp[PATH_MAX], flags[8] = "", script[PATH_MAX];
  if (python_name(cmd[0])) {
    snprintf(interp, sizeof interp, "%s", cmd[0]);
    py_flags(cmd + 1, flags, sizeof flags);
  } else {
    /* a script with a #! line naming python (directly or through env) */
    if (!ncrun_resolve_cmd(cmd[0], script, sizeof script)) return;
    FILE *f = fopen(script, "rb");
    char line[512] = "";
    if (!f) return;
    if (!fgets(line, sizeof line, f)) line[0] = 0;
    fclose(f);
    if (strncmp(line, "#!", 2)) return;
    line[strcspn(line, "\r\n")] = 0;
    char *save = NULL, *tok = strtok_r(line + 2, " \t", &save);
    if (!tok) return;
    if (!strcmp(tok + (strrchr(tok, '/') ? strrchr(tok, '/') - tok + 1 : 0), "env")) {
      do tok = strtok_r(NULL, " \t", &save); /* env's own options, env -S */
      while (tok && tok[0] == '-');
      if (!tok) return;
    }
    if (!python_name(tok)) return;
    snprintf(interp, sizeof interp, "%s", tok);
    char *rest[8] = {0};
    for (int r = 0; r < 7 && (rest[r] = strtok_r(NULL, " \t", &save)); r++) {
    }
    py_flags(rest, flags, sizeof flags);
  }

  int fd[2];
  if (pipe(fd)) return;
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(fd[0]);
    close(fd[1]);
    return;
  }
  if (pid == 0) {
    /* the program's environment, without the collector (this process
     * records nothing and must write no trace) */
    unsetenv("NVTX_INJECTION64_PATH");
    unsetenv("CUDA_INJECTION64_PATH");
    dup2(fd[1], 1);
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
      dup2(null, 0);
      dup2(null, 2);
    }
    close(fd[0]);
    char opt[16];
    snprintf(opt, sizeof opt, "-%s", flags);
    char *argv[] = {interp, opt, "-c", (char *)py_check_src, (char *)pydir, NULL};
    execvp(interp, flags[0] ? argv : (char *[]){interp, "-c", (char *)py_check_src, (char *)pydir, NULL});
    _exit(127);
  }
  close(fd[1]);
  static char out[65536], junk[4096];
  size_t got = 0;
  int timed_out = 0;
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    long left = 10000 - ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
    struct pollfd p = {fd[0], POLLIN, 0};
    int r = left > 0 ? poll(&p, 1, (int)left) : 0;
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) { /* 10 s and no answer: give up on the check, not the run */
      kill(pid, SIGKILL);
      timed_out = 1;
      break;
    }
    int full = got == sizeof out - 1; /* then drain: the child must not die of SIGPIPE */
    ssize_t k = full ? read(fd[0], junk, sizeof junk) : read(fd[0], out + got, sizeof out - 1 - got);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    if (!full) got += (size_t)k;
  }
  close(fd[0]);
  out[got] = 0;
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    say("warning: %s gave no answer in 10 s to whether it can import ncrt; running the program anyway", interp);
    return;
  }
  /* marked lines: a sitecustomize may print too */
  char *version = strstr(out, "\n@@ncrun-version "), *why = strstr(out, "\n@@ncrun-result ");
  if (!version) return; /* did not start (127), or no answer: the run itself will tell */
  version += strlen("\n@@ncrun-version ");
  if (why) why += strlen("\n@@ncrun-result ");
  else why = version + strlen(version); /* the import died: "" */
  version[strcspn(version, "\n")] = 0;
  why[strcspn(why, "\n")] = 0;
  if (!strcmp(why, "ok")) return;
  char sig[64];
  if (!*why && WIFSIGNALED(st)) {
    snprintf(sig, sizeof sig, "importing ncrt killed it (signal %d)", WTERMSIG(st));
    why = sig;
  } else if (!*why) {
    return;
  }
  say("warning: %s (%s) cannot import ncrt: %s. Its Python ranges will not be recorded; running it anyway",
      interp, version, why);
}

/* Processes that died (a signal, _exit, SIGKILL, the OOM killer), and those
 * whose exit handed a large conversion over (.ncrt-PID.hand), leave spill
 * files (.ncrt-PID.*) in the run directory: libncrt's finalizer makes
 * their traces. Returns the number written, -1 if it cannot run. */
static int finalize(const char *lib, const char *dir, int trust) {
  char why[128];
  if (!trust && !ncrun_dir_trusted(dir, why, sizeof why)) {
    say("run directory %s: %s; its spill files are not finalized (--trust-run-dir to do it anyway)", dir, why);
    return -1;
  }
  void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  int (*fn)(const char *, int) = h ? (int (*)(const char *, int))dlsym(h, "ncrt_finalize_dir") : NULL;
  if (!fn) {
    say("cannot finalize the traces in %s: %s", dir, dlerror());
    return -1;
  }
  return fn(dir, 0);
}


/* qsort hands pointers to the elements (char *), not the strings */
static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Says the traces in dir (names ending in suffix, or in also unless NULL);
 * with paths, also hands their full paths over (the caller frees them and
 * the array). Returns how many. */
static bool ends_with(const char *s, size_t l, const char *suffix) {
  size_t sl = suffix ? strlen(suffix) : 0;
  return suffix && l > sl && !strcmp(s + l - sl, suffix);
}

static int list_files(const char *dir, const char *suffix, const char *also, char ***paths) {
  DIR *d = opendir(dir);
  int n = 0;
  if (!d) return 0;
  struct dirent *e;
  char **names = NULL;
  while ((e = readdir(d))) {
    size_t l = strlen(e->d_name);
    if (ends_with(e->d_name, l, suffix) || ends_with(e->d_name, l, also)) {
      names = xrealloc(names, (size_t)(n + 1) * sizeof *names);
      names[n++] = xstrdup(e->d_name);
    }
  }
  closedir(d);
  if (n) qsort(names, (size_t)n, sizeof *names, cmp_names);
  for (int i = 0; i < n; i++) {
    if (n <= 8 || i < 4 || i >= n - 2) say("trace: %s/%s", dir, names[i]);
    else if (i == 4) say("... %d more", n - 6);
    if (paths) {
      char *full = xmalloc(strlen(dir) + strlen(names[i]) + 2);
      sprintf(full, "%s/%s", dir, names[i]);
      free(names[i]);
      names[i] = full;
    } else {
      free(names[i]);
    }
  }
  if (paths) *paths = names;
  else free(names);
  return n;
}

static int list_traces(const char *dir, char ***paths) {
  return list_files(dir, NCRT_TRACE_SUFFIX, NCRT_PFTRACE_SUFFIX, paths);
}

/* nctrace, for the deep-dive stages: beside ncrun (installed bin/), in the
 * build tree's bin/ (ncrun lives in <build>/ncrt), else on PATH. */
static void find_nctrace(char *out, size_t n) {
  char exe[PATH_MAX];
  ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[k > 0 ? k : 0] = 0;
  char *dir = dirname(exe);
  const char *const rel[] = {"nctrace", "../bin/nctrace", NULL};
  for (int i = 0; rel[i]; i++) {
    snprintf(out, n, "%s/%s", dir, rel[i]);
    if (access(out, X_OK) == 0) return;
  }
  if (!ncrun_resolve_cmd("nctrace", out, n)) *out = 0;
}

/* <dir>/summary.md: `nctrace summary` of the run's traces (with the
 * profiler's CSV named by flag/csv when given). */
static void write_summary(const char *nctrace, const char *dir, cJSON *env, char **traces, int n, const char *flag,
                          const char *csv) {
  char md[PATH_MAX + 16];
  snprintf(md, sizeof md, "%s/" NC_RUN_SUMMARY, dir);
  char **argv = calloc((size_t)n + 6, sizeof *argv);
  if (!argv) return;
  int k = 0;
  argv[k++] = (char *)nctrace;
  argv[k++] = "summary";
  argv[k++] = "-q";
  if (flag) {
    argv[k++] = (char *)flag;
    argv[k++] = (char *)csv;
  }
  for (int t = 0; t < n; t++) argv[k++] = traces[t];
  if (ncrun_stage(env, "summary", argv, md) == 0) say("summary: %s", md);
  else say("nctrace summary failed: %s is incomplete", md);
  free(argv);
}

/* ---- the run, in phases: plan (what runs, where), environment (what the
 * command inherits, env.json), run (the command), finish (finalize, list,
 * summary) and the deep stage. Each phase returns -1 to go on, else the
 * status ncrun exits with. */
typedef struct {
  Options *o;
  int is_deep, torch;
  char *torch_version;        /* "2.11.0+cu130 13.0", NULL when none */
  char lib[PATH_MAX], pydir[PATH_MAX];
  char nctrace[PATH_MAX];     /* nctrace, for the deep stage ("" until needed) */
  char nm[256];               /* the trace name */
  char dir[PATH_MAX];         /* the run directory */
  int dir_made;               /* ncrun created it */
  cJSON *env;                 /* env.json */
  char **traces;              /* the traces written, and their count */
  int ntraces;
} Run;

/* torch's version for env.json (torch and deep backends of a Python
 * command), asked before any of our environment is set: the torch hook
 * must not start in this probe */
static char *probe_torch(char *python) {
  char tmp[] = "/tmp/ncrun-torch-XXXXXX", *version = NULL;
  int fd = mkstemp(tmp);
  if (fd < 0) return NULL;
  close(fd);
  char *const probe[] = {python, "-c",
                         "import importlib.util as u\nif u.find_spec('torch'):\n"
                         "  import torch; print('ncrun-torch', torch.__version__, torch.version.cuda or 'cpu')",
                         NULL};
  if (ncrun_stage(NULL, NULL, probe, tmp) == 0) {
    /* the marked line: a sitecustomize may print too */
    char *t = ncrun_read_file(tmp, NULL), *m = t ? strstr(t, "ncrun-torch ") : NULL;
    if (m) {
      m += strlen("ncrun-torch ");
      m[strcspn(m, "\n")] = 0;
      version = xstrdup(m);
    }
    free(t);
  }
  unlink(tmp);
  return version;
}

/* The run directory: --run-dir, else <output>/<name>-<date>-<time>[-K] */
static int make_run_dir(Run *r) {
  const Options *o = r->o;
  if (o->run_dir) {
    snprintf(r->dir, sizeof r->dir, "%s", o->run_dir);
  } else {
    const char *output = o->output && *o->output ? o->output : "ncrt-runs";
    time_t now = time(NULL);
    char ts[32];
    strftime(ts, sizeof ts, "%Y%m%d-%H%M%S", localtime(&now));
    snprintf(r->dir, sizeof r->dir, "%s/%s-%s", output, r->nm, ts);
    for (int k = 2; exists(r->dir) && k < 1000; k++) snprintf(r->dir, sizeof r->dir, "%s/%s-%s-%d", output, r->nm, ts, k);
  }
  r->dir_made = !exists(r->dir);
  if (mkdirs(r->dir)) {
    fprintf(stderr, "ncrun: cannot create %s: %s\n", r->dir, strerror(errno));
    return 2;
  }
  char real[PATH_MAX];
  if (realpath(r->dir, real)) snprintf(r->dir, sizeof r->dir, "%s", real);
  struct stat st;
  if (r->dir_made && stat(r->dir, &st) == 0 && st.st_mode & S_IWOTH) chmod(r->dir, st.st_mode & 0755); /* ours: no umask 0 makes it anyone's */
  char why[128];
  if (!o->trust_run_dir && !ncrun_dir_trusted(r->dir, why, sizeof why)) {
    fprintf(stderr, "ncrun: run directory %s: %s; not used (--trust-run-dir to use it anyway)\n", r->dir, why);
    return 2;
  }
  return -1;
}

static const char *const SLOTS[] = {"NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH"};

/* What runs and where: the backend's checks, the tools it needs, the
 * trace name and the run directory (created). */
static int plan_run(Run *r) {
  Options *o = r->o;
  r->is_deep = !strcmp(o->backend, "ncu") || !strcmp(o->backend, "nsys");
  r->torch = !strcmp(o->backend, "torch");
  if (o->summary < 0) o->summary = r->is_deep;
  if (r->is_deep && !o->deep.pattern) {
    fprintf(stderr, "ncrun: --backend %s needs the range to profile: use --%s GLOB\n", o->backend, o->backend);
    return 2;
  }
  o->deep.backend = o->backend;
  /* One tool per CUPTI/NVTX slot: a profiler above us holds it already */
  for (int k = 0; k < 2 && strcmp(o->backend, "ncrt"); k++) {
    const char *cur = getenv(SLOTS[k]);
    if (cur && *cur) {
      fprintf(stderr, "ncrun: --backend %s: another profiler holds the %s slot (%s=%s); run it outside that "
                      "profiler\n", o->backend, k ? "CUDA (CUPTI)" : "NVTX", SLOTS[k], cur);
      return 2;
    }
  }
  if (r->is_deep) {
    o->deep.tool = deep_find_tool(o->backend);
    if (!o->deep.tool) {
      fprintf(stderr, "ncrun: --%s: %s is not installed here (looked on PATH and in /usr/local/cuda/bin; set "
                      "NCRT_%s to its path): nothing run\n", o->backend, o->backend, strcmp(o->backend, "ncu") ? "NSYS" : "NCU");
      return 2;
    }
    find_nctrace(r->nctrace, sizeof r->nctrace);
    if (!*r->nctrace) {
      fprintf(stderr, "ncrun: --%s: nctrace not found beside ncrun or on PATH (it chooses the kernels)\n", o->backend);
      return 2;
    }
    o->deep.nctrace = r->nctrace;
  }
  if (strcmp(o->backend, "ncrt") && python_name(o->cmd[0])) r->torch_version = probe_torch(o->cmd[0]);
  find_runtime(r->lib, r->pydir, sizeof r->lib);
  if (!exists(r->lib)) say("libncrt.so not found beside ncrun (%s): running without the collector", r->lib);
  if (o->name) snprintf(r->nm, sizeof r->nm, "%s", o->name);
  else default_name(o->cmd, r->nm, sizeof r->nm);
  return make_run_dir(r);
}

/* What the command inherits: where traces go, the NVTX and CUDA injection
 * slots, PYTHONPATH (the ncrt module, the shadow tree, torch's hook); and
 * the run's provenance (env.json, the rules' copy). */
static int set_environment(Run *r) {
  Options *o = r->o;
  const char *cupti = find_cupti();
  setenv(NCRT_ENV_OUTPUT_DIR, r->dir, 1);
  setenv(NCRT_ENV_TRACE_NAME, r->nm, 1);
  /* Under nsys/ncu their own injection is already set: keep it (one tool per
   * slot), say so, and record what is left to us. torch: Kineto holds CUPTI */
  for (int k = 0; k < 2 && exists(r->lib) && !r->torch; k++) {
    const char *cur = getenv(SLOTS[k]);
    if (cur && *cur && strcmp(cur, r->lib) != 0) {
      say("%s is already set (%s), probably by another profiler: kept, so ncrt records no %s", SLOTS[k], cur,
          k == 0 ? "NVTX ranges" : "GPU activity");
      continue;
    }
    setenv(SLOTS[k], r->lib, 1);
  }
  if (cupti && !getenv(NCRT_ENV_CUPTI_LIB)) setenv(NCRT_ENV_CUPTI_LIB, cupti, 1);
  /* ncrun finalizes the run's processes when its command ends: an exit with
   * much left to convert hands it over and ends at once (libncrt's writer,
   * "the fast exit"); torch's backend writes its own traces */
  if (!r->torch) {
    /* "ncrun:<HOSTID>": a process on another host (srun, mpirun over
     * nodes) has no finalizer of ours and converts its exit itself */
    NcHost h;
    nc_host_read(&h);
    char v[64];
    snprintf(v, sizeof v, "ncrun:%s", h.id);
    setenv(NCRT_ENV_FINALIZER, v, 1);
  }
  else unsetenv(NCRT_ENV_FINALIZER);
  prepend("PYTHONPATH", r->pydir);
  if (o->shadow) {
    char s[PATH_MAX];
    prepend("PYTHONPATH", realpath(o->shadow, s) ? s : o->shadow);
  }
  if (r->torch) {
    /* the startup hook (sitecustomize) that starts torch.profiler; ncrt.range
     * opens record_function, so our ranges are user_annotation events. First on
     * the path, ahead of the shadow tree: its own sitecustomize (which the
     * hook runs after itself) must not hide ours */
    char hook[PATH_MAX + 16];
    snprintf(hook, sizeof hook, "%s/torch_backend", r->pydir);
    prepend("PYTHONPATH", hook);
    setenv(NCRT_ENV_BACKEND, "torch", 1);
    setenv(NCRT_ENV_TORCH, "1", 1);
    o->preload = 0;
  }
  r->env = env_json(o->cmd, o->opts, r->lib, cupti, o->shadow, o->backend); /* takes opts */
  o->opts = NULL;
  add_rules_info(r->env, o->rules);
  cJSON *tools = cJSON_GetObjectItem(r->env, "tools");
  if (r->torch_version) /* "2.11.0+cu130 13.0": torch and the CUDA it was built for */
    cJSON_AddStringToObject(tools, "torch", r->torch_version);
  if (r->is_deep) {
    char *ver = deep_tool_version(o->deep.tool);
    cJSON_AddStringToObject(tools, o->backend, ver ? ver : "unknown");
    free(ver);
    if (o->reuse) {
      char rp[PATH_MAX];
      cJSON_AddStringToObject(r->env, "stage1_trace", realpath(o->reuse, rp) ? rp : o->reuse);
    }
  }
  ncrun_save_env(r->dir, r->env);
  if (o->rules) copy_file(o->rules, r->dir);

  /* LD_PRELOAD splits on blanks and ':': such a path cannot be preloaded */
  if (o->preload && exists(r->lib) && strpbrk(r->lib, " \t:")) {
    say("not preloading %s (LD_PRELOAD cannot name a path with a blank or ':'): a program that leaves by "
        "_exit writes no trace", r->lib);
    o->preload = 0;
  }
  if (!ncrun_quiet) check_python(o->cmd, r->pydir);
  if (!ncrun_quiet && o->shadow) check_shadow(o->cmd, o->shadow);
  return -1;
}

/* Nothing ran: leave no run directory behind (one made for this run) */
static void remove_run_dir(Run *r) {
  if (!r->dir_made) return;
  char p[PATH_MAX + 32];
  snprintf(p, sizeof p, "%s/" NC_RUN_ENV, r->dir);
  unlink(p);
  if (r->o->rules) {
    char *copy = xstrdup(r->o->rules);
    snprintf(p, sizeof p, "%s/%s", r->dir, basename(copy));
    unlink(p);
    free(copy);
  }
  rmdir(r->dir);
}

/* The command, as ncrun's child (dies with ncrun; signals passed on). Its
 * exit status into *rc; returns 127 (nothing ran) if it could not start. */
static int run_command(Run *r, int *rc) {
  Options *o = r->o;
  pid_t self_pid = getpid();
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  fflush(NULL);
  int exec_pipe[2] = {-1, -1}; /* the child's exec errno, if exec fails (closed by a good exec) */
  if (pipe2(exec_pipe, O_CLOEXEC) != 0) exec_pipe[0] = exec_pipe[1] = -1;
  sigset_t unblocked;
  ncrun_forward_block(&unblocked);
  /* test hook: a SIGTERM between the handler and the fork */
  if (getenv("NCRUN_TEST_TERM_AT_FORK")) raise(SIGTERM);
  pid_t forked = fork();
  if (forked < 0) {
    sigprocmask(SIG_SETMASK, &unblocked, NULL);
    fprintf(stderr, "ncrun: fork: %s\n", strerror(errno));
    return 2;
  }
  if (forked == 0) {
    ncrun_forward_child(&unblocked);
    /* the command dies with ncrun: killed (SIGKILL, the OOM killer) ncrun
     * cannot pass anything on, and an orphan would run on unwatched; if
     * ncrun died before this line, its death was missed: go now */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != self_pid) _exit(128 + SIGKILL);
    char pid[32];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    setenv(NCRT_ENV_ROOT_PID, pid, 1);
    /* Preloaded, libncrt's _exit/_Exit run first and write the trace (the
     * NVTX and CUDA injections then dlopen the same, already loaded, copy). */
    if (o->preload && exists(r->lib)) prepend("LD_PRELOAD", r->lib);
    execvp(o->cmd[0], o->cmd);
    int e = errno;
    fprintf(stderr, "ncrun: cannot run %s: %s\n", o->cmd[0], strerror(e));
    if (exec_pipe[1] >= 0 && write(exec_pipe[1], &e, sizeof e) < 0) {
    }
    _exit(127);
  }
  ncrun_set_child(forked);
  sigprocmask(SIG_SETMASK, &unblocked, NULL);
  if (exec_pipe[1] >= 0) close(exec_pipe[1]);
  int exec_err = 0, st = 0;
  while (waitpid(forked, &st, 0) < 0 && errno == EINTR) {
  }
  ncrun_set_child(0);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (exec_pipe[0] >= 0) {
    if (read(exec_pipe[0], &exec_err, sizeof exec_err) != (ssize_t)sizeof exec_err) exec_err = 0;
    close(exec_pipe[0]);
  }
  if (exec_err) {
    remove_run_dir(r);
    cJSON_Delete(r->env); /* not written again into the directory removed */
    r->env = NULL;
    return 127;
  }
  *rc = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
  ncrun_record_stage(r->env, r->is_deep ? "stage1" : o->backend, o->cmd, NULL, *rc, &t0, &t1);
  ncrun_save_env(r->dir, r->env);
  return -1;
}

/* After the command: the traces of processes that left them to ncrun,
 * the run's traces listed, and summary.md (not for the deep backends:
 * their summary comes after stage 2). */
static void finish_run(Run *r) {
  Options *o = r->o;
  if (exists(r->lib) && !r->torch) finalize(r->lib, r->dir, r->o->trust_run_dir);
  /* the run's disk-budget counter (libncrt's writer) has done its job */
  char *b = xasprintf("%s/" NC_RUN_BUDGET, r->dir);
  unlink(b);
  free(b);
  if (r->torch) {
    /* torch.profiler's tensorboard_trace_handler names (what TensorBoard lists) */
    r->ntraces = list_files(r->dir, ".pt.trace.json.gz", NULL, &r->traces);
    if (!r->ntraces) say("no torch.profiler trace (*.pt.trace.json.gz) was written in %s", r->dir);
    else say("run directory: %s", r->dir);
  } else if (!(r->ntraces = list_traces(r->dir, &r->traces))) {
    say("no trace was written in %s", r->dir);
  } else {
    say("run directory: %s", r->dir);
  }
  if (!r->is_deep && o->summary && r->ntraces) {
    find_nctrace(r->nctrace, sizeof r->nctrace);
    if (*r->nctrace) write_summary(r->nctrace, r->dir, r->env, r->traces, r->ntraces, NULL, NULL);
  }
}

/* Stage 2 of --ncu/--nsys, under the profiler alone (our injection taken
 * back), on stage 1's traces or the one --trace names. */
static int deep_stage(Run *r) {
  Options *o = r->o;
  for (int k = 0; k < 2; k++) {
    const char *cur = getenv(SLOTS[k]);
    if (cur && !strcmp(cur, r->lib)) unsetenv(SLOTS[k]);
  }
  if (o->reuse) {
    r->traces = xmalloc(sizeof *r->traces);
    r->ntraces = 1;
    r->traces[0] = xstrdup(o->reuse);
  }
  int drc = deep_run(&o->deep, r->dir, r->traces, r->ntraces, o->cmd, r->env);
  if (r->ntraces && o->summary) {
    const char *kind = NULL;
    int ncu = !strcmp(o->backend, "ncu");
    char csv[2 * PATH_MAX];
    snprintf(csv, sizeof csv, "%s/%s", r->dir,
             ncu ? NC_RUN_NCU_DIR "/" NC_RUN_NCU_CSV : NC_RUN_NSYS_DIR "/" NC_RUN_NSYS_CSV);
    /* a reused trace lies elsewhere: name the CSV (nctrace looks beside the trace) */
    if (o->reuse && exists(csv)) kind = ncu ? "--ncu" : "--nsys";
    write_summary(o->deep.nctrace, r->dir, r->env, r->traces, r->ntraces, kind, kind ? csv : NULL);
  }
  return drc;
}

int main(int argc, char **argv) {
  Options o;
  int rc = ncrun_parse_options(argc, argv, &o);
  if (rc >= 0) return rc;
  if (o.finalize) {
    /* by hand: the traces of the processes that died in a run directory */
    char lib[PATH_MAX], pydir[PATH_MAX];
    find_runtime(lib, pydir, sizeof lib);
    cJSON_Delete(o.opts);
    if (finalize(lib, o.finalize, o.trust_run_dir) < 0) return 2;
    if (!list_traces(o.finalize, NULL)) say("no trace in %s", o.finalize);
    return 0;
  }
  Run r = {.o = &o};
  int status = 0;
  if ((rc = plan_run(&r)) >= 0 || (rc = set_environment(&r)) >= 0) goto out;
  /* installed before the fork and blocked across it (ncrun_forward_block):
   * a signal that comes meanwhile is passed on once the child is set */
  ncrun_forward_signals();
  if (!o.reuse) {
    if ((rc = run_command(&r, &status)) >= 0) goto out;
    finish_run(&r);
    rc = status;
    if (!r.is_deep) goto out;
    if (status != 0) {
      say("stage 1 ended with status %d: stage 2 (%s) not run", status, o.backend);
      goto out;
    }
  }
  rc = deep_stage(&r);
out:
  for (int t = 0; t < r.ntraces; t++) free(r.traces[t]);
  free(r.traces);
  free(r.torch_version);
  if (r.env) {
    ncrun_save_env(r.dir, r.env);
    cJSON_Delete(r.env);
  }
  cJSON_Delete(o.opts);
  return rc;
}
